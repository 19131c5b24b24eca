/**
 * KL to the reference policy: per-token estimators, KL-in-reward, and the KL coefficient
 * controllers. Formulas: docs/reference/formulas.md ("KL to the reference policy");
 * estimators from Schulman, "Approximating KL Divergence" (2020 note), as used by verl/TRL/OpenRLHF.
 * All estimate KL(π‖π_ref) from samples of π; x = lp_ref − lp.
 */
import type { NumArray } from "./types.ts";

/** Names of the KL estimators. */
export type KlEstimator = "k1" | "k2" | "k3" | "k3+";
export const KL_ESTIMATORS: readonly KlEstimator[] = ["k1", "k2", "k3", "k3+"];

/**
 * One token's KL estimate and its derivative with respect to lp.
 * - k1 = lp − lp_ref; k2 = ½(lp − lp_ref)²;
 * - k3 = exp(x) − x − 1 with x = clamp(lp_ref − lp, ±20), result clamped to ±10 (zero gradient
 *   where a clamp is active);
 * - k3+ = value of k3, gradient of k2 (straight-through: k3(sg lp) + k2(lp) − k2(sg lp)).
 * @param lp     current log-prob (differentiable), nats.
 * @param lpSg   sg(lp): same value, treated as a constant (only k3+ uses it).
 * @param ref    reference log-prob, nats.
 * @returns [value, d value / d lp].
 * Pinned by golden cases.kl (k1, k2, k3) and the finite-difference tests.
 */
export function klToken(estimator: KlEstimator, lp: number, lpSg: number, ref: number): [number, number] {
  switch (estimator) {
    case "k1":
      return [lp - ref, 1];
    case "k2": {
      const d = lp - ref;
      return [0.5 * d * d, d];
    }
    case "k3":
      return k3(lp, ref);
    case "k3+": {
      const d = lp - ref;
      const dSg = lpSg - ref;
      return [k3(lpSg, ref)[0] + 0.5 * d * d - 0.5 * dSg * dSg, d];
    }
    default:
      throw new RangeError(`unknown KL estimator ${JSON.stringify(estimator)}; expected one of ${KL_ESTIMATORS.join(", ")}`);
  }
}

function k3(lp: number, ref: number): [number, number] {
  const raw = ref - lp;
  const x = Math.min(20, Math.max(-20, raw));
  const v = Math.exp(x) - x - 1;
  if (v > 10) return [10, 0];
  const g = raw === x ? 1 - Math.exp(x) : 0;
  return [v, g];
}

/**
 * Per-token KL penalty values (for KL-in-reward with a token-level estimator such as
 * `reinforce_pp`: pass −β × this as `tokenRewards`).
 * @param logprobs    [B*T] log-probs of the policy that sampled (nats).
 * @param refLogprobs [B*T] reference log-probs.
 * @param mask        [B*T] loss mask.
 * @returns Float32Array[B*T]: kl_t · m_t (value only, no coefficient).
 * @throws RangeError on length mismatch.
 */
export function klPenaltyPerToken(logprobs: NumArray, refLogprobs: NumArray, mask: NumArray, estimator: KlEstimator = "k1"): Float32Array {
  if (logprobs.length !== refLogprobs.length || logprobs.length !== mask.length) {
    throw new RangeError(`klPenaltyPerToken: logprobs (${logprobs.length}), refLogprobs (${refLogprobs.length}) and mask (${mask.length}) must have the same length B*T`);
  }
  const out = new Float32Array(logprobs.length);
  for (let i = 0; i < out.length; i++) {
    if (mask[i]! > 0) out[i] = klToken(estimator, logprobs[i]!, logprobs[i]!, refLogprobs[i]!)[0] * mask[i]!;
  }
  return out;
}

/**
 * KL in the reward: s_b − β Σ_t m kl_t (ALGORITHMS.md "Placement").
 * @param rewards     [B] outcome rewards (NaN stays NaN: still unscorable).
 * @param logprobs    [N*T] log-probs of the policy that sampled (nats); N = B rows, or rowOf.length.
 * @param refLogprobs [N*T] reference log-probs.
 * @param mask        [N*T].
 * @param coef        β ≥ 0.
 * @param rowOf       [N] the reward each row belongs to, when a reward covers several rows (a
 *                    multi-turn episode, one row per turn): its penalty sums over all of them.
 *                    Default: row b is reward b.
 * @returns Float32Array[B].
 * @throws RangeError on shape mismatch.
 */
export function applyKlToRewards(
  rewards: NumArray,
  logprobs: NumArray,
  refLogprobs: NumArray,
  mask: NumArray,
  coef: number,
  estimator: KlEstimator = "k1",
  rowOf?: ArrayLike<number>,
): Float32Array {
  const B = rewards.length;
  const N = rowOf ? rowOf.length : B;
  if (B === 0 || N === 0) return Float32Array.from(rewards);
  if (mask.length % N !== 0) throw new RangeError(`applyKlToRewards: mask length ${mask.length} is not a multiple of the ${N} rows`);
  const T = mask.length / N;
  const kl = klPenaltyPerToken(logprobs, refLogprobs, mask, estimator);
  const sums = new Float64Array(B);
  for (let b = 0; b < N; b++) {
    const r = rowOf ? rowOf[b]! : b;
    if (!(r >= 0 && r < B)) throw new RangeError(`applyKlToRewards: row ${b} belongs to reward ${r}, outside 0..${B - 1}`);
    for (let t = 0; t < T; t++) sums[r] += kl[b * T + t]!;
  }
  const out = new Float32Array(B);
  for (let b = 0; b < B; b++) out[b] = rewards[b]! - coef * sums[b]!;
  return out;
}

/** A KL coefficient controller: `coef` is β for the next step. */
export interface KlController {
  readonly coef: number;
  /** Feed the step's measured KL (mean per token or per sequence, matching `target`) and the number of samples. */
  update(currentKl: number, nSamples: number): number;
}

/** Fixed β. */
export class FixedKlController implements KlController {
  constructor(public readonly coef: number) {}
  update(): number {
    return this.coef;
  }
}

/**
 * Adaptive β (Ziegler et al. 2019, "Fine-Tuning Language Models from Human Preferences",
 * arXiv:1909.08593; ALGORITHMS.md): β ← β (1 + clip(kl/target − 1, −0.2, 0.2) · n/horizon).
 * @param init    initial β (> 0).
 * @param target  target KL (> 0), in the same units as the value passed to `update`.
 * @param horizon horizon in samples (> 0), e.g. 10000.
 */
export class AdaptiveKlController implements KlController {
  private value: number;
  constructor(init: number, readonly target: number, readonly horizon: number) {
    if (!(init > 0) || !(target > 0) || !(horizon > 0)) {
      throw new RangeError(`AdaptiveKlController: init, target and horizon must be > 0 (got ${init}, ${target}, ${horizon})`);
    }
    this.value = init;
  }
  get coef(): number {
    return this.value;
  }
  /** @returns the new β. Non-finite KL leaves β unchanged. */
  update(currentKl: number, nSamples: number): number {
    if (!Number.isFinite(currentKl)) return this.value;
    const err = Math.min(0.2, Math.max(-0.2, currentKl / this.target - 1));
    this.value *= 1 + (err * nSamples) / this.horizon;
    return this.value;
  }
}
