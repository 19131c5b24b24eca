/**
 * rlvr's algorithm library: advantage estimators, policy losses, aggregation, KL, entropy,
 * mismatch correction, presets. Pure functions over Float32Array/Float64Array plus two
 * registries. See docs/algorithms.md for every formula, default, source and the test that pins it.
 *
 * Trainer entry points:
 *   resolveAlgorithm(presetOrConfig)                    → AlgorithmConfig
 *   computeTokenAdvantages(cfg.advantage.name, input, cfg.advantage) → Float32Array[B*T]
 *   stepCounts(microBatches, maxResponseLength)          → StepCounts
 *   makePolicyLoss(cfg, counts, state?)                  → TokenLossFn
 *   makeSftLoss(counts, opts?)                           → TokenLossFn
 *   combineMetrics(perMicroBatchMetrics)                 → step metrics
 */
export * from "./types.ts";
export {
  registerAdvantage,
  registerPolicyLoss,
  getAdvantage,
  getPolicyLoss,
  listAdvantages,
  listPolicyLosses,
  hasAdvantage,
  hasPolicyLoss,
  type AdvantageEntry,
  type PolicyLossEntry,
} from "./registry.ts";
export * from "./advantages/index.ts";
export * from "./losses/index.ts";
export * from "./aggregation.ts";
export * from "./kl.ts";
export * from "./entropy.ts";
export * from "./mismatch.ts";
export * from "./shaping.ts";
export * from "./metrics.ts";
export * from "./config.ts";
export * from "./policy-loss.ts";
export * from "./sft.ts";
export * from "./kd.ts";
export * from "./compose.ts";
export * from "./guidance.ts";
