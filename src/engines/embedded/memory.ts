/**
 * Memory planning for the embedded engine: jax-js's Wasm backend keeps every live array in one
 * 32-bit heap of at most 4 GiB ("Allocation exceeds the 4 GiB memory32 limit"). The engine sizes
 * each pass (forward-backward, scoring, sampling) from the model config and the batch shape so
 * that a pass never asks for more than its share of that heap, splitting a batch into
 * micro-batches itself; a model whose training state alone cannot fit is refused at load with
 * one clear error.
 *
 * The per-token figures are measured upper bounds, not derivations: jax-js keeps most
 * intermediates of a jitted gradient alive until the backward pass, and its allocator keeps freed
 * blocks per size class (it never coalesces), so the heap's high-water mark is what matters.
 * Measured on jax-js 0.1.25 (Wasm heap size after one pass, test/engines/helpers/wasm-memory.ts):
 * forward-backward of 128 × 16 tokens at hidden 128 × 2 layers (0.43M parameters) took 194 MiB
 * (this estimate: 212 MiB), 32 × 16 tokens at hidden 512 × 4 layers (13.7M parameters) 509 MiB
 * (estimate: 559 MiB); scoring 64 × 16 tokens at 512 × 4 took 185 MiB (estimate: 321 MiB).
 */
import type { ModelConfig } from "./hf-config.ts";

/** jax-js's Wasm heap limit (memory32): 4 GiB. */
export const WASM_HEAP_LIMIT = 2 ** 32;

/** Share of the heap the planner hands out (the rest absorbs fragmentation and small arrays). */
const USABLE = 0.85;

/**
 * LoRA's memory plan: the frozen base stored at `baseBytesPerParam` (4 float32, 2 packed
 * bfloat16), only `trainable` adapter parameters with gradients, reference and AdamW state.
 * An inference-only engine's: 8 bytes (its weights and a reference copy), trainable 0.
 * Absent: full fine-tuning (every parameter trainable, float32).
 */
export interface MemoryPlan {
  baseBytesPerParam: number;
  trainable: number;
}

/** What a pass computes ("layers": LoRA training block by block, engine.ts `loraForwardBackwardLayers`). */
export type PassKind = "train" | "score" | "sample" | "prefill" | "layers";

/** Positions per chunk of the head in the layer-by-layer LoRA path (engine.ts): logits [HEAD_CHUNK, V]. */
export const HEAD_CHUNK = 256;

/** Number of parameters of `cfg` (embeddings, blocks, final norm, untied head). */
export function countParams(cfg: ModelConfig): number {
  const D = cfg.hiddenSize;
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  const F = cfg.intermediateSize;
  const bias = cfg.attentionBias ? q + 2 * kv : 0;
  const block = D * q + 2 * D * kv + q * D + bias + 3 * D * F + 2 * D;
  return cfg.vocabSize * D * (cfg.tieWordEmbeddings ? 1 : 2) + cfg.numLayers * block + D;
}

/**
 * Bytes held across passes while training: weights, the reference copy, accumulated gradients,
 * AdamW's two moments, and the transients of an update (a micro-batch's new gradients before they
 * are added; AdamW's new weights and moments before the old ones are freed): 10 × parameters × 4 B.
 */
export function residentBytes(cfg: ModelConfig, plan?: MemoryPlan): number {
  if (plan) return countParams(cfg) * plan.baseBytesPerParam + 10 * plan.trainable * 4;
  return 10 * countParams(cfg) * 4;
}

/**
 * Upper bound on the bytes one pass allocates beyond the resident state.
 * @param rows    sequences in the pass (after padding the batch)
 * @param seqLen  padded tokens per sequence (for "sample": prompt tokens + new tokens)
 * @returns bytes; forward-backward ≈ 4·rows·seqLen·(L·(40·D + 20·F + 8·H·seqLen) + 16·V) plus
 *   three parameter-sized arrays (gradients, transposed weights), scoring a third of the
 *   activations plus one parameter-sized array; sampling one layer's activations of the rows, the
 *   last position's logits and two KV caches (under LoRA beside a merged float32 copy of the base). Under LoRA (`plan`) training holds four float32 copies of the base instead of three
 *   (measured on SmolLM2-135M: the pullback keeps the unpacked weights as residuals beside their
 *   transposes; heap 3.75 GiB after scoring and training one 64-token sequence on a bfloat16
 *   base, estimate 3.83) plus three of the adapters.
 */
export function passBytes(cfg: ModelConfig, kind: PassKind, rows: number, seqLen: number, plan?: MemoryPlan): number {
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numLayers: L, vocabSize: V } = cfg;
  const perToken = 4 * (L * (40 * D + 20 * F + 8 * H * seqLen) + 16 * V);
  const act = rows * seqLen * perToken;
  const P = countParams(cfg) * 4;
  if (kind === "train") return act + (plan ? 4 * P + 3 * plan.trainable * 4 : 3 * P);
  if (kind === "layers") {
    // Every block's input kept (L + 1 states), one block's forward-backward (its share of the
    // activations above, beside four float32 copies of its weights), and the head over HEAD_CHUNK
    // positions (logits, log-softmax, exp and their gradients: 8 copies) beside three float32
    // copies of the head matrix.
    const tokens = rows * seqLen;
    const state = tokens * 4 * (L + 1) * D;
    const oneBlock = tokens * 4 * (40 * D + 20 * F + 8 * H * seqLen) + (4 * 4 * (countParams(cfg) - cfg.vocabSize * D)) / L;
    const head = HEAD_CHUNK * V * 4 * 8 + 3 * V * D * 4;
    return state + oneBlock + head + 3 * (plan?.trainable ?? 0) * 4;
  }
  if (kind === "score") return Math.ceil(act / 3) + P;
  const cache = 2 * rows * seqLen * L * 2 * cfg.numKvHeads * cfg.headDim * 4;
  // Under LoRA sampling runs on a float32 copy of the base with the adapters merged in
  // (engine.ts `samplingParams`), held for the whole call.
  const merged = plan && plan.trainable > 0 ? P : 0;
  // Sampling's prompt step (engine.ts `prefill`): one jitted call over every layer keeps each
  // layer's activations until it returns (measured on SmolLM2-135M, bfloat16 base under LoRA:
  // 0.22 GiB per 96-token prompt; this estimate 0.33), the last position's logits and the caches.
  if (kind === "prefill") return (rows * seqLen * 4 * L * (40 * D + 20 * F + 8 * H * seqLen)) / 2 + rows * 16 * V + cache + merged;
  // Sampling runs forward only (no gradient), so a layer's intermediates die before the next
  // layer's: one layer's worth, logits of the last position only, and the KV caches (measured on
  // SmolLM2-135M: 16 rows × 64 tokens grew the heap by 0.18 GiB; this estimate 0.32 GiB).
  return rows * seqLen * 4 * (40 * D + 20 * F + 8 * H * seqLen) + rows * 16 * V + cache + merged;
}

/** Bytes one pass may use: half of what the heap has left after the resident state (two kinds of pass coexist in the heap's free lists). */
export function passBudget(cfg: ModelConfig, heapLimit = WASM_HEAP_LIMIT, plan?: MemoryPlan): number {
  return Math.max(0, (heapLimit * USABLE - residentBytes(cfg, plan)) / 2);
}

/**
 * Most sequences of length `seqLen` one pass of `kind` may hold: the largest power of two whose
 * `passBytes` fits `passBudget` (at least 1; `assertFits` refuses models where one row cannot fit).
 * Powers of two keep the number of compiled shapes small and the heap's size classes reusable.
 */
export function maxRows(cfg: ModelConfig, kind: PassKind, seqLen: number, heapLimit = WASM_HEAP_LIMIT, plan?: MemoryPlan): number {
  const budget = passBudget(cfg, heapLimit, plan);
  let rows = 1;
  while (rows < 1 << 20 && passBytes(cfg, kind, rows * 2, seqLen, plan) <= budget) rows *= 2;
  return rows;
}

/** "1.5 GiB" */
function gib(b: number): string {
  return `${(b / 2 ** 30).toFixed(2)} GiB`;
}

/**
 * Refuses a model the embedded engine cannot train: its resident state (parameters × 10 float32:
 * weights, reference, gradients, AdamW moments, update transients) plus one sequence of
 * `seqLen` tokens must fit in USABLE × 4 GiB.
 * @throws Error naming the model size, the bytes needed, the limit, and the way out.
 */
export function assertFits(cfg: ModelConfig, seqLen = Math.min(cfg.maxPositionEmbeddings, 64), heapLimit = WASM_HEAP_LIMIT, plan?: MemoryPlan): void {
  const n = countParams(cfg);
  if (plan) {
    // LoRA models are large: one scoring and one training pass of one sequence beside the base.
    const need = residentBytes(cfg, plan) + passBytes(cfg, "train", 1, seqLen, plan) + passBytes(cfg, "score", 1, seqLen, plan);
    if (need <= heapLimit * USABLE) return;
    throw new Error(
      `model too large for the embedded engine even under LoRA: ${(n / 1e6).toFixed(1)}M parameters at ${plan.baseBytesPerParam} bytes each plus one ${seqLen}-token sequence need ${gib(need)}, ` +
        `more than the ${gib(heapLimit * USABLE)} usable of jax-js's ${gib(heapLimit)} Wasm memory32 limit; use model.lora.baseDtype: bfloat16, a smaller model, or the torch engine (model.engine: torch)`,
    );
  }
  const need = residentBytes(cfg) + 2 * passBytes(cfg, "train", 1, seqLen);
  if (need > heapLimit * USABLE) {
    throw new Error(
      `model too large for the embedded engine: ${(n / 1e6).toFixed(1)}M parameters need ${gib(residentBytes(cfg))} for weights, reference copy, gradients and AdamW state ` +
        `(10 × parameters × 4 bytes) plus ${gib(2 * passBytes(cfg, "train", 1, seqLen))} for one ${seqLen}-token sequence, more than the ${gib(heapLimit * USABLE)} usable of jax-js's ` +
        `${gib(heapLimit)} Wasm memory32 limit; train LoRA adapters (model.lora), use a smaller model.init (hiddenSize/numLayers) or the torch engine (model.engine: torch, after rlvr setup torch)`,
    );
  }
}
