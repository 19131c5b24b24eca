/**
 * `rlvr eval <run-dir|checkpoint> [--compare <run-dir|checkpoint>] [--task ... | --data ...]`:
 * held-out accuracy, greedy accuracy, mean@n, pass@k, maj@k, lengths and truncation with
 * bootstrap intervals, per task and per difficulty; with --compare, a base-vs-trained table with
 * paired intervals and a pass@k curve. --out writes everything as JSON (see docs/evaluation.md).
 * Without --task and --data, a run's own held-out set, reward, prompt template and response budget
 * (its config.yaml). The run's `plugins` and any `--plugin` modules load first.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { openEngine } from "../../engines/open.ts";
import type { Engine } from "../../core/engine.ts";
import type { Tokenizer } from "../../tokenizers/types.ts";
import { endpointEngine } from "../../rollout/samplers/openai.ts";
import { createSampler, withColocatedPython } from "../../rollout/samplers/vllm.ts";
import { rolloutEngineSchema } from "../../rollout/samplers/config.ts";
import { loadTokenizer, promptEncoder, type PromptFormat } from "../../tokenizers/index.ts";
import { getTask, generateExamples, loadDataset } from "../../tasks/index.ts";
import type { Verdict } from "../../tasks/types.ts";
import type { Example } from "../../core/example.ts";
import { evaluate, type EvalResult } from "../../eval/accuracy.ts";
import { compareResults, passAtKCurve } from "../../eval/compare.ts";
import { asciiCurve, formatComparison, formatReport } from "../../eval/report.ts";
import { buildData, buildInProcessReward, promptFormatOf, syncVerifier } from "../../trainer/context.ts";
import { runConfigOf } from "../../trainer/evaluate.ts";
import { loadRunConfig, type RunConfig } from "../../config/schema.ts";
import { loadCommandPlugins, loadRunConfigFile, runConfigPath } from "../../config/plugins.ts";
import { compileReward, type CompiledReward } from "../../rewards/compile.ts";
import { isModelDir } from "../../engines/lora.ts";
import { rewardConfigSchema, BUILTIN_VERIFIER_NAMES } from "../../rewards/config.ts";
import { withPluginOption } from "../plugins.ts";

/** A run directory's final checkpoint, or the directory itself when it holds a model (config.json, or a LoRA adapter's adapter_config.json). */
export function resolveCheckpoint(path: string): string {
  if (isModelDir(path)) return path;
  const final = join(path, "checkpoints", "final");
  if (isModelDir(final)) return final;
  throw new Error(`no checkpoint at ${path}: expected config.json there or in ${final} (or a LoRA adapter's adapter_config.json)`);
}

/** A short label for a checkpoint path: the run directory's name for <run>/checkpoints/<x>. */
export function checkpointLabel(path: string, dir: string): string {
  const abs = resolve(dir);
  if (basename(dirname(abs)) === "checkpoints") return `${basename(dirname(dirname(abs)))}/${basename(abs)}`;
  return basename(resolve(path));
}

export interface EvalCommandOptions {
  task?: string;
  difficulty?: string;
  data?: string;
  /** Verifier for --data rows; default: the run's (its config.yaml), else required. */
  verifier?: string;
  n: number;
  samples: number;
  k?: string;
  temperature: number;
  topP: number;
  greedy?: boolean;
  maxNewTokens: number;
  seed: number;
  /** Prompt template (default: the run's data.template, else plain). */
  template?: "plain" | "r1" | "boxed";
  /** Render prompts through the model's chat template (default: the run's data.chat). */
  chat?: boolean;
  /** Default system message (default: the run's data.system). */
  system?: string;
  bootstrap: number;
  level: number;
  compare?: string;
  labels?: string;
  out?: string;
  json?: boolean;
  record?: string | boolean;
  /** Sample from this OpenAI-compatible server (e.g. `rlvr serve`) instead of loading the checkpoint's weights; the checkpoint gives the tokenizer. */
  endpoint?: string;
  /** Model id at --endpoint (default: the server's first). */
  model?: string;
  /** Engine that loads the checkpoint and samples: embedded, torch, vllm (a local vLLM server fed by the torch engine) or auto; default the run's model.engine, else auto. */
  engine?: string;
  /** Modules to import first (`--plugin`), besides the run's own `plugins`. */
  plugin?: string[];
}

/** The engines `rlvr eval --engine` opens. */
export const EVAL_ENGINES = ["embedded", "torch", "vllm", "auto"] as const;

/** What `runEval` accepts: without --task and --data, the template and budget default to the run's. */
export type EvalCommandInput = Omit<EvalCommandOptions, "template" | "maxNewTokens"> & Partial<Pick<EvalCommandOptions, "template" | "maxNewTokens">>;

function intList(v: string | undefined, what: string): number[] | undefined {
  if (v === undefined) return undefined;
  const xs = v.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  for (const x of xs) if (!Number.isInteger(x)) throw new Error(`rlvr eval: ${what} must be a comma-separated list of integers, got "${v}"`);
  return xs;
}

/**
 * The held-out examples: n per (task, difficulty) for procedural tasks, or the first n rows of
 * --data, each checked against the reward's verifiers' schemas when `check` is given (a row that
 * does not match is a DatasetError naming file, line and field). Without either, see runDefaults.
 */
export async function evalExamples(o: EvalCommandOptions, check?: CompiledReward["checkExample"]): Promise<Example[]> {
  if (o.data) return (await loadDataset(o.data, { task: o.task, check })).examples.slice(0, o.n);
  if (!o.task) throw new Error("rlvr eval: give --task <name[,name...]> or --data <file>, or evaluate a run directory (its config.yaml gives the test set)");
  const out: Example[] = [];
  const diffs = intList(o.difficulty, "--difficulty");
  for (const name of o.task!.split(",").map((s) => s.trim()).filter(Boolean)) {
    const task = getTask(name);
    for (const difficulty of diffs ?? [undefined]) out.push(...generateExamples(task, { n: o.n, seed: o.seed, difficulty, split: "test" }));
  }
  return out;
}

/**
 * The verifier of an evaluation: `--verifier` when given, else the run's own reward block (its
 * config.yaml, found beside `runDir` or above its checkpoint), else — for --task prompts — each
 * example's task verifier.
 * @throws Error when --data rows have no verifier (no --verifier, no run config)
 */
export async function evalVerifier(o: Pick<EvalCommandOptions, "verifier" | "data">, runDir: string): Promise<(r: string, e: Example) => Verdict | Promise<Verdict>> {
  return (await evalReward(o, runDir)).verifyOne;
}

/**
 * Without --task and --data: the run's own held-out examples (the first --n of them) and its
 * prompt template and response budget, unless given.
 * @throws Error when `path` belongs to no run (no config.yaml) or the run has no held-out set
 */
export async function runDefaults(path: string, o: EvalCommandInput): Promise<{ examples: Example[]; options: EvalCommandOptions; config: string }> {
  const found = runConfigPath(path);
  if (!found) throw new Error(`rlvr eval: ${path} is not a run directory (no config.yaml beside it or above it); give --task <name[,name...]> or --data <file>`);
  const cfg: RunConfig = await loadRunConfigFile(found);
  const { test } = await buildData(cfg);
  if (test.length === 0) throw new Error(`rlvr eval: the run ${found} has no held-out set (set data.test there), so give --task or --data`);
  const maxNewTokens = o.maxNewTokens ?? cfg.eval.maxNewTokens ?? cfg.rl?.maxNewTokens ?? 32;
  return { examples: test.slice(0, o.n), options: { ...o, template: o.template ?? cfg.data.template, maxNewTokens }, config: found };
}

/** The compiled reward of an evaluation (see evalVerifier), in-process. */
export async function evalReward(o: Pick<EvalCommandOptions, "verifier" | "data">, runDir: string): Promise<CompiledReward> {
  if (o.verifier) return compileReward(rewardConfigSchema.parse({ verifier: o.verifier }), { at: "--verifier" });
  const found = runConfigPath(runDir);
  // --data rows need the run's reward (its config errors surface); --task prompts use it when the run config is complete.
  const run = found && (o.data ? loadRunConfig(found) : tryLoadRunConfig(found));
  if (run) return buildInProcessReward(run);
  if (!o.data) return compileReward(rewardConfigSchema.parse({ verifier: "task" }));
  throw new Error(`rlvr eval: --data rows need a verifier; pass --verifier <name> (${BUILTIN_VERIFIER_NAMES.join(", ")}, or a task's name) or evaluate a run directory whose config.yaml names one`);
}

/** A run config, or null when it does not validate (a partial config.yaml beside a checkpoint). */
function tryLoadRunConfig(file: string): RunConfig | null {
  try {
    return loadRunConfig(file);
  } catch {
    return null;
  }
}

/** `model.engine` as written in a run's config.yaml (read on its own when the whole config does not validate). */
function configuredEngine(file: string): string | undefined {
  const doc = parseYaml(readFileSync(file, "utf8")) as { model?: { engine?: unknown } } | null;
  const e = doc?.model?.engine;
  return typeof e === "string" ? e : undefined;
}

/**
 * The engine that samples an evaluation of checkpoint `dir`: --endpoint (an OpenAI-compatible
 * server, with or without /v1), else --engine, else the run's model.engine, else auto. The run's
 * model block (python, device, dtype) applies to torch; vllm starts a local vLLM server (the run's
 * rollout block when it names vLLM, else its defaults) fed with the checkpoint by the torch engine.
 * The embedded engine loads for inference only (no training state), so larger models fit.
 */
export async function openEvalEngine(dir: string, tokenizer: Tokenizer, o: Pick<EvalCommandOptions, "endpoint" | "model" | "engine" | "seed">, run: RunConfig | null): Promise<Engine> {
  if (o.endpoint) return endpointEngine(o.endpoint, o.model);
  const engine = o.engine ?? run?.model.engine ?? "auto";
  if (!(EVAL_ENGINES as readonly string[]).includes(engine)) throw new Error(`rlvr eval: --engine must be one of ${EVAL_ENGINES.join(", ")}, got "${engine}"`);
  const model = { ...(run?.model ?? {}), init: undefined, path: dir };
  if (engine !== "vllm") {
    // engine: auto says what it chose once the checkpoint has opened (a load error stays one line).
    const said: string[] = [];
    const opened = await openEngine({ ...model, engine: engine as "embedded" | "torch" | "auto" }, { tokenizer, seed: o.seed, inferenceOnly: true, log: (l) => said.push(l) });
    for (const l of said) process.stderr.write(l + "\n");
    return opened;
  }
  const rollout = run?.rollout?.engine === "vllm" ? run.rollout : rolloutEngineSchema.parse({ engine: "vllm" });
  const cfg = withColocatedPython({ model, rollout });
  const trainer = await openEngine({ ...cfg.model, engine: "torch" }, { tokenizer, seed: o.seed });
  try {
    const sampler = (await createSampler(cfg.rollout, trainer, o.seed))!;
    return { ...bindEngine(trainer), info: () => ({ ...trainer.info(), engine: `vllm (${sampler.name})` }), sample: (r) => sampler.sample(r), close: async () => { await sampler.close?.(); await trainer.close(); } };
  } catch (e) {
    await trainer.close();
    throw e;
  }
}

/** An engine's methods bound to it (to spread into a wrapper). */
function bindEngine(e: Engine): Engine {
  return { info: () => e.info(), sample: (r) => e.sample(r), score: (b, x) => e.score(b, x), forwardBackward: (b, l, x) => e.forwardBackward(b, l, x), optimStep: (x) => e.optimStep(x), setReference: (f) => e.setReference(f), save: (d, x) => e.save(d, x), load: (d) => e.load(d), close: () => e.close() };
}

/**
 * How prompts are built: the run's own format (data.template / chat / system of the config.yaml
 * beside the checkpoint), overridden by --template, --chat / --no-chat and --system.
 */
export async function evalPromptFormat(o: Pick<EvalCommandOptions, "template" | "chat" | "system">, dir: string): Promise<PromptFormat> {
  const cfg = await runConfigOf(dir);
  const run = cfg ? promptFormatOf(cfg) : {};
  const system = o.system ?? run.system;
  return { template: o.template ?? run.template ?? "plain", chat: o.chat ?? run.chat ?? false, ...(system !== undefined ? { system } : {}) };
}

/**
 * Evaluate one checkpoint directory on `examples`.
 * @param format how prompts are built (default: evalPromptFormat of `dir`); --compare passes A's to B
 */
export async function evalCheckpoint(dir: string, examples: Example[], o: EvalCommandOptions, format?: PromptFormat): Promise<EvalResult> {
  const tokenizer = await loadTokenizer(dir);
  const runConfig = runConfigPath(dir);
  const run = runConfig ? tryLoadRunConfig(runConfig) : null;
  const engine = await openEvalEngine(dir, tokenizer, { ...o, engine: o.engine ?? (runConfig ? (configuredEngine(runConfig) ?? "embedded") : undefined) }, run);
  try {
    const verify = await evalVerifier(o, dir);
    const encodePrompt = promptEncoder(tokenizer, format ?? (await evalPromptFormat(o, dir)), dir);
    // A small model's context may be shorter than the default budget: fit the budget to it.
    // (The embedded engine left-pads a batch's prompts to a multiple of 4 tokens; those positions count.)
    const longest = Math.max(...examples.map((e) => encodePrompt(e).length));
    const room = engine.info().maxSeqLen - Math.ceil(longest / 4) * 4;
    if (room < 1) throw new Error(`rlvr eval: the longest prompt (${longest} tokens) fills the model's context of ${engine.info().maxSeqLen} tokens; use shorter prompts`);
    const maxNewTokens = Math.min(o.maxNewTokens, room);
    if (maxNewTokens < o.maxNewTokens) process.stderr.write(`rlvr eval: note: --max-new-tokens ${o.maxNewTokens} lowered to ${maxNewTokens} (the model's context is ${engine.info().maxSeqLen} tokens, the longest prompt ${longest})\n`);
    return await evaluate({ engine, tokenizer, verify: syncVerifier(verify, o.verifier ?? "the run's"), verifyAsync: async (r, e) => verify(r, e), encodePrompt }, examples, {
      maxNewTokens,
      temperature: o.temperature,
      topP: o.topP,
      n: o.samples,
      seed: o.seed,
      ks: intList(o.k, "--k"),
      bootstrap: o.bootstrap,
      level: o.level,
      greedy: o.greedy,
      keepOutcomes: true,
      onProgress: (done, total) => process.stderr.write(`rlvr eval: ${done}/${total} samples\n`),
    });
  } finally {
    await engine.close();
  }
}

/** Run the command: evaluate, print tables (or JSON), write --out and --record. */
export async function runEval(path: string, input: EvalCommandInput, write: (s: string) => void = (s) => process.stdout.write(s)): Promise<Record<string, unknown>> {
  await loadCommandPlugins(input.plugin ?? [], path);
  if (input.compare) await loadCommandPlugins([], input.compare);
  const fromRun = input.task || input.data ? null : await runDefaults(path, input);
  // The prompt format (template, chat, system) defaults to the run's in evalPromptFormat.
  const o: EvalCommandOptions = fromRun?.options ?? { ...input, template: input.template as EvalCommandOptions["template"], maxNewTokens: input.maxNewTokens ?? 32 };
  if (!Number.isInteger(o.samples) || o.samples < 1) throw new Error(`rlvr eval: --samples must be an integer >= 1, got ${o.samples}`);
  if (o.samples > 1 && o.temperature === 0) process.stderr.write("rlvr eval: note: --samples > 1 at --temperature 0 repeats the same greedy response; pass@k needs --temperature > 0\n");
  const dirA = resolveCheckpoint(path);
  // --data rows are checked against the reward they will meet (A's) as they load: fail closed.
  const examples = fromRun?.examples ?? (await evalExamples(o, o.data ? (await evalReward(o, dirA)).checkExample : undefined));
  if (examples.length === 0) throw new Error("rlvr eval: no examples to evaluate");
  // Both checkpoints see the same prompts: A's run format (or the flags).
  const format = await evalPromptFormat(o, dirA);
  const settings = { ...(fromRun ? { run: fromRun.config } : {}), task: o.task, difficulty: o.difficulty, data: o.data, prompts: examples.length, samples: o.samples, temperature: o.temperature, topP: o.topP, maxNewTokens: o.maxNewTokens, seed: o.seed, ...format, bootstrap: o.bootstrap, level: o.level };
  const resA = await evalCheckpoint(dirA, examples, o, format);
  const given = o.labels?.split(",").map((s) => s.trim());
  const labelA = given?.[0] || checkpointLabel(path, dirA);
  let doc: Record<string, unknown>;
  const summaryOnly = (r: EvalResult) => {
    const { outcomes, ...rest } = r;
    void outcomes;
    return rest;
  };
  if (o.compare) {
    const dirB = resolveCheckpoint(o.compare);
    const resB = await evalCheckpoint(dirB, examples, o, format);
    let labelB = given?.[1] || checkpointLabel(o.compare, dirB);
    if (labelB === labelA) labelB += " (B)";
    const cmp = compareResults(resA, resB, { labels: [labelA, labelB], bootstrap: o.bootstrap, level: o.level, seed: o.seed });
    doc = { settings, a: { label: labelA, checkpoint: dirA, result: resA }, b: { label: labelB, checkpoint: dirB, result: resB }, comparison: cmp };
    if (o.json) write(JSON.stringify({ settings, a: { label: labelA, checkpoint: dirA, ...summaryOnly(resA) }, b: { label: labelB, checkpoint: dirB, ...summaryOnly(resB) }, comparison: cmp }, null, 2) + "\n");
    else write(`${formatReport(resA, labelA)}\n\n${formatReport(resB, labelB)}\n\n${formatComparison(cmp)}\n\n${asciiCurve(cmp.curve)}\n`);
  } else {
    doc = { settings, label: labelA, checkpoint: dirA, result: resA, curve: passAtKCurve([{ label: labelA, result: resA }]) };
    if (o.json) write(JSON.stringify({ settings, checkpoint: dirA, ...summaryOnly(resA) }, null, 2) + "\n");
    else write(`${formatReport(resA, labelA)}\n`);
  }
  if (o.out) {
    mkdirSync(dirname(resolve(o.out)), { recursive: true });
    writeFileSync(o.out, JSON.stringify(doc, null, 1) + "\n");
    process.stderr.write(`rlvr eval: wrote ${o.out}\n`);
  }
  if (o.record !== undefined && o.record !== false) {
    const runDir = typeof o.record === "string" ? o.record : path;
    if (!existsSync(join(runDir, "config.yaml"))) throw new Error(`rlvr eval: --record needs a run directory (with config.yaml); ${runDir} is not one`);
    const line = (label: string, r: EvalResult, dir: string) => JSON.stringify({ time: new Date().toISOString(), label, step: null, checkpoint: dir, ...summaryOnly(r) });
    const lines = [line(`eval:${labelA}`, resA, dirA)];
    if (o.compare) lines.push(line(`eval:${(doc.b as { label: string }).label}`, (doc.b as { result: EvalResult }).result, (doc.b as { checkpoint: string }).checkpoint));
    appendFileSync(join(runDir, "eval.jsonl"), lines.join("\n") + "\n");
  }
  return doc;
}

export function register(program: Command): void {
  withPluginOption(program
    .command("eval"))
    .description("evaluate a checkpoint on held-out data (pass@k, maj@k, intervals); --compare for base vs trained")
    .argument("<path>", "run directory or checkpoint directory (A, e.g. the base model)")
    .option("--compare <path>", "a second run or checkpoint (B, e.g. the trained model) evaluated on the same prompts")
    .option("--labels <a,b>", "names for A and B in tables and curves")
    .option("--task <names>", "procedural task(s) to generate held-out prompts from, comma-separated (default: the run's own held-out set and reward)")
    .option("--difficulty <d>", "task difficulty or comma-separated difficulties (n prompts each)")
    .option("--data <file>", "JSONL/Parquet file of examples instead of a task")
    .option("--verifier <name>", "verifier for --data rows (exact, f1, choice, math, format, ifeval, code, a task's name; default: the run's reward block)")
    .option("--n <count>", "number of prompts (per task and difficulty)", (v) => parseInt(v, 10), 256)
    .option("--samples <n>", "samples per prompt (pass@k and maj@k for k up to this)", (v) => parseInt(v, 10), 1)
    .option("--k <list>", "k values for pass@k and maj@k, e.g. 1,4,16 (default powers of two and n)")
    .option("--temperature <t>", "sampling temperature (0 = greedy)", parseFloat, 0)
    .option("--top-p <p>", "nucleus sampling", parseFloat, 1)
    .option("--greedy", "with --temperature > 0, also sample one greedy response per prompt (greedy accuracy)")
    .option("--max-new-tokens <n>", "response budget (default: the run's eval budget without --task/--data, else 32)", (v) => parseInt(v, 10))
    .option("--seed <s>", "seed of prompts, sampling and bootstrap", (v) => parseInt(v, 10), 1)
    .option("--template <name>", "prompt template: plain, r1, boxed (default: the run's data.template, else plain)")
    .option("--chat", "render prompts through the model's chat template (default: the run's data.chat)")
    .option("--no-chat", "plain-text prompts even when the run used its chat template")
    .option("--system <text>", "system message for prompts without one (default: the run's data.system)")
    .option("--bootstrap <B>", "bootstrap resamples for confidence intervals (0 = none)", (v) => parseInt(v, 10), 1000)
    .option("--level <p>", "confidence level of the intervals", parseFloat, 0.95)
    .option("--out <file>", "write the full results (every sample included) as JSON")
    .option("--json", "print JSON instead of tables")
    .option("--engine <name>", "engine that loads the checkpoint and samples: embedded, torch, vllm or auto (default: the run's model.engine, else auto)")
    .option("--endpoint <url>", "sample from an OpenAI-compatible server (e.g. rlvr serve, vLLM) at this base URL, with or without /v1; <path> gives the tokenizer")
    .option("--model <id>", "model id at --endpoint (default: the server's first)")
    .option("--record [run-dir]", "append the summary to a run directory's eval.jsonl (default: <path>) for the dashboard")
    .action(async (path: string, o: EvalCommandInput) => {
      await runEval(path, o);
    });
}
