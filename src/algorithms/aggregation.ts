/**
 * Loss aggregation: how per-token losses ℓ[b,t] become the scalar of an optimizer step.
 * Formulas: docs/reference/formulas.md ("Aggregation"). Every mode divides by the
 * GLOBAL counts of the step (`StepCounts`), never by the micro-batch's own, so the losses and
 * gradients of the micro-batches sum exactly to those of the whole batch.
 *
 * | mode                      | weight of token (b,t), m = mask          | source |
 * |---------------------------|-------------------------------------------|--------|
 * | token-mean                | m / N_tokens                              | DAPO arXiv:2503.14476 |
 * | seq-mean-token-sum        | m / N_seqs                                | REINFORCE-style sum per sequence |
 * | seq-mean-token-mean       | m / (N_seqs · T_b), T_b = Σ_t m[b,t]      | GRPO arXiv:2402.03300 |
 * | seq-mean-token-sum-norm   | m / T_max (constant)                      | Dr. GRPO arXiv:2503.20783 |
 */
import type { AggregationMode, NumArray, StepCounts } from "./types.ts";

/** The aggregation modes, in documentation order. */
export const AGGREGATION_MODES: readonly AggregationMode[] = [
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-mean",
  "seq-mean-token-sum-norm",
];

/**
 * Σ_t mask per sequence.
 * @returns Float64Array[B].
 * @throws RangeError when mask.length ≠ B*T.
 */
export function sequenceTokenCounts(mask: NumArray, batchSize: number, seqLen: number): Float64Array {
  if (mask.length !== batchSize * seqLen) {
    throw new RangeError(`mask has length ${mask.length}, expected batchSize*seqLen = ${batchSize}*${seqLen}`);
  }
  const out = new Float64Array(batchSize);
  for (let b = 0; b < batchSize; b++) {
    let s = 0;
    for (let t = 0; t < seqLen; t++) s += mask[b * seqLen + t]!;
    out[b] = s;
  }
  return out;
}

/**
 * Counts of one (micro-)batch; add them over micro-batches with `addCounts`, or use `stepCounts`.
 * @param maxResponseLength the constant T of `seq-mean-token-sum-norm` (max new tokens).
 */
export function batchCounts(mask: NumArray, batchSize: number, seqLen: number, maxResponseLength: number): StepCounts {
  const per = sequenceTokenCounts(mask, batchSize, seqLen);
  let tokens = 0;
  let sequences = 0;
  for (const n of per) {
    tokens += n;
    if (n > 0) sequences++;
  }
  return { tokens, sequences, maxResponseLength };
}

/** Sum of two counts (maxResponseLength must agree). @throws Error when it does not. */
export function addCounts(a: StepCounts, b: StepCounts): StepCounts {
  if (a.maxResponseLength !== b.maxResponseLength) {
    throw new Error(`addCounts: maxResponseLength differs (${a.maxResponseLength} vs ${b.maxResponseLength})`);
  }
  return { tokens: a.tokens + b.tokens, sequences: a.sequences + b.sequences, maxResponseLength: a.maxResponseLength };
}

/**
 * Global counts of an optimizer step from all its micro-batches.
 * @param batches the step's micro-batches ({lossMask, batchSize, seqLen}, e.g. TokenBatch).
 * @param maxResponseLength the constant T of `seq-mean-token-sum-norm` (tokens, > 0).
 */
export function stepCounts(
  batches: readonly { lossMask: NumArray; batchSize: number; seqLen: number }[],
  maxResponseLength: number,
): StepCounts {
  let c: StepCounts = { tokens: 0, sequences: 0, maxResponseLength };
  for (const x of batches) c = addCounts(c, batchCounts(x.lossMask, x.batchSize, x.seqLen, maxResponseLength));
  return c;
}

/**
 * Per-token aggregation weights w[b,t] so that the step loss is Σ w ℓ and dL/dℓ = w.
 * @param mode    aggregation mode.
 * @param mask    [B*T] loss mask (0/1, or fractional weights).
 * @param counts  GLOBAL counts of the step (defaults to this batch's own counts).
 * @returns Float64Array[B*T] (0 off the mask).
 * @throws RangeError on a shape mismatch or a count of 0 where the mode divides by it.
 */
export function aggregationWeights(
  mode: AggregationMode,
  mask: NumArray,
  batchSize: number,
  seqLen: number,
  counts?: StepCounts,
): Float64Array {
  const per = sequenceTokenCounts(mask, batchSize, seqLen);
  const c = counts ?? batchCounts(mask, batchSize, seqLen, seqLen);
  const w = new Float64Array(batchSize * seqLen);
  const need = (v: number, what: string): number => {
    if (!(v > 0)) throw new RangeError(`aggregation ${mode}: ${what} is ${v}; it must be > 0 when the batch has trained tokens`);
    return v;
  };
  let anyTokens = false;
  for (const n of per) if (n > 0) anyTokens = true;
  if (!anyTokens) return w;
  for (let b = 0; b < batchSize; b++) {
    const Tb = per[b]!;
    if (!(Tb > 0)) continue;
    let scale: number;
    switch (mode) {
      case "token-mean":
        scale = 1 / need(c.tokens, "counts.tokens");
        break;
      case "seq-mean-token-sum":
        scale = 1 / need(c.sequences, "counts.sequences");
        break;
      case "seq-mean-token-mean":
        scale = 1 / (need(c.sequences, "counts.sequences") * Tb);
        break;
      case "seq-mean-token-sum-norm":
        scale = 1 / need(c.maxResponseLength, "counts.maxResponseLength");
        break;
      default:
        throw new RangeError(`unknown aggregation mode ${JSON.stringify(mode)}; expected one of ${AGGREGATION_MODES.join(", ")}`);
    }
    for (let t = 0; t < seqLen; t++) {
      const i = b * seqLen + t;
      w[i] = mask[i]! * scale;
    }
  }
  return w;
}

/**
 * Aggregate per-token losses: Σ w[b,t] ℓ[b,t] with the weights of `aggregationWeights`.
 * Masked-out tokens are ignored even when ℓ is NaN there.
 * @param loss    [B*T] per-token losses.
 * @param counts  GLOBAL counts of the step; omit to aggregate this batch on its own.
 * Pinned by test/algorithms/golden.test.ts (cases.aggregation).
 */
export function aggregate(
  mode: AggregationMode,
  loss: NumArray,
  mask: NumArray,
  batchSize: number,
  seqLen: number,
  counts?: StepCounts,
): number {
  const w = aggregationWeights(mode, mask, batchSize, seqLen, counts);
  let s = 0;
  for (let i = 0; i < w.length; i++) if (w[i] !== 0) s += w[i]! * loss[i]!;
  return s;
}
