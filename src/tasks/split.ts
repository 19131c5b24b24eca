/**
 * Deterministic train/test splits for procedural tasks.
 *
 * The instance space of a task is partitioned by a hash of each instance's canonical key (by
 * default its prompt): an instance whose key hashes below `testFraction` belongs to the test
 * split, every other instance to train. Generators draw candidates from a seeded stream and keep
 * the first one that falls in the requested split, so a test prompt can never appear in train —
 * for any seed, since the partition does not depend on the seed.
 */
import type { Example } from "../core/example.ts";
import { Rng, hashSeed, hashUnit } from "./rng.ts";

/** Fraction of every task's instance space reserved for the test split. */
export const DEFAULT_TEST_FRACTION = 0.1;

/** The split an instance key belongs to (hash partition; independent of the seed). */
export function splitOf(task: string, key: string, testFraction = DEFAULT_TEST_FRACTION): "train" | "test" {
  return hashUnit(`${task}\u241f${key}`) < testFraction ? "test" : "train";
}

/** Options shared by every procedural generator. */
export interface GenerateOptions {
  seed: number;
  index: number;
  difficulty: number;
  split: "train" | "test";
}

/** A generated candidate before it is wrapped into an Example. */
export interface Candidate {
  prompt: string;
  answer: string;
  meta?: Record<string, unknown>;
  solution?: string;
  /** Canonical instance key for the split partition (defaults to the prompt). */
  key?: string;
}

/**
 * Draw candidates from a seeded stream until one falls in the requested split.
 * @param task        task name (part of the seed and of the partition hash)
 * @param opts        seed, index, difficulty, split
 * @param make        builds one candidate from an Rng (must be deterministic given the Rng)
 * @param maxAttempts attempts before giving up (throws an Error naming the task and difficulty)
 * @returns the Example, with id `<task>-<split>-d<difficulty>-<index, 6 digits>`
 */
export function generateInSplit(
  task: string,
  opts: GenerateOptions,
  make: (rng: Rng) => Candidate,
  testFraction = DEFAULT_TEST_FRACTION,
  maxAttempts = 2000,
): Example {
  const { seed, index, difficulty, split } = opts;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const rng = new Rng(hashSeed(task, seed, split, difficulty, index, attempt));
    const c = make(rng);
    if (splitOf(task, c.key ?? c.prompt, testFraction) !== split) continue;
    const ex: Example = {
      id: `${task}-${split}-d${difficulty}-${String(index).padStart(6, "0")}`,
      prompt: c.prompt,
      answer: c.answer,
      task,
      difficulty,
    };
    if (c.meta) ex.meta = c.meta;
    if (c.solution !== undefined) ex.solution = c.solution;
    return ex;
  }
  throw new Error(
    `task ${task}: no ${split} instance found at difficulty ${difficulty} after ${maxAttempts} attempts; ` +
      `the instance space is too small for this split — raise the difficulty`,
  );
}

/** Check that a difficulty is an integer within a task's range; throws a RangeError that names the fix. */
export function checkDifficulty(task: string, difficulty: number, min: number, max: number): void {
  if (!Number.isInteger(difficulty) || difficulty < min || difficulty > max) {
    throw new RangeError(`task ${task}: difficulty must be an integer in [${min}, ${max}], got ${difficulty}`);
  }
}
