/**
 * Train/inference mismatch correction (TIS / MIS): when the engine that sampled is not the one
 * that trains, its log-probs differ; weight each token or sequence by
 * exp(lp_old_train − lp_sampler), truncated at a cap (TIS) or masked outside a band (MIS).
 * Sources: Yao et al. 2025, "Your Efficient RL Framework Secretly Brings You Off-Policy RL
 * Training" (blog; TIS), and TRL/verl/OpenRLHF's `*_is` options; ALGORITHMS.md "Mismatch correction".
 * The weights are constants for the gradient (they do not depend on the current lp).
 */
import type { NumArray } from "./types.ts";

/** Resolved `mismatch` block of the config. */
export interface MismatchConfig {
  /** "token": per-token ratio; "sequence": product over the sequence (exp Σ); "geometric": exp(mean). */
  level: "token" | "sequence" | "geometric";
  /** "truncate": min(w, cap) (TIS); "mask": w inside [low, high], 0 outside (MIS). */
  mode: "truncate" | "mask";
  /** Truncation cap (default 3.0). */
  cap: number;
  /** Mask band (default [0.5, 5.0], OpenRLHF). */
  low: number;
  high: number;
}

/** Mismatch weights plus micro-batch sums for metrics. */
export interface MismatchWeights {
  /** Weight per token, [B*T] (constant within a sequence for sequence levels). */
  weights: Float64Array;
  /** Σ m · w (for the mean weight). */
  weightSum: number;
  /** Σ m over tokens whose weight was truncated or masked. */
  correctedTokens: number;
  /** Σ m |lp_old_train − lp_sampler|. */
  absGapSum: number;
  /** Largest raw ratio seen on the mask. */
  ratioMax: number;
}

/**
 * Compute mismatch weights.
 * @param trainLogprobs   [B*T] trainer log-probs of the behaviour policy (batch.oldLogprobs, or
 *                        sg(lp) when on-policy), nats.
 * @param samplerLogprobs [B*T] the sampler's log-probs, nats.
 * @param mask            [B*T].
 * @throws RangeError on a shape mismatch.
 */
export function mismatchWeights(
  trainLogprobs: NumArray,
  samplerLogprobs: NumArray,
  mask: NumArray,
  batchSize: number,
  seqLen: number,
  cfg: MismatchConfig,
): MismatchWeights {
  const n = batchSize * seqLen;
  if (trainLogprobs.length !== n || samplerLogprobs.length !== n || mask.length !== n) {
    throw new RangeError(`mismatchWeights: oldLogprobs (${trainLogprobs.length}), samplerLogprobs (${samplerLogprobs.length}) and lossMask (${mask.length}) must all have length B*T = ${n}`);
  }
  const weights = new Float64Array(n);
  let weightSum = 0;
  let correctedTokens = 0;
  let absGapSum = 0;
  let ratioMax = 0;
  const correct = (ratio: number): [number, boolean] => {
    if (cfg.mode === "truncate") return ratio > cfg.cap ? [cfg.cap, true] : [ratio, false];
    return ratio < cfg.low || ratio > cfg.high ? [0, true] : [ratio, false];
  };
  const clampExp = (x: number): number => Math.exp(Math.min(20, Math.max(-20, x)));
  for (let b = 0; b < batchSize; b++) {
    let sum = 0;
    let cnt = 0;
    for (let t = 0; t < seqLen; t++) {
      const i = b * seqLen + t;
      const m = mask[i]!;
      if (!(m > 0)) continue;
      const gap = trainLogprobs[i]! - samplerLogprobs[i]!;
      absGapSum += m * Math.abs(gap);
      sum += m * gap;
      cnt += m;
    }
    if (cfg.level !== "token") {
      const raw = clampExp(cfg.level === "sequence" ? sum : cnt > 0 ? sum / cnt : 0);
      const [w, corrected] = correct(raw);
      if (cnt > 0) ratioMax = Math.max(ratioMax, raw);
      for (let t = 0; t < seqLen; t++) {
        const i = b * seqLen + t;
        const m = mask[i]!;
        if (!(m > 0)) continue;
        weights[i] = w;
        weightSum += m * w;
        if (corrected) correctedTokens += m;
      }
    } else {
      for (let t = 0; t < seqLen; t++) {
        const i = b * seqLen + t;
        const m = mask[i]!;
        if (!(m > 0)) continue;
        const raw = clampExp(trainLogprobs[i]! - samplerLogprobs[i]!);
        const [w, corrected] = correct(raw);
        ratioMax = Math.max(ratioMax, raw);
        weights[i] = w;
        weightSum += m * w;
        if (corrected) correctedTokens += m;
      }
    }
  }
  return { weights, weightSum, correctedTokens, absGapSum, ratioMax };
}
