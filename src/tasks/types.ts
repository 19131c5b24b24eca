/**
 * A task: a source of prompts with reference answers and a verifier that scores a response.
 * Procedural tasks generate examples from (seed, difficulty); datasets load them from files.
 */

/** What a verifier says about one response: the reward layer's one result type (src/rewards/types.ts). */
export type { Verdict } from "../rewards/types.ts";
import type { Verdict } from "../rewards/types.ts";
import type { Example } from "../core/example.ts";

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
