/**
 * The state of one training run while it runs: its context, logger, stage states (SFT, RL,
 * methods), reference bookkeeping and checkpoints. `openSession` prepares the run directory (or
 * restores it from a checkpoint); the stage loops (src/trainer/stages.ts) call `boundary` after
 * every optimizer step, which does fault accounting, periodic checkpoints and interruption.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { AlgorithmConfig } from "../algorithms/index.ts";
import type { RunConfig } from "../config/schema.ts";
import type { EvalResult } from "../eval/accuracy.ts";
import { checkpointsDir, linkTree, publishDir, removeCheckpointsAfter, tempDirFor, writeCheckpoint, writeManifest } from "./checkpoints.ts";
import { buildContext } from "./context.ts";
import type { RunContext } from "../pipeline/context.ts";
import { EventLogger, type RunStage, type TrainEventHandler } from "./events.ts";
import { RunInterrupted, SkipCounter } from "../pipeline/faults.ts";
import type { RlStageHooks } from "../pipeline/hooks.ts";
import type { RunLogger } from "../pipeline/logger.ts";
import { dataFingerprint, findResumePoint, logSizes, plainConfig, ResumeError, truncateLogs, TRAINER_STATE_FORMAT, type ResumePoint, type TrainerState } from "./resume.ts";
import { restoreRlState, saveRlState, type RlState } from "../pipeline/state.ts";
import { initSftState, type Progress, type SftState } from "./sft.ts";
import { prepareFreshRunDir } from "./rundir.ts";

export interface RunHooks {
  /** Called after every optimizer step of every stage. */
  progress?: Progress;
  /** Called when a stage starts ("setup", "resume", "eval", "sft", "rl", "checkpoint", "save"). */
  stage?: (name: RunStage, detail?: string) => void;
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
   * A fresh start into an `out` that already holds a run (config.yaml, metrics.jsonl,
   * samples.jsonl, eval.jsonl, report.md, checkpoints/) deletes those files first (printing one
   * line naming them) instead of throwing RunDirError. Other files there are kept. Ignored with `resume`.
   */
  overwrite?: boolean;
  /**
   * When aborted, the run finishes the current step, writes a checkpoint and throws
   * RunInterrupted (`rlvr train` aborts it on SIGINT).
   */
  signal?: AbortSignal;
  /** Typed progress events (step metrics, samples, evaluations), see src/trainer/events.ts. */
  onEvent?: TrainEventHandler;
  /**
   * When set, a run on the embedded engine with the torch engine set up gets one line here: how
   * much faster the torch engine measured on this model (a cached 3-step probe, src/engines/probe.ts)
   * and how to switch. `rlvr train` and the quickstart set it; RLVR_ENGINE_PROBE=off skips it.
   */
  engineAdvice?: (line: string) => void;
}

/** A run in progress. */
export class RunSession {
  readonly dir: string;
  readonly alg: AlgorithmConfig;
  readonly sft: SftState;
  readonly sftTotal: number;
  readonly evals: Record<string, EvalResult>;
  readonly skips: SkipCounter;
  stage: "sft" | "rl";
  rl: RlState | null = null;
  /** The methods' hooks, once the RL stage has built them (their state goes into checkpoints). */
  methodHooks: RlStageHooks | null = null;
  hasReference = false;
  private last: { step: number; dir: string } | null;
  private readonly fingerprint: number;
  private readonly refDir: string;

  constructor(
    readonly cfg: RunConfig,
    readonly opts: TrainOptions,
    readonly ctx: RunContext,
    readonly log: RunLogger,
    readonly resume: ResumePoint | null,
  ) {
    this.dir = cfg.out;
    this.alg = cfg.algorithm!;
    const saved = resume?.state ?? null;
    this.sftTotal = cfg.sft?.steps ?? 0;
    this.evals = { ...(saved?.evals ?? {}) };
    this.skips = new SkipCounter(cfg.faults.maxConsecutiveSkips, saved?.skippedInARow ?? 0);
    this.sft = initSftState(ctx);
    if (saved) ({ step: this.sft.step, cursor: this.sft.cursor } = saved.sft);
    this.stage = saved?.stage ?? "sft";
    this.last = resume ? { step: resume.checkpoint.step, dir: resume.checkpoint.dir } : null;
    this.fingerprint = dataFingerprint(ctx.train);
    this.refDir = join(checkpointsDir(this.dir), "reference");
  }

  /** Steps done over both stages (the checkpoint's step number). */
  globalStep(): number {
    return this.stage === "sft" ? this.sft.step : this.sftTotal + this.rl!.step;
  }

  /** What trainer.json records in a checkpoint. */
  state(): TrainerState {
    const rl = this.rl;
    return {
      format: TRAINER_STATE_FORMAT,
      step: this.globalStep(),
      stage: this.stage,
      seed: this.cfg.seed,
      sft: { step: this.sft.step, cursor: this.sft.cursor },
      rl: rl ? { ...saveRlState(rl), ...(this.methodHooks?.saveState ? { methods: this.methodHooks.saveState() } : {}), reference: this.hasReference } : null,
      evals: this.evals,
      skippedInARow: this.skips.inARow,
      logs: logSizes(this.dir),
      data: { train: this.ctx.train.length, fingerprint: this.fingerprint },
      config: plainConfig(this.cfg),
    };
  }

  /** Write checkpoints/step-N (once per step). @returns its directory. */
  async checkpoint(): Promise<string> {
    const step = this.globalStep();
    if (this.last?.step === step) return this.last.dir;
    const d = await writeCheckpoint(this.dir, step, this.cfg.checkpoint.keepLast, async (tmp) => {
      await this.ctx.engine.save(tmp, { optimizer: true });
      if (this.hasReference) linkTree(this.refDir, join(tmp, "reference"));
      writeFileSync(join(tmp, "trainer.json"), JSON.stringify(this.state()) + "\n");
    });
    this.last = { step, dir: d };
    return d;
  }

  /** Checkpoint, close and throw RunInterrupted (the abort signal fired). */
  async interrupt(): Promise<never> {
    const at = `${this.stage} step ${this.stage === "sft" ? this.sft.step : this.rl!.step}`;
    if (this.globalStep() === 0) throw new RunInterrupted(`interrupted before the first step of ${this.dir}; nothing to save`, null);
    this.opts.stage?.("checkpoint", "interrupted");
    const d = await this.checkpoint();
    await this.ctx.close();
    throw new RunInterrupted(`interrupted at ${at}; checkpoint ${d}`, d);
  }

  /** After each optimizer step: fault accounting, periodic checkpoint, interruption. */
  async boundary(name: "sft" | "rl", step: number, m: Record<string, number>): Promise<void> {
    try {
      this.skips.record(name, step, m, this.last?.dir ?? null);
    } catch (e) {
      await this.ctx.close();
      throw e;
    }
    const every = this.cfg.checkpoint.every;
    if (every > 0 && step % every === 0) await this.checkpoint();
    if (this.opts.signal?.aborted) await this.interrupt();
  }

  /** Freeze the policy as the reference; kept on disk when checkpoints may need it. */
  async referenceFromPolicy(): Promise<void> {
    await this.ctx.engine.setReference("policy");
    this.hasReference = true;
    if (!(this.cfg.checkpoint.every > 0 || this.opts.signal !== undefined)) return;
    const tmp = tempDirFor(this.refDir);
    await this.ctx.engine.save(tmp);
    writeManifest(tmp, this.globalStep());
    publishDir(tmp, this.refDir);
  }

  /** Rebuild the RL state (and the reference model) saved in the resumed checkpoint. */
  async restoreRl(): Promise<void> {
    const saved = this.resume?.state.rl;
    if (!saved) return;
    this.rl = restoreRlState(this.ctx, this.alg, saved);
    if (!saved.reference) return;
    const from = join(this.resume!.checkpoint.dir, "reference");
    await this.ctx.engine.setReference({ dir: from });
    this.hasReference = true;
    const tmp = tempDirFor(this.refDir);
    linkTree(from, tmp);
    publishDir(tmp, this.refDir);
  }
}

/**
 * Prepare the run directory and build the run: refuse a fresh start over an earlier run (or
 * delete its files with `overwrite`, ./rundir.ts), write
 * config.yaml, build the context, and on resume load the checkpoint, cut the logs back to it and
 * restore the stage states.
 * @throws ResumeError when resuming is impossible; RunDirError when a fresh start meets an earlier
 *   run's files and `opts.overwrite` is not set.
 */
export async function openSession(cfg: RunConfig, opts: TrainOptions): Promise<RunSession> {
  if (opts.resume) cfg = { ...cfg, out: opts.resume };
  const dir = cfg.out;
  const resume: ResumePoint | null = opts.resume ? findResumePoint(dir, cfg) : null;
  if (!resume) prepareFreshRunDir(dir, opts.overwrite ?? false, (m) => process.stderr.write(m + "\n"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.yaml"), stringify(plainConfig(cfg)));
  const log: RunLogger = new EventLogger(dir, opts.quiet, opts.onEvent);
  if (resume) {
    for (const c of resume.skipped) log.info(`resume: skipping ${c.name}: ${c.problem}`);
    if (resume.changes.length) log.info(`resume: config changes: ${resume.changes.join(", ")}`);
    opts.stage?.("resume", `from ${resume.checkpoint.name}${resume.skipped.map((c) => `; skipped ${c.name}: ${c.problem}`).join("")}`);
  }
  opts.stage?.("setup");
  const ctx = await buildContext(cfg, { engineAdvice: opts.engineAdvice });
  if (ctx.test.length === 0) throw new Error("data error: no held-out examples (set data.test or use a procedural data.task)");
  if (resume) await loadCheckpoint(ctx, dir, resume);
  const s = new RunSession(cfg, opts, ctx, log, resume);
  await s.restoreRl();
  return s;
}

/** Load a resume point's weights once its data match; then cut logs and newer checkpoints back. */
async function loadCheckpoint(ctx: RunContext, dir: string, resume: ResumePoint): Promise<void> {
  const saved = resume.state;
  const fingerprint = dataFingerprint(ctx.train);
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
