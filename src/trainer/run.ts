/**
 * A training run: builds the context from a config, runs the configured stages (SFT, then RL),
 * evaluates on held-out data before and after RL, and writes the run directory:
 *   config.yaml (resolved), metrics.jsonl, samples.jsonl, eval.jsonl, checkpoints/, report.md
 *
 * Checkpoints (checkpoints.ts, resume.ts): every `checkpoint.every` steps of each stage, and at
 * the step boundary after an abort signal (SIGINT in `rlvr train`), the trainer writes
 * checkpoints/step-N/ atomically. `train(cfg, {resume: dir})` continues from the newest complete
 * one; the resumed run's logs and weights are those of an uninterrupted run (bit-identical on
 * the embedded engine).
 */
import { existsSync, mkdirSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { RunConfig } from "../config/schema.ts";
import { evaluate, type EvalResult } from "../eval/accuracy.ts";
import { checkpointsDir, linkTree, publishDir, removeCheckpointsAfter, scanCheckpoints, tempDirFor, writeCheckpoint, writeManifest } from "./checkpoints.ts";
import { buildContext, type RunContext } from "./context.ts";
import { RunInterrupted, SkipCounter } from "./faults.ts";
import { RunLogger } from "./logger.ts";
import { EventLogger, type TrainEventHandler } from "./events.ts";
import { dataFingerprint, findResumePoint, logSizes, plainConfig, ResumeError, truncateLogs, TRAINER_STATE_FORMAT, type ResumePoint, type TrainerState } from "./resume.ts";
import { initRlState, restoreRlState, rlStep, saveRlState, type RlState } from "./rl.ts";
import { initSftState, sftCheckAccuracy, sftStep, type Progress } from "./sft.ts";
import { buildMethodHooks } from "../guided/index.ts";
import type { RlStageHooks } from "./hooks.ts";
import { acquireRunLock } from "./lock.ts";
import { loadVerifierModules } from "../rewards/pool/modules.ts";
import { ioError } from "../util/errors.ts";

export { NonFiniteError, RunInterrupted } from "./faults.ts";
export { ResumeError } from "./resume.ts";
export { RunLockError } from "./lock.ts";

export interface RunHooks {
  /** Called after every optimizer step of every stage. */
  progress?: Progress;
  /** Called when a stage starts ("setup", "resume", "eval", "sft", "rl", "checkpoint", "save"). */
  stage?: (name: string, detail?: string) => void;
  /** Suppress console lines from the logger. */
  quiet?: boolean;
}

export interface TrainOptions extends RunHooks {
  /**
   * Resume the run in this directory from its newest complete checkpoint (the config's `out` is
   * replaced by it). @throws ResumeError when there is none or the config changed incompatibly.
   */
  resume?: string;
  /**
   * When aborted, the run finishes the current step, writes a checkpoint and throws
   * RunInterrupted (`rlvr train` aborts it on SIGINT).
   */
  signal?: AbortSignal;
  /** Typed progress events (step metrics, samples, evaluations), see src/trainer/events.ts. */
  onEvent?: TrainEventHandler;
}

export interface RunSummary {
  dir: string;
  /** Held-out evaluation after each phase: "init" (before any training), "sft", "rl". */
  evals: Record<string, EvalResult>;
  seconds: number;
  checkpoint: string;
  /** The checkpoint the run resumed from, when it did. */
  resumedFrom?: string;
}

/** Evaluate on the run's held-out set and log it to eval.jsonl. */
export async function evalHeldOut(ctx: RunContext, dir: string, label: string, step: number, onEvent?: TrainEventHandler): Promise<EvalResult> {
  const e = ctx.cfg.eval;
  const examples = ctx.test.slice(0, e.n ?? ctx.test.length);
  const res = await evaluate(ctx, examples, {
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
 * Run every configured stage (or the rest of them, when resuming).
 * The run directory is locked for the whole run (src/trainer/lock.ts); I/O failures (ENOSPC, …)
 * are rethrown as one-line errors naming the directory and the newest complete checkpoint.
 * @throws RunLockError when another live process holds the run directory;
 *         RunInterrupted after writing a checkpoint when `opts.signal` fired;
 *         NonFiniteError after `faults.maxConsecutiveSkips` skipped steps in a row;
 *         ResumeError when `opts.resume` has no usable checkpoint.
 */
export async function train(cfg: RunConfig, opts: TrainOptions = {}): Promise<RunSummary> {
  const dir = opts.resume ?? cfg.out;
  // Nothing is written to the run directory before its lock is held (a resume of a missing
  // directory fails in findResumePoint without creating it).
  const lock = opts.resume && !existsSync(dir) ? null : acquireRunLock(dir, { purpose: opts.resume ? "resume" : "start", notice: (m) => process.stderr.write(m + "\n") });
  try {
    // Modules named by the verifier pool register tasks this process needs too (data, held-out eval).
    await loadVerifierModules(cfg.rl?.verifierPool?.modules ?? []);
    return await trainLocked(cfg, opts);
  } catch (e) {
    throw ioError(e, dir, savedNote(dir));
  } finally {
    lock?.release();
  }
}

/** What a failed run left usable in `dir`, for I/O error messages. */
function savedNote(dir: string): string {
  try {
    const ok = scanCheckpoints(dir, { hashes: false }).find((c) => c.problem === null);
    return ok ? `the newest complete checkpoint is ${ok.dir} (rlvr train --resume ${dir} continues from it)` : `no checkpoint was saved; the logs in ${dir} hold the steps so far`;
  } catch {
    return `nothing more could be read from ${dir}`;
  }
}

async function trainLocked(cfg: RunConfig, opts: TrainOptions): Promise<RunSummary> {
  const t0 = performance.now();
  if (opts.resume) cfg = { ...cfg, out: opts.resume };
  const dir = cfg.out;
  const resume: ResumePoint | null = opts.resume ? findResumePoint(dir, cfg) : null;
  if (!resume) {
    const old = scanCheckpoints(dir, { hashes: false });
    if (old.length) {
      throw new ResumeError(
        `run directory ${dir} already holds checkpoints (${old.map((c) => c.name).join(", ")}); resume it with --resume ${dir}, or set a new out (or --out)`,
      );
    }
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.yaml"), stringify(plainConfig(cfg)));
  const log: RunLogger = new EventLogger(dir, opts.quiet, opts.onEvent);
  if (resume) {
    for (const c of resume.skipped) log.info(`resume: skipping ${c.name}: ${c.problem}`);
    if (resume.changes.length) log.info(`resume: config changes: ${resume.changes.join(", ")}`);
    opts.stage?.("resume", `from ${resume.checkpoint.name}${resume.skipped.map((c) => `; skipped ${c.name}: ${c.problem}`).join("")}`);
  }
  opts.stage?.("setup");
  const ctx = await buildContext(cfg);
  if (ctx.test.length === 0) throw new Error("data error: no held-out examples (set data.test or use a procedural data.task)");
  const fingerprint = dataFingerprint(ctx.train);
  const alg = cfg.algorithm!;
  const saved: TrainerState | null = resume?.state ?? null;
  if (saved && resume) {
    if (saved.data.train !== ctx.train.length || saved.data.fingerprint !== fingerprint) {
      await ctx.close();
      throw new ResumeError(
        `resume error: the training data differ from those of ${resume.checkpoint.dir} (${ctx.train.length} examples, fingerprint ${fingerprint}; ` +
          `the checkpoint has ${saved.data.train}, fingerprint ${saved.data.fingerprint}); resume with the same data`,
      );
    }
    await ctx.engine.load(resume.checkpoint.dir);
    // Only now that the checkpoint is known to fit: cut the logs back and drop the newer, unusable checkpoints.
    truncateLogs(dir, saved.logs);
    removeCheckpointsAfter(dir, resume.checkpoint.step);
  }

  const sftTotal = cfg.sft?.steps ?? 0;
  const every = cfg.checkpoint.every;
  const refDir = join(checkpointsDir(dir), "reference");
  // The reference model goes to disk whenever a checkpoint may be written, so checkpoints can hold it.
  const keepReference = every > 0 || opts.signal !== undefined;
  const evals: Record<string, EvalResult> = { ...(saved?.evals ?? {}) };
  const skips = new SkipCounter(cfg.faults.maxConsecutiveSkips, saved?.skippedInARow ?? 0);
  const sft = initSftState(ctx);
  if (saved) ({ step: sft.step, cursor: sft.cursor } = saved.sft);
  let rl: RlState | null = null;
  let hasReference = false;
  let stage: "sft" | "rl" = saved?.stage ?? "sft";
  let last: { step: number; dir: string } | null = resume ? { step: resume.checkpoint.step, dir: resume.checkpoint.dir } : null;
  if (saved?.rl) {
    rl = restoreRlState(ctx, alg, saved.rl);
    if (saved.rl.reference) {
      const from = join(resume!.checkpoint.dir, "reference");
      await ctx.engine.setReference({ dir: from });
      hasReference = true;
      const tmp = tempDirFor(refDir);
      linkTree(from, tmp);
      publishDir(tmp, refDir);
    }
  }

  // The guided / label-free method hooks (built when the RL stage starts); their state goes into checkpoints.
  let methodHooks: RlStageHooks | null = null;
  const globalStep = () => (stage === "sft" ? sft.step : sftTotal + rl!.step);
  const state = (): TrainerState => ({
    format: TRAINER_STATE_FORMAT,
    step: globalStep(),
    stage,
    seed: cfg.seed,
    sft: { step: sft.step, cursor: sft.cursor },
    rl: rl ? { ...saveRlState(rl), ...(methodHooks?.saveState ? { methods: methodHooks.saveState() } : {}), reference: hasReference } : null,
    evals,
    skippedInARow: skips.inARow,
    logs: logSizes(dir),
    data: { train: ctx.train.length, fingerprint },
    config: plainConfig(cfg),
  });
  const checkpoint = async (): Promise<string> => {
    const step = globalStep();
    if (last?.step === step) return last.dir;
    const d = await writeCheckpoint(dir, step, cfg.checkpoint.keepLast, async (tmp) => {
      await ctx.engine.save(tmp, { optimizer: true });
      if (hasReference) linkTree(refDir, join(tmp, "reference"));
      writeFileSync(join(tmp, "trainer.json"), JSON.stringify(state()) + "\n");
    });
    last = { step, dir: d };
    return d;
  };
  const interrupt = async (): Promise<never> => {
    const at = `${stage} step ${stage === "sft" ? sft.step : rl!.step}`;
    if (globalStep() === 0) throw new RunInterrupted(`interrupted before the first step of ${dir}; nothing to save`, null);
    opts.stage?.("checkpoint", "interrupted");
    const d = await checkpoint();
    await ctx.close();
    throw new RunInterrupted(`interrupted at ${at}; checkpoint ${d}`, d);
  };
  /** After each optimizer step: fault accounting, periodic checkpoint, interruption. */
  const boundary = async (name: "sft" | "rl", step: number, m: Record<string, number>): Promise<void> => {
    try {
      skips.record(name, step, m, last?.dir ?? null);
    } catch (e) {
      await ctx.close();
      throw e;
    }
    if (every > 0 && step % every === 0) await checkpoint();
    if (opts.signal?.aborted) await interrupt();
  };
  const referenceFromPolicy = async (): Promise<void> => {
    await ctx.engine.setReference("policy");
    hasReference = true;
    if (!keepReference) return;
    const tmp = tempDirFor(refDir);
    await ctx.engine.save(tmp);
    writeManifest(tmp, globalStep());
    publishDir(tmp, refDir);
  };

  if (stage === "sft" && cfg.sft && sft.step < sftTotal) {
    // sft.stopAt: end the warm-up once greedy accuracy on the held-back check set reaches the
    // target. The check runs after a step's checkpoint, so a run resumed from that checkpoint
    // repeats it (its log line was truncated away) before training on.
    const stopAt = cfg.sft.stopAt;
    const reachedTarget = async (): Promise<boolean> => {
      if (!stopAt || sft.step === 0 || sft.step % stopAt.every !== 0 || sft.step >= sftTotal) return false;
      const acc = await sftCheckAccuracy(ctx, cfg.eval.maxNewTokens ?? cfg.rl?.maxNewTokens ?? 16);
      const stop = acc >= stopAt.accuracy;
      log.metrics({ stage: "sft", step: sft.step, "check/accuracy": acc, "check/stopped": stop ? 1 : 0 });
      if (stop) opts.stage?.("sft", `stopped at step ${sft.step}: check-set accuracy ${(acc * 100).toFixed(1)}% ≥ ${(stopAt.accuracy * 100).toFixed(1)}%`);
      return stop;
    };
    opts.stage?.("sft", sft.step > 0 ? `steps ${sft.step + 1}–${sftTotal}` : `${sftTotal} steps`);
    let stopped = await reachedTarget(); // only on resume (sft.step > 0)
    while (!stopped && sft.step < sftTotal) {
      if (opts.signal?.aborted) await interrupt();
      const m = await sftStep(ctx, sft, log);
      opts.progress?.("sft", sft.step, sftTotal, { loss: m["loss"]! });
      await boundary("sft", sft.step, m);
      stopped = await reachedTarget();
    }
  }
  const before = sftTotal > 0 ? "sft" : "init";
  if (!evals[before]) {
    opts.stage?.("eval", "before RL");
    evals[before] = await evalHeldOut(ctx, dir, before, 0, opts.onEvent);
  }
  if (cfg.rl && cfg.rl.steps > 0) {
    const r = cfg.rl;
    // Guided / label-free methods (src/guided, src/labelfree); on resume their state (ReLIFT's
    // buffer, CHORD's cursor) comes back from the checkpoint.
    const hooks = buildMethodHooks(ctx, cfg);
    methodHooks = hooks;
    if (rl && saved?.rl?.methods) hooks.restoreState?.(saved.rl.methods);
    if (!rl) {
      rl = initRlState(ctx, alg);
      stage = "rl";
      if (rl.kl.coef > 0 || alg.kl.adaptive) await referenceFromPolicy();
      await hooks.init?.(ctx);
    }
    if (rl.step < r.steps) opts.stage?.("rl", rl.step > 0 ? `steps ${rl.step + 1}–${r.steps}` : `${r.steps} steps`);
    while (rl.step < r.steps) {
      if (opts.signal?.aborted) await interrupt();
      const m = hooks.step ? await hooks.step(ctx, alg, rl, log) : await rlStep(ctx, alg, rl, log, hooks);
      await hooks.afterStep?.(ctx, rl, m, log);
      if (r.referenceResetEvery > 0 && rl.step % r.referenceResetEvery === 0) await referenceFromPolicy();
      opts.progress?.("rl", rl.step, r.steps, {
        reward: m["reward/mean"]!,
        acc: m["accuracy"]!,
        "zero-std": m["groups/zero_std_frac"]!,
        entropy: m["entropy"]!,
        kl: m["kl"]!,
        len: m["response/length_mean"]!,
        "s/step": m["time/step"]!,
      });
      if (cfg.eval.every > 0 && rl.step % cfg.eval.every === 0 && rl.step < r.steps) await evalHeldOut(ctx, dir, "rl", rl.step, opts.onEvent);
      await boundary("rl", rl.step, m);
    }
    opts.stage?.("eval", "after RL");
    evals["rl"] = await evalHeldOut(ctx, dir, "rl", r.steps, opts.onEvent);
    await hooks.close?.();
  }
  opts.stage?.("save");
  const final = join(checkpointsDir(dir), "final");
  const tmp = tempDirFor(final);
  await ctx.engine.save(tmp);
  publishDir(tmp, final);
  await ctx.close();
  const seconds = (performance.now() - t0) / 1000;
  const lines = [`# rlvr run`, "", `- run directory: ${dir}`, `- model: ${ctx.engine.info().modelId}`, `- seconds: ${seconds.toFixed(1)}`];
  if (resume) lines.push(`- resumed from: ${resume.checkpoint.name}`);
  lines.push("", "| phase | accuracy | mean length | truncated |", "|---|---|---|---|");
  for (const [k, v] of Object.entries(evals)) lines.push(`| ${k} | ${(v.accuracy * 100).toFixed(1)}% | ${v.meanLength.toFixed(2)} | ${(v.truncated * 100).toFixed(1)}% |`);
  writeFileSync(join(dir, "report.md"), lines.join("\n") + "\n");
  return { dir, evals, seconds, checkpoint: final, ...(resume ? { resumedFrom: resume.checkpoint.dir } : {}) };
}
