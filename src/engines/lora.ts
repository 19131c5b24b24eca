/**
 * LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models", arXiv:2106.09685):
 * the frozen weight W [out, in] of each target linear layer gets a trainable low-rank update,
 *   y = x Wᵀ + (alpha / rank) · dropout(x) Aᵀ Bᵀ,   A [rank, in] ~ kaiming-uniform, B [out, rank] = 0,
 * so training starts exactly at the base model and only A and B are trained and kept in the
 * optimizer. Both engines implement it (torch through peft, embedded in model.ts) and save
 * adapters in peft's layout, so a checkpoint moves between them:
 *   adapter_config.json   {peft_type: "LORA", r, lora_alpha, lora_dropout, target_modules, base_model_name_or_path, …}
 *   adapter_model.safetensors  base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight [rank, in], …lora_B.weight [out, rank]
 * A directory with adapter_config.json opens as its base model plus the adapter (model.path,
 * `rlvr eval`, `rlvr serve`).
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";

/** The linear modules of a Llama-family block, by their Hugging Face names. */
export const LLAMA_LINEAR_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;

/**
 * The output head (unembedding) as a LoRA target, by its Hugging Face name. An adapter there adds
 * (alpha/rank)·h A B to the logits, tied heads included (peft: base_model.model.lm_head.lora_A.weight).
 */
export const LORA_HEAD_MODULE = "lm_head";

/**
 * `model.lora` of a run config. Defaults: rank 16, alpha 32, dropout 0, every linear module of a
 * block (attention and MLP: "LoRA Without Regret", Schulman et al. 2025, finds MLP adapters matter
 * for RL), no merged checkpoint.
 */
export const loraConfigSchema = z.strictObject({
  /** r: the adapters' inner width. */
  rank: z.number().int().positive().max(4096).default(16),
  /** The update is scaled by alpha / rank. */
  alpha: z.number().positive().default(32),
  /** Dropout on the adapters' input during training forwards (torch engine; the embedded engine takes 0 only). */
  dropout: z.number().min(0).lt(1).default(0),
  /** Module names (leaf names, e.g. q_proj, down_proj); checked against the model's modules at load. */
  targets: z.array(z.string().min(1)).min(1).default([...LLAMA_LINEAR_MODULES]),
  /** Also write `merged/` (base + adapter folded into plain weights) beside each saved adapter. */
  saveMerged: z.boolean().default(false),
  /**
   * Embedded engine: storage of the frozen base. "bfloat16" halves its memory (float32 compute;
   * weights rounded to bfloat16), "float32" keeps it exact, "auto" takes float32 when it fits
   * jax-js's 4 GiB heap, else bfloat16. The torch engine keeps its own dtype (model.dtype).
   */
  baseDtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
});

/** `model.lora` with defaults applied. */
export type LoraConfig = z.output<typeof loraConfigSchema>;

/**
 * Fail closed on target names: every target must be one of `modules` (the model's linear
 * module names).
 * @throws Error "config error at model.lora.targets: …" naming the unknown names and the model's modules
 */
export function checkLoraTargets(targets: readonly string[], modules: readonly string[]): void {
  const unknown = targets.filter((t) => !modules.includes(t));
  if (unknown.length) {
    throw new Error(`config error at model.lora.targets: ${unknown.map((u) => JSON.stringify(u)).join(", ")} ${unknown.length === 1 ? "is not a module" : "are not modules"} of this model; its linear modules: ${modules.join(", ")}`);
  }
}

/**
 * A `model.lora` given with an adapter directory must describe that adapter.
 * @throws Error "config error at model.lora: …" naming both settings
 */
export function checkSameAdapter(dir: string, have: LoraConfig, want: LoraConfig): void {
  const key = (l: LoraConfig) => `rank ${l.rank}, alpha ${l.alpha} on ${[...l.targets].sort().join(", ")}`;
  if (key(have) !== key(want)) throw new Error(`config error at model.lora: the adapter at ${dir} has ${key(have)}; model.lora asks for ${key(want)}; make them equal (or start from its merged checkpoint)`);
}

/** What a peft adapter directory says about itself (adapter_config.json). */
export interface AdapterInfo {
  /** The base model directory, resolved (absolute; relative paths are taken from the adapter directory). */
  base: string;
  lora: LoraConfig;
}

/**
 * Whether `dir` is a peft LoRA adapter directory (has adapter_config.json), and if so its base and
 * its LoRA settings. Only Llama-style targets, no bias, no rank/alpha patterns are understood.
 * @throws Error naming the file and field when the adapter is not a plain LoRA adapter or its base is missing
 */
export function readAdapterInfo(dir: string): AdapterInfo | null {
  const file = join(dir, "adapter_config.json");
  if (!existsSync(file)) return null;
  const c = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const bad = (field: string, why: string) => new Error(`adapter error in ${file} at ${field}: ${why}`);
  if (c.peft_type !== "LORA") throw bad("peft_type", `expected "LORA", got ${JSON.stringify(c.peft_type)}`);
  if (c.bias !== undefined && c.bias !== "none") throw bad("bias", `only "none" is supported, got ${JSON.stringify(c.bias)}`);
  for (const f of ["rank_pattern", "alpha_pattern"]) if (c[f] && Object.keys(c[f] as object).length) throw bad(f, "per-module ranks/alphas are not supported");
  if (c.use_dora || c.use_rslora) throw bad(c.use_dora ? "use_dora" : "use_rslora", "only plain LoRA is supported");
  const baseName = c.base_model_name_or_path;
  if (typeof baseName !== "string" || !baseName) throw bad("base_model_name_or_path", "missing: the base model directory");
  const candidates = isAbsolute(baseName) ? [baseName] : [resolve(dir, baseName), resolve(baseName)];
  const base = candidates.find((p) => existsSync(join(p, "config.json")));
  if (!base) throw bad("base_model_name_or_path", `no base model directory with config.json at ${candidates.join(" or ")}`);
  const targets = Array.isArray(c.target_modules) ? (c.target_modules as string[]) : typeof c.target_modules === "string" ? [c.target_modules] : [];
  const lora = loraConfigSchema.parse({ rank: c.r, alpha: c.lora_alpha, dropout: c.lora_dropout ?? 0, targets: targets.length ? [...targets].sort() : undefined });
  return { base, lora };
}

/** The adapter_config.json peft writes for `lora` on `base` (the fields both engines read back). */
export function adapterConfigJson(lora: LoraConfig, base: string): Record<string, unknown> {
  return {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: base,
    r: lora.rank,
    lora_alpha: lora.alpha,
    lora_dropout: lora.dropout,
    target_modules: [...lora.targets].sort(),
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    modules_to_save: null,
    use_dora: false,
    use_rslora: false,
    rank_pattern: {},
    alpha_pattern: {},
  };
}

/** The Hugging Face name of module `module` (q_proj …) of block `layer`, e.g. model.layers.3.mlp.down_proj; "lm_head" is the head (no layer). */
export function moduleName(layer: number, module: string): string {
  if (module === LORA_HEAD_MODULE) return LORA_HEAD_MODULE;
  const group = ["gate_proj", "up_proj", "down_proj"].includes(module) ? "mlp" : "self_attn";
  return `model.layers.${layer}.${group}.${module}`;
}

/** The peft tensor name of one adapter matrix: layer i, module name (q_proj …), "A" or "B". */
export function adapterTensorName(layer: number, module: string, which: "A" | "B"): string {
  return `base_model.model.${moduleName(layer, module)}.lora_${which}.weight`;
}

/** Whether `dir` holds a model that `model.path` opens: a Hugging Face checkpoint (config.json) or a LoRA adapter (adapter_config.json). */
export function isModelDir(dir: string): boolean {
  return existsSync(join(dir, "config.json")) || existsSync(join(dir, "adapter_config.json"));
}
