/**
 * SAPO — Soft Adaptive Policy Optimization (Gao et al. 2025, arXiv:2511.20347): the hard clip is
 * replaced by a smooth gate, ℓ = −σ(τ (r − 1)) · (4/τ) · A, with τ = tauPos (1.0) for A > 0 and
 * tauNeg (1.05) for A ≤ 0 (verl/TRL defaults). At r = 1 the gate times 4/τ is 2/τ and its slope in r is 1.
 */
import { z } from "zod";
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { clampedExp, lossNum, newTerms } from "./common.ts";

/** Per-token SAPO loss and its derivative in r: [ℓ, ∂ℓ/∂r]. */
export function sapoToken(r: number, A: number, tauPos: number, tauNeg: number): [number, number] {
  const tau = A > 0 ? tauPos : tauNeg;
  const g = 1 / (1 + Math.exp(-tau * (r - 1)));
  return [(-g * 4 * A) / tau, -4 * A * g * (1 - g)];
}

/** `sapo`: ∂ℓ/∂lp = −4 A σ(1−σ) r. Pinned by golden cases.policy_loss_token (sapo_1.0_1.05) and FD tests. */
export function sapoLoss(ctx: PolicyLossContext): PolicyLossTerms {
  const out = newTerms(ctx);
  const tauPos = lossNum(ctx, "tauPos", 1.0);
  const tauNeg = lossNum(ctx, "tauNeg", 1.05);
  const { logprobs: lp, oldLogprobs: old, advantages: adv, mask } = ctx;
  for (let i = 0; i < out.loss.length; i++) {
    if (!(mask[i]! > 0)) continue;
    const [r, dr] = clampedExp(lp[i]! - old[i]!);
    const [l, dl] = sapoToken(r, adv[i]!, tauPos, tauNeg);
    out.loss[i] = l;
    out.grad[i] = dl * dr;
  }
  return out;
}

registerPolicyLoss("sapo", sapoLoss, {
  defaults: { tauPos: 1.0, tauNeg: 1.05 },
  schema: z.looseObject({ tauPos: z.number().gt(0), tauNeg: z.number().gt(0) }),
});
