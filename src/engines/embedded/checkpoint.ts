/**
 * Weights of the embedded engine as Hugging Face-named tensors, and checkpoint I/O in the
 * Hugging Face layout: `config.json` + `model.safetensors` (+ `tokenizer.json`), so that a small
 * Llama/Qwen2 checkpoint from disk loads here and ours load in transformers.
 *
 * Internally linear weights are [in, out] (y = x @ W); on disk they are [out, in] as in torch.
 * Optimizer state (AdamW moments and step) goes to `optimizer.safetensors` beside the model.
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { numpy as np } from "@jax-js/jax";
import { hfConfigFromFiles, hfConfigText, hfParamNames, needFile, readHfConfig, writeHfConfig, type ModelConfig, type ModelFiles } from "./hf-config.ts";
import { parseSafetensors, readSafetensors, serializeSafetensors, writeSafetensors, type LoadedTensor, type TensorToWrite } from "./safetensors.ts";
import { dense, type Params, type LayerParams } from "./model.ts";
import { storeWeight } from "./adapters.ts";
import type { Tensors } from "./optimizer.ts";
import type { Tokenizer } from "../../tokenizers/types.ts";
import { Rng } from "../../util/rng.ts";

/** Whether an HF tensor is stored transposed internally (2-D linear weights; not the embedding). */
function transposed(name: string, shape: number[]): boolean {
  return shape.length === 2 && name !== "model.embed_tokens.weight";
}

function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

/** Internal shape of an HF tensor. */
function internalShape(name: string, shape: number[]): number[] {
  return transposed(name, shape) ? [shape[1]!, shape[0]!] : shape;
}

/**
 * Random initial weights: normal(0, 0.02) for matrices, zeros for biases, ones for norm gains;
 * output projections (o_proj, down_proj) scaled by 1/sqrt(2L) as in GPT-2.
 */
export function initWeights(cfg: ModelConfig, seed: number): Tensors {
  const rng = new Rng(seed);
  const out: Tensors = {};
  for (const { name, shape } of hfParamNames(cfg)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    if (name.endsWith("norm.weight")) data.fill(1);
    else if (!name.endsWith(".bias")) {
      const std = /o_proj|down_proj/.test(name) ? 0.02 / Math.sqrt(2 * cfg.numLayers) : 0.02;
      for (let i = 0; i < size; i++) data[i] = rng.normal() * std;
    }
    out[name] = np.array(data).reshape(internalShape(name, shape));
  }
  return out;
}

/** Builds the model's parameter tree from named weights, taking a new reference to each. */
export function paramsFromWeights(cfg: ModelConfig, w: Tensors): Params {
  const get = (n: string) => {
    const a = w[n];
    if (!a) throw new Error(`missing weight ${n}`);
    return a.ref;
  };
  const layers: LayerParams[] = [];
  for (let i = 0; i < cfg.numLayers; i++) {
    const p = `model.layers.${i}`;
    const layer: LayerParams = {
      attnNorm: get(`${p}.input_layernorm.weight`),
      wq: get(`${p}.self_attn.q_proj.weight`),
      wk: get(`${p}.self_attn.k_proj.weight`),
      wv: get(`${p}.self_attn.v_proj.weight`),
      wo: get(`${p}.self_attn.o_proj.weight`),
      mlpNorm: get(`${p}.post_attention_layernorm.weight`),
      wGate: get(`${p}.mlp.gate_proj.weight`),
      wUp: get(`${p}.mlp.up_proj.weight`),
      wDown: get(`${p}.mlp.down_proj.weight`),
    };
    if (cfg.attentionBias) {
      layer.bq = get(`${p}.self_attn.q_proj.bias`);
      layer.bk = get(`${p}.self_attn.k_proj.bias`);
      layer.bv = get(`${p}.self_attn.v_proj.bias`);
    }
    layers.push(layer);
  }
  const params: Params = { embed: get("model.embed_tokens.weight"), layers, norm: get("model.norm.weight") };
  if (!cfg.tieWordEmbeddings) params.lmHead = get("lm_head.weight");
  return params;
}

/** Inverse of `paramsFromWeights` (moves the arrays, no new references). */
export function weightsFromParams(p: Params): Tensors {
  const out: Tensors = { "model.embed_tokens.weight": p.embed, "model.norm.weight": p.norm };
  if (p.lmHead) out["lm_head.weight"] = p.lmHead;
  p.layers.forEach((l, i) => {
    const q = `model.layers.${i}`;
    out[`${q}.input_layernorm.weight`] = l.attnNorm;
    out[`${q}.self_attn.q_proj.weight`] = l.wq;
    out[`${q}.self_attn.k_proj.weight`] = l.wk;
    out[`${q}.self_attn.v_proj.weight`] = l.wv;
    out[`${q}.self_attn.o_proj.weight`] = l.wo;
    if (l.bq && l.bk && l.bv) {
      out[`${q}.self_attn.q_proj.bias`] = l.bq;
      out[`${q}.self_attn.k_proj.bias`] = l.bk;
      out[`${q}.self_attn.v_proj.bias`] = l.bv;
    }
    out[`${q}.post_attention_layernorm.weight`] = l.mlpNorm;
    out[`${q}.mlp.gate_proj.weight`] = l.wGate;
    out[`${q}.mlp.up_proj.weight`] = l.wUp;
    out[`${q}.mlp.down_proj.weight`] = l.wDown;
  });
  return out;
}

/** Named tensors → HF on-disk layout (transposing linear weights back to [out, in]). */
async function toDisk(t: Tensors, prefix = ""): Promise<Record<string, TensorToWrite>> {
  const out: Record<string, TensorToWrite> = {};
  for (const name of Object.keys(t).sort()) {
    const a = dense(t[name]!.ref);
    const shape = a.shape;
    const data = (await a.data()) as Float32Array;
    if (shape.length === 2 && name !== "model.embed_tokens.weight") {
      out[prefix + name] = { shape: [shape[1]!, shape[0]!], data: transpose2d(data, shape[0]!, shape[1]!) };
    } else out[prefix + name] = { shape: [...shape], data: Float32Array.from(data) };
  }
  return out;
}

/**
 * Load `dir/config.json` + `dir/model.safetensors`. Tensors must match the config's names and
 * shapes; a tied checkpoint that still carries lm_head.weight keeps using the embedding.
 * `bf16`: store matrices as packed bfloat16 (model.ts `dense`; a frozen LoRA base).
 * @throws naming the file and the tensor when something is missing or mis-shaped.
 */
export async function loadCheckpoint(dir: string, opts: { bf16?: boolean } = {}): Promise<{ config: ModelConfig; weights: Tensors }> {
  const config = await readHfConfig(dir);
  const file = join(dir, "model.safetensors");
  return { config, weights: weightsOf(config, await readSafetensors(file), file, !!opts.bf16) };
}

/**
 * `loadCheckpoint` from files in memory: `files["config.json"]` and `files["model.safetensors"]`,
 * checked the same way. `where` names the source in errors.
 * @throws naming `where`/file and field or tensor when a file is missing, not JSON, or mis-shaped.
 */
export function checkpointFromFiles(files: ModelFiles, opts: { bf16?: boolean; where?: string } = {}): { config: ModelConfig; weights: Tensors } {
  const where = opts.where ?? "<memory>";
  const config = hfConfigFromFiles(files, where);
  const file = `${where}/model.safetensors`;
  return { config, weights: weightsOf(config, parseSafetensors(needFile(files, "model.safetensors", where), file).tensors, file, !!opts.bf16) };
}

/** The engine's weights of `config` from decoded safetensors tensors (consumed: each is deleted once stored). */
function weightsOf(config: ModelConfig, tensors: Map<string, LoadedTensor>, file: string, bf16: boolean): Tensors {
  const weights: Tensors = {};
  for (const { name, shape } of hfParamNames(config)) {
    const t = tensors.get(name);
    if (!t) throw new Error(`checkpoint error in ${file}: missing tensor ${name} (shape [${shape}]) required by config.json`);
    if (t.shape.join(",") !== shape.join(","))
      throw new Error(`checkpoint error in ${file}: tensor ${name} has shape [${t.shape}], config.json implies [${shape}]`);
    const data = transposed(name, shape) ? transpose2d(t.data, shape[0]!, shape[1]!) : t.data;
    weights[name] = storeWeight(data, internalShape(name, shape), bf16);
    tensors.delete(name);
  }
  return weights;
}

/** Reads `dir/optimizer.safetensors` when present: AdamW moments and step count. */
export async function loadOptimizerState(dir: string): Promise<{ m: Tensors; v: Tensors; t: number } | null> {
  const file = join(dir, "optimizer.safetensors");
  try {
    await stat(file);
  } catch {
    return null;
  }
  const tensors = await readSafetensors(file);
  const m: Tensors = {};
  const v: Tensors = {};
  let t = 0;
  for (const [key, val] of tensors) {
    if (key === "step") {
      t = val.data[0]!;
      continue;
    }
    const [kind, ...rest] = key.split(":");
    const name = rest.join(":");
    const shape = internalShape(name, val.shape);
    const data = transposed(name, val.shape) ? transpose2d(val.data, val.shape[0]!, val.shape[1]!) : val.data;
    (kind === "m" ? m : v)[name] = np.array(data).reshape(shape);
  }
  return { m, v, t };
}

/**
 * Write the model in the Hugging Face layout into `dir` (created if needed): config.json,
 * model.safetensors, the tokenizer files when given, and optimizer.safetensors when `adam` is.
 */
export async function saveCheckpoint(
  dir: string,
  config: ModelConfig,
  weights: Tensors,
  adam: { m: Tensors; v: Tensors; t: number } | null,
  tokenizer?: Tokenizer,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeHfConfig(dir, config);
  const toWrite = await toDisk(weights);
  if (config.tieWordEmbeddings) delete toWrite["lm_head.weight"];
  await writeSafetensors(join(dir, "model.safetensors"), toWrite, { format: "pt" });
  if (tokenizer) await tokenizer.save(dir);
  if (adam) {
    const state = { ...(await toDisk(adam.m, "m:")), ...(await toDisk(adam.v, "v:")) };
    state["step"] = { shape: [1], data: new Float32Array([adam.t]) };
    await writeSafetensors(join(dir, "optimizer.safetensors"), state);
  }
}

/** What `checkpointFiles` reads of a model: its config and its weights by Hugging Face name. */
export interface WeightSource {
  readonly config: ModelConfig;
  /** Weight `name` in the Hugging Face layout ([out, in] for linear weights), as EmbeddedEngine.getWeight. */
  getWeight(name: string): Promise<Float32Array>;
}

/**
 * The model as the bytes of a Hugging Face-layout checkpoint, for places without a file system
 * (the browser page's download, src/browser/): config.json, model.safetensors (F32, metadata
 * {format: "pt"}, the same bytes `saveCheckpoint` writes) and the tokenizer's files when it can
 * list them (Tokenizer.savedFiles). No optimizer state.
 * @returns file name → bytes, in the order config.json, model.safetensors, tokenizer files
 */
export async function checkpointFiles(model: WeightSource, tokenizer?: Tokenizer): Promise<Record<string, Uint8Array>> {
  const text = new TextEncoder();
  const tensors: Record<string, TensorToWrite> = {};
  const specs = hfParamNames(model.config).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { name, shape } of specs) tensors[name] = { shape, data: await model.getWeight(name) };
  const out: Record<string, Uint8Array> = {
    "config.json": text.encode(hfConfigText(model.config)),
    "model.safetensors": serializeSafetensors(tensors, { format: "pt" }),
  };
  for (const [name, t] of Object.entries(tokenizer?.savedFiles?.() ?? {})) out[name] = text.encode(t);
  return out;
}
