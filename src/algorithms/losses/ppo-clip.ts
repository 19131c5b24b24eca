/**
 * `ppo_clip` — the PPO clipped surrogate per token with decoupled bounds (clip-higher) and an
 * optional dual clip. Sources: Schulman et al. 2017 (arXiv:1707.06347); clip-higher, DAPO (Yu et al.
 * 2025, arXiv:2503.14476); dual clip, Ye et al. 2020 (arXiv:1912.09729). Defaults ε_low = ε_high = 0.2.
 */
import { registerPolicyLoss } from "../registry.ts";
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { clampedExp, clippedSurrogate, newTerms } from "./common.ts";

/**
 * Per-token PPO clip loss with explicit clip epsilons.
 * ℓ = max(−A r, −A clamp(r, 1−ε_low, 1+ε_high)), r = exp(clamp(lp − lp_old, ±20)); dual clip c:
 * for A < 0, ℓ = min(ℓ, −A c).
 * @returns per-token loss, ∂ℓ/∂lp, clip flags. Pinned by golden cases.policy_loss_token (ppo_clip_*)
 *          and the finite-difference tests.
 */
export function ppoClipTerms(ctx: PolicyLossContext, epsLow: number, epsHigh: number, dual: number | undefined): PolicyLossTerms {
  const out = newTerms(ctx);
  const { logprobs: lp, oldLogprobs: old, advantages: adv, mask } = ctx;
  for (let i = 0; i < out.loss.length; i++) {
    if (!(mask[i]! > 0)) continue;
    const [r, dr] = clampedExp(lp[i]! - old[i]!);
    const c = clippedSurrogate(r, dr, adv[i]!, epsLow, epsHigh, dual);
    out.loss[i] = c.loss;
    out.grad[i] = c.dLogRatio;
    out.clippedLow[i] = c.low ? 1 : 0;
    out.clippedHigh[i] = c.high ? 1 : 0;
  }
  return out;
}

/** `ppo_clip` registered loss: clip bounds from `loss.clipLow`/`loss.clipHigh`, dual clip from `loss.dualClip`. */
export function ppoClipLoss(ctx: PolicyLossContext): PolicyLossTerms {
  return ppoClipTerms(ctx, ctx.options.clipLow, ctx.options.clipHigh, ctx.options.dualClip ?? undefined);
}

registerPolicyLoss("ppo_clip", ppoClipLoss, { defaults: { clipLow: 0.2, clipHigh: 0.2 } });
