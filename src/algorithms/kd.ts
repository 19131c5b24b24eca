/**
 * KDRL's distillation term: reverse KL from the student to a teacher, estimated on the student's
 * own samples (Xu et al. 2025, "KDRL: Post-Training Reasoning LLMs via Unified Knowledge
 * Distillation and Reinforcement Learning", arXiv:2506.02208).
 *
 *   L_KD = β · Σ_{b,t} w[b,t] · k(lp[b,t], lp_T[b,t])
 *
 * with w the aggregation weights of the step (aggregation.ts), lp the student's log-probs of its
 * own sampled tokens, lp_T the teacher's log-probs of the same tokens (batch.refLogprobs: the
 * teacher sits in the engine's reference slot) and k a per-token KL estimator (kl.ts). The
 * default `k2` = ½(lp − lp_T)² has gradient (lp − lp_T)·∇lp, the on-sample score-function
 * gradient of KL(π_θ‖π_T) with the sampling distribution held fixed; `k3` is the low-variance
 * estimator of the value; KDRL compares both.
 */
import type { TokenBatch, TokenLossFn } from "../core/engine.ts";
import { aggregationWeights } from "./aggregation.ts";
import { klToken, type KlEstimator } from "./kl.ts";
import { toLossOutput, type LossScores, type LossTerms } from "./policy-loss.ts";
import type { AggregationMode, NumArray, StepCounts } from "./types.ts";

/** Options of the KD term. */
export interface KdOptions {
  /** β ≥ 0. */
  coef: number;
  /** Per-token estimator (default "k2"). */
  estimator?: KlEstimator;
  /** Aggregation (default "token-mean"). */
  aggregation?: AggregationMode;
  /** sg(lp) (finite-difference tests hold it fixed); default scores.logprobs. */
  detached?: NumArray;
}

/**
 * Float64 core of the KD term.
 * @param counts GLOBAL counts of the step.
 * @param scores logprobs [B*T] of the student.
 * @param batch  lossMask, refLogprobs = the teacher's log-probs [B*T] (required).
 * @returns loss, dLogprobs [B*T], metrics {"kd/loss", "kd/kl" (token mean of the estimate, summable)}.
 * @throws Error when batch.refLogprobs is missing (score the batch with the teacher in the reference slot).
 */
export function kdLossTerms(counts: StepCounts, scores: LossScores, batch: TokenBatch, opts: KdOptions): LossTerms {
  const B = batch.batchSize;
  const T = batch.seqLen;
  const n = B * T;
  const ref = batch.refLogprobs;
  if (!ref) throw new Error("kd loss: batch.refLogprobs (the teacher's log-probs) is missing; put the teacher in the reference slot and score the batch with engine.score(batch, {model: \"reference\"})");
  if (scores.logprobs.length !== n || ref.length !== n) throw new RangeError(`kd loss: logprobs (${scores.logprobs.length}) and refLogprobs (${ref.length}) must have length B*T = ${n}`);
  const est = opts.estimator ?? "k2";
  const sg = opts.detached ?? scores.logprobs;
  const w = aggregationWeights(opts.aggregation ?? "token-mean", batch.lossMask, B, T, counts);
  const dLogprobs = new Float64Array(n);
  let loss = 0;
  let klSum = 0;
  for (let i = 0; i < n; i++) {
    const m = batch.lossMask[i]!;
    if (!(m > 0)) continue;
    const [v, g] = klToken(est, scores.logprobs[i]!, sg[i]!, ref[i]!);
    loss += w[i]! * opts.coef * v;
    dLogprobs[i] = w[i]! * opts.coef * g;
    klSum += m * v;
  }
  return { loss, dLogprobs, metrics: { "kd/loss": loss, "kd/kl": klSum / Math.max(counts.tokens, 1e-300) } };
}

/** The KD term as a TokenLossFn (compose it with the policy loss: `composeLosses`). */
export function makeKdLoss(counts: StepCounts, opts: KdOptions): TokenLossFn {
  return (scores, batch) => toLossOutput(kdLossTerms(counts, scores, batch, opts));
}
