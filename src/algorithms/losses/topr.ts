/**
 * TOPR — Tapered Off-Policy REINFORCE (Le Roux et al. 2025, arXiv:2503.14286). REINFORCE with
 * asymmetric, truncated importance sampling: samples with A ≥ 0 get weight 1 (plain SFT-like
 * REINFORCE, no IS), samples with A < 0 get the trajectory ratio π(τ)/μ(τ) truncated to [0, 1]:
 * ∇J = Σ_{A≥0} A ∇log π(τ) + Σ_{A<0} [π(τ)/μ(τ)]_0^1 A ∇log π(τ).
 * Per token: ℓ = −sg(w) · A · lp, w = 1 (A ≥ 0) or min(1, exp(Σ_t m (lp − lp_old))) (A < 0).
 * μ is the behaviour policy (batch.oldLogprobs). The advantage's baseline decides which samples
 * act as negatives (the paper's point). Option `level`: "sequence" (default, the paper's
 * trajectory ratio) or "token" (per-token ratio). Natural aggregation: `seq-mean-token-sum`
 * (Σ_t of log π(τ), mean over trajectories). No KL needed.
 * Flags: `clippedHigh` marks negative-advantage tokens whose ratio was truncated at 1.
 */
import { z } from "zod";
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { LOG_RATIO_CLAMP, newTerms } from "./common.ts";

/** `topr`: ∂ℓ/∂lp = −w A. Pinned by losses.test.ts ("topr") and the finite-difference tests. */
export function toprLoss(ctx: PolicyLossContext): PolicyLossTerms {
  const out = newTerms(ctx);
  const level = ctx.options["level"] ?? "sequence";
  if (level !== "sequence" && level !== "token") throw new TypeError(`loss topr: option level must be "sequence" or "token", got ${JSON.stringify(level)}`);
  const { logprobs: lp, detached: sg, oldLogprobs: old, advantages: adv, mask, seqLen: T } = ctx;
  const clampLog = (x: number): number => Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, x));
  for (let b = 0; b < ctx.batchSize; b++) {
    let seqLog = 0;
    if (level === "sequence") {
      for (let t = 0; t < T; t++) {
        const i = b * T + t;
        if (mask[i]! > 0) seqLog += mask[i]! * (sg[i]! - old[i]!);
      }
    }
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (!(mask[i]! > 0)) continue;
      const A = adv[i]!;
      let w = 1;
      if (A < 0) {
        const ratio = Math.exp(clampLog(level === "sequence" ? seqLog : sg[i]! - old[i]!));
        w = Math.min(1, ratio);
        out.clippedHigh[i] = ratio > 1 ? 1 : 0;
      }
      out.loss[i] = -w * A * lp[i]!;
      out.grad[i] = -w * A;
    }
  }
  return out;
}

registerPolicyLoss("topr", toprLoss, {
  defaults: { level: "sequence" },
  schema: z.looseObject({ level: z.enum(["sequence", "token"]) }),
});
