/**
 * Everything a run needs, built from its config: tokenizer, engine, train/test examples, the
 * verifier and prompt encoding.
 */
import { existsSync } from "node:fs";
import type { Engine } from "../core/engine.ts";
import { openEngine } from "../engines/open.ts";
import { adviseEngine, probeShapeOf, type ProbeShape } from "../engines/probe.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { CharTokenizer, HfTokenizer, loadTokenizer, promptEncoder, type PromptFormat } from "../tokenizers/index.ts";
import type { ModelFiles } from "../engines/embedded/hf-config.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import { getTask, generateExamples, hasTask, loadDataset } from "../tasks/index.ts";
import { hasVerifier } from "../rewards/registry.ts";
import { getEnv } from "../envs/registry.ts";
import type { RunConfig } from "../config/schema.ts";
import { createVerifierPool, type VerifierPool } from "../rewards/pool/pool.ts";
import { resolveRewardConfig } from "../rewards/config.ts";
import { compileReward, type CompiledReward } from "../rewards/compile.ts";
import { createSampler, withColocatedPython } from "../rollout/samplers/vllm.ts";
import { checkMemoryPlan, estimateMemoryPlan, planShape } from "./plan.ts";
import type { RunContext } from "../pipeline/context.ts";

/**
 * Compile the run's reward (the `reward:` block, or data.verifier / data.task, see
 * resolveRewardConfig) with the run's defaults: module paths relative to the config file's folder,
 * shaping capped at rl.maxNewTokens, and the verifier pool (created on first use) when
 * rl.verifierPool.enabled. Call `closePool` when done.
 * @throws Error `config error at …` naming the field (no verifier for a custom dataset, an unknown
 *   verifier, a module that cannot load, bad options)
 */
export async function buildReward(cfg: RunConfig): Promise<{ reward: CompiledReward; closePool: () => Promise<void> }> {
  const { reward, at } = resolveRewardConfig(cfg);
  // data.task names the task first: an unknown one is an unknown task (with the known ones), not an unknown verifier.
  const task = cfg.data.task;
  if (at === "data.task" && task !== undefined && !hasTask(task) && !hasVerifier(task)) getTask(task);
  const p = cfg.rl?.verifierPool;
  let pool: VerifierPool | null = null;
  let usesMath = false;
  const baseDir = (cfg as { configDir?: string }).configDir ?? process.cwd();
  const compiled = await compileReward(reward, {
    at,
    baseDir,
    maxNewTokens: cfg.rl?.maxNewTokens,
    timeoutMs: p?.enabled ? p.timeoutMs : undefined,
    fallback: p?.enabled ? p.fallback : undefined,
    pool: p?.enabled ? () => (pool ??= createVerifierPool({ size: p.size, timeoutMs: p.timeoutMs, modules: p.modules, preloadMath: usesMath })) : undefined,
  });
  usesMath = compiled.verifiers.includes("math");
  return { reward: compiled, closePool: async () => void (await pool?.close()) };
}

/**
 * Build the tokenizer named by the config (or the checkpoint's own).
 * @param files the model directory's files in memory (buildContext's `modelFiles`): the tokenizer
 *   comes from them unless tokenizer.path names another directory
 */
export async function buildTokenizer(cfg: RunConfig, files?: ModelFiles): Promise<Tokenizer> {
  if (cfg.tokenizer?.type === "char") return new CharTokenizer({ alphabet: cfg.tokenizer.alphabet });
  if (files && cfg.tokenizer?.type !== "hf") return HfTokenizer.fromFiles(files, cfg.model.path);
  const dir = tokenizerDirOf(cfg);
  if (!dir) throw new Error("config error at tokenizer: a randomly initialised model needs tokenizer: {type: char, alphabet: ...} or {type: hf, path: ...}");
  return loadTokenizer(dir);
}

/** The directory a run's tokenizer loads from (tokenizer.path, else model.path), or undefined for a char tokenizer. */
export function tokenizerDirOf(cfg: RunConfig): string | undefined {
  if (cfg.tokenizer?.type === "char") return undefined;
  return cfg.tokenizer?.type === "hf" ? cfg.tokenizer.path : cfg.model.path;
}

/** How a run's examples become prompts (data.template, data.chat, data.system; src/tokenizers/prompt.ts). */
export function promptFormatOf(cfg: Pick<RunConfig, "data">): PromptFormat {
  return { template: cfg.data.template, chat: cfg.data.chat, ...(cfg.data.system !== undefined ? { system: cfg.data.system } : {}) };
}

/**
 * Build the engine: load a checkpoint (model.path, or `files` in memory) or initialise a model
 * (model.init); engine: auto probes with `probeShape`.
 */
export async function buildEngine(cfg: RunConfig, tokenizer: Tokenizer, probeShape?: ProbeShape, files?: ModelFiles): Promise<Engine> {
  return openEngine(cfg.model, { tokenizer, seed: cfg.seed, probeShape, ...(files ? { files } : {}) });
}

/**
 * Load or generate the train and test examples.
 * @param check the run's reward's `checkExample` (fail closed at load): a loaded row that does
 *   not match a verifier's `exampleSchema` is a DatasetError naming file, line and field, or
 *   skipped and counted under data.onBadRow "skip"
 */
export async function buildData(cfg: RunConfig, check?: CompiledReward["checkExample"]): Promise<{ train: Example[]; test: Example[] }> {
  const d = cfg.data;
  const load = async (path: string) => {
    const r = await loadDataset(path, { preset: d.preset, task: d.task, fields: d.fields, onBadRow: d.onBadRow, check });
    // data.onBadRow "skip": say how many rows were left out, and why the first one was.
    if (r.skipped > 0) process.stderr.write(`data: skipped ${r.skipped} bad row(s) of ${path} (data.onBadRow: skip); the first, line ${r.skippedRows[0]!.line}: ${r.skippedRows[0]!.reason}\n`);
    return r.examples;
  };
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

/**
 * The verifier of a run's examples: the reward block's primary verifier (see buildReward), sync
 * or async (see CompiledReward.verifyOne).
 * @throws Error `config error at …` as buildReward
 */
export async function buildVerifier(cfg: RunConfig): Promise<(response: string, example: Example) => Verdict | Promise<Verdict>> {
  return (await buildInProcessReward(cfg)).verifyOne;
}

/** The run's compiled reward, in-process (no verifier pool): for evaluation and audits of its rows. */
export async function buildInProcessReward(cfg: RunConfig): Promise<CompiledReward> {
  const { reward, closePool } = await buildReward({ ...cfg, rl: cfg.rl && { ...cfg.rl, verifierPool: { ...cfg.rl.verifierPool, enabled: false } } });
  await closePool();
  return reward;
}

/** A synchronous view of a verifier: throws, naming it, when it answers with a promise. */
export function syncVerifier(verify: (r: string, e: Example) => Verdict | Promise<Verdict>, name: string): (r: string, e: Example) => Verdict {
  return (r, e) => {
    const v = verify(r, e);
    if (v && typeof (v as Promise<Verdict>).then === "function") {
      void (v as Promise<Verdict>).catch(() => undefined);
      throw new Error(`verifier "${name}" is asynchronous (it runs programs or awaits); this feature needs a synchronous verifier — use ctx.verifyAsync / verifyBatch`);
    }
    return v as Verdict;
  };
}

/**
 * Refuse a run whose memory plan (src/trainer/plan.ts) cannot fit this machine, before any engine starts.
 * @throws Error `config error at <field>: the memory plan needs …` naming the field to lower
 */
async function checkRunPlan(cfg: RunConfig, tokenizer: Tokenizer, train: Example[], encodePrompt: (e: Example) => ArrayLike<number>): Promise<void> {
  if (cfg.model.engine === "auto") return; // the engine is chosen later; each engine checks itself
  const shape = await planShape(cfg, tokenizer, train.slice(0, 512).map(encodePrompt));
  const bad = shape && checkMemoryPlan(estimateMemoryPlan(cfg, shape));
  if (bad) throw new Error(`config error at ${bad.field}: ${bad.message}`);
}

/**
 * @param o.engineAdvice when set and the run is on the embedded engine, called with the line
 *   saying how much faster the torch engine measured (src/engines/probe.ts), if it is set up.
 * @param o.modelFiles the model directory's files in memory, file name → bytes (a browser tab,
 *   src/browser/session.ts): the tokenizer and the embedded engine load from them instead of
 *   model.path, which then only names the model (model.engine must be embedded).
 */
export async function buildContext(cfg: RunConfig, o: { engineAdvice?: (line: string) => void; modelFiles?: ModelFiles } = {}): Promise<RunContext> {
  const tokenizer = await buildTokenizer(cfg, o.modelFiles);
  // The reward before the data (rows are checked against its verifiers' schemas as they load; the
  // pool starts on first use), the data before the engine (engine: auto probes with its prompts).
  const { reward, closePool } = await buildReward(cfg);
  const { train, test } = await buildData(cfg, reward.checkExample);
  if (train.length === 0) throw new Error("data error: the training set is empty");
  const encodePrompt = promptEncoder(tokenizer, promptFormatOf(cfg), tokenizerDirOf(cfg) ?? "the tokenizer");
  await checkRunPlan(cfg, tokenizer, train, encodePrompt);
  const probeShape = cfg.model.engine === "auto" || o.engineAdvice ? probeShapeOf(cfg.rl, train.slice(0, 64).map(encodePrompt)) : undefined;
  if (o.engineAdvice && cfg.model.engine === "embedded") await adviseEngine(cfg.model, { tokenizer, seed: cfg.seed, shape: probeShape }, o.engineAdvice);
  const engine = await buildEngine(withColocatedPython(cfg), tokenizer, probeShape, o.modelFiles);
  const sampler = (await createSampler(cfg.rollout, engine, cfg.seed).catch(async (e) => {
    await engine.close();
    throw e;
  })) ?? undefined;
  const close = async () => {
    await sampler?.close?.();
    await engine.close();
    await closePool();
  };
  const verify = syncVerifier(reward.verifyOne, reward.primary);
  const verifyAsync = async (r: string, e: Example) => reward.verifyOne(r, e);
  const env = cfg.env && { def: getEnv(cfg.env.name), seed: cfg.seed, maxTurns: cfg.env.maxTurns, maxTokens: cfg.env.maxTokens };
  return { cfg, tokenizer, engine, sampler, train, test, verify, verifyAsync, encodePrompt, verifyBatch: reward.scoreBatch, close, ...(env ? { env } : {}) };
}
