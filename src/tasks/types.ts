/**
 * A task: a source of prompts with reference answers and a verifier that scores a response.
 * Procedural tasks generate examples from (seed, difficulty); datasets load them from files.
 */

/** One prompt with what is needed to score responses to it. */
export interface Example {
  /** Stable id (unique within a dataset), e.g. "addition-d3-000017". */
  id: string;
  /** The question text shown to the model (before any chat template / prompt template). */
  prompt: string;
  /** Reference answer as a string (the verifier decides what "equal" means). */
  answer: string;
  /** Name of the task that made or owns the example (selects the verifier). */
  task: string;
  /** Difficulty level the example was generated at (procedural tasks), if any. */
  difficulty?: number;
  /** Task-specific data the verifier needs (e.g. Countdown numbers and target). JSON-serialisable. */
  meta?: Record<string, unknown>;
  /** Worked solution, when known (for SFT warm-up, hints, demonstrations). */
  solution?: string;
}

/** What a verifier says about one response: the reward layer's one result type (src/rewards/types.ts). */
export type { Verdict } from "../rewards/types.ts";
import type { Verdict } from "../rewards/types.ts";

/** A procedural task with a difficulty knob and a verifier that accepts any valid solution. */
export interface Task {
  name: string;
  /** What the difficulty knob means, and its range. */
  difficulties: { min: number; max: number; default: number; description: string };
  /**
   * Deterministically generate example `index` of `split` at `difficulty` from `seed`.
   * Train and test never overlap for the same seed (a test example's prompt never appears in train).
   */
  generate(opts: { seed: number; index: number; difficulty: number; split: "train" | "test" }): Example;
  /**
   * Score a model response against an example. Never throws; malformed responses score 0.
   * registerTask also registers it in the verifier registry under the task's name
   * (src/rewards/registry.ts), which is how runs, the pool and `rlvr eval` reach it.
   */
  verify(response: string, example: Example): Verdict;
}
