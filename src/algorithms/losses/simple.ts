/**
 * Unclipped policy-gradient losses.
 * - `importance_sampling`: ℓ = −r A (no clip), r = exp(clamp(lp − lp_old, ±20)).
 * - `vanilla_pg`: ℓ = −A lp (REINFORCE, Williams 1992; on-policy score-function estimator).
 * Source: ALGORITHMS.md "Policy losses".
 */
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { clampedExp, newTerms } from "./common.ts";

/** `importance_sampling`: ℓ = −r A, ∂ℓ/∂lp = −r A. Pinned by the finite-difference tests. */
export function importanceSamplingLoss(ctx: PolicyLossContext): PolicyLossTerms {
  const out = newTerms(ctx);
  const { logprobs: lp, oldLogprobs: old, advantages: adv, mask } = ctx;
  for (let i = 0; i < out.loss.length; i++) {
    if (!(mask[i]! > 0)) continue;
    const [r, dr] = clampedExp(lp[i]! - old[i]!);
    out.loss[i] = -r * adv[i]!;
    out.grad[i] = -dr * adv[i]!;
  }
  return out;
}

/** `vanilla_pg`: ℓ = −A lp, ∂ℓ/∂lp = −A. Pinned by the finite-difference tests. */
export function vanillaPgLoss(ctx: PolicyLossContext): PolicyLossTerms {
  const out = newTerms(ctx);
  const { logprobs: lp, advantages: adv, mask } = ctx;
  for (let i = 0; i < out.loss.length; i++) {
    if (!(mask[i]! > 0)) continue;
    out.loss[i] = -adv[i]! * lp[i]!;
    out.grad[i] = -adv[i]!;
  }
  return out;
}

registerPolicyLoss("importance_sampling", importanceSamplingLoss);
registerPolicyLoss("vanilla_pg", vanillaPgLoss);
