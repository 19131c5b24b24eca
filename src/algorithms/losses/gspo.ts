/**
 * GSPO — Group Sequence Policy Optimization (Zheng et al. 2025, arXiv:2507.18071).
 * Sequence log-ratio ρ_b = Σ_t m (lp − lp_old) / Σ_t m; token ratio
 * s_t = exp(lp_t − sg(lp_t) + sg(ρ_b)) (value exp(ρ_b) on every token, gradient s_t on its own
 * token); then the PPO clipped form. Aggregate with `seq-mean-token-mean`; the paper's clip range
 * is tiny (defaults ε_low = 3e-4, ε_high = 4e-4, as TRL).
 * - `gspo`: one advantage per sequence (masked mean of the token advantages), one clip decision
 *   per sequence.
 * - `gspo_token` (GSPO-token in the paper): same ratio, each token's own advantage A_t.
 * The two agree whenever the advantage is constant over a sequence (tested).
 */
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { LOG_RATIO_CLAMP, clippedSurrogate, newTerms, seqMean } from "./common.ts";

function gspoTerms(ctx: PolicyLossContext, tokenAdvantage: boolean): PolicyLossTerms {
  const out = newTerms(ctx);
  const { logprobs: lp, detached: sg, oldLogprobs: old, advantages: adv, mask, seqLen: T } = ctx;
  const { clipLow, clipHigh } = ctx.options;
  const dual = ctx.options.dualClip ?? undefined;
  let seqRatioSum = 0;
  let seqRatioMax = 0;
  for (let b = 0; b < ctx.batchSize; b++) {
    if (!(ctx.seqTokens[b]! > 0)) continue;
    const rhoRaw = seqMean(ctx, b, (i) => sg[i]! - old[i]!);
    const rho = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, rhoRaw));
    const live = rho === rhoRaw ? 1 : 0;
    const Ab = tokenAdvantage ? 0 : seqMean(ctx, b, (i) => adv[i]!);
    seqRatioSum += Math.exp(rho);
    seqRatioMax = Math.max(seqRatioMax, Math.exp(rho));
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (!(mask[i]! > 0)) continue;
      const s = Math.exp(lp[i]! - sg[i]! + rho);
      const c = clippedSurrogate(s, s * live, tokenAdvantage ? adv[i]! : Ab, clipLow, clipHigh, dual);
      out.loss[i] = c.loss;
      out.grad[i] = c.dLogRatio;
      out.clippedLow[i] = c.low ? 1 : 0;
      out.clippedHigh[i] = c.high ? 1 : 0;
    }
  }
  out.metrics = { seq_ratio_mean: seqRatioSum / Math.max(ctx.counts.sequences, 1), seq_ratio_max: seqRatioMax };
  return out;
}

/** `gspo`: sequence advantage, sequence clip. Pinned by losses.test.ts and the finite-difference tests. */
export function gspoLoss(ctx: PolicyLossContext): PolicyLossTerms {
  return gspoTerms(ctx, false);
}

/** `gspo_token`: per-token advantages with the GSPO sequence ratio. */
export function gspoTokenLoss(ctx: PolicyLossContext): PolicyLossTerms {
  return gspoTerms(ctx, true);
}

registerPolicyLoss("gspo", gspoLoss, { defaults: { clipLow: 3e-4, clipHigh: 4e-4 } });
registerPolicyLoss("gspo_token", gspoTokenLoss, { defaults: { clipLow: 3e-4, clipHigh: 4e-4 } });
