/**
 * Shared types of the algorithm library (src/algorithms).
 *
 * Layout conventions follow src/core/engine.ts: a batch holds B sequences padded to T tokens,
 * per-token arrays are flat [B*T] row-major (index b*T + t), log-probs are natural-log nats.
 * Every formula computes in float64 internally; inputs may be Float32Array or Float64Array.
 */

/** Read-only numeric array: Float32Array, Float64Array or number[]. */
export type NumArray = ArrayLike<number>;

// ---------------------------------------------------------------------------------------------
// Advantages
// ---------------------------------------------------------------------------------------------

/** Input of an advantage estimator. */
export interface AdvantageInput {
  /** Outcome reward per sequence, [B]. NaN = unscorable: advantage 0, left out of every statistic. */
  rewards: NumArray;
  /** Group (prompt) of each sequence, [B]. Any integers, in any order; never inferred from position. */
  groupIds: Int32Array | NumArray;
  /** Response length of each sequence in tokens, [B] (needed by `opo`). */
  lengths?: Int32Array | NumArray;
  /** Per-token rewards, [B*T] (token-level estimators such as `reinforce_pp`). */
  tokenRewards?: NumArray;
  /** Loss mask, [B*T] (token-level estimators and `computeTokenAdvantages`). */
  mask?: NumArray;
  /** Padded length T of `tokenRewards`/`mask`. */
  seqLen?: number;
  /** Stratum of each sequence, [B], e.g. its number of tool calls (`stratified_grpo`). */
  strata?: Int32Array | NumArray;
}

/** Estimator options: the `advantage` block of the config minus `name`. */
export type AdvantageOptions = Record<string, unknown>;

/** A sequence-level estimator: returns one advantage per sequence, [B]. */
export type SequenceAdvantageFn = (input: AdvantageInput, options: AdvantageOptions) => Float32Array;
/** A token-level estimator: returns one advantage per token, [B*T] (0 off the mask). */
export type TokenAdvantageFn = (input: AdvantageInput, options: AdvantageOptions) => Float32Array;

// ---------------------------------------------------------------------------------------------
// Aggregation
// ---------------------------------------------------------------------------------------------

/** How per-token losses become one scalar (see aggregation.ts). */
export type AggregationMode = "token-mean" | "seq-mean-token-sum" | "seq-mean-token-mean" | "seq-mean-token-sum-norm";

/**
 * Counts of the whole optimizer step (all micro-batches together). Aggregation divides by these,
 * so the micro-batch losses and gradients add up to the full-batch ones.
 */
export interface StepCounts {
  /** Σ lossMask over the step (tokens trained). */
  tokens: number;
  /** Number of sequences of the step with at least one trained token. */
  sequences: number;
  /** The constant T of `seq-mean-token-sum-norm`: the maximum response length (tokens). */
  maxResponseLength: number;
}

// ---------------------------------------------------------------------------------------------
// Policy losses
// ---------------------------------------------------------------------------------------------

/** Resolved `loss` block of the config. Extra keys are loss-specific options. */
export interface LossConfig {
  name: string;
  /** ε_low: lower clip bound is 1 − clipLow. */
  clipLow: number;
  /** ε_high: upper clip bound is 1 + clipHigh. */
  clipHigh: number;
  /** Dual-clip constant c > 1 (negative advantages only); undefined = off. */
  dualClip?: number | undefined;
  [option: string]: unknown;
}

/** Per-step values that controllers (adaptive KL / entropy, BAPO) set for one optimizer step. */
export interface StepState {
  /** KL coefficient β for this step (overrides cfg.kl.coef). */
  klCoef?: number;
  /** Entropy coefficient c for this step (overrides cfg.entropy.coef). */
  entropyCoef?: number;
  /** Ratio bounds [low, high] for `bapo` (from `bapoClipBounds` on the whole step). */
  clipBounds?: { low: number; high: number };
}

/**
 * What a policy loss sees. `logprobs` is the differentiable input; `detached` holds the same
 * values but stands for sg(lp): anything computed from it is a constant for the gradient. A loss
 * must make token t's loss depend on `logprobs` only through `logprobs[t]` (couple tokens through
 * `detached`, as GSPO does); then dL/dlp = (aggregation weight) × `grad`, exactly.
 */
export interface PolicyLossContext {
  batchSize: number;
  seqLen: number;
  /** lp, [B*T] (differentiable). */
  logprobs: NumArray;
  /** sg(lp), [B*T]: same values as `logprobs`, treated as constants. */
  detached: NumArray;
  /** lp_old, [B*T]; equals `detached` when the batch carries no oldLogprobs (on-policy). */
  oldLogprobs: NumArray;
  /** Per-token advantages, [B*T]. */
  advantages: NumArray;
  /** Loss mask, [B*T]. */
  mask: NumArray;
  /** Σ_t mask per sequence, [B]. */
  seqTokens: Float64Array;
  /** The resolved loss config (clip bounds and loss-specific options). */
  options: LossConfig;
  /** Per-step controller values. */
  state: StepState;
  /** Global counts of the step. */
  counts: StepCounts;
}

/** What a policy loss returns; every array is [B*T] and read only where mask > 0. */
export interface PolicyLossTerms {
  /** Per-token loss ℓ (before aggregation). */
  loss: Float64Array;
  /** ∂ℓ_t/∂lp_t (with sg(·) parts held constant). */
  grad: Float64Array;
  /** 1 where the lower clip bound was active (for `clipfrac_low`). */
  clippedLow?: Uint8Array;
  /** 1 where the upper clip bound was active (for `clipfrac_high`). */
  clippedHigh?: Uint8Array;
  /**
   * Extra metrics of this micro-batch. Must combine across micro-batches by `combineMetrics`
   * rules: summed, except names ending in `_max` (max) or `_min` (min).
   */
  metrics?: Record<string, number>;
}

/** A policy loss: pure function of the context. */
export type PolicyLossFn = (ctx: PolicyLossContext) => PolicyLossTerms;
