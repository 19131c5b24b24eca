/**
 * Length penalties for responses that approach or pass the generation cap (DAPO, Yu et al. 2025,
 * arXiv:2503.14476, §3.4 "Overlong Reward Shaping"). The clamped form is the algorithm library's
 * `dapoOverlongPenalty` (src/algorithms/shaping.ts, pinned by the golden vectors); this module
 * adds the options-object API the reward components use.
 */
import { dapoOverlongPenalty as clampedOverlongPenalty } from "../../algorithms/shaping.ts";

export interface OverlongOptions {
  /** L_max: the generation cap in tokens. */
  maxLength: number;
  /** L_buf (the paper's L_cache): width of the ramp below the cap, tokens. */
  buffer: number;
  /** f: penalty at the cap (default 1.0). */
  factor?: number;
}

function check(o: OverlongOptions): void {
  if (!(o.maxLength > 0)) throw new Error(`overlong.maxLength: expected a number > 0, got ${o.maxLength}`);
  if (!(o.buffer > 0) || o.buffer > o.maxLength) throw new Error(`overlong.buffer: expected 0 < buffer ≤ maxLength, got ${o.buffer}`);
}

/**
 * DAPO overlong penalty, as verl implements it:
 *   expected = L_max − L_buf;  penalty = min(−(len − expected) / L_buf · f, 0).
 * 0 up to `expected`, a linear ramp to −f at L_max, and (unclamped) below −f past L_max.
 * @param length response length in tokens
 * @returns penalty ≤ 0, to be added to the reward
 * @throws Error when maxLength/buffer are invalid
 */
export function dapoOverlongPenalty(length: number, o: OverlongOptions): number {
  check(o);
  const expected = o.maxLength - o.buffer;
  return Math.min((-(length - expected) / o.buffer) * (o.factor ?? 1), 0) + 0; // + 0 turns −0 into 0
}

/**
 * DAPO soft overlong punishment (the paper's piecewise form, Eq. 13):
 *   0                              if len ≤ L_max − L_buf
 *   ((L_max − L_buf) − len)/L_buf·f if L_max − L_buf < len ≤ L_max
 *   −f                             if len > L_max
 * Same ramp as dapoOverlongPenalty, clamped at −f beyond the cap.
 */
export function softOverlongPunishment(length: number, o: OverlongOptions): number {
  check(o);
  return clampedOverlongPenalty(length, o.maxLength, o.buffer, o.factor ?? 1) + 0; // + 0 turns −0 into 0
}
