/**
 * ETTRL's entropy-based advantage reshaping (EAR, arXiv:2508.11356): scales each sequence's
 * advantage by its response entropy relative to its group. Options: `methods.ear`.
 * Transforms the advantages stage (sequence-level advantages only).
 */
import type { RunConfig } from "../config/schema.ts";
import { defineMethod } from "./define.ts";

/*
 * Entropy-based advantage reshaping for test-time RL (ETTRL, Liu et al. 2025, arXiv:2508.11356,
 * "EAR") — a STAND-IN. What the source states (abstract): TTRL's early pseudo-labels are biased
 * and breed over-confidence, which cuts output diversity and stalls training; EAR reshapes the
 * advantages with an entropy signal to rebalance exploration and exploitation. The paper's formula
 * is in its body, which was not available to us (nor a released implementation), so every detail
 * below is rlvr's choice, not the paper's:
 *   A'_i = A_i · clamp((H_i / H̄_g)^α, lo, hi)
 *   - H_i: the response's mean sampled-token surprisal −(1/T_i) Σ_t lp_t (the sampler's log-probs
 *     of its own tokens; its expectation is the mean token entropy) — not the full-distribution
 *     token entropy, and one number per response, not per token;
 *   - H̄_g: the mean of H over the response's group (relative, not absolute, entropy);
 *   - a multiplicative, clamped power law with knobs α, lo, hi (defaults 1, 0.5, 2 are ours).
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

export const ear = defineMethod<EarOptions>({
  name: "ear",
  configPath: "methods.ear",
  options: (cfg: RunConfig) => (cfg.methods?.selfPlay?.enabled ? undefined : cfg.methods?.ear),
  needs: { groups: true, sequenceAdvantages: true },
  stages: ["advantages"],
  order: 10,
  build: (_ctx, o) => ({
    advantages: (adv, s) => entropyAdvantageReshape(adv, s.rollouts.map((r) => responseEntropy(r.logprobs)), s.rollouts.map((r) => r.promptIndex), o),
  }),
});
