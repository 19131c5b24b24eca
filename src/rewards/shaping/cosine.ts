/**
 * Cosine length-scaling reward (Yeo et al. 2025, "Demystifying Long Chain-of-Thought Reasoning in
 * LLMs", arXiv:2502.03373, §4): the reward of a response depends on its correctness and moves
 * along a half cosine as its length L goes from 0 to the cap L_max:
 *   CosFn(t, T, η_min, η_max) = η_min + ½(η_max − η_min)(1 + cos(tπ/T))
 *   correct:   CosFn(L, L_max, r_L^c, r_0^c)  — short correct answers earn most
 *   wrong:     CosFn(L, L_max, r_L^w, r_0^w)  — long wrong answers are punished least
 *   truncated (L ≥ L_max, or flagged): r_exceed
 * Defaults are the values the paper reports (r_0^c = 2, r_L^c = 1, r_0^w = −10, r_L^w = 0,
 * r_exceed = −10); override them for other reward scales.
 */

export interface CosineLengthOptions {
  maxLength: number;
  /** Reward of a correct response of length 0 (r_0^c). Default 2. */
  correctStart?: number;
  /** Reward of a correct response at the cap (r_L^c). Default 1. */
  correctEnd?: number;
  /** Reward of a wrong response of length 0 (r_0^w). Default −10. */
  wrongStart?: number;
  /** Reward of a wrong response at the cap (r_L^w). Default 0. */
  wrongEnd?: number;
  /** Reward of a response that hit the cap (r_exceed). Default −10. */
  exceed?: number;
}

/** CosFn(t, T, η_min, η_max): η_max at t = 0, η_min at t = T. */
export function cosFn(t: number, T: number, etaMin: number, etaMax: number): number {
  return etaMin + 0.5 * (etaMax - etaMin) * (1 + Math.cos((t * Math.PI) / T));
}

/**
 * @param correct   verifier outcome
 * @param length    response length in tokens
 * @param truncated true when the response was cut at the cap (also implied by length ≥ maxLength)
 * @returns the shaped reward (replaces the 0/1 reward; it is not a penalty to add)
 * @throws Error when maxLength ≤ 0
 */
export function cosineLengthReward(correct: boolean, length: number, o: CosineLengthOptions, truncated = false): number {
  if (!(o.maxLength > 0)) throw new Error(`cosine.maxLength: expected a number > 0, got ${o.maxLength}`);
  if (truncated || length >= o.maxLength) return o.exceed ?? -10;
  const t = Math.max(0, length);
  return correct
    ? cosFn(t, o.maxLength, o.correctEnd ?? 1, o.correctStart ?? 2)
    : cosFn(t, o.maxLength, o.wrongEnd ?? 0, o.wrongStart ?? -10);
}
