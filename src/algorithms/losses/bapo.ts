/**
 * BAPO — Balanced Policy Optimization with Adaptive Clipping (Xi et al. 2025, arXiv:2510.18927).
 * PPO clip whose ratio bounds [c_low, c_high] are chosen for each step so that positive-advantage
 * tokens carry at least a share ρ0 of the policy-gradient contribution: starting from
 * (c_low, c_high) = (a−, a+), while ρ < ρ0 both bounds move up by their steps (c_high ≤ b+,
 * c_low ≤ b−). Raising c_high lets more low-probability positive tokens through; raising c_low
 * clips more negative tokens whose ratio fell low. ρ = P/(P+N) with P = Σ_{A>0, r ≤ c_high} m A r
 * and N = Σ_{A<0, r ≥ c_low} m |A| r (the tokens whose gradient passes the clip).
 * Defaults (paper): ρ0 = 0.5, c_low ∈ [0.6, 0.9], c_high ∈ [1.2, 3.0]; steps 0.05 (authors' recipe).
 *
 * Micro-batching: the bounds depend on the whole step's batch. Compute them once per step with
 * `bapoClipBounds` (after `engine.score` on the step's batch) and pass them as
 * `state.clipBounds` to `makePolicyLoss`; without them the loss computes them from its own batch,
 * which is allowed only when that batch is the whole step.
 */
import { z } from "zod";
import { registerPolicyLoss } from "../registry.ts";
import type { NumArray, PolicyLossContext, PolicyLossTerms } from "../types.ts";
import { clampedExp, lossNum } from "./common.ts";
import { ppoClipTerms } from "./ppo-clip.ts";

/** BAPO bound-search options. */
export interface BapoOptions {
  /** ρ0: target positive share of the contribution (default 0.5). */
  target?: number;
  lowStart?: number;
  lowMax?: number;
  lowStep?: number;
  highStart?: number;
  highMax?: number;
  highStep?: number;
}

/** Result of the bound search. */
export interface BapoBounds {
  /** c_low: ratio lower bound (ε_low = 1 − c_low). */
  low: number;
  /** c_high: ratio upper bound (ε_high = c_high − 1). */
  high: number;
  /** ρ at the chosen bounds. */
  positiveShare: number;
  /** Number of bound moves. */
  iterations: number;
}

/**
 * Choose BAPO's clip bounds for one step.
 * @param input logprobs (current policy, [B*T]), oldLogprobs (behaviour policy, [B*T]; omitted =
 *              on-policy, r = 1), advantages [B*T], mask [B*T] — all of the step's tokens.
 * @returns the bounds and the positive share they reach (ρ may stay below ρ0 when both bounds
 *          hit their maxima). A batch without contributions returns the start bounds.
 * @throws RangeError on mismatched lengths.
 */
export function bapoClipBounds(
  input: { logprobs: NumArray; oldLogprobs?: NumArray | undefined; advantages: NumArray; mask: NumArray },
  opts: BapoOptions = {},
): BapoBounds {
  const { target = 0.5, lowStart = 0.6, lowMax = 0.9, lowStep = 0.05, highStart = 1.2, highMax = 3.0, highStep = 0.05 } = opts;
  const n = input.mask.length;
  if (input.logprobs.length !== n || input.advantages.length !== n || (input.oldLogprobs && input.oldLogprobs.length !== n)) {
    throw new RangeError("bapoClipBounds: logprobs, oldLogprobs, advantages and mask must have the same length B*T");
  }
  const ratio = new Float64Array(n);
  for (let i = 0; i < n; i++) ratio[i] = clampedExp(input.logprobs[i]! - (input.oldLogprobs ? input.oldLogprobs[i]! : input.logprobs[i]!))[0];
  const share = (low: number, high: number): number => {
    let pos = 0;
    let neg = 0;
    for (let i = 0; i < n; i++) {
      const m = input.mask[i]!;
      const A = input.advantages[i]!;
      if (!(m > 0) || A === 0) continue;
      const r = ratio[i]!;
      if (A > 0 && r <= high) pos += m * A * r;
      else if (A < 0 && r >= low) neg += m * -A * r;
    }
    return pos + neg > 0 ? pos / (pos + neg) : 1;
  };
  // Bounds are start + k·step (no accumulated rounding), snapped to the maximum within 1e-9.
  const at = (start: number, step: number, max: number, k: number): number => {
    const v = start + k * step;
    return v >= max - 1e-9 ? max : v;
  };
  let kLow = 0;
  let kHigh = 0;
  let low = lowStart;
  let high = highStart;
  let rho = share(low, high);
  let iterations = 0;
  while (rho < target) {
    const canLow = lowStep > 0 && low < lowMax;
    const canHigh = highStep > 0 && high < highMax;
    if (!canLow && !canHigh) break;
    if (canHigh) high = at(highStart, highStep, highMax, ++kHigh);
    if (canLow) low = at(lowStart, lowStep, lowMax, ++kLow);
    rho = share(low, high);
    iterations++;
  }
  return { low, high, positiveShare: rho, iterations };
}

/** The loss's BAPO options from its config block. */
function bapoOptions(ctx: PolicyLossContext): BapoOptions {
  return {
    target: lossNum(ctx, "target", 0.5),
    lowStart: lossNum(ctx, "lowStart", 0.6),
    lowMax: lossNum(ctx, "lowMax", 0.9),
    lowStep: lossNum(ctx, "lowStep", 0.05),
    highStart: lossNum(ctx, "highStart", 1.2),
    highMax: lossNum(ctx, "highMax", 3.0),
    highStep: lossNum(ctx, "highStep", 0.05),
  };
}

/**
 * `bapo`: PPO clip with ratio bounds from `state.clipBounds` (or searched on this batch when it is
 * the whole step). Dual clip from `loss.dualClip`.
 * @throws Error when the batch is a proper micro-batch and no `state.clipBounds` was given.
 * Pinned by losses.test.ts ("bapo").
 */
export function bapoLoss(ctx: PolicyLossContext): PolicyLossTerms {
  let bounds = ctx.state.clipBounds;
  if (!bounds) {
    let tokens = 0;
    let seqs = 0;
    for (const n of ctx.seqTokens) {
      tokens += n;
      if (n > 0) seqs++;
    }
    if (tokens !== ctx.counts.tokens || seqs !== ctx.counts.sequences) {
      throw new Error(
        "loss bapo: this micro-batch is part of a larger step, and BAPO's clip bounds depend on the whole step; " +
          "compute them once with bapoClipBounds({logprobs, oldLogprobs, advantages, mask} of the step) and pass " +
          "them as makePolicyLoss(cfg, counts, { clipBounds })",
      );
    }
    bounds = bapoClipBounds({ logprobs: ctx.detached, oldLogprobs: ctx.oldLogprobs, advantages: ctx.advantages, mask: ctx.mask }, bapoOptions(ctx));
  }
  const out = ppoClipTerms(ctx, 1 - bounds.low, bounds.high - 1, ctx.options.dualClip ?? undefined);
  out.metrics = { "bapo/c_low_max": bounds.low, "bapo/c_high_max": bounds.high };
  return out;
}

const pos = z.number().gt(0);
registerPolicyLoss("bapo", bapoLoss, {
  wholeBatch: true,
  defaults: { target: 0.5, lowStart: 0.6, lowMax: 0.9, lowStep: 0.05, highStart: 1.2, highMax: 3.0, highStep: 0.05 },
  schema: z
    .looseObject({
      target: z.number().min(0).max(1),
      lowStart: pos, lowMax: pos, lowStep: z.number().min(0),
      highStart: pos, highMax: pos, highStep: z.number().min(0),
    })
    .refine((o) => o.lowStart <= o.lowMax && o.lowMax <= 1, { message: "need lowStart ≤ lowMax ≤ 1", path: ["lowMax"] })
    .refine((o) => 1 <= o.highStart && o.highStart <= o.highMax, { message: "need 1 ≤ highStart ≤ highMax", path: ["highMax"] }),
});
