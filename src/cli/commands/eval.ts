/**
 * `rlvr eval <run-dir|checkpoint> [--compare <run-dir|checkpoint>] --task ... | --data ...`:
 * held-out accuracy, greedy accuracy, mean@n, pass@k, maj@k, lengths and truncation with
 * bootstrap intervals, per task and per difficulty; with --compare, a base-vs-trained table with
 * paired intervals and a pass@k curve. --out writes everything as JSON (see docs/evaluation.md).
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { openEngine } from "../../engines/open.ts";
import { endpointEngine } from "../../rollout/samplers/openai.ts";
import { loadTokenizer } from "../../tokenizers/index.ts";
import { getTask, generateExamples, loadDataset, renderPrompt } from "../../tasks/index.ts";
import type { Example, Verdict } from "../../tasks/types.ts";
import { evaluate, type EvalResult } from "../../eval/accuracy.ts";
import { compareResults, passAtKCurve } from "../../eval/compare.ts";
import { asciiCurve, formatComparison, formatReport } from "../../eval/report.ts";
import { buildVerifier, syncVerifier } from "../../trainer/context.ts";
import { loadRunConfig } from "../../config/schema.ts";
import { isModelDir } from "../../engines/lora.ts";
import { compileReward } from "../../rewards/compile.ts";
import { rewardConfigSchema, BUILTIN_VERIFIER_NAMES } from "../../rewards/config.ts";

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
  template: "plain" | "r1" | "boxed";
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
}

function intList(v: string | undefined, what: string): number[] | undefined {
  if (v === undefined) return undefined;
  const xs = v.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  for (const x of xs) if (!Number.isInteger(x)) throw new Error(`rlvr eval: ${what} must be a comma-separated list of integers, got "${v}"`);
  return xs;
}

/** The held-out examples: n per (task, difficulty) for procedural tasks, or the first n rows of --data. */
export async function evalExamples(o: EvalCommandOptions): Promise<Example[]> {
  if (o.data) return (await loadDataset(o.data, { task: o.task })).examples.slice(0, o.n);
  const out: Example[] = [];
  const diffs = intList(o.difficulty, "--difficulty");
  for (const name of o.task!.split(",").map((s) => s.trim()).filter(Boolean)) {
    const task = getTask(name);
    for (const difficulty of diffs ?? [undefined]) out.push(...generateExamples(task, { n: o.n, seed: o.seed, difficulty, split: "test" }));
  }
  return out;
}

/**
 * The verifier of an evaluation: for --task prompts, each example's task verifier; for --data
 * rows, `--verifier` when given, else the run's own reward block (its config.yaml, found beside
 * `runDir` or above its checkpoint).
 * @throws Error when --data rows have no verifier (no --verifier, no run config)
 */
export async function evalVerifier(o: Pick<EvalCommandOptions, "verifier" | "data">, runDir: string): Promise<(r: string, e: Example) => Verdict | Promise<Verdict>> {
  if (!o.data) return (await compileReward(rewardConfigSchema.parse({ verifier: "task" }))).verifyOne;
  if (o.verifier) return (await compileReward(rewardConfigSchema.parse({ verifier: o.verifier }), { at: "--verifier" })).verifyOne;
  const abs = resolve(runDir);
  const configs = [join(abs, "config.yaml"), join(abs, "..", "config.yaml"), join(abs, "..", "..", "config.yaml")];
  const found = configs.find((c) => existsSync(c));
  if (!found) {
    throw new Error(`rlvr eval: --data rows need a verifier; pass --verifier <name> (${BUILTIN_VERIFIER_NAMES.join(", ")}, or a task's name) or evaluate a run directory whose config.yaml names one`);
  }
  return buildVerifier(loadRunConfig(found));
}

/** Evaluate one checkpoint directory on `examples`. */
export async function evalCheckpoint(dir: string, examples: Example[], o: EvalCommandOptions): Promise<EvalResult> {
  const tokenizer = await loadTokenizer(dir);
  const engine = o.endpoint ? await endpointEngine(o.endpoint, o.model) : await openEngine({ path: dir, engine: "embedded" }, { tokenizer });
  try {
    const verify = await evalVerifier(o, dir);
    const encodePrompt = (ex: Example) => {
      const ids = tokenizer.encode(renderPrompt(ex, { template: o.template }));
      return Int32Array.from(tokenizer.bosId !== null ? [tokenizer.bosId, ...ids] : ids);
    };
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
    });
  } finally {
    await engine.close();
  }
}

/** Run the command: evaluate, print tables (or JSON), write --out and --record. */
export async function runEval(path: string, o: EvalCommandOptions, write: (s: string) => void = (s) => process.stdout.write(s)): Promise<Record<string, unknown>> {
  if (!o.task && !o.data) throw new Error("rlvr eval: give --task <name[,name...]> or --data <file>");
  if (!Number.isInteger(o.samples) || o.samples < 1) throw new Error(`rlvr eval: --samples must be an integer >= 1, got ${o.samples}`);
  if (o.samples > 1 && o.temperature === 0) process.stderr.write("rlvr eval: note: --samples > 1 at --temperature 0 repeats the same greedy response; pass@k needs --temperature > 0\n");
  const dirA = resolveCheckpoint(path);
  const examples = await evalExamples(o);
  if (examples.length === 0) throw new Error("rlvr eval: no examples to evaluate");
  const settings = { task: o.task, difficulty: o.difficulty, data: o.data, prompts: examples.length, samples: o.samples, temperature: o.temperature, topP: o.topP, maxNewTokens: o.maxNewTokens, seed: o.seed, template: o.template, bootstrap: o.bootstrap, level: o.level };
  const resA = await evalCheckpoint(dirA, examples, o);
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
    const resB = await evalCheckpoint(dirB, examples, o);
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
  program
    .command("eval")
    .description("evaluate a checkpoint on held-out data (pass@k, maj@k, intervals); --compare for base vs trained")
    .argument("<path>", "run directory or checkpoint directory (A, e.g. the base model)")
    .option("--compare <path>", "a second run or checkpoint (B, e.g. the trained model) evaluated on the same prompts")
    .option("--labels <a,b>", "names for A and B in tables and curves")
    .option("--task <names>", "procedural task(s) to generate held-out prompts from, comma-separated")
    .option("--difficulty <d>", "task difficulty or comma-separated difficulties (n prompts each)")
    .option("--data <file>", "JSONL/Parquet file of examples instead of a task")
    .option("--verifier <name>", "verifier for --data rows (exact, f1, choice, math, format, ifeval, code, a task's name; default: the run's reward block)")
    .option("--n <count>", "number of prompts (per task and difficulty)", (v) => parseInt(v, 10), 256)
    .option("--samples <n>", "samples per prompt (pass@k and maj@k for k up to this)", (v) => parseInt(v, 10), 1)
    .option("--k <list>", "k values for pass@k and maj@k, e.g. 1,4,16 (default powers of two and n)")
    .option("--temperature <t>", "sampling temperature (0 = greedy)", parseFloat, 0)
    .option("--top-p <p>", "nucleus sampling", parseFloat, 1)
    .option("--greedy", "with --temperature > 0, also sample one greedy response per prompt (greedy accuracy)")
    .option("--max-new-tokens <n>", "response budget", (v) => parseInt(v, 10), 32)
    .option("--seed <s>", "seed of prompts, sampling and bootstrap", (v) => parseInt(v, 10), 1)
    .option("--template <name>", "prompt template: plain, r1, boxed", "plain")
    .option("--bootstrap <B>", "bootstrap resamples for confidence intervals (0 = none)", (v) => parseInt(v, 10), 1000)
    .option("--level <p>", "confidence level of the intervals", parseFloat, 0.95)
    .option("--out <file>", "write the full results (every sample included) as JSON")
    .option("--json", "print JSON instead of tables")
    .option("--endpoint <url>", "sample from an OpenAI-compatible server (e.g. rlvr serve, vLLM) at this base URL; <path> gives the tokenizer")
    .option("--model <id>", "model id at --endpoint (default: the server's first)")
    .option("--record [run-dir]", "append the summary to a run directory's eval.jsonl (default: <path>) for the dashboard")
    .action(async (path: string, o: EvalCommandOptions) => {
      await runEval(path, o);
    });
}
