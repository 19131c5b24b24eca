/**
 * A decoder-only transformer of the Llama family, written on @jax-js/jax.
 *
 * Reads top to bottom like the architecture diagram:
 *   token embedding → N × [RMSNorm → causal multi-head attention with rotary position
 *   embeddings (grouped-query when numKvHeads < numHeads) → residual → RMSNorm → SwiGLU MLP →
 *   residual] → RMSNorm → logits (tied or separate LM head).
 * Matches Hugging Face `LlamaForCausalLM` / `Qwen2ForCausalLM` (Qwen2: q/k/v biases) so their
 * checkpoints load unchanged (see checkpoint.ts for the name mapping).
 *
 * Ownership: jax-js uses move semantics — every array passed to an op is consumed. Functions
 * here consume their arguments exactly once (`.ref` where a value is used twice).
 *
 * Weight orientation: linear weights are stored [in, out] so that `y = x @ W` (Hugging Face
 * stores [out, in]; checkpoint.ts transposes on load and save).
 *
 * LoRA (Hu et al. 2021, arXiv:2106.09685): a linear layer with an adapter computes
 * y = x W + (alpha/rank) · (x A) B, A [in, r], B [r, out] (peft's lora_A/lora_B transposed). A frozen
 * weight may be stored as packed bfloat16 (uint32 [in, out/2], `packBf16`): `dense` unpacks it to
 * float32 inside the jitted program, so the heap holds half the bytes and compute stays float32.
 *
 * The token-embedding lookup happens outside these functions (the caller passes `x0`, the
 * gathered embeddings), because jax-js's jit rejects the gradient of a gather; the caller
 * scatter-adds dL/dx0 into the embedding gradient.
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { numpy as np, nn, lax, tree } from "@jax-js/jax";
import type { ModelConfig } from "./hf-config.ts";

/** The linear modules of a block that may carry a LoRA adapter (Hugging Face names). */
export type LoraModule = "q_proj" | "k_proj" | "v_proj" | "o_proj" | "gate_proj" | "up_proj" | "down_proj";

/** A LoRA adapter of one linear layer, internal orientation: a [in, r], b [r, out]. */
export type Adapter = { a: np.Array; b: np.Array };

/** The decoder's hyper-parameters: the model config, plus the LoRA scale alpha/rank when adapters are attached. */
export type DecoderConfig = ModelConfig & { loraScale?: number };

/** Weights of one transformer block. Shapes use D = hidden, H = heads, K = kv heads, d = head dim, F = MLP width. */
export type LayerParams = {
  /** LoRA adapters by module (absent: no adapter on that module). */
  lora?: Partial<Record<LoraModule, Adapter>>;
  attnNorm: np.Array; // [D]
  wq: np.Array; // [D, H*d]
  wk: np.Array; // [D, K*d]
  wv: np.Array; // [D, K*d]
  wo: np.Array; // [H*d, D]
  bq?: np.Array; // [H*d] (Qwen2)
  bk?: np.Array; // [K*d]
  bv?: np.Array; // [K*d]
  mlpNorm: np.Array; // [D]
  wGate: np.Array; // [D, F]
  wUp: np.Array; // [D, F]
  wDown: np.Array; // [F, D]
};

/** All weights. `lmHead` is absent when the embeddings are tied (logits = h @ embedᵀ). */
export type Params = {
  embed: np.Array; // [V, D]
  layers: LayerParams[];
  norm: np.Array; // [D]
  lmHead?: np.Array; // [D, V]
  /** LoRA adapter of the output head (peft target "lm_head"): a [D, r], b [r, V]; tied heads too. */
  headLora?: Adapter;
};

/** Key/value cache for incremental decoding: per layer [B, T, K, d]. */
export type KvCache = { k: np.Array[]; v: np.Array[] };

/**
 * How a decoder pass uses the KV cache. Decoding keeps two caches per layer: the prompt's keys and
 * values (written once, by the prefill, and only read after) and the generated positions' (Tg
 * slots, written one slot a step), so a step rewrites only the generated slots, not the prompt's.
 *   - `"prefill"`: no cache yet; the S positions of this pass attend to each other only (bias
 *     [B, 1, S, S]) and their keys/values are returned as the prompt cache [B, S, K, d];
 *   - `DecodeCache` (S = 1): the position attends over the P prompt slots and the Tg generated
 *     slots (bias [B, 1, 1, P + Tg]) and is written into generated slot `write`.
 */
export type CacheStep = "prefill" | DecodeCache;

/**
 * The caches of a decode step: `prompt` [B, P, K, d] per layer (read only), `gen` [B, Tg, K, d] per
 * layer, and `write` [1, Tg, 1, 1], the one-hot of the generated slot that receives the new position.
 */
export type DecodeCache = { prompt: KvCache; gen: KvCache; write: np.Array };

const u32 = (v: number) => np.array(new Uint32Array([v]), { dtype: np.uint32 }).reshape([]);

/**
 * A weight as float32: unchanged when it is float32; a packed bfloat16 matrix (uint32 [rows, c/2]
 * holding column j in the low half and column j + c/2 in the high half of word j, see
 * `packBf16`) unpacked to float32 [rows, c] (bfloat16 is the top half of a float32).
 */
export function dense(w: np.Array): np.Array {
  if (w.dtype !== np.uint32) return w;
  const lo = np.leftShift(w.ref, u32(16)).view(np.float32);
  const hi = np.bitwiseAnd(w, u32(0xffff0000)).view(np.float32);
  return np.concatenate([lo, hi], -1);
}

/**
 * Host side of `dense`: a row-major float32 [rows, cols] matrix (cols even) rounded to bfloat16
 * (round to nearest even) and packed two columns per uint32 word → Uint32Array [rows, cols/2].
 */
export function packBf16(data: Float32Array, rows: number, cols: number): Uint32Array {
  if (cols % 2) throw new Error(`packBf16: a matrix with an odd number of columns (${cols}) cannot be packed`);
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const half = cols / 2;
  const out = new Uint32Array(rows * half);
  const bf = (u: number) => ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
  for (let r = 0; r < rows; r++)
    for (let j = 0; j < half; j++) out[r * half + j] = (bf(bits[r * cols + j]!) | (bf(bits[r * cols + half + j]!) << 16)) >>> 0;
  return out;
}

/** y = x W (+ scale · (x A) B with an adapter). Consumes x, w and the adapter. */
function linear(x: np.Array, w: np.Array, ad: Adapter | undefined, scale: number | undefined): np.Array {
  if (!ad) return np.matmul(x, dense(w));
  const y = np.matmul(x.ref, dense(w));
  return y.add(np.matmul(np.matmul(x, ad.a), ad.b).mul(scale ?? 1));
}

/** RMSNorm (Zhang & Sennrich 2019): x / sqrt(mean(x²) + eps) * w, over the last axis. */
export function rmsNorm(x: np.Array, w: np.Array, eps: number): np.Array {
  const ms = x.ref.mul(x.ref).mean(-1, { keepdims: true });
  return x.mul(np.reciprocal(np.sqrt(ms.add(eps)))).mul(w);
}

/**
 * Rotary position embedding (Su et al. 2021, arXiv:2104.09864) in the Hugging Face
 * "rotate half" layout: the head dimension is split into halves (x1, x2) and rotated as
 * (x1 cos − x2 sin, x2 cos + x1 sin).
 * @param x   [B, S, heads, d]
 * @param cos [B, S, 1, d/2] cos(position · θ_i)
 * @param sin [B, S, 1, d/2]
 */
export function applyRope(x: np.Array, cos: np.Array, sin: np.Array): np.Array {
  const d = x.shape[3]!;
  const half = d / 2;
  const x1 = x.ref.slice([], [], [], [0, half]);
  const x2 = x.slice([], [], [], [half, d]);
  const r1 = x1.ref.mul(cos.ref).sub(x2.ref.mul(sin.ref));
  const r2 = x2.mul(cos).add(x1.mul(sin));
  return np.concatenate([r1, r2], 3);
}

/**
 * The query/key/value projections of one block, with rotary embeddings applied.
 * @param h [B, S, D] normalised input
 * @returns q [B, S, H, d], k and v [B, S, K, d]
 */
function projectQkv(p: LayerParams, cfg: DecoderConfig, h: np.Array, cos: np.Array, sin: np.Array): { q: np.Array; k: np.Array; v: np.Array } {
  const [B, S] = h.shape as [number, number, number];
  let q = linear(h.ref, p.wq, p.lora?.q_proj, cfg.loraScale);
  let k = linear(h.ref, p.wk, p.lora?.k_proj, cfg.loraScale);
  let v = linear(h, p.wv, p.lora?.v_proj, cfg.loraScale);
  if (p.bq && p.bk && p.bv) {
    q = q.add(p.bq);
    k = k.add(p.bk);
    v = v.add(p.bv);
  }
  q = applyRope(q.reshape([B, S, cfg.numHeads, cfg.headDim]), cos.ref, sin.ref);
  k = applyRope(k.reshape([B, S, cfg.numKvHeads, cfg.headDim]), cos, sin);
  return { q, k, v: v.reshape([B, S, cfg.numKvHeads, cfg.headDim]) };
}

/**
 * Scaled dot-product attention followed by the output projection.
 * @param q    [B, S, H, d] queries
 * @param kAll [B, T, K, d] keys, vAll [B, T, K, d] values; or lists of such blocks [B, T_i, K, d]
 *             that together are the keys in order (decoding: the prompt's, then the generated
 *             ones'): each block's scores and context are separate matmuls and only the scores
 *             [B, S, K, G, ΣT_i] are concatenated, so the blocks are never copied into one array
 * @param bias [B or 1, 1, S, Tk] additive mask (0 = attend, −1e9 = masked), Tk ≥ ΣT_i: keys past
 *             ΣT_i are zero slots the mask must hide (one block only)
 * @returns [B, S, D]
 */
function attend(cfg: DecoderConfig, wo: np.Array, ao: Adapter | undefined, q: np.Array, kAll: np.Array | np.Array[], vAll: np.Array | np.Array[], bias: np.Array): np.Array {
  const [B, S] = q.shape as [number, number];
  const K = cfg.numKvHeads;
  const d = cfg.headDim;
  const G = cfg.numHeads / K;
  const Tk = bias.shape[3]!;
  let ks = Array.isArray(kAll) ? kAll : [kAll];
  let vs = Array.isArray(vAll) ? vAll : [vAll];
  if (ks.length === 1 && ks[0]!.shape[1]! < Tk) {
    // A mask wider than the keys pads them with masked zero slots: jax-js tiles the score and
    // context matmuls only when the key count is a multiple of 4 (10 keys ran at 0.6 GFLOP/s).
    const pad = (x: np.Array) => np.pad(x, [[0, 0], [0, Tk - x.shape[1]!], [0, 0], [0, 0]]);
    ks = [pad(ks[0]!)];
    vs = [pad(vs[0]!)];
  }
  // Grouped-query attention in the token-major layout [B, S, K, G, ·]: query head (k, g) uses kv
  // head k. Keeping S ahead of the heads makes ctx [B, S, K, G, d] a plain reshape of [B, S, H·d],
  // so the output projection reads it contiguously. (The head-major layout [B, K, G·S, d] needed a
  // transpose, which jax-js fuses into the consuming matmul's operand index: the reduction index
  // then enters as ridx / d and ridx % d, jax-js's Wasm codegen can no longer walk that operand with
  // a strided pointer and recomputes its address with integer divisions on every multiply —
  // 0.6 GFLOP/s against 6–10 for the other projections, scripts/diagnostics/profile-embedded.ts.)
  const qh = q.reshape([B, S, K, G, d]);
  const last = ks.length - 1;
  const blockScores = ks.map((k, i) => np.matmul(i === last ? qh : qh.ref, k.transpose([0, 2, 3, 1]).reshape([B, 1, K, d, k.shape[1]!]))); // [B,S,K,G,T_i]
  let scores = (blockScores.length === 1 ? blockScores[0]! : np.concatenate(blockScores, -1)).mul(1 / Math.sqrt(d));
  scores = scores.add(bias.reshape([bias.shape[0]!, S, 1, 1, Tk]));
  const probs = nn.softmax(scores, -1);
  let ctx: np.Array | null = null;
  let at = 0;
  vs.forEach((v, i) => {
    const T = v.shape[1]!;
    const p = i === last ? (i === 0 ? probs : probs.slice([], [], [], [], [at, at + T])) : probs.ref.slice([], [], [], [], [at, at + T]);
    const c = np.matmul(p, v.transpose([0, 2, 1, 3]).reshape([B, 1, K, T, d])); // [B,S,K,G,d]
    ctx = ctx ? ctx.add(c) : c;
    at += T;
  });
  return linear(ctx!.reshape([B, S, cfg.numHeads * d]), wo, ao, cfg.loraScale);
}

/**
 * Causal self-attention of one block.
 * @param h     [B, S, D] normalised input
 * @param bias  [B or 1, 1, S, Tk] additive mask (0 = attend, −1e9 = masked); Tk = S without a
 *              cache or when filling one, P + Tg when decoding with one
 * @param cache optional: `"prefill"`, or this layer's prompt and generated {k, v} and `write` (see `CacheStep`)
 * @returns output [B, S, D] and the keys/values to cache (prefill: this pass's; decode: the updated generated slots)
 */
function attention(
  p: LayerParams,
  cfg: DecoderConfig,
  h: np.Array,
  cos: np.Array,
  sin: np.Array,
  bias: np.Array,
  cache: "prefill" | { pk: np.Array; pv: np.Array; k: np.Array; v: np.Array; write: np.Array } | null,
): { out: np.Array; k?: np.Array; v?: np.Array } {
  const { q, k, v } = projectQkv(p, cfg, h, cos, sin);
  if (cache === "prefill") return { out: attend(cfg, p.wo, p.lora?.o_proj, q, k.ref, v.ref, bias), k, v };
  if (!cache) return { out: attend(cfg, p.wo, p.lora?.o_proj, q, k, v, bias) };
  // Decode (S = 1): gen[b, t] = new[b] where write[t] = 1, else gen[b, t] — one elementwise pass
  // over the generated slots only (the new key broadcast over them); the prompt's slots are read in place.
  const keep = np.subtract(1, cache.write.ref);
  const gk = cache.k.mul(keep.ref).add(k.mul(cache.write.ref));
  const gv = cache.v.mul(keep).add(v.mul(cache.write));
  const out = attend(cfg, p.wo, p.lora?.o_proj, q, [cache.pk, gk.ref], [cache.pv, gv.ref], bias);
  return { out, k: gk, v: gv };
}

/** SwiGLU MLP (Shazeer 2020, arXiv:2002.05202): (silu(x Wg) ⊙ x Wu) Wd. */
function mlp(p: LayerParams, cfg: DecoderConfig, h: np.Array): np.Array {
  const gate = nn.silu(linear(h.ref, p.wGate, p.lora?.gate_proj, cfg.loraScale));
  const up = linear(h, p.wUp, p.lora?.up_proj, cfg.loraScale);
  return linear(gate.mul(up), p.wDown, p.lora?.down_proj, cfg.loraScale);
}

/** The second half of a block: x + mlp(RMSNorm(x)). Consumes x. */
function mlpResidual(p: LayerParams, cfg: DecoderConfig, x: np.Array): np.Array {
  return x.ref.add(mlp(p, cfg, rmsNorm(x, p.mlpNorm, cfg.rmsNormEps)));
}

/**
 * One block without a cache (training layer by layer, engine.ts): x + attention, then + MLP.
 * @param x [B, S, D] the block's input; cos/sin [B or 1, S, 1, d/2]; bias [B or 1, 1, S, Tk]. Consumes all.
 * @returns [B, S, D] the next block's input
 */
export function block(p: LayerParams, cfg: DecoderConfig, x: np.Array, cos: np.Array, sin: np.Array, bias: np.Array): np.Array {
  const a = attention(p, cfg, rmsNorm(x.ref, p.attnNorm, cfg.rmsNormEps), cos, sin, bias, null);
  return mlpResidual(p, cfg, x.add(a.out));
}

/**
 * Per-token log-probs and entropies from the last block's output: final RMSNorm, head, targets.
 * @param x [.., D]; targets [.., V] one-hot (all-zero rows give lp 0). Consumes all.
 */
export function headLogprobs(params: Pick<Params, "embed" | "lmHead" | "headLora" | "norm">, cfg: DecoderConfig, x: np.Array, targets: np.Array): { lp: np.Array; ent: np.Array } {
  return targetLogprobs(lmHead(params, rmsNorm(x, params.norm, cfg.rmsNormEps), cfg.loraScale), targets);
}

/**
 * A scalar whose gradient (w.r.t. x and the head's weights) is that of Σ cLp·lp + cEnt·ent of
 * `headLogprobs`, with the log-softmax's and the entropy's derivatives written out: with
 * p = softmax(z) and H the entropy, dlp/dz = onehot − p·Σonehot and dH/dz = −p ⊙ (log p + H), so
 * the result is Σ z ⊙ stopGradient(dL/dz) and autodiff only runs back through the head's matmul
 * and the final norm. (jax-js's autodiff of the log-softmax and entropy over V = 49,152 took
 * 10–30 s for 16 positions; the matmul's backward 0.3 s.)
 * @param x [M, D]; targets [M, V] one-hot (all-zero rows: no target); cLp, cEnt [M]. Consumes all.
 */
export function headCotangentSum(
  params: Pick<Params, "embed" | "lmHead" | "headLora" | "norm">,
  cfg: DecoderConfig,
  x: np.Array,
  targets: np.Array,
  cLp: np.Array,
  cEnt: np.Array,
): np.Array {
  const M = x.shape[0]!;
  const z = lmHead(params, rmsNorm(x, params.norm, cfg.rmsNormEps), cfg.loraScale); // [M, V]
  const logp = logSoftmax(lax.stopGradient(z.ref));
  const p = np.exp(logp.ref);
  const H = blockedSum(p.ref.mul(logp.ref)).neg().reshape([M, 1]);
  const hasTarget = targets.ref.sum(-1, { keepdims: true });
  const dLp = targets.sub(p.ref.mul(hasTarget)).mul(cLp.reshape([M, 1]));
  const dEnt = p.mul(logp.add(H)).neg().mul(cEnt.reshape([M, 1]));
  return z.mul(lax.stopGradient(dLp.add(dEnt))).sum();
}

/**
 * Runs the decoder on already-embedded tokens.
 * @param x0    [B, S, D] token embeddings
 * @param cos   [B, S, 1, d/2], sin: rotary tables at each token's position
 * @param bias  [B, 1, S, Tk] additive attention mask
 * @param cache optional: fill the prompt cache or decode with the caches (see `CacheStep`)
 * @returns final hidden states [B, S, D] (after the last RMSNorm) and, with a cache, the prompt
 *   cache (prefill) or the updated generated cache (decode)
 */
export function decoder(
  params: Pick<Params, "layers" | "norm">,
  cfg: DecoderConfig,
  x0: np.Array,
  cos: np.Array,
  sin: np.Array,
  bias: np.Array,
  cache: CacheStep | null,
): { hidden: np.Array; cache?: KvCache } {
  let x = x0;
  const newK: np.Array[] = [];
  const newV: np.Array[] = [];
  const L = params.layers.length;
  for (let i = 0; i < L; i++) {
    const p = params.layers[i]!;
    const last = i === L - 1;
    const h = rmsNorm(x.ref, p.attnNorm, cfg.rmsNormEps);
    const layerCache =
      !cache || cache === "prefill"
        ? cache
        : { pk: cache.prompt.k[i]!, pv: cache.prompt.v[i]!, k: cache.gen.k[i]!, v: cache.gen.v[i]!, write: last ? cache.write : cache.write.ref };
    const a = attention(p, cfg, h, last ? cos : cos.ref, last ? sin : sin.ref, last ? bias : bias.ref, layerCache);
    if (a.k && a.v) {
      newK.push(a.k);
      newV.push(a.v);
    }
    x = mlpResidual(p, cfg, x.add(a.out));
  }
  if (L === 0) {
    cos.dispose();
    sin.dispose();
    bias.dispose();
    if (cache && cache !== "prefill") cache.write.dispose();
  }
  const hidden = rmsNorm(x, params.norm, cfg.rmsNormEps);
  return cache ? { hidden, cache: { k: newK, v: newV } } : { hidden };
}

/**
 * Logits [.., V] from hidden states [.., D]: h @ lmHead, or h @ embedᵀ when tied, plus
 * loraScale · (h A) B when the head carries a LoRA adapter. Consumes `embed`/`lmHead`/`headLora`.
 */
export function lmHead(params: Pick<Params, "embed" | "lmHead" | "headLora">, hidden: np.Array, loraScale = 1): np.Array {
  const ad = params.headLora;
  const h = ad ? hidden.ref : hidden;
  let logits: np.Array;
  if (params.lmHead) {
    params.embed.dispose();
    logits = np.matmul(h, dense(params.lmHead));
  } else logits = np.matmul(h, dense(params.embed).transpose([1, 0]));
  return ad ? logits.add(np.matmul(np.matmul(hidden, ad.a), ad.b).mul(loraScale)) : logits;
}

/**
 * Per-token log-probs and entropies of the targets (training and scoring).
 * @param targets [B, S, V] one-hot of the token that follows each position (all-zero rows give lp 0)
 * @returns lp [B, S] = log softmax(z)[target], ent [B, S] = logsumexp(z) − Σ softmax(z)·z
 */
export function tokenLogprobs(
  params: Params,
  cfg: DecoderConfig,
  x0: np.Array,
  cos: np.Array,
  sin: np.Array,
  bias: np.Array,
  targets: np.Array,
): { lp: np.Array; ent: np.Array } {
  const { hidden } = decoder(params, cfg, x0, cos, sin, bias, null);
  return targetLogprobs(lmHead(params, hidden, cfg.loraScale), targets);
}

/** lp = log softmax(z)[target] and ent = −Σ softmax(z)·log softmax(z) over the last axis of logits [.., V]. */
function targetLogprobs(logits: np.Array, targets: np.Array): { lp: np.Array; ent: np.Array } {
  const logp = logSoftmax(logits);
  const lp = logp.ref.mul(targets).sum(-1);
  const ent = blockedSum(np.exp(logp.ref).mul(logp)).neg();
  return { lp, ent };
}

/** Inner block of `blockedSum`: 256 terms, then the ⌈V/256⌉ block sums. */
const SUM_BLOCK = 256;

/**
 * Σ over the last axis of x [.., V] in two levels: blocks of 256 terms, then the block sums (the
 * tail padded with zeros). A float32 sum of V terms in one sequential pass drifts by up to ~V·ε
 * relative (jax-js's Wasm reductions run in index order): for a 49,152-entry vocabulary that put
 * log-softmax off by 1e-4–2e-4; two levels bring it to ~1e-6, as a pairwise sum does. Consumes x.
 * @returns [..] (last axis reduced)
 */
export function blockedSum(x: np.Array): np.Array {
  const V = x.shape.at(-1)!;
  if (V <= 2 * SUM_BLOCK) return x.sum(-1);
  const lead = x.shape.slice(0, -1);
  const nb = Math.ceil(V / SUM_BLOCK);
  const padded = nb * SUM_BLOCK === V ? x : np.pad(x, [...lead.map(() => [0, 0] as [number, number]), [0, nb * SUM_BLOCK - V]]);
  return padded.reshape([...lead, nb, SUM_BLOCK]).sum(-1).sum(-1);
}

/**
 * log softmax over the last axis of logits [.., V], accurate to ~1e-6 at V ≈ 50k (jax-js's
 * `nn.logSoftmax` is off by up to 2e-4 there): max-subtracted exp summed by `blockedSum`, and
 * log Z refined by one Newton step L ← L + Z·e^(−L) − 1, because jax-js's Wasm log is a
 * 4-term series off by up to 1.2e-5 (its exp is good to ~1e-7). Same cost as `nn.logSoftmax` under
 * `jit(grad(…))` (measured at V = 49,152). Consumes logits.
 * @returns [.., V] log-probabilities
 */
export function logSoftmax(logits: np.Array): np.Array {
  const shifted = logits.ref.sub(lax.stopGradient(np.max(logits, -1, { keepdims: true })));
  const z = blockedSum(np.exp(shifted.ref)).reshape([...shifted.shape.slice(0, -1), 1]);
  const l0 = np.log(z.ref);
  // The correction only fixes the value: log's derivative (1/Z) is exact, and differentiating the
  // correction too would run the backward of exp(shifted) twice.
  const logZ = l0.ref.add(lax.stopGradient(z.mul(np.exp(l0.neg())).sub(1)));
  return shifted.sub(logZ);
}

/** Inputs of the shared-prefix forward (`prefixTokenLogprobs`). P = shared positions, S = the rest, n = rows per group. */
export interface PrefixInputs {
  /** [U, P, D] embeddings of each group's shared first P tokens. */
  x0p: np.Array;
  /** [U·n, S, D] embeddings of every row's remaining tokens (row u·n + j is sample j of group u). */
  x0s: np.Array;
  /**
   * [N, 1, 1, d/2] rotary tables of the N = U·P + U·n·S positions stacked as rows (the groups'
   * shared positions 0..P−1, then every row's P..P+S−1), in the order of x0p then x0s.
   */
  cos: np.Array;
  sin: np.Array;
  /** [1, 1, P, ≥P] causal mask of the prefix; biasS [1, 1, S, ≥P + S]: every prefix slot, causal over the rest (wider masks pad the keys, see `attend`). */
  biasP: np.Array;
  biasS: np.Array;
  /** [N, V] one-hot targets of the stacked positions (same order as cos). */
  targets: np.Array;
}

/**
 * Per-token log-probs and entropies of a batch whose rows come in groups of n that share their
 * first P tokens (a GRPO group: n samples of one prompt). The shared positions run once per group
 * and the group's rows attend to that one copy of their keys and values, so a forward pass costs
 * U·P + U·n·S token-positions instead of U·n·(P + S); the result equals the full forward's (same
 * causal attention, same weights) up to float32 summation order. Under `grad`, the broadcast of
 * the shared keys/values to the group sums the group's gradients back into the one copy.
 * (The shared-prefix forward of Prefix Grouper, Liu et al. 2025, arXiv:2506.05433.)
 * @returns lpP, entP [U, P] (shared by the group's rows) and lpS, entS [U·n, S]
 */
export function prefixTokenLogprobs(params: Params, cfg: DecoderConfig, inp: PrefixInputs): { lpP: np.Array; entP: np.Array; lpS: np.Array; entS: np.Array } {
  const [U, P, D] = inp.x0p.shape as [number, number, number];
  const [R, S] = inp.x0s.shape as [number, number];
  const lay: PrefixLayout = { U, P, R, S };
  // Every position-wise op (norms, projections, MLP, head) runs once on all N positions, stacked
  // as rows (the groups' shared positions, then every row's own): fewer, larger kernels. Only
  // attention sees the two parts apart.
  let x = np.concatenate([inp.x0p.reshape([U * P, D]), inp.x0s.reshape([R * S, D])], 0); // [N, D]
  const { cos, sin, biasP, biasS } = inp;
  for (const p of params.layers) x = prefixBlock(p, cfg, x, { cos: cos.ref, sin: sin.ref, biasP: biasP.ref, biasS: biasS.ref }, lay);
  tree.dispose([cos, sin, biasP, biasS]);
  const { lp, ent } = headLogprobs(params, cfg, x, inp.targets); // [N]
  const UP = U * P;
  const N = UP + R * S;
  const pre = (a: np.Array) => a.ref.slice([0, UP]).reshape([U, P]);
  const rest = (a: np.Array) => a.slice([UP, N]).reshape([R, S]);
  return { lpP: pre(lp), entP: pre(ent), lpS: rest(lp), entS: rest(ent) };
}

/** Sizes of the shared-prefix layout: U groups of R / U rows, P shared positions, S own positions a row. */
export interface PrefixLayout {
  U: number;
  P: number;
  R: number;
  S: number;
}

/**
 * One block of the shared-prefix forward (`prefixTokenLogprobs`; engine.ts also runs it layer by layer).
 * @param x [N, D] the N = U·P + R·S stacked positions (each group's shared ones, then every row's own)
 * @param f the rotary tables and masks of `PrefixInputs`
 * @returns [N, D]. Consumes all.
 */
export function prefixBlock(
  p: LayerParams,
  cfg: DecoderConfig,
  x: np.Array,
  f: Pick<PrefixInputs, "cos" | "sin" | "biasP" | "biasS">,
  lay: PrefixLayout,
): np.Array {
  const { U, P, R, S } = lay;
  const n = R / U;
  const K = cfg.numKvHeads;
  const d = cfg.headDim;
  const UP = U * P;
  const N = UP + R * S;
  const D = x.shape[1]!;
  const split = (a: np.Array, heads: number) => [a.ref.slice([0, UP], [], [], []).reshape([U, P, heads, d]), a.slice([UP, N], [], [], []).reshape([R, S, heads, d])] as const;
  // [U, P, K, d] → [U·n, P, K, d]: each group's shared keys/values seen by its n rows.
  const expand = (a: np.Array) => np.broadcastTo(a.reshape([U, 1, P, K, d]), [U, n, P, K, d]).reshape([R, P, K, d]);
  const { q, k, v } = projectQkv(p, cfg, rmsNorm(x.ref, p.attnNorm, cfg.rmsNormEps).reshape([N, 1, D]), f.cos, f.sin);
  const [qp, qs] = split(q, cfg.numHeads);
  const [kp, ks] = split(k, K);
  const [vp, vs] = split(v, K);
  const kS = np.concatenate([expand(kp.ref), ks], 1);
  const vS = np.concatenate([expand(vp.ref), vs], 1);
  const ao = p.lora?.o_proj;
  const outP = attend(cfg, p.wo.ref, ao && { a: ao.a.ref, b: ao.b.ref }, qp, kp, vp, f.biasP); // [U, P, D]
  const outS = attend(cfg, p.wo, ao, qs, kS, vS, f.biasS); // [R, S, D]
  return mlpResidual(p, cfg, x.add(np.concatenate([outP.reshape([UP, D]), outS.reshape([R * S, D])], 0)));
}
