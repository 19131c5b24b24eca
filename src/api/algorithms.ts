/**
 * `rlvr/algorithms`: the algorithm library — advantage estimators, policy losses, aggregation,
 * KL, entropy, mismatch correction, presets — and its two registries (registerAdvantage,
 * registerPolicyLoss). Pure functions over Float32Array/Float64Array; formulas, defaults and
 * sources in docs/algorithms.md.
 */
export * from "../algorithms/index.ts";

// The RL step's stages (src/pipeline/): one step, the update sequence after collect (a run's step and
// serve's capture training), and the one update loop every stage trains through.
export { rlStep } from "../pipeline/step.ts";
export { update, type UpdateReport } from "../pipeline/update.ts";
export type { UpdateContext, UpdateHooks, UpdatePlan, UpdateState } from "../pipeline/update-types.ts";
export { updateMetrics } from "../pipeline/metrics.ts";
export { optimize, type OptimizeOptions, type OptimizeReport } from "../pipeline/optimize.ts";
export type { StepBatch, UpdateBatch } from "../pipeline/batch.ts";
export { packSequences, chunks, chunkBySize, type Sequence } from "../core/sequence.ts";
