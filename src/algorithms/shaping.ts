/**
 * Reward-shaping formulas the algorithm presets refer to. The reward stage (src/rewards/) applies
 * them; they live here so each formula is written and tested once.
 */

/**
 * DAPO soft overlong punishment (Yu et al. 2025, DAPO, arXiv:2503.14476):
 * expected = L_max − L_buf; penalty = min(−(len − expected)/L_buf · f, 0), further floored at −f
 * (lengths beyond L_max are truncated, so the ramp ends at −f).
 * @param length    response length (tokens, ≥ 0).
 * @param maxLength L_max (tokens, > 0).
 * @param buffer    L_buf (tokens, 0 < L_buf ≤ L_max).
 * @param factor    f (default 1.0).
 * @returns penalty ≤ 0, added to the reward.
 * @throws RangeError on a non-positive maxLength/buffer or buffer > maxLength.
 * Pinned by golden cases.dapo_overlong.
 */
export function dapoOverlongPenalty(length: number, maxLength: number, buffer: number, factor = 1.0): number {
  if (!(maxLength > 0) || !(buffer > 0) || buffer > maxLength) {
    throw new RangeError(`dapoOverlongPenalty: need 0 < buffer (${buffer}) ≤ maxLength (${maxLength})`);
  }
  const expected = maxLength - buffer;
  const p = Math.min((-(length - expected) / buffer) * factor, 0);
  return Math.max(p, -factor);
}
