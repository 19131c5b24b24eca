/**
 * The public `train()`: a run from a YAML file, a config object, or an already validated config —
 * the same run `rlvr train` makes, with typed progress events for a program to drive it.
 *
 *   import { train } from "rlvr";
 *   const summary = await train("examples/addition-grpo.yaml", { onEvent: (e) => e.type === "eval" && console.log(e.label, e.result.accuracy) });
 *   const summary = await train({ model: { init: { hiddenSize: 64 } }, tokenizer: { type: "char", alphabet: "0123456789+=" }, data: { task: "addition" }, rl: { steps: 20 } });
 */
import { loadPlugins, loadRunConfigFile, withResolvedPlugins } from "../config/plugins.ts";
import { parseRunConfig, type RunConfig, type RunConfigInput } from "../config/schema.ts";
import { train as runStages } from "../trainer/run.ts";
import "../tinker/engine.ts"; // registers model.engine: tinker with openEngine
import type { TrainOptions as StageOptions } from "../trainer/session.ts";
import type { RunSummary } from "../trainer/stages.ts";
import type { RunStage } from "../trainer/events.ts";
import { progressHooks } from "../cli/progress.ts";
import { buildData, buildTokenizer, promptFormatOf, tokenizerDirOf } from "../trainer/context.ts";
import { estimateMemoryPlan, planShape, type MemoryPlan, type PlanMachine } from "../trainer/plan.ts";
import { promptEncoder } from "../tokenizers/index.ts";

/**
 * What `train` accepts: a YAML file's path, or a config object as a YAML file would hold it
 * (zod's input type: every field with a default is optional). A parsed RunConfig is such an object
 * too. The union deliberately leaves RunConfig (the output type, with every default filled in)
 * out: with it, one misplaced field made tsc report the output type's "missing" defaults as well.
 */
export type TrainConfig = string | RunConfigInput;

export interface TrainOptions extends StageOptions {
  /** Folder that a config object's relative `plugins` paths start from (default: the working directory). */
  baseDir?: string;
}

/**
 * Whether `c` came from parseRunConfig/loadRunConfig with an RL stage: it carries the resolved
 * algorithm, a key an input object cannot have. Anything else is (re)validated, which leaves a
 * parsed config unchanged.
 */
function isParsed(c: RunConfigInput): c is RunConfig {
  return Object.prototype.hasOwnProperty.call(c, "algorithm");
}

/**
 * Validate a config (importing its `plugins` first) without running it.
 * @throws ConfigError naming the file or "config", the field and the fix
 */
export async function resolveConfig(config: TrainConfig, baseDir = process.cwd()): Promise<RunConfig> {
  if (typeof config === "string") return loadRunConfigFile(config);
  const plugins = (config as { plugins?: string[] }).plugins ?? [];
  await loadPlugins(plugins, baseDir, "config");
  return withResolvedPlugins(isParsed(config) ? config : parseRunConfig(config, "config"), baseDir);
}

/**
 * Train: SFT and/or RL stages as the config describes, held-out evaluations before and after RL,
 * the run directory written as by `rlvr train` (config.yaml, metrics.jsonl, samples.jsonl,
 * eval.jsonl, checkpoints/, report.md).
 * @param config a YAML path, a config object (validated here), or a RunConfig
 * @param opts `onEvent` receives typed events (stage, metrics per step, samples, evals; see
 *   src/trainer/events.ts); `resume`, `overwrite`, `signal`, `quiet` and `progress` as for the CLI.
 *   On a terminal (stderr a TTY) it draws a progress bar per stage unless `quiet` or own
 *   `progress`/`stage` hooks are given.
 * @returns the run summary: run directory, held-out EvalResult per phase ("init"/"sft" before RL,
 *   "rl" after), seconds, the final checkpoint's directory
 * @throws ConfigError for an invalid config; PeerError (a vLLM server or the torch worker died or missed a deadline and could not be recovered: one line with the step and the checkpoint to resume from); RunInterrupted, NonFiniteError, ResumeError, RunDirError (`out` holds an earlier run; pass `overwrite: true`) as the trainer
 */
export async function train(config: TrainConfig, opts: TrainOptions = {}): Promise<RunSummary> {
  const { baseDir, ...given } = opts;
  const cfg = await resolveConfig(config, baseDir);
  // On a terminal, unless quiet or given hooks of its own: a progress bar per stage, as `rlvr train`.
  const bars = !given.quiet && !given.progress && !given.stage && process.stderr.isTTY ? progressHooks() : null;
  const rest: StageOptions = bars ? { ...given, progress: bars.progress, stage: bars.stage } : given;
  try {
    return await trainWith(cfg, rest);
  } finally {
    bars?.stop();
  }
}

async function trainWith(cfg: RunConfig, rest: StageOptions): Promise<RunSummary> {
  const onEvent = rest.onEvent;
  const stage = onEvent
    ? (name: RunStage, detail?: string) => {
        rest.stage?.(name, detail);
        onEvent({ type: "stage", stage: name, ...(detail !== undefined ? { detail } : {}) });
      }
    : rest.stage;
  return runStages(cfg, { ...rest, ...(stage ? { stage } : {}) });
}

/**
 * The memory plan of a run, before anything starts (what `rlvr plan` prints and `rlvr train`
 * checks): per device and process, bytes of the runtime, parameters, gradients, optimizer state,
 * reference model, activations of one micro-batch, vLLM weights and KV cache, and sync buffers
 * (src/trainer/plan.ts, docs/scaling.md "Memory plan"). Builds the tokenizer and data to find the
 * longest prompt; starts no engine.
 * @param config a YAML path, a config object, or a RunConfig
 * @param machine capacities to check against: hostBytes (default os.totalmem()), gpuBytes (default: unknown, not checked)
 * @returns the plan (format it with formatMemoryPlan, check it with checkMemoryPlan), or null when
 *   model.path's config.json is an architecture the plan cannot read
 * @throws ConfigError for an invalid config; Error from the embedded engine when the model cannot fit its 4 GiB heap
 */
export async function planMemory(config: TrainConfig, machine: PlanMachine = {}): Promise<MemoryPlan | null> {
  const cfg = await resolveConfig(config);
  const tokenizer = await buildTokenizer(cfg);
  const { train: examples } = await buildData(cfg);
  const encode = promptEncoder(tokenizer, promptFormatOf(cfg), tokenizerDirOf(cfg) ?? "the tokenizer");
  const shape = await planShape(cfg, tokenizer, examples.slice(0, 512).map(encode));
  return shape && estimateMemoryPlan(cfg, shape, machine);
}
