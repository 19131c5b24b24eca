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
import { existsSync } from "node:fs";
import type { RunConfig } from "../config/schema.ts";
import { scanCheckpoints } from "./checkpoints.ts";
import { openSession, type TrainOptions } from "./session.ts";
import { evalBefore, finish, runRl, runSft, type RunSummary } from "./stages.ts";
import { acquireRunLock } from "./lock.ts";
import { loadVerifierModules } from "../rewards/pool/modules.ts";
import { ioError } from "../util/errors.ts";
import { PeerError } from "../util/peer.ts";
import { RewardError } from "../rewards/compile.ts";

export { NonFiniteError, RunInterrupted } from "../pipeline/faults.ts";
export { ResumeError } from "./resume.ts";
export { RunLockError } from "./lock.ts";
export { RunDirError } from "./rundir.ts";
export { RewardError } from "../rewards/compile.ts";

/**
 * Run every configured stage (or the rest of them, when resuming).
 * The run directory is locked for the whole run (src/trainer/lock.ts); I/O failures (ENOSPC, …)
 * are rethrown as one-line errors naming the directory and the newest complete checkpoint.
 * @throws RunLockError when another live process holds the run directory;
 *         RunInterrupted after writing a checkpoint when `opts.signal` fired;
 *         NonFiniteError after `faults.maxConsecutiveSkips` skipped steps in a row;
 *         ResumeError when `opts.resume` has no usable checkpoint;
 *         RunDirError when a fresh start's `out` holds an earlier run and `opts.overwrite` is not set;
 *         RewardError when a reward component fails on more than `reward.maxErrorRate` of a step's samples.
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

/** The run, once its directory is locked: open (or resume), SFT, evaluate, RL, save. */
async function trainLocked(cfg: RunConfig, opts: TrainOptions): Promise<RunSummary> {
  const t0 = performance.now();
  const s = await openSession(cfg, opts);
  try {
    await runSft(s);
    await evalBefore(s);
    await runRl(s);
  } catch (e) {
    // Any error stops the run mid-step (a failing reward, a peer that died or timed out: the torch
    // worker, every vLLM server): free the engine, the samplers' servers and the verifier pool, so
    // no process the run started is left (every log line and checkpoint already written stays).
    await s.ctx.close().catch(() => undefined);
    if (e instanceof PeerError) {
      const step = s.stage === "rl" && s.rl ? s.rl.step + 1 : s.sft.step + 1;
      throw e.atStep(`${s.stage} step ${step}`, savedNote(s.dir));
    }
    throw e;
  }
  return finish(s, () => (performance.now() - t0) / 1000);
}
