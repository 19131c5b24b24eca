/** Helpers to generate many examples from a procedural task. */
import type { Task } from "./types.ts";
import type { Example } from "../core/example.ts";

/** Options for `generateExamples`. */
export interface GenerateManyOptions {
  /** Number of examples. */
  n: number;
  /** Run seed. */
  seed: number;
  /** Difficulty (default: the task's default). */
  difficulty?: number;
  /** Split (default "train"). */
  split?: "train" | "test";
  /** Index of the first example (default 0), to continue a stream. */
  start?: number;
}

/**
 * Generate `n` examples with indices start..start+n-1 (deterministic in all options).
 * @throws RangeError when n is not a non-negative integer or the difficulty is out of range.
 */
export function generateExamples(task: Task, opts: GenerateManyOptions): Example[] {
  if (!Number.isInteger(opts.n) || opts.n < 0) throw new RangeError(`n must be a non-negative integer, got ${opts.n}`);
  const difficulty = opts.difficulty ?? task.difficulties.default;
  const split = opts.split ?? "train";
  const start = opts.start ?? 0;
  const out: Example[] = [];
  for (let i = 0; i < opts.n; i++) out.push(task.generate({ seed: opts.seed, index: start + i, difficulty, split }));
  return out;
}
