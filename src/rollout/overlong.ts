/**
 * Overlong filtering: a response cut off by the token budget (stop reason `max_tokens`) is
 * masked out of the policy loss, so the model is not pushed towards or away from a reasoning that
 * was never allowed to finish (DAPO, Yu et al. 2025, arXiv:2503.14476, §3.4 "Overlong Filtering";
 * Kimi k1.5 and verl's `mask_truncated_samples`). The response still takes part in its group's
 * advantage statistics; it only stops contributing tokens (and, with a per-sequence aggregation,
 * stops counting as a sequence — `batchCounts` counts sequences with at least one unmasked token).
 * The soft reward shaping of §3.4 (`overlong` in the algorithm block) is separate and can be
 * combined with it.
 */

/**
 * The loss mask of one response.
 * @param stopReason why the response ended (`max_tokens` = truncated).
 * @param length     response tokens.
 * @param mask       an existing mask [length] (e.g. tool outputs already at 0), or undefined (all 1).
 * @returns [length] mask: all 0 for a truncated response, otherwise `mask` (or undefined when none).
 */
export function truncationMask(stopReason: string, length: number, mask?: ArrayLike<number>): ArrayLike<number> | undefined {
  if (stopReason !== "max_tokens") return mask;
  return new Float32Array(length);
}
