/**
 * Model configuration of a Llama-family decoder, and its mapping to and from Hugging Face
 * `config.json` (transformers' LlamaConfig / Qwen2Config) and tensor names.
 *
 * Architecture covered (Touvron et al. 2023, arXiv:2302.13971; Qwen2, arXiv:2407.10671):
 * token embedding → numLayers × [RMSNorm → causal self-attention with rotary position embeddings
 * and grouped-query attention (numKvHeads ≤ numHeads) → residual → RMSNorm → SwiGLU MLP → residual]
 * → RMSNorm → lm_head (optionally tied to the embedding). Qwen2 adds biases to the q/k/v
 * projections (not to o_proj).
 */
import { readFile, writeFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/** Hyper-parameters of a Llama-family decoder. All sizes are counts (not bytes). */
export interface ModelConfig {
  /** Hugging Face architecture family; fixes the tensor names and bias layout. */
  modelType: "llama" | "qwen2";
  /** V: number of token ids (rows of the embedding and of lm_head). */
  vocabSize: number;
  /** D: residual-stream width. */
  hiddenSize: number;
  /** I: SwiGLU inner width (gate/up output, down input). */
  intermediateSize: number;
  /** L: number of transformer blocks. */
  numLayers: number;
  /** H: query heads. */
  numHeads: number;
  /** KV heads (grouped-query attention); divides numHeads. Equal to numHeads for plain MHA. */
  numKvHeads: number;
  /** Per-head width; usually hiddenSize / numHeads but may differ (q_proj is [H*headDim, D]). */
  headDim: number;
  /** Epsilon inside RMSNorm's sqrt(mean(x²) + eps). */
  rmsNormEps: number;
  /** Rotary base θ: frequency of pair i is θ^(-2i/headDim). */
  ropeTheta: number;
  /** Longest sequence (prompt + response) in tokens the model is configured for. */
  maxPositionEmbeddings: number;
  /** When true there is no lm_head.weight: logits use model.embed_tokens.weight. */
  tieWordEmbeddings: boolean;
  /** q/k/v projections carry biases (Qwen2). o_proj never has one. */
  attentionBias: boolean;
  /** Optional token ids recorded in config.json (informational; the tokenizer is authoritative). */
  bosTokenId?: number | null;
  eosTokenId?: number | number[] | null;
}

/** A Hugging Face tensor name and its shape ([out, in] for linear weights, as in torch). */
export interface ParamSpec {
  name: string;
  shape: number[];
}

const SUPPORTED_TYPES = ["llama", "qwen2", "mistral"];

function err(file: string, field: string, msg: string): never {
  throw new Error(`model config error in ${file} at ${field}: ${msg}`);
}

function posInt(o: Record<string, unknown>, file: string, field: string, fallback?: number): number {
  const v = o[field] ?? fallback;
  if (v === undefined) err(file, field, "missing (required)");
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) err(file, field, `expected a positive integer, got ${JSON.stringify(v)}`);
  return v;
}

function posNum(o: Record<string, unknown>, file: string, field: string, fallback: number): number {
  const v = o[field] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) err(file, field, `expected a positive number, got ${JSON.stringify(v)}`);
  return v;
}

function bool(o: Record<string, unknown>, file: string, field: string, fallback: boolean): boolean {
  const v = o[field] ?? fallback;
  if (typeof v !== "boolean") err(file, field, `expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

function tokenId(o: Record<string, unknown>, file: string, field: string): number | number[] | null | undefined {
  const v = o[field];
  if (v === undefined || v === null) return v;
  const ok = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (ok(v) || (Array.isArray(v) && v.every(ok))) return v as number | number[];
  err(file, field, `expected a token id (non-negative integer), a list of them, or null; got ${JSON.stringify(v)}`);
}

/**
 * Parse a Hugging Face `config.json` object of a Llama-family model.
 *
 * Accepted `model_type`s: "llama" (also SmolLM/SmolLM2/TinyLlama, which use it), "qwen2", and
 * "mistral" (loaded as llama; same tensor names). Defaults follow transformers' config classes
 * when a field is absent (num_key_value_heads = num_attention_heads, head_dim = hidden_size /
 * num_attention_heads, rope_theta = 10000, rms_norm_eps = 1e-6, tie_word_embeddings = false).
 * @param json  the parsed JSON (unknown shape; validated here)
 * @param file  path shown in error messages
 * @returns a validated ModelConfig
 * @throws Error naming the file and field for missing or invalid values and for features the
 *   embedded engine does not implement: rope_scaling other than default, hidden_act other than
 *   silu, mlp_bias, attention_bias on llama (its o_proj bias), sliding-window attention,
 *   unknown model_type.
 */
export function parseHfConfig(json: unknown, file = "config.json"): ModelConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) err(file, "(root)", "expected a JSON object");
  const o = json as Record<string, unknown>;
  const rawType = o.model_type;
  if (typeof rawType !== "string") err(file, "model_type", `missing; expected one of ${SUPPORTED_TYPES.join(", ")}`);
  if (!SUPPORTED_TYPES.includes(rawType)) {
    err(file, "model_type", `"${rawType}" is not supported by the embedded engine (supported: ${SUPPORTED_TYPES.join(", ")}); use the torch engine for other architectures`);
  }
  const modelType: ModelConfig["modelType"] = rawType === "qwen2" ? "qwen2" : "llama";

  const hiddenAct = o.hidden_act ?? "silu";
  if (hiddenAct !== "silu" && hiddenAct !== "swish") err(file, "hidden_act", `"${String(hiddenAct)}" is not supported (only "silu", i.e. SwiGLU)`);
  if (o.mlp_bias === true) err(file, "mlp_bias", "MLP biases are not supported (expected false or absent)");

  const ropeScaling = o.rope_scaling ?? null;
  checkRopeType(ropeScaling, file, "rope_scaling");
  let ropeTheta = posNum(o, file, "rope_theta", 10000);
  // transformers ≥ 5 may nest the rotary settings under rope_parameters.
  if (o.rope_parameters !== undefined && o.rope_parameters !== null) {
    const rp = o.rope_parameters;
    if (typeof rp !== "object" || Array.isArray(rp)) err(file, "rope_parameters", "expected an object");
    checkRopeType(rp, file, "rope_parameters");
    const rpObj = rp as Record<string, unknown>;
    if (rpObj.rope_theta !== undefined) {
      const t = rpObj.rope_theta;
      if (typeof t !== "number" || !Number.isFinite(t) || t <= 0) err(file, "rope_parameters.rope_theta", `expected a positive number, got ${JSON.stringify(t)}`);
      ropeTheta = t;
    }
  }

  let attentionBias: boolean;
  if (modelType === "qwen2") {
    attentionBias = true; // Qwen2Attention: q/k/v with bias, o_proj without.
    if (o.use_sliding_window === true) {
      err(file, "use_sliding_window", "sliding-window attention is not supported by the embedded engine (set it to false)");
    }
  } else {
    if (bool(o, file, "attention_bias", false)) {
      err(file, "attention_bias", "llama-style attention biases (including o_proj) are not supported; only Qwen2's q/k/v biases are");
    }
    attentionBias = false;
  }
  const maxPositionEmbeddings = posInt(o, file, "max_position_embeddings", 2048);
  if (rawType === "mistral" && o.sliding_window !== undefined && o.sliding_window !== null) {
    const sw = o.sliding_window;
    if (typeof sw !== "number" || sw < maxPositionEmbeddings) {
      err(file, "sliding_window", `sliding-window attention (${JSON.stringify(sw)}) is not supported by the embedded engine; set it to null`);
    }
  }

  const hiddenSize = posInt(o, file, "hidden_size");
  const numHeads = posInt(o, file, "num_attention_heads");
  const numKvHeads = posInt(o, file, "num_key_value_heads", numHeads);
  if (numHeads % numKvHeads !== 0) {
    err(file, "num_key_value_heads", `${numKvHeads} must divide num_attention_heads (${numHeads})`);
  }
  let headDim: number;
  if (o.head_dim === undefined || o.head_dim === null) {
    if (hiddenSize % numHeads !== 0) err(file, "head_dim", `absent, and hidden_size ${hiddenSize} is not divisible by num_attention_heads ${numHeads}`);
    headDim = hiddenSize / numHeads;
  } else {
    headDim = posInt(o, file, "head_dim");
  }
  if (headDim % 2 !== 0) err(file, "head_dim", `${headDim} must be even for rotary embeddings`);

  const cfg: ModelConfig = {
    modelType,
    vocabSize: posInt(o, file, "vocab_size"),
    hiddenSize,
    intermediateSize: posInt(o, file, "intermediate_size"),
    numLayers: posInt(o, file, "num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: posNum(o, file, "rms_norm_eps", 1e-6),
    ropeTheta,
    maxPositionEmbeddings,
    tieWordEmbeddings: bool(o, file, "tie_word_embeddings", false),
    attentionBias,
  };
  const bos = tokenId(o, file, "bos_token_id");
  if (bos !== undefined) {
    if (Array.isArray(bos)) err(file, "bos_token_id", "expected a single token id");
    cfg.bosTokenId = bos;
  }
  const eos = tokenId(o, file, "eos_token_id");
  if (eos !== undefined) cfg.eosTokenId = eos;
  return cfg;
}

function checkRopeType(v: unknown, file: string, field: string): void {
  if (v === null || v === undefined) return;
  if (typeof v !== "object" || Array.isArray(v)) err(file, field, `expected an object or null, got ${JSON.stringify(v)}`);
  const r = v as Record<string, unknown>;
  const type = r.rope_type ?? r.type ?? "default";
  if (type !== "default") {
    err(file, field, `rope scaling type "${String(type)}" is not supported by the embedded engine (only plain RoPE: null or rope_type "default")`);
  }
}

/**
 * Check a ModelConfig built in code (sizes positive integers, GQA divisibility, even head
 * width, a bias layout the model type can express).
 * @throws Error naming the offending field.
 */
export function validateModelConfig(cfg: ModelConfig): void {
  const file = "ModelConfig";
  const ints = ["vocabSize", "hiddenSize", "intermediateSize", "numLayers", "numHeads", "numKvHeads", "headDim", "maxPositionEmbeddings"] as const;
  for (const k of ints) {
    const v = cfg[k];
    if (!Number.isSafeInteger(v) || v <= 0) err(file, k, `expected a positive integer, got ${JSON.stringify(v)}`);
  }
  for (const k of ["rmsNormEps", "ropeTheta"] as const) {
    if (!Number.isFinite(cfg[k]) || cfg[k] <= 0) err(file, k, `expected a positive number, got ${JSON.stringify(cfg[k])}`);
  }
  if (cfg.modelType !== "llama" && cfg.modelType !== "qwen2") err(file, "modelType", `expected "llama" or "qwen2", got ${JSON.stringify(cfg.modelType)}`);
  if (cfg.numHeads % cfg.numKvHeads !== 0) err(file, "numKvHeads", `${cfg.numKvHeads} must divide numHeads (${cfg.numHeads})`);
  if (cfg.headDim % 2 !== 0) err(file, "headDim", `${cfg.headDim} must be even for rotary embeddings`);
  if (cfg.modelType === "qwen2" && !cfg.attentionBias) err(file, "attentionBias", "qwen2 always has q/k/v biases; set true or use modelType \"llama\"");
  if (cfg.modelType === "llama" && cfg.attentionBias) err(file, "attentionBias", "llama's attention_bias also adds an o_proj bias; use modelType \"qwen2\" for q/k/v biases");
}

/**
 * Render a ModelConfig as a Hugging Face `config.json` object that transformers'
 * LlamaForCausalLM (modelType "llama") or Qwen2ForCausalLM ("qwen2") loads, with fp32 weights.
 * @throws as `validateModelConfig`.
 */
export function toHfConfig(cfg: ModelConfig): Record<string, unknown> {
  validateModelConfig(cfg);
  const common = {
    vocab_size: cfg.vocabSize,
    hidden_size: cfg.hiddenSize,
    intermediate_size: cfg.intermediateSize,
    num_hidden_layers: cfg.numLayers,
    num_attention_heads: cfg.numHeads,
    num_key_value_heads: cfg.numKvHeads,
    head_dim: cfg.headDim,
    hidden_act: "silu",
    max_position_embeddings: cfg.maxPositionEmbeddings,
    rms_norm_eps: cfg.rmsNormEps,
    rope_theta: cfg.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: cfg.tieWordEmbeddings,
    attention_dropout: 0.0,
    initializer_range: 0.02,
    use_cache: true,
    torch_dtype: "float32",
    ...(cfg.bosTokenId !== undefined ? { bos_token_id: cfg.bosTokenId } : {}),
    ...(cfg.eosTokenId !== undefined ? { eos_token_id: cfg.eosTokenId } : {}),
  };
  if (cfg.modelType === "qwen2") {
    return {
      architectures: ["Qwen2ForCausalLM"],
      model_type: "qwen2",
      ...common,
      use_sliding_window: false,
      sliding_window: null,
      max_window_layers: cfg.numLayers,
    };
  }
  return {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    ...common,
    attention_bias: false,
    mlp_bias: false,
    pretraining_tp: 1,
  };
}

/**
 * The Hugging Face tensor names and shapes of a model with this config, in a fixed order:
 * embed_tokens, then per layer (input_layernorm, q/k/v/o_proj weights, q/k/v biases when
 * attentionBias, post_attention_layernorm, gate/up/down_proj), then model.norm, then lm_head
 * (omitted when tieWordEmbeddings). Linear weights are [out, in] (torch.nn.Linear).
 *   embed_tokens [V, D]; q_proj [H·hd, D]; k_proj, v_proj [KV·hd, D]; o_proj [D, H·hd];
 *   q bias [H·hd]; k, v bias [KV·hd]; gate_proj, up_proj [I, D]; down_proj [D, I];
 *   norms [D]; lm_head [V, D].
 */
export function hfParamNames(cfg: ModelConfig): ParamSpec[] {
  const { vocabSize: V, hiddenSize: D, intermediateSize: I, numHeads: H, numKvHeads: KV, headDim: hd } = cfg;
  const out: ParamSpec[] = [{ name: "model.embed_tokens.weight", shape: [V, D] }];
  for (let i = 0; i < cfg.numLayers; i++) {
    const p = `model.layers.${i}`;
    out.push({ name: `${p}.input_layernorm.weight`, shape: [D] });
    out.push({ name: `${p}.self_attn.q_proj.weight`, shape: [H * hd, D] });
    out.push({ name: `${p}.self_attn.k_proj.weight`, shape: [KV * hd, D] });
    out.push({ name: `${p}.self_attn.v_proj.weight`, shape: [KV * hd, D] });
    out.push({ name: `${p}.self_attn.o_proj.weight`, shape: [D, H * hd] });
    if (cfg.attentionBias) {
      out.push({ name: `${p}.self_attn.q_proj.bias`, shape: [H * hd] });
      out.push({ name: `${p}.self_attn.k_proj.bias`, shape: [KV * hd] });
      out.push({ name: `${p}.self_attn.v_proj.bias`, shape: [KV * hd] });
    }
    out.push({ name: `${p}.post_attention_layernorm.weight`, shape: [D] });
    out.push({ name: `${p}.mlp.gate_proj.weight`, shape: [I, D] });
    out.push({ name: `${p}.mlp.up_proj.weight`, shape: [I, D] });
    out.push({ name: `${p}.mlp.down_proj.weight`, shape: [D, I] });
  }
  out.push({ name: "model.norm.weight", shape: [D] });
  if (!cfg.tieWordEmbeddings) out.push({ name: "lm_head.weight", shape: [V, D] });
  return out;
}

/**
 * Read and parse `<dir>/config.json`.
 * @throws when the file is missing, not JSON, or fails `parseHfConfig`.
 */
export async function readHfConfig(dir: string): Promise<ModelConfig> {
  const file = join(dir, "config.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new Error(`model config error: cannot read ${file} (${(e as Error).message}); a checkpoint directory needs config.json`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`model config error in ${file}: not valid JSON (${(e as Error).message})`);
  }
  return parseHfConfig(json, file);
}

/** The text of config.json for `cfg`: `toHfConfig(cfg)` as 2-space JSON. */
export function hfConfigText(cfg: ModelConfig): string {
  return JSON.stringify(toHfConfig(cfg), null, 2) + "\n";
}

/** Write `hfConfigText(cfg)` to `<dir>/config.json` (atomic via temp file + rename). */
export async function writeHfConfig(dir: string, cfg: ModelConfig): Promise<void> {
  const file = join(dir, "config.json");
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, hfConfigText(cfg));
  await rename(tmp, file);
}

/**
 * A model directory's files held in memory, file name → bytes (`config.json`,
 * `model.safetensors`, and for a tokenizer `tokenizer.json`, `tokenizer_config.json`,
 * `chat_template.jinja`, …): what a browser tab fetches instead of reading a directory.
 */
export type ModelFiles = Readonly<Record<string, Uint8Array>>;

/** A file of `files` or an error naming it (`where` names the source). */
export function needFile(files: ModelFiles, name: string, where: string): Uint8Array {
  const b = files[name];
  if (!b) throw new Error(`checkpoint error: ${where}/${name} is missing; a checkpoint needs config.json and model.safetensors`);
  return b;
}

/**
 * `readHfConfig` from files in memory: `files["config.json"]` (UTF-8 JSON) through `parseHfConfig`.
 * @throws naming `where`/config.json when it is missing, not JSON, or invalid.
 */
export function hfConfigFromFiles(files: ModelFiles, where = "<memory>"): ModelConfig {
  const bytes = needFile(files, "config.json", where);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Error(`model config error in ${where}/config.json: not valid JSON (${(e as Error).message})`);
  }
  return parseHfConfig(json, `${where}/config.json`);
}
