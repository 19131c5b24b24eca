/**
 * The record one RL step passes between its stages (collect → reward → reference → advantages →
 * optimize → metrics). Each stage reads what the earlier ones wrote and adds its own part; no
 * stage keeps state of its own between steps (that lives in RlState and the methods).
 *
 * Indexing: the train batch is `rollouts` (R responses) in group order; `groupIds[i]` is the
 * position of rollout i's prompt in `examples`/`prompts` (0..K-1). Methods may add `extra`
 * sequences (LUFFY's expert trajectories) that join the groups they name before advantages.
 */
import type { Trajectory } from "../rollout/types.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import type { Sequence } from "../core/sequence.ts";


/** What the collect stage generated, kept or not (for the step's accuracy and length metrics). */
export interface Generated {
  rollouts: Trajectory[];
  verdicts: Verdict[];
  examples: Example[];
  /** Generation batches run (dynamic sampling may run several). */
  genBatches: number;
  dropped: number;
  surplus: number;
  full: boolean;
  /** Tokens sampled and then replaced (GHPO hints), counted in rollout/sampled_tokens. */
  discardedTokens: number;
  /** Counted verifier events (verifier/timeouts, /crashes, /errors, reward/errors/<c>, …). */
  events: Record<string, number>;
  /** Strategy metrics (tree/*, hints/*, agent/*), summed over generation batches. */
  metrics: Record<string, number>;
}

/**
 * The part of a step's batch the update sequence (./update.ts: reward → reference → advantages →
 * optimize → metrics) reads and writes. A run's StepBatch is one; serve's capture training
 * (src/serve/train.ts) builds one from scored episodes, whose turns are several sequences of one
 * rollout (`rolloutOf`).
 */
export interface UpdateBatch {
  /** Step index (0-based: the number of steps done before this one). */
  step: number;
  /** The verifier's verdicts, [R]: the reward stage starts from their rewards. */
  verdicts: readonly Pick<Verdict, "reward">[];
  /**
   * Outcome rewards [R]: the verifier's reward, then length shaping, then method reward transforms
   * (TTRL, EVOL-RL), then the KL-in-reward penalty — in that order (reward and reference stages).
   */
  rewards: Float32Array;
  /** Group id of each rollout, [R]. */
  groupIds: Int32Array;
  /** Response length in tokens, [R]. */
  lengths: Int32Array;
  /** Strata for stratified estimators (tool calls per trajectory; 0 outside the agent loop), [R]. */
  strata: Int32Array;
  /** The on-policy sequences, [S] (one per rollout unless `rolloutOf`); the advantages stage appends `extra.seqs`. */
  seqs: Sequence[];
  /**
   * The rollout each on-policy sequence belongs to, [S], when a rollout is several sequences (a
   * served multi-turn episode: one per turn); they share its reward and advantage, and its KL
   * penalty sums over all of them. Absent: sequence i is rollout i.
   */
  rolloutOf?: Int32Array;
  /** Sequences methods add to the groups (LUFFY's experts) and their rewards. */
  extra: { seqs: Sequence[]; rewards: number[] };
  /** Sequence advantages of [rollouts, then extras] (advantages stage). */
  advantages: Float32Array;
  /** Metrics stages and methods add (reward/overlong_penalty, ttrl/*, rollout/logprob_diff, …). */
  metrics: Record<string, number>;
  /** Seconds per stage, logged as time/<stage>. */
  times: Record<string, number>;
  /** Mean per-token KL(policy‖reference) (k1, over response tokens); 0 without a reference. */
  kl: number;
  /** Whether the reference was scored (KL control, KL in reward or loss). */
  scoredReference: boolean;
  /** Policy version the optimize stage started from (staleness = trainVersion − a rollout's version). */
  trainVersion: number;
}

/** The step's batch. */
export interface StepBatch extends UpdateBatch {
  /** One example per kept group; group id = position. */
  examples: Example[];
  /** Prompt token ids, one per group. */
  prompts: Int32Array[];
  /** The train batch's responses, [R], group-major (promptIndex = group id). */
  rollouts: Trajectory[];
  /** The text each verdict scored, [R]. */
  texts: string[];
  /** The verifier's verdicts, [R] (per-component scores in `components`). */
  verdicts: Verdict[];
  /** The on-policy sequences, one per rollout, [R]; the advantages stage appends `extra.seqs`. */
  seqs: Sequence[];
  /** Everything sampled this step, kept or not. */
  generated: Generated;
  /** Responses whose loss mask was zeroed for truncation (rl.maskTruncated). */
  maskedTruncated: number;
}
