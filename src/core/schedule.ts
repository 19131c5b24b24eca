/**
 * The learning-rate schedule every stage uses (SFT, RL, RAFT, self-play): linear warmup from
 * lr/warmupSteps to lr, then constant, or a cosine decay to minLrRatio·lr at totalSteps
 * (Loshchilov & Hutter 2017, SGDR, arXiv:1608.03983, without restarts). A pure function of the
 * step, so a resumed run gets the same rates; engines receive the rate in optimStep.
 */

export interface ScheduleOptions {
  /** Peak learning rate. */
  lr: number;
  /** "constant" or "cosine" decay after warmup. */
  schedule: "constant" | "cosine";
  /** Linear warmup steps from 0 to lr. */
  warmupSteps: number;
  /** Total steps (cosine reaches minLrRatio·lr at this step). */
  totalSteps: number;
  /** Final learning rate as a fraction of lr for cosine (default 0.1). */
  minLrRatio?: number;
}

/**
 * Learning rate at optimizer step `step` (0-based): `lr·(step+1)/warmupSteps` during warmup, then
 * `lr` (constant) or `lr·(m + (1−m)·(1 + cos(π·t))/2)` with t = (step − warmup)/(total − warmup)
 * clamped to [0, 1] and m = minLrRatio (cosine; stays at m·lr after totalSteps).
 */
export function learningRate(step: number, o: ScheduleOptions): number {
  if (o.warmupSteps > 0 && step < o.warmupSteps) return (o.lr * (step + 1)) / o.warmupSteps;
  if (o.schedule === "constant") return o.lr;
  const minR = o.minLrRatio ?? 0.1;
  const span = Math.max(1, o.totalSteps - o.warmupSteps);
  const t = Math.min(1, Math.max(0, (step - o.warmupSteps) / span));
  return o.lr * (minR + (1 - minR) * 0.5 * (1 + Math.cos(Math.PI * t)));
}
