/**
 * `rlvr/algorithms`: the algorithm library — advantage estimators, policy losses, aggregation,
 * KL, entropy, mismatch correction, presets — and its two registries (registerAdvantage,
 * registerPolicyLoss). Pure functions over Float32Array/Float64Array; formulas, defaults and
 * sources in docs/algorithms.md.
 */
export * from "../algorithms/index.ts";
