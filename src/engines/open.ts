/**
 * openEngine: the one place an engine is built from a `model:` config block — a checkpoint
 * (`path`) or a random initialisation (`init`), on the embedded engine (in-process) or the torch
 * engine (Python worker). The trainer, `rlvr eval`, `rlvr serve` and methods that load a second
 * model (ReLIFT's teacher) all open engines through it. `engine: auto` is resolved here (probe.ts:
 * torch when it is set up and measured faster on this model, embedded otherwise, the reason in one
 * line), so the rest of the code only ever sees a concrete engine.
 */
import { existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import { MODEL_CATALOG, defaultModelDir } from "./catalog.ts";
import type { RunConfig } from "../config/schema.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Engine } from "./engine.ts";
import { EmbeddedEngine } from "./embedded/engine.ts";
import type { ModelConfig } from "./embedded/hf-config.ts";
import { TorchEngine } from "./torch/engine.ts";
import { parseModelInit, type ModelInit, type ModelInitInput } from "./init.ts";
import type { ProbeResult, ProbeShape } from "./probe.ts";

/** The one-line error for a model folder that is not there (with the setup command for a catalogue model's). */
function missingModel(path: string): string {
  const name = basename(path);
  const hint = Object.hasOwn(MODEL_CATALOG, name) && defaultModelDir(name) === path ? `; run \`rlvr setup model ${name}\` first` : ` (looked in ${dirname(path)})`;
  return `config error at model.path: directory ${path} does not exist${hint}`;
}

/**
 * The `model:` block of a run config, or the fields of it a caller sets: `path`, or `init` as a
 * config writes it (missing fields take their defaults; checked at open).
 */
export type ModelSpec = Omit<Partial<RunConfig["model"]>, "init"> & { path?: string; init?: ModelInitInput };

/** What every engine needs besides the model block. */
export interface OpenEngineOptions {
  tokenizer: Tokenizer;
  /** Seed of initialisation and sampling streams. Default 0. */
  seed?: number;
  /** engine: auto — the batch of one probe step (default: probe.ts DEFAULT_PROBE_SHAPE; runs pass their RL step's, probeShapeOf). */
  probeShape?: ProbeShape;
  /** engine: auto — decide on this measurement instead of probing (tests). */
  engineProbe?: () => Promise<ProbeResult>;
  /** engine: auto — receives the one line saying which engine was picked and why (default: stderr). */
  log?: (line: string) => void;
  /** Torch engine: each stderr line of the worker (default: forwarded to stderr with a prefix). */
  torchStderr?: (line: string) => void;
  /** Embedded engine: sampling and scoring only — skip the check that training state fits the Wasm heap (`rlvr eval`). */
  inferenceOnly?: boolean;
}

/**
 * Open an engine for `model`.
 * @throws Error "config error at model.path: …" when the checkpoint directory is missing, or
 *         "config error at model.init.…" when the init block has a wrong or unknown field or an
 *         inconsistent shape (heads not dividing hidden).
 */
export async function openEngine(model: ModelSpec, o: OpenEngineOptions): Promise<Engine> {
  if (model.engine === "auto") return openAuto(model, o);
  const seed = o.seed ?? 0;
  const torchOpts = { python: model.python, device: model.device ?? "auto", dtype: model.dtype ?? "auto", gradientCheckpointing: model.gradientCheckpointing ?? false, tokenBudget: model.tokenBudget ?? 16384, seed, tokenizer: o.tokenizer, distributed: model.distributed, onStderr: o.torchStderr, lora: model.lora, timeouts: { call: model.callTimeoutS, load: model.loadTimeoutS } };
  if (model.path) {
    if (!existsSync(model.path)) throw new Error(missingModel(model.path));
    if (model.engine === "torch") return TorchEngine.fromPretrained(model.path, torchOpts);
    return EmbeddedEngine.fromPretrained(model.path, { tokenizer: o.tokenizer, seed, inferenceOnly: o.inferenceOnly, lora: model.lora });
  }
  if (!model.init) throw new Error("config error at model: set model.path (a checkpoint directory) or model.init (a random model's size)");
  const mc = initModelConfig(parseModelInit(model.init), o.tokenizer);
  if (model.engine === "torch") return TorchEngine.create(mc, torchOpts);
  return EmbeddedEngine.create(mc, { seed, tokenizer: o.tokenizer, modelId: `random-init(${mc.hiddenSize}x${mc.numLayers})`, lora: model.lora });
}

/**
 * `engine: auto`: chooseEngine (probe.ts) picks the engine and says why in one line; when the torch
 * engine was picked but does not start (a cached probe, a Python broken since), the embedded one
 * opens instead, with the reason.
 */
async function openAuto(model: ModelSpec, o: OpenEngineOptions): Promise<Engine> {
  const log = o.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const { chooseEngine } = await import("./probe.ts");
  if (model.path && !existsSync(model.path)) throw new Error(missingModel(model.path));
  const choice = await chooseEngine(model, { tokenizer: o.tokenizer, seed: o.seed, shape: o.probeShape, probe: o.engineProbe });
  log(choice.reason);
  if (choice.engine === "embedded") return openEngine({ ...model, engine: "embedded" }, o);
  try {
    return await openEngine({ ...model, engine: "torch" }, o);
  } catch (e) {
    log(`engine: auto → embedded after all (the torch engine did not start: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]})`);
    return openEngine({ ...model, engine: "embedded" }, o);
  }
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
