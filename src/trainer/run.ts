/**
 * A training run: builds the context from a config, runs the configured stages (SFT, then RL),
 * evaluates on held-out data before and after RL, and writes the run directory:
 *   config.yaml (resolved), metrics.jsonl, samples.jsonl, eval.jsonl, checkpoints/final/, report.md
 */
import { mkdirSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { RunConfig } from "../config/schema.ts";
import { evaluate, type EvalResult } from "../eval/accuracy.ts";
import { buildContext, type RunContext } from "./context.ts";
import { RunLogger } from "./logger.ts";
import { runRl } from "./rl.ts";
import { runSft, type Progress } from "./sft.ts";

export interface RunHooks {
  /** Called after every optimizer step of every stage. */
  progress?: Progress;
  /** Called when a stage starts ("setup", "eval", "sft", "rl", "save"). */
  stage?: (name: string, detail?: string) => void;
  /** Suppress console lines from the logger. */
  quiet?: boolean;
}

export interface RunSummary {
  dir: string;
  /** Held-out evaluation after each phase: "init" (before any training), "sft", "rl". */
  evals: Record<string, EvalResult>;
  seconds: number;
  checkpoint: string;
}

/** Evaluate on the run's held-out set and log it to eval.jsonl. */
export async function evalHeldOut(ctx: RunContext, dir: string, label: string, step: number): Promise<EvalResult> {
  const e = ctx.cfg.eval;
  const examples = ctx.test.slice(0, e.n ?? ctx.test.length);
  const res = await evaluate(ctx, examples, {
    maxNewTokens: e.maxNewTokens ?? ctx.cfg.rl?.maxNewTokens ?? 16,
    temperature: e.temperature,
    seed: ctx.cfg.seed,
  });
  appendFileSync(join(dir, "eval.jsonl"), JSON.stringify({ label, step, ...res }) + "\n");
  return res;
}

/** Run every configured stage. */
export async function train(cfg: RunConfig, hooks: RunHooks = {}): Promise<RunSummary> {
  const t0 = performance.now();
  const dir = cfg.out;
  mkdirSync(dir, { recursive: true });
  const { algorithm, ...plain } = cfg;
  writeFileSync(join(dir, "config.yaml"), stringify({ ...plain, ...(algorithm ? { rl: { ...plain.rl, algorithm } } : {}) }));
  const log = new RunLogger(dir, hooks.quiet);
  hooks.stage?.("setup");
  const ctx = await buildContext(cfg);
  const evals: Record<string, EvalResult> = {};
  if (ctx.test.length === 0) throw new Error("data error: no held-out examples (set data.test or use a procedural data.task)");

  if (cfg.sft && cfg.sft.steps > 0) {
    hooks.stage?.("sft", `${cfg.sft.steps} steps`);
    await runSft(ctx, log, hooks.progress);
  }
  hooks.stage?.("eval", "before RL");
  evals[cfg.sft?.steps ? "sft" : "init"] = await evalHeldOut(ctx, dir, cfg.sft?.steps ? "sft" : "init", 0);
  if (cfg.rl && cfg.rl.steps > 0) {
    hooks.stage?.("rl", `${cfg.rl.steps} steps`);
    await runRl(ctx, cfg.algorithm!, log, hooks.progress, async (step) => {
      await evalHeldOut(ctx, dir, "rl", step);
    });
    hooks.stage?.("eval", "after RL");
    evals["rl"] = await evalHeldOut(ctx, dir, "rl", cfg.rl.steps);
  }
  hooks.stage?.("save");
  const checkpoint = join(dir, "checkpoints", "final");
  await ctx.engine.save(checkpoint);
  await ctx.engine.close();
  const seconds = (performance.now() - t0) / 1000;
  const lines = [`# rlvr run`, "", `- run directory: ${dir}`, `- model: ${ctx.engine.info().modelId}`, `- seconds: ${seconds.toFixed(1)}`, "", "| phase | accuracy | mean length | truncated |", "|---|---|---|---|"];
  for (const [k, v] of Object.entries(evals)) lines.push(`| ${k} | ${(v.accuracy * 100).toFixed(1)}% | ${v.meanLength.toFixed(2)} | ${(v.truncated * 100).toFixed(1)}% |`);
  writeFileSync(join(dir, "report.md"), lines.join("\n") + "\n");
  return { dir, evals, seconds, checkpoint };
}
