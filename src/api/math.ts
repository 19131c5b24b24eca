/**
 * `rlvr/math`: the math answer verifier (docs/rewards-math.md) — verifyMath, extractAnswer,
 * mathEquivalent, normalizeAnswer, auditMath. A subpath of its own because it loads a CAS
 * (mathjs); `rlvr/rewards` reaches it lazily (loadMath, verifyMathLazy).
 */
export * from "../rewards/math/index.ts";
export { auditMath, type MathCase, type MathMiss, type MathAudit } from "../rewards/math/audit.ts";
