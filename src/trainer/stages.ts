/**
 * The stages of a run, each a loop over optimizer steps with a boundary (faults, checkpoints,
 * interruption) after every step: the SFT warm-up (with its `sft.stopAt` check), the held-out
 * evaluations, and the RL stage (the pipeline step of src/pipeline/step.ts, or the step a method
 * replaces it with), then the final save and report.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Sampler } from "../core/engine.ts";
import { buildMethodHooks } from "../methods/index.ts";
import { EmbeddedWorkerSampler } from "../rollout/samplers/embedded-worker.ts";
import { checkpointsDir, publishDir, tempDirFor } from "./checkpoints.ts";
import { initRlState } from "../pipeline/state.ts";
import { rlStep } from "../pipeline/step.ts";
import { evaluate, type EvalResult } from "../eval/accuracy.ts";
import { evaluateEnv } from "../eval/env.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { TrainEventHandler } from "./events.ts";
import type { RunSession } from "./session.ts";
import { sftStep, sftStopCheck } from "./sft.ts";

export interface RunSummary {
  dir: string;
  /** Held-out evaluation after each phase: "init" (before any training), "sft", "rl". */
  evals: Record<string, EvalResult>;
  /** The held-out evaluation before RL: `evals.sft` after an SFT warm-up, else `evals.init`. */
  before: EvalResult;
  /** The last held-out evaluation: `evals.rl` after RL, else `before`. */
  after: EvalResult;
  seconds: number;
  checkpoint: string;
  /** The checkpoint the run resumed from, when it did. */
  resumedFrom?: string;
}

/** Evaluate on the run's held-out set and log it to eval.jsonl. */
export async function evalHeldOut(ctx: RunContext, dir: string, label: string, step: number, onEvent?: TrainEventHandler): Promise<EvalResult> {
  const e = ctx.cfg.eval;
  const examples = ctx.test.slice(0, e.n ?? ctx.test.length);
  const maxNewTokens = e.maxNewTokens ?? ctx.cfg.rl?.maxNewTokens ?? 16;
  const res = ctx.env ? await evaluateEnv(ctx, ctx.env, examples, { n: e.temperature > 0 ? e.samples : 1, temperature: e.temperature, maxTokens: ctx.env.maxTokens ?? maxNewTokens, seed: ctx.cfg.seed }) : await evaluate(ctx, examples, {
    maxNewTokens: e.maxNewTokens ?? ctx.cfg.rl?.maxNewTokens ?? 16,
    temperature: e.temperature,
    n: e.temperature > 0 ? e.samples : 1,
    greedy: e.greedy,
    seed: ctx.cfg.seed,
  });
  appendFileSync(join(dir, "eval.jsonl"), JSON.stringify({ label, step, ...res }) + "\n");
  onEvent?.({ type: "eval", label, step, result: res });
  return res;
}

/**
 * The SFT warm-up. `sft.stopAt` ends it once greedy accuracy on the held-back check set reaches
 * the target; the check runs after a step's checkpoint, so a run resumed from that checkpoint
 * repeats it (its log line was truncated away) before training on.
 */
export async function runSft(s: RunSession): Promise<void> {
  const { cfg, sft, sftTotal, opts } = s;
  if (s.stage !== "sft" || !cfg.sft || sft.step >= sftTotal) return;
  const reachedTarget = async (): Promise<boolean> => {
    const c = await sftStopCheck(s.ctx, sft, sftTotal, s.log);
    if (c?.stop) opts.stage?.("sft", `stopped at step ${sft.step}: check-set accuracy ${(c.accuracy * 100).toFixed(1)}% ≥ ${(cfg.sft!.stopAt!.accuracy * 100).toFixed(1)}%`);
    return c?.stop ?? false;
  };
  opts.stage?.("sft", sft.step > 0 ? `steps ${sft.step + 1}–${sftTotal}` : `${sftTotal} steps`);
  let stopped = await reachedTarget(); // only on resume (sft.step > 0)
  while (!stopped && sft.step < sftTotal) {
    if (opts.signal?.aborted) await s.interrupt();
    const m = await sftStep(s.ctx, sft, s.log);
    opts.progress?.("sft", sft.step, sftTotal, { loss: m["loss"]! });
    await s.boundary("sft", sft.step, m);
    stopped = await reachedTarget();
  }
}

/** Held-out evaluation before RL ("sft" after a warm-up, else "init"), once per run. */
export async function evalBefore(s: RunSession): Promise<void> {
  const before = s.sftTotal > 0 ? "sft" : "init";
  if (s.evals[before]) return;
  s.opts.stage?.("eval", "before RL");
  s.evals[before] = await evalHeldOut(s.ctx, s.dir, before, 0, s.opts.onEvent);
}

/**
 * The RL stage: the methods' hooks (on resume with their saved state), then RL steps with periodic
 * held-out evaluations and reference resets, and the final evaluation.
 */
export async function runRl(s: RunSession): Promise<void> {
  const { cfg, ctx, opts, alg } = s;
  const r = cfg.rl;
  if (!r || r.steps <= 0) return;
  const hooks = buildMethodHooks(ctx, cfg);
  s.methodHooks = hooks;
  const ownSampler = await asyncSampler(s);
  const saved = s.resume?.state.rl;
  if (s.rl && saved?.methods) hooks.restoreState?.(saved.methods);
  if (!s.rl) {
    s.rl = initRlState(ctx, alg);
    s.stage = "rl";
    if (s.rl.kl.coef > 0 || alg.kl.adaptive) await s.referenceFromPolicy();
    await hooks.init?.(ctx);
  }
  const rl = s.rl;
  if (rl.step < r.steps) opts.stage?.("rl", rl.step > 0 ? `steps ${rl.step + 1}–${r.steps}` : `${r.steps} steps`);
  while (rl.step < r.steps) {
    if (opts.signal?.aborted) await s.interrupt();
    const m = await rlStep(ctx, alg, rl, s.log, hooks);
    await hooks.afterStep?.(ctx, rl, m, s.log);
    if (r.referenceResetEvery > 0 && rl.step % r.referenceResetEvery === 0) await s.referenceFromPolicy();
    const keys = { reward: "reward/mean", acc: "accuracy", "zero-std": "groups/zero_std_frac", entropy: "entropy", kl: "kl", len: "response/length_mean", "s/step": "time/step" };
    opts.progress?.("rl", rl.step, r.steps, Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, m[v]!])));
    if (cfg.eval.every > 0 && rl.step % cfg.eval.every === 0 && rl.step < r.steps) await evalHeldOut(ctx, s.dir, "rl", rl.step, opts.onEvent);
    await s.boundary("rl", rl.step, m);
  }
  opts.stage?.("eval", "after RL");
  s.evals["rl"] = await evalHeldOut(ctx, s.dir, "rl", r.steps, opts.onEvent);
  await hooks.close?.();
  if (ownSampler) {
    await ownSampler.close?.();
    delete ctx.sampler;
  }
}

/**
 * rl.async needs a sampler apart from the trainer; for the embedded engine it is a copy of the
 * policy in a worker thread (EmbeddedWorkerSampler), made here and closed after the RL stage.
 * @returns the sampler made here, or null when none was needed or one was configured.
 * @throws Error "config error at rl.async: …" for another engine without a rollout engine.
 */
async function asyncSampler(s: RunSession): Promise<Sampler | null> {
  const { cfg, ctx } = s;
  if ((cfg.rl?.async?.maxStaleness ?? 0) === 0 || ctx.sampler) return null;
  if (ctx.engine.info().engine !== "embedded") throw new Error(`config error at rl.async: asynchronous rollouts on the ${ctx.engine.info().engine} engine need a rollout engine apart from the trainer (rollout: {engine: vllm, ...}); set one, or remove rl.async`);
  ctx.sampler = new EmbeddedWorkerSampler();
  return ctx.sampler;
}

/** Save checkpoints/final, close the engine, write report.md. @returns the run summary. */
export async function finish(s: RunSession, seconds: () => number): Promise<RunSummary> {
  s.opts.stage?.("save");
  const final = join(checkpointsDir(s.dir), "final");
  const tmp = tempDirFor(final);
  await s.ctx.engine.save(tmp);
  publishDir(tmp, final);
  await s.ctx.close();
  const secs = seconds();
  const lines = [`# rlvr run`, "", `- run directory: ${s.dir}`, `- model: ${s.ctx.engine.info().modelId}`, `- seconds: ${secs.toFixed(1)}`];
  if (s.resume) lines.push(`- resumed from: ${s.resume.checkpoint.name}`);
  lines.push("", "| phase | accuracy | mean length | truncated |", "|---|---|---|---|");
  for (const [k, v] of Object.entries(s.evals)) lines.push(`| ${k} | ${(v.accuracy * 100).toFixed(1)}% | ${v.meanLength.toFixed(2)} | ${(v.truncated * 100).toFixed(1)}% |`);
  writeFileSync(join(s.dir, "report.md"), lines.join("\n") + "\n");
  const before = s.evals["sft"] ?? s.evals["init"]!;
  return { dir: s.dir, evals: s.evals, before, after: s.evals["rl"] ?? before, seconds: secs, checkpoint: final, ...(s.resume ? { resumedFrom: s.resume.checkpoint.dir } : {}) };
}
