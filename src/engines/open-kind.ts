/**
 * Opening an engine of a concrete kind (embedded or torch) from a `model:` block: what openEngine
 * (open.ts) does once `engine: auto` is resolved, and what the engine probe (probe.ts) opens.
 */
import { existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import { MODEL_CATALOG, defaultModelDir } from "./catalog.ts";
import type { ModelBlock } from "./config.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Engine } from "../core/engine.ts";
import { EmbeddedEngine } from "./embedded/engine.ts";
import type { ModelConfig, ModelFiles } from "./embedded/hf-config.ts";
import { TorchEngine } from "./torch/engine.ts";
import { parseModelInit, type ModelInit, type ModelInitInput } from "./init.ts";

/** The one-line error for a model folder that is not there (with the setup command for a catalogue model's). */
export function missingModel(path: string): string {
  const name = basename(path);
  const hint = Object.hasOwn(MODEL_CATALOG, name) && defaultModelDir(name) === path ? `; run \`rlvr setup model ${name}\` first` : ` (looked in ${dirname(path)})`;
  return `config error at model.path: directory ${path} does not exist${hint}`;
}

/**
 * The `model:` block of a run config, or the fields of it a caller sets: `path`, or `init` as a
 * config writes it (missing fields take their defaults; checked at open).
 */
export type ModelSpec = Omit<Partial<ModelBlock>, "init"> & { path?: string; init?: ModelInitInput };

/** What every engine needs besides the model block. */
export interface EngineKindOptions {
  tokenizer: Tokenizer;
  /** Seed of initialisation and sampling streams. Default 0. */
  seed?: number;
  /** Torch engine: each stderr line of the worker (default: forwarded to stderr with a prefix). */
  torchStderr?: (line: string) => void;
  /** Embedded engine: sampling and scoring only — skip the check that training state fits the Wasm heap (`rlvr eval`). */
  inferenceOnly?: boolean;
  /**
   * The model directory's files in memory instead of reading `model.path` (a browser tab, which has
   * no file system; EmbeddedEngine.fromFiles): embedded engine only. `model.path` then only names the model.
   */
  files?: ModelFiles;
}

/**
 * Open an engine of the kind `model.engine` names (embedded when unset; not "auto": see openEngine).
 * @throws Error "config error at model.path: …" when the checkpoint directory is missing, or
 *         "config error at model.init.…" when the init block has a wrong or unknown field or an
 *         inconsistent shape (heads not dividing hidden).
 */
export async function openEngineOfKind(model: ModelSpec, o: EngineKindOptions): Promise<Engine> {
  const seed = o.seed ?? 0;
  const torchOpts = { python: model.python, device: model.device ?? "auto", dtype: model.dtype ?? "auto", gradientCheckpointing: model.gradientCheckpointing ?? false, tokenBudget: model.tokenBudget ?? 16384, sharedPrompts: model.sharedPrompts ?? true, seed, tokenizer: o.tokenizer, distributed: model.distributed, onStderr: o.torchStderr, lora: model.lora, timeouts: { call: model.callTimeoutS, load: model.loadTimeoutS } };
  if (o.files) {
    if (model.engine === "torch") throw new Error(`config error at model.engine: a model given as files in memory (a browser tab) opens on the embedded engine only, not "${model.engine}"`);
    return EmbeddedEngine.fromFiles(o.files, { where: model.path, tokenizer: o.tokenizer, seed, inferenceOnly: o.inferenceOnly, lora: model.lora, sharedPrefix: model.sharedPrompts ?? true, nativeKernels: model.nativeKernels });
  }
  if (model.path) {
    if (!existsSync(model.path)) throw new Error(missingModel(model.path));
    if (model.engine === "torch") return TorchEngine.fromPretrained(model.path, torchOpts);
    return EmbeddedEngine.fromPretrained(model.path, { tokenizer: o.tokenizer, seed, inferenceOnly: o.inferenceOnly, lora: model.lora, sharedPrefix: model.sharedPrompts ?? true, nativeKernels: model.nativeKernels });
  }
  if (!model.init) throw new Error("config error at model: set model.path (a checkpoint directory) or model.init (a random model's size)");
  const mc = initModelConfig(parseModelInit(model.init), o.tokenizer);
  if (model.engine === "torch") return TorchEngine.create(mc, torchOpts);
  return EmbeddedEngine.create(mc, { seed, tokenizer: o.tokenizer, modelId: `random-init(${mc.hiddenSize}x${mc.numLayers})`, lora: model.lora, sharedPrefix: model.sharedPrompts ?? true, nativeKernels: model.nativeKernels });
}

/** The Llama-style model config of a `model.init` block; the vocabulary comes from the tokenizer. */
export function initModelConfig(init: ModelInit, tokenizer: Tokenizer): ModelConfig {
  const kv = init.numKvHeads ?? init.numHeads;
  if (init.hiddenSize % init.numHeads !== 0) throw new Error(`config error at model.init.hiddenSize: ${init.hiddenSize} is not divisible by numHeads ${init.numHeads}`);
  if (init.numHeads % kv !== 0) throw new Error(`config error at model.init.numKvHeads: numHeads ${init.numHeads} is not divisible by numKvHeads ${kv}`);
  return {
    modelType: "llama",
    vocabSize: tokenizer.vocabSize,
    hiddenSize: init.hiddenSize,
    intermediateSize: init.intermediateSize ?? init.hiddenSize * 3,
    numLayers: init.numLayers,
    numHeads: init.numHeads,
    numKvHeads: kv,
    headDim: init.hiddenSize / init.numHeads,
    rmsNormEps: 1e-5,
    ropeTheta: init.ropeTheta,
    maxPositionEmbeddings: init.maxPositionEmbeddings,
    tieWordEmbeddings: init.tieWordEmbeddings,
    attentionBias: false,
    bosTokenId: tokenizer.bosId,
    eosTokenId: tokenizer.eosId,
  };
}
