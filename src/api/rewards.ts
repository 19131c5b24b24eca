/**
 * `rlvr/rewards`: verifiers (math, choice, exact match, format, IFEval constraints, code in a
 * sandbox), length shaping, reward composition and the worker-thread verifier pool
 * (docs/rewards.md).
 */
export * from "../rewards/index.ts";
