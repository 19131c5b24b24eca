/**
 * openEngine: the one place an engine is built from a `model:` config block — a checkpoint
 * (`path`) or a random initialisation (`init`), on the embedded engine (in-process) or the torch
 * engine (Python worker). The trainer, `rlvr eval`, `rlvr serve` and methods that load a second
 * model (ReLIFT's teacher) all open engines through it.
 */
import { existsSync } from "node:fs";
import type { RunConfig } from "../config/schema.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Engine } from "./engine.ts";
import { EmbeddedEngine } from "./embedded/engine.ts";
import type { ModelConfig } from "./embedded/hf-config.ts";
import { TorchEngine } from "./torch/engine.ts";

/** The `model:` block of a run config (defaults applied), or the fields of it a caller sets. */
export type ModelSpec = Partial<RunConfig["model"]> & Pick<RunConfig["model"], "path" | "init">;

/** What every engine needs besides the model block. */
export interface OpenEngineOptions {
  tokenizer: Tokenizer;
  /** Seed of initialisation and sampling streams. Default 0. */
  seed?: number;
}

/**
 * Open an engine for `model`.
 * @throws Error "config error at model.path: …" when the checkpoint directory is missing, or
 *         "config error at model.init.…" when the shape is inconsistent (heads not dividing hidden).
 */
export async function openEngine(model: ModelSpec, o: OpenEngineOptions): Promise<Engine> {
  const seed = o.seed ?? 0;
  const torchOpts = { python: model.python, device: model.device ?? "auto", dtype: model.dtype ?? "auto", gradientCheckpointing: model.gradientCheckpointing ?? false, tokenBudget: model.tokenBudget ?? 16384, seed, tokenizer: o.tokenizer, distributed: model.distributed };
  if (model.path) {
    if (!existsSync(model.path)) throw new Error(`config error at model.path: directory ${model.path} does not exist`);
    if (model.engine === "torch") return TorchEngine.fromPretrained(model.path, torchOpts);
    return EmbeddedEngine.fromPretrained(model.path, { tokenizer: o.tokenizer, seed });
  }
  if (!model.init) throw new Error("config error at model: set model.path (a checkpoint directory) or model.init (a random model's size)");
  const mc = initModelConfig(model.init, o.tokenizer);
  if (model.engine === "torch") return TorchEngine.create(mc, torchOpts);
  return EmbeddedEngine.create(mc, { seed, tokenizer: o.tokenizer, modelId: `random-init(${mc.hiddenSize}x${mc.numLayers})` });
}

/** The Llama-style model config of a `model.init` block; the vocabulary comes from the tokenizer. */
export function initModelConfig(init: NonNullable<RunConfig["model"]["init"]>, tokenizer: Tokenizer): ModelConfig {
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
