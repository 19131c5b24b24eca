/**
 * What a checkpoint stores besides the engine's files (trainer.json), and how a run resumes:
 * find the newest complete checkpoint, check that the config and data still match, and cut the
 * logs back to what they held when the checkpoint was written.
 *
 * Randomness needs no stored generator state: data orders are seeded shuffles of the run seed
 * and every per-step stream (sampling, mini-batch shuffles) is seeded with hash32(seed, tag,
 * step), so the seed, the step counters and the data cursors reproduce them exactly.
 */
import { existsSync, readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { withMethodAliases, type RunConfig } from "../config/schema.ts";
import type { EvalResult } from "../eval/accuracy.ts";
import type { Example } from "../core/example.ts";
import { findLatestCheckpoint, type CheckpointEntry } from "./checkpoints.ts";
import type { SavedRlState } from "../pipeline/state.ts";

export const TRAINER_STATE_FORMAT = "rlvr-trainer/1";

/** The log files a checkpoint records the length of (bytes), so resume can cut them back. */
export const RUN_LOGS = ["metrics.jsonl", "samples.jsonl", "eval.jsonl"] as const;

/** trainer.json: the trainer's state at a step boundary. */
export interface TrainerState {
  format: string;
  /** Global optimizer step (SFT steps, then sft.steps + RL steps); the checkpoint is step-<step>. */
  step: number;
  /** Stage the run was in: "sft" (possibly finished) or "rl". */
  stage: "sft" | "rl";
  seed: number;
  sft: { step: number; cursor: number };
  /** RL progress (null before RL starts); `reference`: the checkpoint holds a reference model. */
  rl: (SavedRlState & { reference: boolean }) | null;
  /** Held-out evaluations finished so far ("init"/"sft" before RL). */
  evals: Record<string, EvalResult>;
  /** Skipped (non-finite) steps in a row at the checkpoint. */
  skippedInARow: number;
  /** Bytes of each run log when the checkpoint was written. */
  logs: Record<string, number>;
  /** Number of training examples and a hash of their ids, prompts and answers. */
  data: { train: number; fingerprint: number };
  /** The resolved config of the run that wrote the checkpoint. */
  config: Record<string, unknown>;
}

/** An error that stops `rlvr train --resume` before training (names the run and the fix). */
export class ResumeError extends Error {
  override name = "ResumeError";
}

/** The config as written to config.yaml: the resolved algorithm replaces rl.algorithm. */
export function plainConfig(cfg: RunConfig): Record<string, unknown> {
  const { algorithm, ...plain } = cfg;
  const out = { ...plain, ...(algorithm ? { rl: { ...plain.rl, algorithm } } : {}) };
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
}

/** FNV-style 32-bit hash of the training examples (ids, prompts, answers) in order. */
export function dataFingerprint(train: readonly Example[]): number {
  let h = 0x811c9dc5;
  const mix = (s: string) => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
    h = Math.imul(h ^ 0xff, 0x01000193) >>> 0;
  };
  for (const ex of train) {
    mix(ex.id);
    mix(ex.prompt);
    mix(ex.answer);
  }
  return h >>> 0;
}

/** Current size in bytes of each run log (0 when absent). */
export function logSizes(runDir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of RUN_LOGS) {
    const p = join(runDir, f);
    out[f] = existsSync(p) ? statSync(p).size : 0;
  }
  return out;
}

/**
 * Cut each run log back to its size at the checkpoint, so the resumed run appends exactly where
 * the checkpointed one stood (lines written after the checkpoint are dropped; they will be
 * written again). @throws ResumeError when a log is shorter than recorded.
 */
export function truncateLogs(runDir: string, sizes: Record<string, number>): void {
  for (const f of RUN_LOGS) {
    const want = sizes[f] ?? 0;
    const p = join(runDir, f);
    const have = existsSync(p) ? statSync(p).size : 0;
    if (have < want) throw new ResumeError(`resume error: ${p} has ${have} bytes but had ${want} when the checkpoint was written; the run directory was modified`);
    if (have > want) truncateSync(p, want);
  }
}

/** Fields that may change between the interrupted run and its resumption. */
const CHANGEABLE = [/^out$/, /^eval\./, /^logging\./, /^checkpoint\./, /^faults\./, /^(sft|rl)\.(lr|maxGradNorm)$/, /^rl\.steps$/, /^model\.(python|device|tokenBudget|gradientCheckpointing)$/];

function flatten(v: unknown, prefix: string, out: Map<string, string>): void {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, JSON.stringify(v));
}

/** Paths whose values differ between two plain configs, as "path (old → new)". */
export function configChanges(before: Record<string, unknown>, after: Record<string, unknown>): { path: string; text: string }[] {
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  flatten(before, "", a);
  flatten(after, "", b);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths.filter((p) => a.get(p) !== b.get(p)).map((p) => ({ path: p, text: `${p} (${a.get(p) ?? "unset"} → ${b.get(p) ?? "unset"})` }));
}

/** A checkpoint to resume from. */
export interface ResumePoint {
  checkpoint: CheckpointEntry;
  state: TrainerState;
  /** Newer step directories that were incomplete or damaged (skipped), with reasons. */
  skipped: CheckpointEntry[];
  /** Changed fields that are allowed to change (reported, not errors). */
  changes: string[];
}

/**
 * Find the newest complete checkpoint of `runDir` and check it against `cfg`.
 * @throws ResumeError when there is none, or when the config changed in a field that would make
 *         the resumed run a different run (everything except out, eval, logging, checkpoint,
 *         faults, learning rates, gradient clips, rl.steps and torch runtime settings).
 */
export function findResumePoint(runDir: string, cfg: RunConfig): ResumePoint {
  if (!existsSync(runDir)) throw new ResumeError(`resume error: run directory ${runDir} does not exist`);
  const { latest, skipped } = findLatestCheckpoint(runDir);
  if (!latest) {
    const why = skipped.length ? ` (${skipped.map((c) => `${c.name}: ${c.problem}`).join("; ")})` : "";
    throw new ResumeError(
      `resume error: no complete checkpoint in ${join(runDir, "checkpoints")}${why}; set checkpoint.every to write them, or start the run again without --resume`,
    );
  }
  let state: TrainerState;
  try {
    state = JSON.parse(readFileSync(join(latest.dir, "trainer.json"), "utf8")) as TrainerState;
  } catch (e) {
    throw new ResumeError(`resume error: cannot read ${join(latest.dir, "trainer.json")}: ${(e as Error).message}`);
  }
  if (state.format !== TRAINER_STATE_FORMAT) throw new ResumeError(`resume error: ${join(latest.dir, "trainer.json")} has format ${state.format}, expected ${TRAINER_STATE_FORMAT}`);
  // A checkpoint written before `methods:` was the methods' home saved them under guided/labelfree.
  const changes = configChanges(withMethodAliases(state.config, "trainer.json").raw as Record<string, unknown>, plainConfig(cfg));
  const bad = changes.filter((c) => !CHANGEABLE.some((re) => re.test(c.path)));
  if (bad.length) {
    throw new ResumeError(
      `resume error: the config differs from the one that wrote ${latest.dir} at ${bad.map((c) => c.text).join(", ")}; ` +
        `resume with the run's own config (${join(runDir, "config.yaml")}) or start a new run`,
    );
  }
  if (state.rl && cfg.rl && cfg.rl.steps < state.rl.step) {
    throw new ResumeError(`resume error at rl.steps: ${cfg.rl.steps} is fewer than the ${state.rl.step} RL steps already done in ${latest.dir}`);
  }
  return { checkpoint: latest, state, skipped, changes: changes.filter((c) => c.path !== "out").map((c) => c.text) };
}
