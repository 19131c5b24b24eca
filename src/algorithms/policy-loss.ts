/**
 * `makePolicyLoss`: the TokenLossFn the trainer hands to `engine.forwardBackward`. It combines
 * the registered policy loss, aggregation against the step's global counts, the KL-in-loss term,
 * the entropy bonus and the train/inference mismatch correction:
 *
 *   L = Σ_{b,t} w[b,t] · ( ρ[b,t] · ℓ_policy[b,t] + β · kl[b,t] − c · H[b,t] )
 *
 * with w the aggregation weights (aggregation.ts), ρ the mismatch weights (mismatch.ts; 1 when
 * off), β the KL coefficient (0 unless kl.placement is "loss"), c the entropy coefficient.
 * dL/dlp = w · (ρ · ∂ℓ/∂lp + β · ∂kl/∂lp), dL/dH = −c · w. When batch.oldLogprobs is absent,
 * lp_old = sg(lp) (on-policy: r = 1 with gradient r).
 */
import type { LossOutput, TokenBatch, TokenLossFn } from "../core/engine.ts";
import { aggregationWeights, sequenceTokenCounts } from "./aggregation.ts";
import type { AlgorithmConfig } from "./config.ts";
import { klToken } from "./kl.ts";
import { clampedExp } from "./losses/common.ts";
import "./losses/index.ts";
import { mismatchWeights } from "./mismatch.ts";
import { getPolicyLoss } from "./registry.ts";
import type { NumArray, PolicyLossContext, StepCounts, StepState } from "./types.ts";

/** Scores as the loss reads them (float32 from an engine, or float64 in tests). */
export interface LossScores {
  logprobs: NumArray;
  entropy?: NumArray | undefined;
}

/** Float64 result of a loss, before conversion to the engine's Float32Arrays. */
export interface LossTerms {
  loss: number;
  dLogprobs: Float64Array;
  dEntropy?: Float64Array;
  metrics: Record<string, number>;
}

/** Options of the float64 core. */
export interface LossCoreOptions {
  /** Controller values for this step (KL/entropy coefficients, BAPO bounds). */
  state?: StepState | undefined;
  /**
   * sg(lp) values. Defaults to scores.logprobs. Finite-difference tests pass the unperturbed
   * log-probs here so the stop-gradient parts stay fixed while `scores.logprobs` moves.
   */
  detached?: NumArray | undefined;
}

function checkLen(name: string, arr: NumArray | undefined, n: number): void {
  if (arr !== undefined && arr.length !== n) throw new RangeError(`policy loss: ${name} has length ${arr.length}, expected B*T = ${n}`);
}

/**
 * The float64 core of `makePolicyLoss` (exported for tests and custom trainers).
 * @param cfg     resolved algorithm config (`resolveAlgorithm`).
 * @param counts  GLOBAL counts of the optimizer step (`stepCounts`).
 * @param scores  logprobs [B*T] (and entropy [B*T] when the entropy coefficient is non-zero).
 * @param batch   the micro-batch: lossMask, advantages (required), oldLogprobs, refLogprobs (needed
 *                for KL in the loss), samplerLogprobs (needed when cfg.mismatch is set).
 * @returns loss (this micro-batch's share of the step loss), dLogprobs, dEntropy, metrics
 *          (micro-batch-summable, see metrics.ts).
 * @throws Error naming the missing input and the fix.
 */
export function policyLossTerms(cfg: AlgorithmConfig, counts: StepCounts, scores: LossScores, batch: TokenBatch, opts: LossCoreOptions = {}): LossTerms {
  const B = batch.batchSize;
  const T = batch.seqLen;
  const n = B * T;
  const mask = batch.lossMask;
  checkLen("lossMask", mask, n);
  checkLen("scores.logprobs", scores.logprobs, n);
  checkLen("scores.entropy", scores.entropy, n);
  checkLen("oldLogprobs", batch.oldLogprobs, n);
  checkLen("refLogprobs", batch.refLogprobs, n);
  checkLen("samplerLogprobs", batch.samplerLogprobs, n);
  checkLen("advantages", batch.advantages, n);
  const adv = batch.advantages;
  if (!adv) throw new Error("policy loss: batch.advantages is missing; fill it with computeTokenAdvantages(...) before forwardBackward");
  const state = opts.state ?? {};
  const lp = scores.logprobs;
  const detached = opts.detached ?? lp;
  checkLen("detached", detached, n);
  const old = batch.oldLogprobs ?? detached;

  const seqTokens = sequenceTokenCounts(mask, B, T);
  let localTokens = 0;
  let localSeqs = 0;
  for (const x of seqTokens) {
    localTokens += x;
    if (x > 0) localSeqs++;
  }
  if (localTokens > counts.tokens * (1 + 1e-12) + 1e-9 || localSeqs > counts.sequences) {
    throw new Error(
      `policy loss: this micro-batch has ${localTokens} tokens in ${localSeqs} sequences but counts say the whole step has ${counts.tokens} tokens in ${counts.sequences}; pass the step's global counts (stepCounts(allMicroBatches, maxResponseLength))`,
    );
  }
  const w = aggregationWeights(cfg.aggregation, mask, B, T, counts);

  // Policy term.
  const entry = getPolicyLoss(cfg.loss.name);
  const ctx: PolicyLossContext = {
    batchSize: B, seqLen: T, logprobs: lp, detached, oldLogprobs: old, advantages: adv, mask, seqTokens,
    options: cfg.loss, state, counts,
  };
  const terms = entry.fn(ctx);
  if (terms.loss.length !== n || terms.grad.length !== n) {
    throw new Error(`policy loss "${cfg.loss.name}" returned arrays of length ${terms.loss.length}/${terms.grad.length}, expected B*T = ${n}`);
  }

  // Mismatch weights.
  let rho: Float64Array | undefined;
  const metrics: Record<string, number> = {};
  const N = Math.max(counts.tokens, 1e-300);
  if (cfg.mismatch) {
    if (!batch.samplerLogprobs) throw new Error("policy loss: mismatch correction is on but batch.samplerLogprobs is missing; keep the sampler's per-token log-probs in the batch, or remove `mismatch` from the config");
    const mw = mismatchWeights(old, batch.samplerLogprobs, mask, B, T, cfg.mismatch);
    rho = mw.weights;
    metrics["mismatch/weight_mean"] = mw.weightSum / N;
    metrics["mismatch/corrected_frac"] = mw.correctedTokens / N;
    metrics["mismatch/logprob_gap"] = mw.absGapSum / N;
    metrics["mismatch/ratio_max"] = mw.ratioMax;
  }

  // A sampler's batch trained without a re-score pass (src/pipeline/collect.ts rescoreReason): the
  // sampler-trainer gap |Δ log p| over trained tokens, as the re-score pass would report it.
  if (batch.samplerLogprobs && !batch.oldLogprobs) {
    let gap = 0;
    let gapMax = 0;
    for (let i = 0; i < n; i++) {
      if (!(mask[i]! > 0)) continue;
      const d = Math.abs(detached[i]! - batch.samplerLogprobs[i]!);
      gap += d;
      gapMax = Math.max(gapMax, d);
    }
    metrics["rollout/logprob_diff"] = gap / N;
    metrics["rollout/logprob_diff_max"] = gapMax;
  }

  // KL and entropy coefficients.
  const klCoef = cfg.kl.placement === "loss" ? (state.klCoef ?? cfg.kl.coef) : 0;
  const ref = batch.refLogprobs;
  if (klCoef > 0 && !ref) throw new Error("policy loss: kl.coef > 0 with kl.placement \"loss\" needs batch.refLogprobs; score the batch with the reference model (engine.score(batch, {model: \"reference\"}))");
  const entCoef = state.entropyCoef ?? cfg.entropy.coef;
  const H = scores.entropy;
  if (entCoef !== 0 && !H) throw new Error("policy loss: the entropy coefficient is non-zero but scores.entropy is missing; call engine.forwardBackward(batch, loss, {entropy: true})");

  const dLogprobs = new Float64Array(n);
  const dEntropy = entCoef !== 0 ? new Float64Array(n) : undefined;
  let lossPolicy = 0;
  let lossKl = 0;
  let lossEnt = 0;
  let clipLow = 0;
  let clipHigh = 0;
  let ratioSum = 0;
  let ratioMax = 0;
  let approxKl = 0;
  let klSum = 0;
  let entSum = 0;
  let advSum = 0;
  for (let i = 0; i < n; i++) {
    const m = mask[i]!;
    if (!(m > 0)) continue;
    const wi = w[i]!;
    const p = rho ? rho[i]! : 1;
    lossPolicy += wi * p * terms.loss[i]!;
    let d = wi * p * terms.grad[i]!;
    if (ref) {
      const [kv, kg] = klToken(cfg.kl.estimator, lp[i]!, detached[i]!, ref[i]!);
      klSum += m * kv;
      if (klCoef > 0) {
        lossKl += wi * klCoef * kv;
        d += wi * klCoef * kg;
      }
    }
    dLogprobs[i] = d;
    if (H) {
      entSum += m * H[i]!;
      if (dEntropy) {
        lossEnt -= wi * entCoef * H[i]!;
        dEntropy[i] = -wi * entCoef;
      }
    }
    if (terms.clippedLow?.[i]) clipLow += m;
    if (terms.clippedHigh?.[i]) clipHigh += m;
    const logr = detached[i]! - old[i]!;
    const r = clampedExp(logr)[0];
    ratioSum += m * r;
    ratioMax = Math.max(ratioMax, r);
    approxKl += m * (r - 1 - Math.max(-20, Math.min(20, logr)));
    advSum += m * adv[i]!;
  }
  const loss = lossPolicy + lossKl + lossEnt;
  Object.assign(metrics, {
    loss,
    "loss/policy": lossPolicy,
    clipfrac_low: clipLow / N,
    clipfrac_high: clipHigh / N,
    ratio_mean: ratioSum / N,
    ratio_max: ratioMax,
    approx_kl: approxKl / N,
    advantage_mean: advSum / N,
    tokens: localTokens,
    sequences: localSeqs,
  });
  if (klCoef > 0) metrics["loss/kl"] = lossKl;
  if (ref) metrics["kl"] = klSum / N;
  if (dEntropy) metrics["loss/entropy"] = lossEnt;
  if (H) metrics["entropy"] = entSum / N;
  if (terms.metrics) for (const [k, v] of Object.entries(terms.metrics)) metrics[k] = v;
  const out: LossTerms = { loss, dLogprobs, metrics };
  if (dEntropy) out.dEntropy = dEntropy;
  return out;
}

/** Convert float64 terms to the engine's LossOutput. */
export function toLossOutput(t: LossTerms): LossOutput {
  const out: LossOutput = { loss: t.loss, dLogprobs: Float32Array.from(t.dLogprobs), metrics: t.metrics };
  if (t.dEntropy) out.dEntropy = Float32Array.from(t.dEntropy);
  return out;
}

/**
 * Build the TokenLossFn of one optimizer step.
 * @param cfg     resolved algorithm config (`resolveAlgorithm`).
 * @param counts  GLOBAL counts of the whole step (`stepCounts(microBatches, maxResponseLength)`);
 *                the micro-batch losses and gradients then sum to the full-batch ones.
 * @param state   per-step controller values: klCoef (AdaptiveKlController.coef), entropyCoef
 *                (AdaptiveEntropyController.update(...)), clipBounds (bapoClipBounds(...)).
 * @returns (scores, batch) => {loss, dLogprobs, dEntropy (when the entropy coefficient ≠ 0), metrics}.
 *          Metrics are micro-batch-summable; combine them with `combineMetrics`.
 * @throws (when called) Error naming a missing batch field or score and how to supply it.
 */
export function makePolicyLoss(cfg: AlgorithmConfig, counts: StepCounts, state: StepState = {}): TokenLossFn {
  getPolicyLoss(cfg.loss.name); // fail early on an unknown name
  return (scores, batch) => toLossOutput(policyLossTerms(cfg, counts, scores, batch, { state }));
}
