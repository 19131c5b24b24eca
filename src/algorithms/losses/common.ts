/**
 * Building blocks shared by the policy losses. All arithmetic is float64.
 */
import type { PolicyLossContext, PolicyLossTerms } from "../types.ts";

/** Log-ratios are clamped to ±LOG_RATIO_CLAMP before exp (ALGORITHMS.md: r = exp(clamp(lp − lp_old, −20, 20))). */
export const LOG_RATIO_CLAMP = 20;

/** Fresh output arrays for a context. */
export function newTerms(ctx: PolicyLossContext): PolicyLossTerms & { clippedLow: Uint8Array; clippedHigh: Uint8Array } {
  const n = ctx.batchSize * ctx.seqLen;
  return { loss: new Float64Array(n), grad: new Float64Array(n), clippedLow: new Uint8Array(n), clippedHigh: new Uint8Array(n) };
}

/** Read a numeric loss option with a default. @throws TypeError naming the option. */
export function lossNum(ctx: PolicyLossContext, key: string, dflt: number): number {
  const v = ctx.options[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || Number.isNaN(v)) throw new TypeError(`loss ${ctx.options.name}: option ${key} must be a number, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * exp(clamp(x)) and its derivative factor: [value, d value / d x] (0 where the clamp is active).
 */
export function clampedExp(x: number): [number, number] {
  if (x > LOG_RATIO_CLAMP) return [Math.exp(LOG_RATIO_CLAMP), 0];
  if (x < -LOG_RATIO_CLAMP) return [Math.exp(-LOG_RATIO_CLAMP), 0];
  const e = Math.exp(x);
  return [e, e];
}

/** Result of the clipped surrogate for one token. */
export interface Clipped {
  loss: number;
  /** d loss / d (log-ratio). */
  dLogRatio: number;
  low: boolean;
  high: boolean;
}

/**
 * PPO clipped surrogate with decoupled bounds and optional dual clip (Schulman et al. 2017,
 * arXiv:1707.06347; clip-higher: DAPO arXiv:2503.14476; dual clip: Ye et al. 2020, arXiv:1912.09729):
 * ℓ = max(−A r, −A clamp(r, 1 − ε_low, 1 + ε_high)); for A < 0 and c set, ℓ = min(ℓ, −A c).
 * @param r      ratio value.
 * @param dr     d r / d (log-ratio) (r, or 0 where the ±20 clamp is active).
 * @returns loss, derivative w.r.t. the log-ratio, and which clip bound was active
 *          (low: r < 1 − ε_low and A < 0; high: r > 1 + ε_high and A > 0).
 */
export function clippedSurrogate(r: number, dr: number, A: number, epsLow: number, epsHigh: number, dual?: number): Clipped {
  const lo = 1 - epsLow;
  const hi = 1 + epsHigh;
  const unclipped = -A * r;
  const clipped = -A * Math.min(hi, Math.max(lo, r));
  let loss: number;
  let d: number;
  if (unclipped >= clipped) {
    loss = unclipped;
    d = -A * dr;
  } else {
    loss = clipped;
    d = 0;
  }
  if (dual !== undefined && A < 0 && loss > -A * dual) {
    loss = -A * dual;
    d = 0;
  }
  return { loss, dLogRatio: d, low: A < 0 && r < lo, high: A > 0 && r > hi };
}

/** Masked mean over sequence b of f(i). */
export function seqMean(ctx: PolicyLossContext, b: number, f: (i: number) => number): number {
  const T = ctx.seqLen;
  const n = ctx.seqTokens[b]!;
  if (!(n > 0)) return 0;
  let s = 0;
  for (let t = 0; t < T; t++) {
    const i = b * T + t;
    const m = ctx.mask[i]!;
    if (m > 0) s += m * f(i);
  }
  return s / n;
}
