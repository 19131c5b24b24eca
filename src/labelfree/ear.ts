/**
 * Entropy-based advantage reshaping for test-time RL (ETTRL, Liu et al. 2025, arXiv:2508.11356,
 * "EAR"). The paper's exact rule is in its body; rlvr ships a documented stand-in with the same
 * intent — keep early, over-confident pseudo-labels from collapsing diversity — by scaling each
 * response's advantage with its entropy relative to its group:
 *   A'_i = A_i · clamp((H_i / H̄_g)^α, lo, hi)
 * H_i is the response's mean per-token sampling entropy estimate −(1/T_i) Σ_t lp_t (the sampler's
 * log-probs of its own tokens; its expectation is the mean token entropy), H̄_g the group mean.
 * Confident (low-entropy) responses move less, uncertain ones more. α = 0 leaves A unchanged.
 */

/** Options of EAR. */
export interface EarOptions {
  alpha: number;
  min: number;
  max: number;
}

/**
 * @param adv      advantages [B] (B may exceed entropy.length: extra sequences are left as is).
 * @param entropy  per-response entropy estimate [B0], B0 ≤ B, nats/token.
 * @param groupIds group of each response [B0].
 * @returns a new Float32Array[B] of reshaped advantages.
 */
export function entropyAdvantageReshape(adv: Float32Array, entropy: ArrayLike<number>, groupIds: ArrayLike<number>, o: EarOptions): Float32Array {
  const sum = new Map<number, { s: number; n: number }>();
  for (let i = 0; i < entropy.length; i++) {
    const e = sum.get(groupIds[i]!) ?? { s: 0, n: 0 };
    e.s += entropy[i]!;
    e.n++;
    sum.set(groupIds[i]!, e);
  }
  const out = Float32Array.from(adv);
  for (let i = 0; i < entropy.length; i++) {
    const g = sum.get(groupIds[i]!)!;
    const mean = g.s / g.n;
    const rel = mean > 1e-12 ? entropy[i]! / mean : 1;
    const scale = Math.min(o.max, Math.max(o.min, Math.pow(Math.max(rel, 1e-12), o.alpha)));
    out[i] = adv[i]! * scale;
  }
  return out;
}

/** −mean log-prob of a response's own tokens (nats/token); 0 for an empty response. */
export function responseEntropy(logprobs: ArrayLike<number>): number {
  if (logprobs.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < logprobs.length; i++) s -= logprobs[i]!;
  return s / logprobs.length;
}
