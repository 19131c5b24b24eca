/**
 * Everything a run needs, built from its config: tokenizer, engine, train/test examples, the
 * verifier and prompt encoding.
 */
import { existsSync } from "node:fs";
import type { Engine } from "../engines/engine.ts";
import { EmbeddedEngine } from "../engines/embedded/engine.ts";
import { TorchEngine } from "../engines/torch/engine.ts";
import type { ModelConfig } from "../engines/embedded/hf-config.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { CharTokenizer, loadTokenizer } from "../tokenizers/index.ts";
import type { Example, Verdict } from "../tasks/types.ts";
import { getTask, generateExamples, loadDataset, renderPrompt } from "../tasks/index.ts";
import { verifyMath } from "../rewards/math/index.ts";
import type { RunConfig } from "../config/schema.ts";

export interface RunContext {
  cfg: RunConfig;
  tokenizer: Tokenizer;
  engine: Engine;
  train: Example[];
  test: Example[];
  /** Score one response; never throws. */
  verify: (response: string, example: Example) => Verdict;
  /** Prompt token ids of an example (template applied, BOS prepended when the tokenizer has one). */
  encodePrompt: (example: Example) => Int32Array;
}

/** Build the tokenizer named by the config (or the checkpoint's own). */
export async function buildTokenizer(cfg: RunConfig): Promise<Tokenizer> {
  if (cfg.tokenizer?.type === "char") return new CharTokenizer({ alphabet: cfg.tokenizer.alphabet });
  const dir = cfg.tokenizer?.type === "hf" ? cfg.tokenizer.path : cfg.model.path;
  if (!dir) throw new Error("config error at tokenizer: a randomly initialised model needs tokenizer: {type: char, alphabet: ...} or {type: hf, path: ...}");
  return loadTokenizer(dir);
}

/** Build the engine: load a checkpoint (model.path) or initialise a model (model.init). */
export async function buildEngine(cfg: RunConfig, tokenizer: Tokenizer): Promise<Engine> {
  const m = cfg.model;
  const torchOpts = { python: m.python, device: m.device, dtype: m.dtype, gradientCheckpointing: m.gradientCheckpointing, tokenBudget: m.tokenBudget, seed: cfg.seed, tokenizer };
  if (cfg.model.path) {
    if (!existsSync(cfg.model.path)) throw new Error(`config error at model.path: directory ${cfg.model.path} does not exist`);
    if (m.engine === "torch") return TorchEngine.fromPretrained(cfg.model.path, torchOpts);
    return EmbeddedEngine.fromPretrained(cfg.model.path, { tokenizer, seed: cfg.seed });
  }
  const init = cfg.model.init!;
  const kv = init.numKvHeads ?? init.numHeads;
  if (init.hiddenSize % init.numHeads !== 0) throw new Error(`config error at model.init.hiddenSize: ${init.hiddenSize} is not divisible by numHeads ${init.numHeads}`);
  if (init.numHeads % kv !== 0) throw new Error(`config error at model.init.numKvHeads: numHeads ${init.numHeads} is not divisible by numKvHeads ${kv}`);
  const mc: ModelConfig = {
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
  if (m.engine === "torch") return TorchEngine.create(mc, torchOpts);
  return EmbeddedEngine.create(mc, { seed: cfg.seed, tokenizer, modelId: `random-init(${init.hiddenSize}x${init.numLayers})` });
}

/** Load or generate the train and test examples. */
export async function buildData(cfg: RunConfig): Promise<{ train: Example[]; test: Example[] }> {
  const d = cfg.data;
  const load = async (path: string) => (await loadDataset(path, { preset: d.preset, task: d.task, fields: d.fields, onBadRow: d.onBadRow })).examples;
  if (d.train) {
    const train = await load(d.train);
    const test = d.test ? await load(d.test) : [];
    return { train, test: test.slice(0, d.testSize) };
  }
  const task = getTask(d.task!);
  const difficulty = d.difficulty ?? task.difficulties.default;
  return {
    train: generateExamples(task, { n: d.trainSize, seed: cfg.seed, difficulty, split: "train" }),
    test: generateExamples(task, { n: d.testSize, seed: cfg.seed, difficulty, split: "test" }),
  };
}

/** The verifier for a run's examples: the procedural task's, or the math verifier. */
export function buildVerifier(cfg: RunConfig): (response: string, example: Example) => Verdict {
  const name = cfg.data.verifier ?? cfg.data.task;
  if (name && name !== "math") {
    const task = getTask(name);
    return (r, e) => task.verify(r, e);
  }
  return (r, e) => {
    const v = verifyMath(r, e.answer);
    return { correct: v.correct, reward: v.correct ? 1 : 0, extracted: v.extracted, reason: v.reason };
  };
}

export async function buildContext(cfg: RunConfig): Promise<RunContext> {
  const tokenizer = await buildTokenizer(cfg);
  const engine = await buildEngine(cfg, tokenizer);
  const { train, test } = await buildData(cfg);
  if (train.length === 0) throw new Error("data error: the training set is empty");
  const verify = buildVerifier(cfg);
  const encodePrompt = (ex: Example) => {
    const text = renderPrompt(ex, { template: cfg.data.template });
    const ids = tokenizer.encode(text);
    return Int32Array.from(tokenizer.bosId !== null ? [tokenizer.bosId, ...ids] : ids);
  };
  return { cfg, tokenizer, engine, train, test, verify, encodePrompt };
}
