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

/** What a verifier says about one response. */
export interface Verdict {
  /** Whether the response solves the example. */
  correct: boolean;
  /** Reward in [0, 1] (1 = correct; partial credit where the task defines it). */
  reward: number;
  /** The answer the verifier extracted from the response (null if none was found). */
  extracted: string | null;
  /** Short human-readable reason, e.g. "ok", "no answer found", "uses 7 twice". */
  reason: string;
}

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
  /** Score a model response against an example. Never throws; malformed responses score 0. */
  verify(response: string, example: Example): Verdict;
}
