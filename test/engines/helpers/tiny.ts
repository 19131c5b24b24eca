/**
 * Fixtures for the embedded-engine tests: tiny model configs, random token batches, random
 * weights with a healthy scale (so every gradient is well above float32 noise), Hugging Face
 * checkpoints written by hand, and a minimal tokenizer.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModelConfig } from "../../../src/engines/embedded/hf-config.ts";
import type { TokenBatch, TokenLossFn } from "../../../src/core/engine.ts";
import type { Tokenizer } from "../../../src/tokenizers/types.ts";
import { writeSafetensors } from "../../../src/engines/embedded/safetensors.ts";
import { Rng } from "../../../src/util/rng.ts";
import type { RefConfig, RefWeights } from "./reference-llama.ts";

/** Llama-style: vocab 11, hidden 16, 2 layers, 4 heads, 2 kv heads, untied head. */
export function tinyLlama(over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    modelType: "llama",
    vocabSize: 11,
    hiddenSize: 16,
    intermediateSize: 24,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 4,
    rmsNormEps: 1e-5,
    ropeTheta: 100,
    maxPositionEmbeddings: 64,
    tieWordEmbeddings: false,
    attentionBias: false,
    ...over,
  };
}

/** Qwen2-style: q/k/v biases, GQA, tied embeddings. */
export function tinyQwen2(over: Partial<ModelConfig> = {}): ModelConfig {
  return tinyLlama({ modelType: "qwen2", attentionBias: true, tieWordEmbeddings: true, ...over });
}

/** The reference forward's view of a ModelConfig. */
export function refConfig(c: ModelConfig): RefConfig {
  return {
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    rms_norm_eps: c.rmsNormEps,
    rope_theta: c.ropeTheta,
    tie_word_embeddings: c.tieWordEmbeddings,
    qkv_bias: c.attentionBias,
  };
}

/**
 * A padded batch of `lengths.length` random sequences (ids in [0, V)), padded to max length
 * (+ `extraPad`) with id `padId`. lossMask is 1 on positions [promptLen, length) of each row.
 */
export function randomBatch(rng: Rng, V: number, lengths: number[], opts: { promptLen?: number; extraPad?: number; padId?: number } = {}): TokenBatch {
  const B = lengths.length;
  const T = Math.max(...lengths) + (opts.extraPad ?? 0);
  const tokens = new Int32Array(B * T).fill(opts.padId ?? 0);
  const lossMask = new Float32Array(B * T);
  const promptLen = opts.promptLen ?? 1;
  lengths.forEach((len, b) => {
    for (let t = 0; t < len; t++) {
      tokens[b * T + t] = rng.int(0, V - 1);
      if (t >= promptLen) lossMask[b * T + t] = 1;
    }
  });
  return { batchSize: B, seqLen: T, tokens, lengths: Int32Array.from(lengths), lossMask };
}

/**
 * U groups of n rows: each group's rows share a random prompt of `promptLen` tokens, then carry
 * their own response (1..maxResp tokens; in every other group the samples agree on their first
 * response token); lossMask on the responses; rows right-padded to the longest.
 */
export function groupBatch(rng: Rng, V: number, U: number, n: number, promptLen: number, maxResp: number): TokenBatch {
  const rows: number[][] = [];
  for (let u = 0; u < U; u++) {
    const prompt = Array.from({ length: promptLen }, () => rng.int(0, V - 1));
    const first = rng.int(0, V - 1);
    for (let j = 0; j < n; j++) {
      const resp = Array.from({ length: rng.int(1, maxResp) }, () => rng.int(0, V - 1));
      if (u % 2 === 0) resp[0] = first;
      rows.push([...prompt, ...resp]);
    }
  }
  const T = Math.max(...rows.map((r) => r.length));
  const tokens = new Int32Array(rows.length * T);
  const lossMask = new Float32Array(rows.length * T);
  rows.forEach((r, b) =>
    r.forEach((id, t) => {
      tokens[b * T + t] = id;
      if (t >= promptLen) lossMask[b * T + t] = 1;
    }),
  );
  return { batchSize: rows.length, seqLen: T, tokens, lengths: Int32Array.from(rows, (r) => r.length), lossMask };
}

/** Rows [from, to) of a batch (same padded length), for micro-batching checks. */
export function sliceBatch(batch: TokenBatch, from: number, to: number): TokenBatch {
  const T = batch.seqLen;
  return {
    batchSize: to - from,
    seqLen: T,
    tokens: batch.tokens.slice(from * T, to * T),
    lengths: batch.lengths.slice(from, to),
    lossMask: batch.lossMask.slice(from * T, to * T),
  };
}

/** Random HF-layout weights: N(0, std²) matrices and biases, norm gains 1 + N(0, 0.1²). */
export function randomHfWeights(specs: { name: string; shape: number[] }[], rng: Rng, std = 0.4): RefWeights {
  const out: RefWeights = new Map();
  for (const { name, shape } of specs) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    const isNorm = name.endsWith("norm.weight");
    for (let i = 0; i < n; i++) data[i] = isNorm ? 1 + 0.1 * rng.normal() : std * rng.normal();
    out.set(name, data);
  }
  return out;
}

/**
 * The loss L = Σ_t c_t·lp_t + Σ_t e_t·H_t over positions with lossMask 1, with fixed cotangents
 * c and e: its gradient is exactly what the engine back-propagates, and its value is computable
 * from `score` alone (for finite differences).
 */
export function linearLoss(
  c: Float32Array,
  e: Float32Array,
): { fn: TokenLossFn; value: (lp: Float32Array, ent: Float32Array | undefined, mask: Float32Array) => number } {
  const value = (lp: Float32Array, ent: Float32Array | undefined, mask: Float32Array) => {
    let s = 0;
    for (let i = 0; i < lp.length; i++) if (mask[i]) s += c[i]! * lp[i]! + (ent ? e[i]! * ent[i]! : 0);
    return s;
  };
  const fn: TokenLossFn = (scores, batch) => {
    const n = batch.lossMask.length;
    const dLogprobs = new Float32Array(n);
    const dEntropy = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      if (!batch.lossMask[i]) continue;
      dLogprobs[i] = c[i]!;
      dEntropy[i] = e[i]!;
    }
    // Without entropy in the scores (not requested), the loss is Σ c·lp alone.
    const ent = scores.entropy;
    return { loss: value(scores.logprobs, ent, batch.lossMask), dLogprobs, dEntropy: ent ? dEntropy : undefined, metrics: {} };
  };
  return { fn, value };
}

/** Writes a Hugging Face checkpoint by hand: config.json (as transformers writes it) + model.safetensors. */
export async function writeHfCheckpoint(dir: string, config: Record<string, unknown>, weights: RefWeights, shapes: Map<string, number[]>): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const [name, data] of weights) tensors[name] = { shape: shapes.get(name)!, data: Float32Array.from(data) };
  await writeSafetensors(join(dir, "model.safetensors"), tensors, { format: "pt" });
}

/** A minimal tokenizer over single characters "a".."k" (ids 0..10); `save` writes HF-named files. */
export class LetterTokenizer implements Tokenizer {
  readonly vocabSize = 11;
  readonly eosId = 10;
  readonly bosId = null;
  readonly padId = 0;
  encode(text: string): number[] {
    return [...text].map((ch) => ch.charCodeAt(0) - 97);
  }
  decode(ids: ArrayLike<number>): string {
    return Array.from(ids, (i) => String.fromCharCode(97 + i)).join("");
  }
  applyChatTemplate(messages: { role: string; content: string }[]): string {
    return messages.map((m) => m.content).join("");
  }
  async save(dir: string): Promise<void> {
    const vocab = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [String.fromCharCode(97 + i), i]));
    await writeFile(join(dir, "tokenizer.json"), JSON.stringify({ version: "1.0", model: { type: "BPE", vocab, merges: [] } }));
    await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify({ eos_token: "k" }));
  }
}

/** Max |a − b| over two arrays of equal length. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

export { Rng };
