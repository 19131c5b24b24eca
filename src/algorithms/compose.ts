/**
 * Composing token losses: L = Σ_k c_k · L_k. Cotangents add, so a composed loss is a plain
 * TokenLossFn for `engine.forwardBackward`. Used for GRPO + KD (KDRL), (1 − μ)·GRPO + μ·SFT
 * (CHORD), and any user-defined auxiliary term.
 */
import type { LossOutput, TokenLossFn } from "../core/engine.ts";

/** One part of a composed loss: a loss and its coefficient (default 1). */
export interface LossPart {
  fn: TokenLossFn;
  coef?: number;
}

/**
 * Sum of losses. Each part's metrics are kept under its own names; a name that two parts share is
 * summed (metrics are micro-batch-summable, metrics.ts). `loss` is the composed value.
 * dEntropy is present when any part returns it.
 */
export function composeLosses(parts: readonly LossPart[]): TokenLossFn {
  return (scores, batch) => {
    const n = batch.batchSize * batch.seqLen;
    const dLogprobs = new Float32Array(n);
    let dEntropy: Float32Array | undefined;
    let loss = 0;
    const metrics: Record<string, number> = {};
    for (const { fn, coef = 1 } of parts) {
      const out: LossOutput = fn(scores, batch);
      loss += coef * out.loss;
      for (let i = 0; i < n; i++) dLogprobs[i]! += coef * out.dLogprobs[i]!;
      if (out.dEntropy) {
        dEntropy ??= new Float32Array(n);
        for (let i = 0; i < n; i++) dEntropy[i]! += coef * out.dEntropy[i]!;
      }
      for (const [k, v] of Object.entries(out.metrics)) if (k !== "loss") metrics[k] = (metrics[k] ?? 0) + v;
    }
    metrics["loss"] = loss;
    const res: LossOutput = { loss, dLogprobs, metrics };
    if (dEntropy) res.dEntropy = dEntropy;
    return res;
  };
}

/** c · L (a one-part composition). */
export function scaleLoss(fn: TokenLossFn, coef: number): TokenLossFn {
  return composeLosses([{ fn, coef }]);
}
