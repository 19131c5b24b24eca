/**
 * SFT utilities for the guided methods: demonstrations as Sequences (from a dataset's solutions,
 * a teacher, or the model's own filtered samples) and one supervised optimizer step on them,
 * reusing the loss library's makeSftLoss and the trainer's packSequences (the SFT stage in
 * src/trainer/sft.ts does the same over the training set).
 */
import { makeSftLoss, stepCounts, combineMetrics, type StepCounts } from "../algorithms/index.ts";
import type { Engine, TokenLossFn } from "../engines/engine.ts";
import type { Example } from "../tasks/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { chunkBySize, packSequences, type Sequence } from "../trainer/batch.ts";
import { dropGradients } from "../trainer/faults.ts";

/**
 * A demonstration for `example`: its prompt tokens and `target` (default example.solution ??
 * example.answer) followed by EOS, all response tokens trained.
 */
export function demonstration(example: Example, encodePrompt: (e: Example) => Int32Array, tokenizer: Tokenizer, target?: string): Sequence {
  const text = target ?? example.solution ?? example.answer;
  return { prompt: encodePrompt(example), response: Int32Array.from([...tokenizer.encode(text), tokenizer.eosId]) };
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
  const micro = chunkBySize(seqs, o.microBatchSize ?? seqs.length).map((m) => packSequences(m, o.padId));
  const counts = stepCounts(micro, Math.max(...seqs.map((q) => q.response.length)));
  const lossFn = (o.loss ?? ((c: StepCounts) => makeSftLoss(c)))(counts);
  const parts: Record<string, number>[] = [];
  let loss = 0;
  let finite = true;
  for (const mb of micro) {
    const r = await engine.forwardBackward(mb, lossFn);
    loss += r.loss;
    if (!Number.isFinite(r.loss)) finite = false;
    parts.push(r.metrics);
  }
  let gradNorm = Number.NaN;
  let skipped = true;
  if (finite) ({ gradNorm, skipped } = await engine.optimStep({ lr: o.lr, maxGradNorm: o.maxGradNorm ?? 1, weightDecay: o.weightDecay ?? 0 }));
  else await dropGradients(engine);
  const m = combineMetrics(parts);
  return { loss, nll: m["nll"] ?? loss, tokens: counts.tokens, grad_norm: gradNorm, skipped: skipped ? 1 : 0 };
}
