/**
 * An independent float64 reference of the Hugging Face Llama / Qwen2 causal LM forward pass, in
 * plain TypeScript loops, used to check the embedded engine (test/engines/embedded.test.ts).
 *
 * Written from the architecture as transformers implements it (modeling_llama.py / modeling_qwen2.py):
 *   x = embed_tokens[ids]
 *   per layer: h = RMSNorm(x) · w_in;  q = h Wqᵀ (+ bq), k = h Wkᵀ (+ bk), v = h Wvᵀ (+ bv)
 *              rotary "rotate half": inv_freq_i = θ^(−2i/hd), angle = pos · inv_freq_i,
 *                cos/sin duplicated over both halves, x·cos + rotate_half(x)·sin with
 *                rotate_half(x) = (−x2, x1)
 *              grouped-query attention: query head h uses kv head ⌊h / (H/KV)⌋ (repeat_kv),
 *                softmax(q kᵀ / sqrt(hd) + causal mask) v, concatenated heads, then Woᵀ
 *              x += attn;  h = RMSNorm(x) · w_post;  x += Wdownᵀ(silu(Wgateᵀ h) ⊙ Wupᵀ h)
 *   logits = RMSNorm(x) · w_final, then lm_headᵀ (or embed_tokensᵀ when tied)
 * RMSNorm(x) = x / sqrt(mean(x²) + eps). Tensors use HF names and the torch layout [out, in].
 * Shares no code with src/engines/embedded.
 */

/** Hyper-parameters as in a Hugging Face config.json (the subset the architecture uses). */
export interface RefConfig {
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  rms_norm_eps: number;
  rope_theta: number;
  tie_word_embeddings: boolean;
  /** q/k/v biases (Qwen2). */
  qkv_bias: boolean;
}

/** HF tensor name → row-major data ([out, in] for linear weights). */
export type RefWeights = Map<string, ArrayLike<number>>;

function get(w: RefWeights, name: string): ArrayLike<number> {
  const t = w.get(name);
  if (!t) throw new Error(`reference: missing tensor ${name}`);
  return t;
}

/** y[T, out] = x[T, in] · Wᵀ (+ b) with W [out, in]. */
function linear(x: Float64Array, T: number, nIn: number, W: ArrayLike<number>, nOut: number, b?: ArrayLike<number>): Float64Array {
  const y = new Float64Array(T * nOut);
  for (let t = 0; t < T; t++) {
    for (let o = 0; o < nOut; o++) {
      let s = b ? b[o]! : 0;
      const wo = o * nIn;
      const xt = t * nIn;
      for (let i = 0; i < nIn; i++) s += x[xt + i]! * W[wo + i]!;
      y[t * nOut + o] = s;
    }
  }
  return y;
}

function rmsNorm(x: Float64Array, T: number, D: number, w: ArrayLike<number>, eps: number): Float64Array {
  const y = new Float64Array(T * D);
  for (let t = 0; t < T; t++) {
    let ms = 0;
    for (let i = 0; i < D; i++) ms += x[t * D + i]! ** 2;
    const r = 1 / Math.sqrt(ms / D + eps);
    for (let i = 0; i < D; i++) y[t * D + i] = x[t * D + i]! * r * w[i]!;
  }
  return y;
}

/** In place: rotary embedding of x [T, heads, hd] at positions 0..T−1. */
function rope(x: Float64Array, T: number, heads: number, hd: number, theta: number): void {
  const half = hd / 2;
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < heads; h++) {
      const o = (t * heads + h) * hd;
      const rotated = new Float64Array(hd);
      for (let i = 0; i < hd; i++) rotated[i] = i < half ? -x[o + i + half]! : x[o + i - half]!;
      for (let i = 0; i < hd; i++) {
        const freq = Math.pow(theta, -(2 * (i % half)) / hd);
        const a = t * freq;
        x[o + i] = x[o + i]! * Math.cos(a) + rotated[i]! * Math.sin(a);
      }
    }
  }
}

const silu = (z: number) => z / (1 + Math.exp(-z));

/**
 * Logits of one sequence.
 * @returns Float64Array [T, V]: row t is the next-token logits after tokens[0..t].
 */
export function referenceLogits(cfg: RefConfig, w: RefWeights, tokens: ArrayLike<number>): Float64Array {
  const T = tokens.length;
  const D = cfg.hidden_size;
  const V = cfg.vocab_size;
  const H = cfg.num_attention_heads;
  const KV = cfg.num_key_value_heads;
  const hd = cfg.head_dim;
  const F = cfg.intermediate_size;
  const emb = get(w, "model.embed_tokens.weight");
  let x = new Float64Array(T * D);
  for (let t = 0; t < T; t++) for (let i = 0; i < D; i++) x[t * D + i] = emb[tokens[t]! * D + i]!;

  for (let l = 0; l < cfg.num_hidden_layers; l++) {
    const p = `model.layers.${l}`;
    const h = rmsNorm(x, T, D, get(w, `${p}.input_layernorm.weight`), cfg.rms_norm_eps);
    const bias = (n: string) => (cfg.qkv_bias ? get(w, `${p}.self_attn.${n}.bias`) : undefined);
    const q = linear(h, T, D, get(w, `${p}.self_attn.q_proj.weight`), H * hd, bias("q_proj"));
    const k = linear(h, T, D, get(w, `${p}.self_attn.k_proj.weight`), KV * hd, bias("k_proj"));
    const v = linear(h, T, D, get(w, `${p}.self_attn.v_proj.weight`), KV * hd, bias("v_proj"));
    rope(q, T, H, hd, cfg.rope_theta);
    rope(k, T, KV, hd, cfg.rope_theta);
    const ctx = new Float64Array(T * H * hd);
    const groups = H / KV;
    for (let head = 0; head < H; head++) {
      const kvh = Math.floor(head / groups);
      for (let t = 0; t < T; t++) {
        const scores = new Float64Array(t + 1);
        let max = -Infinity;
        for (let s = 0; s <= t; s++) {
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += q[(t * H + head) * hd + i]! * k[(s * KV + kvh) * hd + i]!;
          scores[s] = dot / Math.sqrt(hd);
          max = Math.max(max, scores[s]!);
        }
        let z = 0;
        for (let s = 0; s <= t; s++) {
          scores[s] = Math.exp(scores[s]! - max);
          z += scores[s]!;
        }
        for (let s = 0; s <= t; s++) {
          const pr = scores[s]! / z;
          for (let i = 0; i < hd; i++) ctx[(t * H + head) * hd + i]! += pr * v[(s * KV + kvh) * hd + i]!;
        }
      }
    }
    const attn = linear(ctx, T, H * hd, get(w, `${p}.self_attn.o_proj.weight`), D);
    for (let i = 0; i < x.length; i++) x[i]! += attn[i]!;
    const h2 = rmsNorm(x, T, D, get(w, `${p}.post_attention_layernorm.weight`), cfg.rms_norm_eps);
    const gate = linear(h2, T, D, get(w, `${p}.mlp.gate_proj.weight`), F);
    const up = linear(h2, T, D, get(w, `${p}.mlp.up_proj.weight`), F);
    for (let i = 0; i < gate.length; i++) gate[i] = silu(gate[i]!) * up[i]!;
    const down = linear(gate, T, F, get(w, `${p}.mlp.down_proj.weight`), D);
    const next = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++) next[i] = x[i]! + down[i]!;
    x = next;
  }
  const hn = rmsNorm(x, T, D, get(w, "model.norm.weight"), cfg.rms_norm_eps);
  const head = cfg.tie_word_embeddings ? emb : get(w, "lm_head.weight");
  return linear(hn, T, D, head, V);
}

/** log softmax of row `t` of logits [T, V]. */
export function logSoftmaxRow(logits: Float64Array, t: number, V: number): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[t * V + i]!);
  let z = 0;
  for (let i = 0; i < V; i++) z += Math.exp(logits[t * V + i]! - max);
  const lz = max + Math.log(z);
  const out = new Float64Array(V);
  for (let i = 0; i < V; i++) out[i] = logits[t * V + i]! - lz;
  return out;
}

/**
 * Per-token log-probs and entropies in the engine contract's layout: entry t (t ≥ 1) is
 * log p(tokens[t] | tokens[0..t−1]) and the entropy of that predictive distribution; entry 0 is 0.
 */
export function referenceScores(cfg: RefConfig, w: RefWeights, tokens: ArrayLike<number>): { logprobs: Float64Array; entropy: Float64Array } {
  const T = tokens.length;
  const V = cfg.vocab_size;
  const logits = referenceLogits(cfg, w, tokens);
  const logprobs = new Float64Array(T);
  const entropy = new Float64Array(T);
  for (let t = 1; t < T; t++) {
    const lp = logSoftmaxRow(logits, t - 1, V);
    logprobs[t] = lp[tokens[t]!]!;
    let h = 0;
    for (let i = 0; i < V; i++) h -= Math.exp(lp[i]!) * lp[i]!;
    entropy[t] = h;
  }
  return { logprobs, entropy };
}
