/**
 * Shared types of the reward layer.
 */

/**
 * What every verifier returns.
 * - `correct`: the response passes (for graded verifiers: score ≥ their pass threshold).
 * - `score`: reward in [0, 1] (fraction satisfied / passed, F1, …); 0/1 for binary verifiers.
 * - `extracted`: the part of the response that was judged (answer, letter, code), or null.
 * - `reason`: a short human-readable explanation, always set.
 */
export interface VerifierResult {
  correct: boolean;
  score: number;
  extracted: string | null;
  reason: string;
  [extra: string]: unknown;
}

/** One prompt's group of sampled responses, as the reward layer sees it. */
export interface RewardGroup<Example = unknown> {
  prompt: string;
  /** n sampled responses for the prompt. */
  responses: string[];
  /** The dataset row (reference answer, tests, constraints, …). */
  example: Example;
  /** Response lengths in tokens, parallel to `responses` (falls back to characters when absent). */
  lengths?: number[];
  /** Optional: whether each response was truncated at the length cap. */
  truncated?: boolean[];
}

/** A counted event raised while computing rewards (timeouts, crashes, skipped samples…). */
export interface RewardEvent {
  /** Metric-style name, e.g. "verifier/timeouts", "reward/errors/format". */
  name: string;
  /** Sample index within the group, when the event concerns one sample. */
  index?: number;
  message?: string;
}
