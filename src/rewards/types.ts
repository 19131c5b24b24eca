/**
 * Shared types of the reward layer: the one result type every verifier returns (`Verdict`), the
 * group the composition module scores, and the counted events it raises.
 */

/**
 * What every verifier returns, and what the reward stage hands the trainer for each response.
 * - `correct`: the response passes (graded verifiers: reward at or above their pass threshold).
 *   Accuracy, pass@k, `sft.stopAt`, eval, reports and the dashboard count this, never the reward.
 *   A reward function that returns only a number gets correct = reward ≥ `reward.correctAt`
 *   (default 1), see toVerdict.
 * - `reward`: the reward. A single verifier gives [0, 1] (1 = correct; partial credit such as the
 *   fraction of tests passed, token F1); a composed `reward:` block gives the weighted, gated,
 *   shaped total, which may leave [0, 1]. NaN = unscorable: the sample is skipped (advantage 0).
 * - `extracted`: the part of the response that was judged (answer, letter, code), or null.
 * - `reason`: a short human-readable explanation, always set.
 * - `components`: each reward component's score by component name (set by the reward stage;
 *   the metrics log their means as `reward/<name>`). NaN = the component could not score it.
 * Verifiers may add fields of their own (the code verifier's per-case results, IFEval's
 * per-constraint results); consumers rely only on the fields above.
 */
export interface Verdict {
  correct: boolean;
  reward: number;
  extracted: string | null;
  reason: string;
  components?: Record<string, number>;
}

/** One prompt's group of sampled responses, as the reward layer sees it. */
export interface RewardGroup<Example = unknown> {
  prompt: string;
  /** n sampled responses for the prompt. */
  responses: string[];
  /** The dataset row (reference answer, tests, constraints, …). One per response when the
   *  examples differ within the group (`examples`), else shared. */
  example: Example;
  /** Per-response examples, when the caller has them (default: `example` for every response). */
  examples?: Example[];
  /** Response lengths in tokens, parallel to `responses` (falls back to characters when absent). */
  lengths?: number[];
  /** Optional: whether each response was truncated at the length cap. */
  truncated?: boolean[];
  /** Optional: the training step, passed to verifiers and user reward functions. */
  step?: number;
}

/** A counted event raised while computing rewards (timeouts, crashes, skipped samples…). */
export interface RewardEvent {
  /** Metric-style name, e.g. "verifier/timeouts", "reward/errors/format". */
  name: string;
  /** Sample index within the group, when the event concerns one sample. */
  index?: number;
  message?: string;
}
