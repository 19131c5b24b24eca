/**
 * Learning from expert (off-policy) trajectories inside RL.
 *
 * LUFFY (Yan et al. 2025, "Learning to Reason under Off-Policy Guidance", arXiv:2504.14945):
 * expert trajectories join the on-policy group before advantages are computed (mixed-policy
 * GRPO). On their tokens the importance ratio π_θ/π_expert is replaced by the regularised
 * "policy shaping" f(π_θ) = π_θ/(π_θ + γ) (γ = 0.1 in the paper; the expert's own probability is
 * taken as 1 and no clipping is applied), which keeps the gradient of low-probability expert
 * tokens from vanishing:
 *   ℓ_t = −A · f(p_t),  p_t = exp(lp_t),  ∂ℓ_t/∂lp_t = −A · p_t · γ/(p_t + γ)².
 * On-policy tokens keep the configured policy loss. Tokens of expert trajectories are marked by
 * `batch.weights > 0` (demonstration tokens carry supervised weights; on-policy tokens have 0).
 *
 * CHORD (Zhang et al. 2025, "On-Policy RL Meets Off-Policy Experts: Harmonizing Supervised
 * Fine-Tuning and Reinforcement Learning via Dynamic Weighting", arXiv:2508.11408):
 * L = (1 − μ)·L_RL + μ·L_SFT, μ on a schedule, and the token-wise weight of CHORD-φ
 *   φ(p_t) = p_t (1 − p_t)
 * on the SFT tokens (held as a constant in the gradient here: sg(φ)), which damps tokens the
 * policy already predicts (p → 1) and tokens far from it (p → 0).
 */
import type { TokenBatch, TokenLossFn } from "../core/engine.ts";
import { aggregationWeights } from "./aggregation.ts";
import type { AlgorithmConfig } from "./config.ts";
import { policyLossTerms, toLossOutput, type LossCoreOptions, type LossScores, type LossTerms } from "./policy-loss.ts";
import { sftLossTerms, type SftOptions } from "./sft.ts";
import type { NumArray, StepCounts, StepState } from "./types.ts";

/**
 * LUFFY policy shaping f(p) = p/(p + γ) of a token's probability, and its derivative with
 * respect to the log-prob: [f, df/dlp] with df/dlp = p·γ/(p + γ)². lp is clamped to ≤ 0.
 * @throws RangeError unless γ > 0.
 */
export function luffyShaping(lp: number, gamma: number): [number, number] {
  if (!(gamma > 0)) throw new RangeError(`luffy shaping: gamma must be > 0, got ${gamma}`);
  const p = Math.exp(Math.min(0, lp));
  const f = p / (p + gamma);
  const d = lp > 0 ? 0 : (p * gamma) / ((p + gamma) * (p + gamma));
  return [f, d];
}

/** Options of the mixed (LUFFY) policy loss. */
export interface MixedLossOptions extends LossCoreOptions {
  /** γ of the shaping f(p) = p/(p + γ) (LUFFY: 0.1). */
  gamma: number;
}

/**
 * Float64 core of the mixed-policy loss: the configured policy loss (policyLossTerms, with KL and
 * entropy terms) on on-policy tokens, LUFFY's shaped term on expert tokens (batch.weights > 0),
 * both aggregated with the step's global counts over all tokens.
 * @returns loss, dLogprobs, dEntropy (on-policy tokens only), metrics incl. "luffy/expert_tokens",
 *          "luffy/shaping_mean" (token mean of f over expert tokens, summable with the tokens count).
 */
export function mixedPolicyLossTerms(cfg: AlgorithmConfig, counts: StepCounts, scores: LossScores, batch: TokenBatch, opts: MixedLossOptions): LossTerms {
  const w = batch.weights;
  if (!w) return policyLossTerms(cfg, counts, scores, batch, opts);
  const B = batch.batchSize;
  const T = batch.seqLen;
  const n = B * T;
  if (w.length !== n) throw new RangeError(`mixed policy loss: batch.weights has length ${w.length}, expected B*T = ${n}`);
  const onMask = new Float32Array(n);
  for (let i = 0; i < n; i++) onMask[i] = w[i]! > 0 ? 0 : batch.lossMask[i]!;
  const on = policyLossTerms(cfg, counts, scores, { ...batch, lossMask: onMask }, opts);
  const agg = aggregationWeights(cfg.aggregation, batch.lossMask, B, T, counts);
  const adv = batch.advantages!;
  let loss = 0;
  let expertTokens = 0;
  let fSum = 0;
  const d = on.dLogprobs;
  for (let i = 0; i < n; i++) {
    const m = batch.lossMask[i]!;
    if (!(m > 0) || !(w[i]! > 0)) continue;
    const [f, df] = luffyShaping(scores.logprobs[i]!, opts.gamma);
    loss += agg[i]! * -adv[i]! * f;
    d[i] = agg[i]! * -adv[i]! * df;
    expertTokens += m;
    fSum += m * f;
  }
  const metrics = { ...on.metrics, loss: on.loss + loss, "luffy/loss": loss, "luffy/expert_tokens": expertTokens, "luffy/shaping_sum": fSum };
  const out: LossTerms = { loss: on.loss + loss, dLogprobs: d, metrics };
  if (on.dEntropy) out.dEntropy = on.dEntropy;
  return out;
}

/** The mixed-policy loss as a TokenLossFn (drop-in for makePolicyLoss when experts join groups). */
export function makeMixedPolicyLoss(cfg: AlgorithmConfig, counts: StepCounts, state: StepState, gamma: number): TokenLossFn {
  return (scores, batch) => toLossOutput(mixedPolicyLossTerms(cfg, counts, scores, batch, { state, gamma }));
}

/** CHORD-φ token weight φ(p) = p(1 − p) of a log-prob (0 ≤ φ ≤ ¼). */
export function chordPhi(lp: number): number {
  const p = Math.exp(Math.min(0, lp));
  return p * (1 - p);
}

/** Options of the CHORD SFT term. */
export interface ChordSftOptions extends SftOptions {
  /** Apply φ(p) = p(1 − p) per token (CHORD-φ; default true). */
  phi?: boolean;
  /** sg(lp) that φ is computed from (default scores.logprobs; FD tests hold it fixed). */
  detached?: NumArray;
}

/**
 * CHORD's SFT term on expert tokens: Σ w · u · sg(φ(p)) · (−lp), u = batch.weights or 1
 * (sftLossTerms with the φ-weighted batch). Metrics add "chord/phi_sum" (Σ m·φ).
 */
export function chordSftLossTerms(counts: StepCounts, scores: LossScores, batch: TokenBatch, opts: ChordSftOptions = {}): LossTerms {
  if (opts.phi === false) return sftLossTerms(counts, scores, batch, opts);
  const n = batch.batchSize * batch.seqLen;
  const sg = opts.detached ?? scores.logprobs;
  const u = new Float32Array(n);
  let phiSum = 0;
  for (let i = 0; i < n; i++) {
    if (!(batch.lossMask[i]! > 0)) continue;
    const phi = chordPhi(sg[i]!);
    u[i] = phi * (batch.weights && opts.useWeights !== false ? batch.weights[i]! : 1);
    phiSum += batch.lossMask[i]! * phi;
  }
  const t = sftLossTerms(counts, scores, { ...batch, weights: u }, { ...opts, useWeights: true });
  t.metrics["chord/phi_sum"] = phiSum;
  return t;
}

/** The CHORD SFT term as a TokenLossFn. */
export function makeChordSftLoss(counts: StepCounts, opts: ChordSftOptions = {}): TokenLossFn {
  return (scores, batch) => toLossOutput(chordSftLossTerms(counts, scores, batch, opts));
}
