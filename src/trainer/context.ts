/**
 * Everything a run needs, built from its config: tokenizer, engine, train/test examples, the
 * verifier and prompt encoding.
 */
import { existsSync } from "node:fs";
import type { Engine, Sampler } from "../engines/engine.ts";
import { EmbeddedEngine } from "../engines/embedded/engine.ts";
import { TorchEngine } from "../engines/torch/engine.ts";
import type { ModelConfig } from "../engines/embedded/hf-config.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { CharTokenizer, loadTokenizer } from "../tokenizers/index.ts";
import type { Example, Verdict } from "../tasks/types.ts";
import { getTask, generateExamples, loadDataset, renderPrompt } from "../tasks/index.ts";
import { verifyMath } from "../rewards/math/index.ts";
import type { RunConfig } from "../config/schema.ts";
import { createVerifierPool, type VerifierPool } from "../rewards/pool/pool.ts";

export interface RunContext {
  cfg: RunConfig;
  tokenizer: Tokenizer;
  engine: Engine;
  /** Where rollouts are sampled when not by `engine` (vLLM, an OpenAI-compatible server). */
  sampler?: Sampler;
  train: Example[];
  test: Example[];
  /** Score one response; never throws. */
  verify: (response: string, example: Example) => Verdict;
  /** Prompt token ids of an example (template applied, BOS prepended when the tokenizer has one). */
  encodePrompt: (example: Example) => Int32Array;
  /**
   * Score a batch of responses: in-process with `verify`, or in the verifier pool when
   * rl.verifierPool.enabled (hard timeouts; failures give the fallback reward and count as events).
   * @returns one verdict per response and event counts (verifier/timeouts, /crashes, /errors).
   */
  verifyBatch: (responses: readonly string[], examples: readonly Example[]) => Promise<{ verdicts: Verdict[]; events: Record<string, number> }>;
  /** Release the engine and the verifier pool. */
  close: () => Promise<void>;
}

/**
 * Complete a hand-built context (tests, benchmarks) with in-process batch verification and a
 * close() that closes the engine.
 */
export function contextWith(parts: Omit<RunContext, "verifyBatch" | "close">): RunContext {
  return {
    ...parts,
    verifyBatch: async (rs, exs) => ({ verdicts: rs.map((r, i) => parts.verify(r, exs[i]!)), events: {} }),
    close: () => parts.engine.close(),
  };
}

/** Name of the verifier a pool call uses for a run's examples. */
function poolCall(cfg: RunConfig, response: string, ex: Example): [string, unknown[]] {
  const name = cfg.data.verifier ?? cfg.data.task;
  return name && name !== "math" ? ["task", [name, response, ex]] : ["math", [response, ex.answer]];
}

function batchVerifier(cfg: RunConfig, verify: RunContext["verify"]): { verifyBatch: RunContext["verifyBatch"]; closePool: () => Promise<void> } {
  const p = cfg.rl?.verifierPool;
  if (!p?.enabled) {
    return { verifyBatch: async (rs, exs) => ({ verdicts: rs.map((r, i) => verify(r, exs[i]!)), events: {} }), closePool: async () => {} };
  }
  // (contextWith above is the same in-process path for hand-built contexts.)
  let pool: VerifierPool | null = null;
  return {
    async verifyBatch(rs, exs) {
      pool ??= createVerifierPool({ size: p.size, timeoutMs: p.timeoutMs, modules: p.modules, preloadMath: false });
      const events: Record<string, number> = {};
      const verdicts = await Promise.all(
        rs.map(async (r, i) => {
          const [name, args] = poolCall(cfg, r, exs[i]!);
          const out = await pool!.callScore(name, args, { fallback: p.fallback, timeoutMs: p.timeoutMs });
          if (out.event) {
            events[out.event] = (events[out.event] ?? 0) + 1;
            return { correct: false, reward: out.value ?? p.fallback, extracted: null, reason: `${out.event}: ${out.message ?? ""}` } satisfies Verdict;
          }
          const v = out.result as Partial<Verdict> & { correct?: boolean };
          return { correct: !!v.correct, reward: typeof v.reward === "number" ? v.reward : v.correct ? 1 : 0, extracted: (v.extracted as string | null) ?? null, reason: String(v.reason ?? "") };
        }),
      );
      return { verdicts, events };
    },
    async closePool() {
      await pool?.close();
    },
  };
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
  const { verifyBatch, closePool } = batchVerifier(cfg, verify);
  const close = async () => {
    await engine.close();
    await closePool();
  };
  return { cfg, tokenizer, engine, train, test, verify, encodePrompt, verifyBatch, close };
}
