/** Coefficient schedules for guided methods (CHORD's μ). */

/** A schedule from `start` to `end` over `steps` steps, then constant at `end`. */
export interface CoefSchedule {
  start: number;
  end: number;
  steps: number;
  shape: "linear" | "cosine" | "constant";
}

/** Value at step t ≥ 0. */
export function scheduleValue(s: CoefSchedule, t: number): number {
  if (s.shape === "constant" || s.steps <= 0) return s.start;
  const x = Math.min(1, Math.max(0, t / s.steps));
  const w = s.shape === "linear" ? x : 0.5 * (1 - Math.cos(Math.PI * x));
  return s.start + (s.end - s.start) * w;
}
