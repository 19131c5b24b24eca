/**
 * Capture training's state on disk, so training on served traffic survives restarts: the weights
 * and the optimizer's moments (engine.save with the optimizer) plus `capture.json` —
 * `{policyVersion, updates}` (updates drive the learning-rate warm-up). `rlvr serve <that dir>
 * --capture` continues where it stopped: the same Adam moments, the same step in the warm-up.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ServeContext } from "./context.ts";

/** The file beside the checkpoint that records capture training's counters. */
export const CAPTURE_STATE = "capture.json";

/** Capture training's counters. */
export interface CaptureState {
  /** Optimizer updates applied to the served weights. */
  policyVersion: number;
  /** Capture-training updates so far (the warm-up's position). */
  updates: number;
}

/** The counters saved in `dir`, or null when it holds none (a plain checkpoint). */
export function readCaptureState(dir: string): CaptureState | null {
  const p = join(dir, CAPTURE_STATE);
  if (!existsSync(p)) return null;
  const s = JSON.parse(readFileSync(p, "utf8")) as Partial<CaptureState>;
  if (!Number.isInteger(s.policyVersion) || !Number.isInteger(s.updates)) throw new Error(`rlvr serve: ${p} is not a capture state ({policyVersion, updates} integers)`);
  return { policyVersion: s.policyVersion!, updates: s.updates! };
}

/**
 * Save the served model for a later `rlvr serve <dir> --capture`: weights, optimizer state and
 * the counters, between engine calls (requests in flight finish first).
 */
export async function saveServed(ctx: ServeContext, dir: string): Promise<void> {
  await ctx.batcher.exclusive(async () => {
    await ctx.engine.save(dir, { optimizer: true });
    writeFileSync(join(dir, CAPTURE_STATE), JSON.stringify({ policyVersion: ctx.policyVersion, updates: ctx.captureUpdates } satisfies CaptureState) + "\n");
  });
  ctx.savedAt = ctx.captureUpdates;
}
