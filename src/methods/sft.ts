/**
 * SFT utilities for the guided methods: demonstrations as Sequences (from a dataset's solutions,
 * a teacher, or the model's own filtered samples) and one supervised optimizer step on them,
 * training through the pipeline's optimize() like every other update (the SFT stage in
 * src/trainer/sft.ts does the same over the training set).
 */
import { makeSftLoss, combineMetrics, type StepCounts } from "../algorithms/index.ts";
import type { Engine, TokenLossFn } from "../core/engine.ts";
import { optimize } from "../pipeline/optimize.ts";
import type { Example } from "../core/example.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Sequence } from "../core/sequence.ts";

/**
 * A demonstration for `example`: its prompt tokens and `target` (default example.solution ??
 * example.answer) followed by EOS, all response tokens trained.
 */
export function demonstration(example: Example, encodePrompt: (e: Example) => Int32Array, tokenizer: Tokenizer, target?: string): Sequence {
  const text = target ?? example.solution ?? example.answer;
  return { prompt: encodePrompt(example), response: Int32Array.from([...tokenizer.encode(text, { addSpecialTokens: false }), tokenizer.eosId]) };
}

/** Options of one supervised step. */
export interface SupervisedStepOptions {
  lr: number;
  maxGradNorm?: number;
  weightDecay?: number;
  microBatchSize?: number;
  padId: number;
  /** Build the loss from the step's counts (default makeSftLoss: token-mean NLL, batch.weights applied). */
  loss?: (counts: StepCounts) => TokenLossFn;
}

/**
 * One optimizer step of supervised loss on `seqs` (micro-batched; non-finite loss drops the
 * gradients and skips the update).
 * @returns {loss, nll, tokens, grad_norm, skipped} (nll = token mean of −lp).
 */
export async function supervisedStep(engine: Engine, seqs: readonly Sequence[], o: SupervisedStepOptions): Promise<Record<string, number>> {
  if (seqs.length === 0) return { loss: 0, nll: 0, tokens: 0, grad_norm: 0, skipped: 0 };
  const rep = await optimize(engine, seqs, {
    padId: o.padId,
    microBatchSize: o.microBatchSize,
    maxLength: Math.max(...seqs.map((q) => q.response.length)),
    loss: o.loss ?? ((c: StepCounts) => makeSftLoss(c)),
    optim: { lr: o.lr, maxGradNorm: o.maxGradNorm ?? 1, weightDecay: o.weightDecay ?? 0 },
  });
  const m = combineMetrics(rep.lossParts);
  return { loss: rep.loss, nll: m["nll"] ?? rep.loss, tokens: rep.tokens, grad_norm: rep.gradNorm, skipped: rep.skippedUpdates > 0 ? 1 : 0 };
}
