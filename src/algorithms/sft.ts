/**
 * SFT loss for the supervised stage: negative log-likelihood of the masked tokens, optionally
 * weighted per token by batch.weights, aggregated like the policy losses against the GLOBAL
 * counts of the step (so micro-batches sum to the full batch).
 */
import type { TokenBatch, TokenLossFn } from "../core/engine.ts";
import { aggregationWeights } from "./aggregation.ts";
import type { LossScores, LossTerms } from "./policy-loss.ts";
import { toLossOutput } from "./policy-loss.ts";
import type { AggregationMode, StepCounts } from "./types.ts";

/** Options of the SFT loss. */
export interface SftOptions {
  /** Aggregation mode (default "token-mean"). */
  aggregation?: AggregationMode;
  /** Multiply each token's NLL by batch.weights when present (default true). Normalisers stay token counts. */
  useWeights?: boolean;
}

/**
 * Float64 core of `makeSftLoss`: L = Σ w[b,t] · u[b,t] · (−lp[b,t]), u = batch.weights or 1.
 * @returns loss, dLogprobs = −w·u, metrics {loss, nll (token mean of −lp, summable), tokens}.
 */
export function sftLossTerms(counts: StepCounts, scores: LossScores, batch: TokenBatch, opts: SftOptions = {}): LossTerms {
  const B = batch.batchSize;
  const T = batch.seqLen;
  const n = B * T;
  if (scores.logprobs.length !== n) throw new RangeError(`sft loss: scores.logprobs has length ${scores.logprobs.length}, expected B*T = ${n}`);
  const u = opts.useWeights === false ? undefined : batch.weights;
  if (u && u.length !== n) throw new RangeError(`sft loss: batch.weights has length ${u.length}, expected B*T = ${n}`);
  const w = aggregationWeights(opts.aggregation ?? "token-mean", batch.lossMask, B, T, counts);
  const dLogprobs = new Float64Array(n);
  let loss = 0;
  let nll = 0;
  let tokens = 0;
  for (let i = 0; i < n; i++) {
    const m = batch.lossMask[i]!;
    if (!(m > 0)) continue;
    const ui = u ? u[i]! : 1;
    const lp = scores.logprobs[i]!;
    loss += w[i]! * ui * -lp;
    dLogprobs[i] = -w[i]! * ui;
    nll += m * -lp;
    tokens += m;
  }
  return { loss, dLogprobs, metrics: { loss, nll: nll / Math.max(counts.tokens, 1e-300), tokens } };
}

/**
 * Build the SFT TokenLossFn of one optimizer step.
 * @param counts GLOBAL counts of the step (`stepCounts`).
 * @param opts   aggregation (default "token-mean"), useWeights (default true).
 * @returns (scores, batch) => {loss, dLogprobs, metrics}; no entropy term.
 */
export function makeSftLoss(counts: StepCounts, opts: SftOptions = {}): TokenLossFn {
  return (scores, batch) => toLossOutput(sftLossTerms(counts, scores, batch, opts));
}
