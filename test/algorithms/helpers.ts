// Shared helpers for the algorithm-library tests.
import assert from "node:assert/strict";
import type { TokenBatch } from "../../src/core/engine.ts";
import { getPolicyLoss, resolveAlgorithm, sequenceTokenCounts } from "../../src/algorithms/index.ts";
import type { AlgorithmConfigInput, LossConfig, PolicyLossContext, PolicyLossTerms, StepCounts } from "../../src/algorithms/index.ts";

/** |a − e| ≤ rel·|e| + abs. */
export function assertClose(actual: number, expected: number, rel = 1e-6, abs = 1e-12, what = ""): void {
  const ok = Math.abs(actual - expected) <= rel * Math.abs(expected) + abs;
  if (!ok) assert.fail(`${what} expected ${expected}, got ${actual} (|diff| = ${Math.abs(actual - expected)}, rel tol ${rel})`);
}

/** Elementwise assertClose. */
export function assertAllClose(actual: ArrayLike<number>, expected: ArrayLike<number>, rel = 1e-6, abs = 1e-12, what = ""): void {
  assert.equal(actual.length, expected.length, `${what} length`);
  for (let i = 0; i < expected.length; i++) assertClose(actual[i]!, expected[i]!, rel, abs, `${what}[${i}]`);
}

/** Deterministic PRNG (mulberry32) so fast-check shrinks over an integer seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Normal(0,1) from a uniform source. */
export function normal(u: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/** A random RL batch with float64 logprobs (returned separately) and float32 batch fields. */
export interface RandomBatch {
  batch: TokenBatch;
  logprobs: Float64Array;
  entropy: Float64Array;
}

/**
 * Random batch: B sequences of T tokens, a prompt prefix masked out, random response lengths
 * (some sequences may be empty), advantages constant per sequence unless tokenAdv, and
 * log-prob gaps of a few tenths so ratios spread across the clip bounds.
 */
export function randomBatch(seed: number, B: number, T: number, opts: { tokenAdv?: boolean; spread?: number } = {}): RandomBatch {
  const u = rng(seed);
  const n = B * T;
  const lossMask = new Float32Array(n);
  const advantages = new Float32Array(n);
  const oldLogprobs = new Float32Array(n);
  const refLogprobs = new Float32Array(n);
  const samplerLogprobs = new Float32Array(n);
  const weights = new Float32Array(n);
  const logprobs = new Float64Array(n);
  const entropy = new Float64Array(n);
  const lengths = new Int32Array(B);
  const groupIds = new Int32Array(B);
  const spread = opts.spread ?? 0.4;
  for (let b = 0; b < B; b++) {
    const prompt = 1 + Math.floor(u() * 2);
    const resp = Math.floor(u() * (T - prompt + 1));
    lengths[b] = prompt + resp;
    groupIds[b] = Math.floor(u() * 3);
    const A = normal(u);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      const lp = -0.05 - 2.5 * u();
      logprobs[i] = lp;
      entropy[i] = 0.1 + 2 * u();
      if (t >= prompt && t < prompt + resp) {
        lossMask[i] = 1;
        advantages[i] = opts.tokenAdv ? normal(u) : A;
        oldLogprobs[i] = lp + spread * normal(u);
        refLogprobs[i] = lp + spread * normal(u);
        samplerLogprobs[i] = oldLogprobs[i]! + 0.3 * normal(u);
        weights[i] = 0.5 + u();
      }
    }
  }
  const batch: TokenBatch = {
    batchSize: B, seqLen: T, tokens: new Int32Array(n), lengths, lossMask, groupIds,
    advantages, oldLogprobs, refLogprobs, samplerLogprobs, weights,
  };
  return { batch, logprobs, entropy };
}

/** Rows [from, to) of a batch as its own batch. */
export function sliceBatch(batch: TokenBatch, from: number, to: number): TokenBatch {
  const T = batch.seqLen;
  const rows = <A extends Float32Array | Int32Array>(a: A | undefined): A | undefined => (a ? (a.slice(from * T, to * T) as A) : undefined);
  const out: TokenBatch = {
    batchSize: to - from, seqLen: T,
    tokens: batch.tokens.slice(from * T, to * T),
    lengths: batch.lengths.slice(from, to),
    lossMask: batch.lossMask.slice(from * T, to * T),
  };
  if (batch.groupIds) out.groupIds = batch.groupIds.slice(from, to);
  for (const k of ["advantages", "oldLogprobs", "samplerLogprobs", "refLogprobs", "weights"] as const) {
    const v = rows(batch[k]);
    if (v) out[k] = v;
  }
  return out;
}

/** Counts of a batch used as a whole step. */
export function countsOf(batch: TokenBatch, maxResponseLength = batch.seqLen): StepCounts {
  const per = sequenceTokenCounts(batch.lossMask, batch.batchSize, batch.seqLen);
  let tokens = 0;
  let sequences = 0;
  for (const x of per) {
    tokens += x;
    if (x > 0) sequences++;
  }
  return { tokens, sequences, maxResponseLength };
}

/** Run a registered policy loss on flat per-token inputs (one token per sequence). */
export function tokenLoss(cfg: AlgorithmConfigInput["loss"], lp: number[], old: number[], adv: number[]): PolicyLossTerms {
  const resolved = resolveAlgorithm({ loss: cfg });
  const n = lp.length;
  const mask = new Float64Array(n).fill(1);
  const ctx: PolicyLossContext = {
    batchSize: n, seqLen: 1, logprobs: lp, detached: lp, oldLogprobs: old, advantages: adv, mask,
    seqTokens: new Float64Array(n).fill(1), options: resolved.loss as LossConfig, state: {},
    counts: { tokens: n, sequences: n, maxResponseLength: 1 },
  };
  return getPolicyLoss(resolved.loss.name).fn(ctx);
}

/**
 * Central difference (f(x + h·e_i) − f(x − h·e_i)) / 2h; null where a kink (a clip boundary, a
 * mask threshold) lies within h of x[i]: there the one-sided slopes disagree by O(1), the loss has
 * no derivative to check, and the central difference would average the two sides. Away from kinks
 * the one-sided slopes agree to O(h·f''), so a wrong analytic gradient is never excused.
 */
export function centralDiff(f: (x: Float64Array) => number, x: Float64Array, i: number, h: number): number | null {
  const p = Float64Array.from(x);
  const m = Float64Array.from(x);
  p[i] = x[i]! + h;
  m[i] = x[i]! - h;
  const [fp, f0, fm] = [f(p), f(x), f(m)];
  const fwd = (fp - f0) / h;
  const bwd = (f0 - fm) / h;
  if (Math.abs(fwd - bwd) > 1e-3 * Math.max(Math.abs(fwd), Math.abs(bwd)) + 1e-5) return null;
  return (fp - fm) / (2 * h);
}
