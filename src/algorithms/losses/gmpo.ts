/**
 * GMPO — Geometric-Mean Policy Optimization (Zhao et al. 2025, arXiv:2507.20673). Maximises the
 * geometric mean of the token-level ratios instead of their arithmetic mean:
 * J = sgn(A_b) · Π_t |min(r_t A_b, clip(r_t, e^{−ε_low}, e^{ε_high}) A_b)|^{1/|o_b|},
 * i.e. loss −A_b · exp(mean_t Δc_t) with Δ_t = lp_t − lp_old,t clipped in log space with the sign
 * of A taken into account (A > 0: Δc = min(Δ, ε_high); A < 0: Δc = max(Δ, −ε_low)).
 * Per token (sg form): ℓ_t = −A_b exp(Δc_t(lp_t) − Δc_t(sg lp_t) + sg(mean_t Δc)), whose value is
 * the sequence loss on every token; with `seq-mean-token-mean` (the paper's aggregation) the
 * gradient is exactly that of the sequence objective. Defaults ε_low = ε_high = 0.4 (the paper's
 * (e^−0.4, e^0.4) range). A_b = masked mean of the token advantages.
 */
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { LOG_RATIO_CLAMP, newTerms, seqMean } from "./common.ts";

/** `gmpo`. Pinned by losses.test.ts ("gmpo") and the finite-difference tests. */
export function gmpoLoss(ctx: PolicyLossContext): PolicyLossTerms {
  const out = newTerms(ctx);
  const { logprobs: lp, detached: sg, oldLogprobs: old, advantages: adv, mask, seqLen: T } = ctx;
  const { clipLow, clipHigh } = ctx.options;
  let seqRatioSum = 0;
  let seqRatioMax = 0;
  for (let b = 0; b < ctx.batchSize; b++) {
    if (!(ctx.seqTokens[b]! > 0)) continue;
    const A = seqMean(ctx, b, (i) => adv[i]!);
    // Δc and whether the clip is active at x.
    const clip = (x: number): [number, boolean] => {
      if (A > 0) return x > clipHigh ? [clipHigh, true] : [x, false];
      if (A < 0) return x < -clipLow ? [-clipLow, true] : [x, false];
      return [x, false];
    };
    const muRaw = seqMean(ctx, b, (i) => clip(sg[i]! - old[i]!)[0]);
    const mu = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, muRaw));
    const live = mu === muRaw ? 1 : 0;
    seqRatioSum += Math.exp(mu);
    seqRatioMax = Math.max(seqRatioMax, Math.exp(mu));
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (!(mask[i]! > 0)) continue;
      const [dc, clipped] = clip(lp[i]! - old[i]!);
      const [dcSg, clippedSg] = clip(sg[i]! - old[i]!);
      const ratio = Math.exp(dc - dcSg + mu);
      out.loss[i] = -A * ratio;
      out.grad[i] = clipped ? 0 : -A * ratio * live;
      if (clippedSg) {
        if (A > 0) out.clippedHigh[i] = 1;
        else out.clippedLow[i] = 1;
      }
    }
  }
  out.metrics = { seq_ratio_mean: seqRatioSum / Math.max(ctx.counts.sequences, 1), seq_ratio_max: seqRatioMax };
  return out;
}

registerPolicyLoss("gmpo", gmpoLoss, { defaults: { clipLow: 0.4, clipHigh: 0.4 } });
