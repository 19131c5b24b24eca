/**
 * CISPO — clipped importance-sampling-weight policy optimization (MiniMax-M1, MiniMax 2025,
 * arXiv:2506.13585): ℓ = −sg(clamp(r, 1 − ε_low, 1 + ε_high)) · A · lp. The weight, not the
 * update, is clipped, so every token keeps its gradient. Defaults: ε_low = 1 (no lower bound, as
 * the paper leaves it effectively unused), ε_high = 5.0 (TRL's suggestion).
 * Clip flags count tokens whose weight was clipped (low: r < 1 − ε_low, high: r > 1 + ε_high),
 * whatever the sign of A.
 */
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { clampedExp, newTerms } from "./common.ts";

/** `cispo`: ∂ℓ/∂lp = −w A with w = clamp(r(sg lp), 1−ε_low, 1+ε_high). Pinned by losses.test.ts and FD tests. */
export function cispoLoss(ctx: PolicyLossContext): PolicyLossTerms {
  const out = newTerms(ctx);
  const { logprobs: lp, detached: sg, oldLogprobs: old, advantages: adv, mask } = ctx;
  const lo = 1 - ctx.options.clipLow;
  const hi = 1 + ctx.options.clipHigh;
  for (let i = 0; i < out.loss.length; i++) {
    if (!(mask[i]! > 0)) continue;
    const [r] = clampedExp(sg[i]! - old[i]!);
    const w = Math.min(hi, Math.max(lo, r));
    out.loss[i] = -w * adv[i]! * lp[i]!;
    out.grad[i] = -w * adv[i]!;
    out.clippedLow[i] = r < lo ? 1 : 0;
    out.clippedHigh[i] = r > hi ? 1 : 0;
  }
  return out;
}

registerPolicyLoss("cispo", cispoLoss, { defaults: { clipLow: 1.0, clipHigh: 5.0 } });
