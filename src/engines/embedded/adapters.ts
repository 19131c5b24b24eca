/**
 * LoRA adapters of the embedded engine (model.ts applies them; ../lora.ts has the config and the
 * peft layout): initialisation as peft does it, attaching them to the model's parameter tree, the
 * packed-bfloat16 form of the frozen base, and adapter checkpoints in peft's layout
 * (adapter_config.json + adapter_model.safetensors), so either engine opens the other's.
 *
 * Adapter tensors are kept under their peft names in the internal orientation: lora_A [in, r]
 * and lora_B [r, out] (peft stores A [r, in], B [out, r]; I/O transposes).
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { numpy as np } from "@jax-js/jax";
import { adapterConfigJson, adapterTensorName, LORA_HEAD_MODULE, moduleName, type LoraConfig } from "../lora.ts";
import type { ModelConfig } from "./hf-config.ts";
import { dense, packBf16, type LoraModule, type Params } from "./model.ts";
import type { Tensors } from "./optimizer.ts";
import { readSafetensors, writeSafetensors, type TensorToWrite } from "./safetensors.ts";
import { Rng } from "../../util/rng.ts";

/** [in, out] of module `m` in one block. */
export function moduleShape(cfg: ModelConfig, m: LoraModule): [number, number] {
  const D = cfg.hiddenSize;
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  const F = cfg.intermediateSize;
  const shapes: Record<LoraModule, [number, number]> = { q_proj: [D, q], k_proj: [D, kv], v_proj: [D, kv], o_proj: [q, D], gate_proj: [D, F], up_proj: [D, F], down_proj: [F, D] };
  return shapes[m];
}

/** One adapter tensor: peft name, layer (−1 for the head), module, A or B, internal shape. */
export interface AdapterSpec {
  name: string;
  layer: number;
  module: LoraModule | typeof LORA_HEAD_MODULE;
  which: "A" | "B";
  shape: [number, number];
}

/** Every adapter tensor of `lora` on `cfg`: the blocks' modules, then the head ("lm_head": [D, r], [r, V]). */
export function adapterSpecs(cfg: ModelConfig, lora: LoraConfig): AdapterSpec[] {
  const out: AdapterSpec[] = [];
  const pair = (layer: number, m: AdapterSpec["module"], fin: number, fout: number) => {
    out.push({ name: adapterTensorName(layer, m, "A"), layer, module: m, which: "A", shape: [fin, lora.rank] });
    out.push({ name: adapterTensorName(layer, m, "B"), layer, module: m, which: "B", shape: [lora.rank, fout] });
  };
  const block = [...lora.targets].sort().filter((m) => m !== LORA_HEAD_MODULE) as LoraModule[];
  for (let i = 0; i < cfg.numLayers; i++) for (const m of block) pair(i, m, ...moduleShape(cfg, m));
  if (lora.targets.includes(LORA_HEAD_MODULE)) pair(-1, LORA_HEAD_MODULE, cfg.hiddenSize, cfg.vocabSize);
  return out;
}

/** Number of adapter parameters. */
export function adapterParamCount(cfg: ModelConfig, lora: LoraConfig): number {
  return adapterSpecs(cfg, lora).reduce((n, s) => n + s.shape[0] * s.shape[1], 0);
}

/**
 * New adapters as peft initialises them: A ~ U(−1/√in, 1/√in) (kaiming-uniform with a = √5),
 * B = 0, so the adapted model starts equal to the base. Seeded.
 */
export function initAdapters(cfg: ModelConfig, lora: LoraConfig, seed: number): Tensors {
  const rng = new Rng(seed ^ 0x4c6f5241);
  const out: Tensors = {};
  for (const s of adapterSpecs(cfg, lora)) {
    const data = new Float32Array(s.shape[0] * s.shape[1]);
    if (s.which === "A") {
      const bound = 1 / Math.sqrt(s.shape[0]);
      for (let i = 0; i < data.length; i++) data[i] = (2 * rng.next() - 1) * bound;
    }
    out[s.name] = np.array(data).reshape(s.shape);
  }
  return out;
}

/**
 * `params` with the adapters attached to their layers: new references to the adapter arrays, or
 * the arrays themselves when `move` (inside a traced function whose argument they are).
 */
export function attachAdapters(params: Params, cfg: ModelConfig, lora: LoraConfig, adapters: Tensors, move = false): Params {
  const get = (name: string) => (move ? adapters[name]! : adapters[name]!.ref);
  for (const s of adapterSpecs(cfg, lora)) {
    if (s.which === "B") continue;
    const ad = { a: get(s.name), b: get(adapterTensorName(s.layer, s.module, "B")) };
    if (s.module === LORA_HEAD_MODULE) {
      params.headLora = ad;
      continue;
    }
    const layer = params.layers[s.layer]!;
    layer.lora ??= {};
    layer.lora[s.module] = ad;
  }
  return params;
}

function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

/**
 * A base weight in the stored form: packed bfloat16 (uint32 [rows, cols/2]) when `bf16` and the
 * matrix has an even number of columns, else float32. `data` is row-major [rows, cols] (internal orientation).
 */
export function storeWeight(data: Float32Array, shape: number[], bf16: boolean): np.Array {
  if (bf16 && shape.length === 2 && shape[1]! % 2 === 0) return np.array(packBf16(data, shape[0]!, shape[1]!), { dtype: np.uint32 }).reshape([shape[0]!, shape[1]! / 2]);
  return np.array(data).reshape(shape);
}

/** Reads peft's adapter_model.safetensors into internal-orientation adapters; every tensor of `lora` on `cfg` must be there with its shape. */
export async function readAdapters(dir: string, cfg: ModelConfig, lora: LoraConfig): Promise<Tensors> {
  const file = join(dir, "adapter_model.safetensors");
  const tensors = await readSafetensors(file);
  const out: Tensors = {};
  for (const s of adapterSpecs(cfg, lora)) {
    const t = tensors.get(s.name);
    const disk = [s.shape[1], s.shape[0]];
    if (!t) throw new Error(`adapter error in ${file}: missing tensor ${s.name} (shape [${disk}]) required by adapter_config.json`);
    if (t.shape.join(",") !== disk.join(",")) throw new Error(`adapter error in ${file}: tensor ${s.name} has shape [${t.shape}], expected [${disk}]`);
    out[s.name] = np.array(transpose2d(t.data, disk[0]!, disk[1]!)).reshape(s.shape);
  }
  return out;
}

/** Adapters in peft's on-disk layout (A [r, in], B [out, r]). `prefix` is prepended to each name (optimizer moments). */
export async function adaptersToDisk(adapters: Tensors, prefix = ""): Promise<Record<string, TensorToWrite>> {
  const out: Record<string, TensorToWrite> = {};
  for (const name of Object.keys(adapters).sort()) {
    const a = adapters[name]!;
    const [r, c] = a.shape as [number, number];
    out[prefix + name] = { shape: [c, r], data: transpose2d((await a.ref.data()) as Float32Array, r, c) };
  }
  return out;
}

/** Writes adapter_config.json (`base`: the base directory, absolute or relative to `dir`) and adapter_model.safetensors into `dir`. */
export async function writeAdapters(dir: string, lora: LoraConfig, base: string, adapters: Tensors): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "adapter_config.json"), JSON.stringify(adapterConfigJson(lora, base), null, 2) + "\n");
  await writeSafetensors(join(dir, "adapter_model.safetensors"), await adaptersToDisk(adapters), { format: "pt" });
}

/** The weights with the adapters folded in, float32: W + (alpha/rank)·A B for each target (the merged checkpoint). */
export function mergeAdapters(weights: Tensors, cfg: ModelConfig, lora: LoraConfig, adapters: Tensors): Tensors {
  const out: Tensors = {};
  for (const [name, w] of Object.entries(weights)) out[name] = dense(w.ref);
  const scale = lora.alpha / lora.rank;
  for (const s of adapterSpecs(cfg, lora)) {
    if (s.which === "B") continue;
    if (s.module === LORA_HEAD_MODULE && cfg.tieWordEmbeddings) throw new Error("model.lora.saveMerged: an lm_head adapter on a model with tied embeddings cannot be merged (the head is the embedding matrix); save the adapter alone");
    const name = `${moduleName(s.layer, s.module)}.weight`;
    const delta = np.matmul(adapters[s.name]!.ref, adapters[adapterTensorName(s.layer, s.module, "B")]!.ref).mul(scale);
    out[name] = out[name]!.add(delta);
  }
  return out;
}
