/**
 * DAPO's soft overlong punishment (Yu et al. 2025, arXiv:2503.14476, §3.4 "Overlong Reward
 * Shaping", Eq. 13) — the one implementation in the library. With L_max the generation cap and
 * L_cache (here `buffer`) the width of the punishment interval:
 *
 *   R_length(len) = 0                                   len ≤ L_max − L_cache
 *                 = ((L_max − L_cache) − len) / L_cache  L_max − L_cache < len ≤ L_max
 *                 = −1                                  L_max < len
 *
 * scaled by `factor` (f, default 1). Clamping: the paper's third case floors the penalty at −f
 * beyond the cap, so this clamps at −f (verl's `min(−(len − expected)/L_buf · f, 0)` leaves it
 * unclamped; the two agree for len ≤ L_max, which is every response when the cap is the sampler's
 * max_new_tokens). It is added to the verifier reward. Pinned by the golden cases
 * `dapo_overlong` (test/algorithms/golden.test.ts) and test/rewards/shaping.test.ts.
 */

export interface OverlongOptions {
  /** L_max: the generation cap in tokens. */
  maxLength: number;
  /** L_cache: width of the ramp below the cap, tokens (0 < buffer ≤ maxLength). */
  buffer: number;
  /** f: penalty at and beyond the cap (default 1.0). */
  factor?: number;
}

/**
 * DAPO soft overlong punishment (see module doc).
 * @param length    response length in tokens (≥ 0)
 * @param maxLength L_max, tokens (> 0); or an options object {maxLength, buffer, factor}
 * @param buffer    L_cache, tokens (0 < buffer ≤ maxLength)
 * @param factor    f (default 1.0)
 * @returns penalty in [−f, 0], to be added to the reward
 * @throws RangeError on a non-positive maxLength/buffer, buffer > maxLength, or a negative factor
 */
export function dapoOverlongPenalty(length: number, maxLength: number | OverlongOptions, buffer?: number, factor = 1.0): number {
  if (typeof maxLength === "object") return dapoOverlongPenalty(length, maxLength.maxLength, maxLength.buffer, maxLength.factor ?? 1.0);
  const b = buffer as number;
  if (!(maxLength > 0) || !(b > 0) || b > maxLength) {
    throw new RangeError(`dapoOverlongPenalty: need 0 < buffer (${b}) ≤ maxLength (${maxLength})`);
  }
  if (!(factor >= 0)) throw new RangeError(`dapoOverlongPenalty: need factor ≥ 0, got ${factor}`);
  const expected = maxLength - b;
  const p = Math.min((-(length - expected) / b) * factor, 0);
  return Math.max(p, -factor) + 0; // + 0 turns −0 into 0
}
