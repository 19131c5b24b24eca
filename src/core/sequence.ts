/**
 * The ground floor every stage may import: one sequence to train on (`Sequence` — a rollout's
 * tokens, or a demonstration's), packing sequences into padded TokenBatches (engine layout,
 * [B*T]), and splitting them into mini- and micro-batches.
 */
import type { TokenBatch } from "./engine.ts";

/** One sequence to train on: prompt tokens (not trained) and response tokens (trained). */
export interface Sequence {
  prompt: ArrayLike<number>;
  response: ArrayLike<number>;
  /** Behaviour-policy log-probs of the response tokens (the trainer's, before this update), [response.length]. */
  oldLogprobs?: ArrayLike<number>;
  /**
   * The sampler's own log-probs of the response tokens when the sampler is not the trainer (vLLM,
   * an OpenAI-compatible server), [response.length]; mismatch correction reads them.
   */
  samplerLogprobs?: ArrayLike<number>;
  /** Policy version (optimizer updates done) of the weights that sampled this sequence. */
  policyVersion?: number;
  /** Reference-policy log-probs of the response tokens, [response.length]. */
  refLogprobs?: ArrayLike<number>;
  /** Advantage of the whole sequence (broadcast over its response tokens). */
  advantage?: number;
  /** Per-response-token advantages, [response.length] (token-level estimators, e.g. REINFORCE++); take precedence over `advantage`. */
  tokenAdvantages?: ArrayLike<number>;
  /** Loss-mask per response token (default 1; e.g. 0 for tool outputs or hint tokens). */
  mask?: ArrayLike<number>;
  /** Per-response-token supervised weights (e.g. > 0 on expert demonstration tokens), packed into batch.weights. */
  weights?: ArrayLike<number>;
  groupId?: number;
}

/**
 * Pack sequences into one right-padded TokenBatch. Response token t of sequence b sits at
 * position prompt.length + t; `lossMask` is 1 on response tokens (times `mask`).
 */
export function packSequences(seqs: readonly Sequence[], padId = 0): TokenBatch {
  const B = seqs.length;
  const T = Math.max(1, ...seqs.map((s) => s.prompt.length + s.response.length));
  const tokens = new Int32Array(B * T).fill(padId);
  const lengths = new Int32Array(B);
  const lossMask = new Float32Array(B * T);
  const withOld = seqs.some((s) => s.oldLogprobs);
  const withRef = seqs.some((s) => s.refLogprobs);
  const withSampler = seqs.some((s) => s.samplerLogprobs);
  const withAdv = seqs.some((s) => s.advantage !== undefined || s.tokenAdvantages !== undefined);
  const oldLogprobs = withOld ? new Float32Array(B * T) : undefined;
  const refLogprobs = withRef ? new Float32Array(B * T) : undefined;
  const samplerLogprobs = withSampler ? new Float32Array(B * T) : undefined;
  const advantages = withAdv ? new Float32Array(B * T) : undefined;
  const weights = seqs.some((s) => s.weights) ? new Float32Array(B * T) : undefined;
  const groupIds = new Int32Array(B);
  seqs.forEach((s, b) => {
    const P = s.prompt.length;
    lengths[b] = P + s.response.length;
    groupIds[b] = s.groupId ?? b;
    for (let t = 0; t < P; t++) tokens[b * T + t] = s.prompt[t]!;
    for (let t = 0; t < s.response.length; t++) {
      const i = b * T + P + t;
      tokens[i] = s.response[t]!;
      lossMask[i] = s.mask ? s.mask[t]! : 1;
      if (oldLogprobs && s.oldLogprobs) oldLogprobs[i] = s.oldLogprobs[t]!;
      if (refLogprobs && s.refLogprobs) refLogprobs[i] = s.refLogprobs[t]!;
      if (samplerLogprobs) samplerLogprobs[i] = s.samplerLogprobs ? s.samplerLogprobs[t]! : s.oldLogprobs ? s.oldLogprobs[t]! : 0;
      if (advantages) advantages[i] = s.tokenAdvantages ? s.tokenAdvantages[t]! : s.advantage ?? 0;
      if (weights && s.weights) weights[i] = s.weights[t]!;
    }
  });
  const batch: TokenBatch = { batchSize: B, seqLen: T, tokens, lengths, lossMask, groupIds };
  if (oldLogprobs) batch.oldLogprobs = oldLogprobs;
  if (refLogprobs) batch.refLogprobs = refLogprobs;
  if (samplerLogprobs) batch.samplerLogprobs = samplerLogprobs;
  if (advantages) batch.advantages = advantages;
  if (weights) batch.weights = weights;
  return batch;
}

/** Split `xs` into `n` nearly equal consecutive chunks (no empty chunk). */
export function chunks<T>(xs: readonly T[], n: number): T[][] {
  const k = Math.max(1, Math.min(n, xs.length));
  const out: T[][] = [];
  for (let i = 0; i < k; i++) out.push(xs.slice(Math.floor((i * xs.length) / k), Math.floor(((i + 1) * xs.length) / k)));
  return out;
}

/** Split `xs` into chunks of at most `size` items. */
export function chunkBySize<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}
