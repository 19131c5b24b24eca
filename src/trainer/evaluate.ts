/**
 * evaluateCheckpoint: held-out evaluation of a saved checkpoint in one call — tokenizer, engine,
 * prompt encoding (src/tokenizers/prompt.ts, the same function training uses) and verifier
 * assembled from the checkpoint and, when the checkpoint belongs to a run, the run's config.yaml.
 * With no options it repeats the run's own final evaluation (its test set, reward, prompt format,
 * eval settings and seed), so the number equals the run's last eval.jsonl line.
 */
import { join } from "node:path";
import { getEnv } from "../envs/registry.ts";
import { evaluateEnv } from "../eval/env.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import { loadDataset } from "../tasks/dataset.ts";
import { loadTokenizer } from "../tokenizers/index.ts";
import { promptEncoder, type PromptFormat } from "../tokenizers/prompt.ts";
import { openEngine } from "../engines/open.ts";
import type { RunConfig } from "../config/schema.ts";
import { loadRunConfigFile, runConfigPath } from "../config/plugins.ts";
import { isModelDir } from "../engines/lora.ts";
import { compileReward } from "../rewards/compile.ts";
import { rewardConfigSchema, type RewardConfigInput } from "../rewards/config.ts";
import { toVerdict } from "../rewards/registry.ts";
import { buildData, buildVerifier, promptFormatOf, syncVerifier } from "./context.ts";
import { evaluate, type EvalResult } from "../eval/accuracy.ts";

/** Options of `evaluateCheckpoint`; every one defaults to the run's own (its config.yaml). */
export interface EvaluateCheckpointOptions {
  /** Examples, or a JSONL/Parquet file of them (default: the run's held-out set). */
  data?: string | readonly Example[];
  /** A verifier name, a `reward:` block, or a function (response, example) → Verdict | number |
   *  boolean (default: the run's reward block). */
  reward?: string | RewardConfigInput | ((response: string, example: Example) => unknown);
  /** Number of prompts to evaluate (default: the run's eval.n, else all). */
  n?: number;
  /** Samples per prompt (default: the run's eval.samples when its temperature > 0, else 1). */
  samples?: number;
  /** k values of pass@k and maj@k (default 1, 2, 4, … ≤ samples, and samples). */
  k?: readonly number[];
  /** Sampling temperature (default: the run's eval.temperature, else 0 = greedy). */
  temperature?: number;
  topP?: number;
  /** Response budget in tokens (default: the run's eval.maxNewTokens, rl.maxNewTokens, else 16). */
  maxNewTokens?: number;
  /** Sampling and bootstrap seed (default: the run's seed, else 0). */
  seed?: number;
  /** Also decode greedily when temperature > 0 (default: the run's eval.greedy). */
  greedy?: boolean;
  /** Bootstrap resamples for intervals (default 1000; 0 = none). */
  bootstrap?: number;
  /** How examples become prompts (default: the run's data.template / data.chat / data.system, else plain text). */
  format?: PromptFormat;
  /** Engine to sample with (default: torch when the run trained on torch, else embedded). */
  engine?: "embedded" | "torch";
  /** Keep every sample (responses included) in the result. */
  keepOutcomes?: boolean;
}

/** The run config of a checkpoint: config.yaml in the run directory (`path`, or up to two levels above a checkpoint). */
export async function runConfigOf(path: string): Promise<RunConfig | null> {
  const found = runConfigPath(path);
  return found ? loadRunConfigFile(found) : null;
}

/** A run directory's final checkpoint, or `path` itself when it holds a model (config.json, or a LoRA adapter's adapter_config.json). */
function checkpointDir(path: string): string {
  if (isModelDir(path)) return path;
  const final = join(path, "checkpoints", "final");
  if (isModelDir(final)) return final;
  throw new Error(`evaluateCheckpoint: no checkpoint at ${path}: expected config.json there or in ${final}`);
}

async function verifierOf(reward: EvaluateCheckpointOptions["reward"], cfg: RunConfig | null): Promise<(r: string, e: Example) => Verdict | Promise<Verdict>> {
  if (typeof reward === "function") return async (r, e) => toVerdict(await reward(r, e));
  if (typeof reward === "string") return (await compileReward(rewardConfigSchema.parse({ verifier: reward }), { at: "reward" })).verifyOne;
  if (reward) return (await compileReward(rewardConfigSchema.parse(reward), { at: "reward" })).verifyOne;
  if (!cfg) throw new Error("evaluateCheckpoint: the checkpoint has no run config.yaml beside it; pass reward (a verifier name, a reward block or a function)");
  return buildVerifier(cfg);
}

/**
 * Evaluate the checkpoint at `path` (a run directory → its checkpoints/final, or a checkpoint
 * directory) on held-out examples: pass@1 (mean@n), pass@k, maj@k, greedy accuracy, lengths,
 * truncation, bootstrap intervals and breakdowns (see `evaluate`).
 * @throws Error when there is no checkpoint at `path`, or no run config and `data` / `reward`
 *   are not given, or the prompt format cannot be used with the tokenizer (promptEncoder)
 */
export async function evaluateCheckpoint(path: string, o: EvaluateCheckpointOptions = {}): Promise<EvalResult> {
  const dir = checkpointDir(path);
  const cfg = await runConfigOf(dir);
  let examples: readonly Example[];
  if (Array.isArray(o.data)) examples = o.data as readonly Example[];
  else if (typeof o.data === "string") examples = (await loadDataset(o.data, cfg ? { task: cfg.data.task, preset: cfg.data.preset, fields: cfg.data.fields } : {})).examples;
  else if (cfg) examples = (await buildData(cfg)).test;
  else throw new Error("evaluateCheckpoint: the checkpoint has no run config.yaml beside it; pass data (examples or a JSONL/Parquet file)");
  const n = o.n ?? cfg?.eval.n;
  examples = examples.slice(0, n ?? examples.length);
  if (examples.length === 0) throw new Error("evaluateCheckpoint: no examples to evaluate");

  const tokenizer = await loadTokenizer(dir);
  const encodePrompt = promptEncoder(tokenizer, o.format ?? (cfg ? promptFormatOf(cfg) : {}), dir);
  const verify = await verifierOf(o.reward, cfg);
  const engine = await openEngine({ path: dir, engine: o.engine ?? (cfg?.model.engine === "torch" ? "torch" : "embedded") }, { tokenizer, seed: cfg?.seed ?? 0 });
  try {
    const temperature = o.temperature ?? cfg?.eval.temperature ?? 0;
    const maxNewTokens = o.maxNewTokens ?? cfg?.eval.maxNewTokens ?? cfg?.rl?.maxNewTokens ?? 16;
    // An env run's held-out slots are played, as during training (src/eval/env.ts).
    if (cfg?.env && o.data === undefined) {
      const env = { def: getEnv(cfg.env.name), seed: cfg.seed, maxTurns: cfg.env.maxTurns, maxTokens: cfg.env.maxTokens };
      const samples = o.samples ?? (temperature > 0 ? cfg.eval.samples : 1);
      return await evaluateEnv({ engine, tokenizer }, env, examples, { n: samples, temperature, maxTokens: env.maxTokens ?? maxNewTokens, seed: o.seed ?? cfg.seed });
    }
    return await evaluate({ engine, tokenizer, encodePrompt, verify: syncVerifier(verify, "the reward"), verifyAsync: async (r, e) => verify(r, e) }, examples, {
      maxNewTokens,
      temperature,
      topP: o.topP,
      n: o.samples ?? (temperature > 0 ? cfg?.eval.samples ?? 1 : 1),
      ks: o.k,
      greedy: o.greedy ?? cfg?.eval.greedy,
      seed: o.seed ?? cfg?.seed ?? 0,
      bootstrap: o.bootstrap,
      keepOutcomes: o.keepOutcomes,
    });
  } finally {
    await engine.close();
  }
}
