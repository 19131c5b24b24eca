// Policy-loss behaviour beyond golden.json: GSPO vs GSPO-token, SAPO's gate, TOPR's asymmetric
// weights, GMPO's log-space clip, CISPO's clipped weight, BAPO's bound search, metrics and errors.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bapoClipBounds,
  makePolicyLoss,
  policyLossTerms,
  resolveAlgorithm,
  sapoToken,
  stepCounts,
} from "../../src/algorithms/index.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { assertAllClose, assertClose, countsOf, randomBatch, sliceBatch, tokenLoss } from "./helpers.ts";

/** One sequence of tokens with the given log-ratios, all masked, advantage A. */
function seqBatch(logRatios: number[], A: number | number[]): { batch: TokenBatch; lp: Float64Array } {
  const T = logRatios.length;
  const lp = Float64Array.from(logRatios, (x, i) => -1 - 0.1 * i + x);
  const batch: TokenBatch = {
    batchSize: 1, seqLen: T, tokens: new Int32Array(T), lengths: Int32Array.from([T]),
    lossMask: new Float32Array(T).fill(1),
    advantages: Float32Array.from(logRatios, (_, i) => (Array.isArray(A) ? A[i]! : A)),
    oldLogprobs: Float32Array.from(logRatios, (_, i) => -1 - 0.1 * i),
  };
  // Use float64 old log-probs exactly: recompute lp from the float32 old values.
  for (let i = 0; i < T; i++) lp[i] = batch.oldLogprobs![i]! + logRatios[i]!;
  return { batch, lp };
}

describe("ppo_clip", () => {
  it("clip fractions count r < 1−ε_low with A < 0 and r > 1+ε_high with A > 0", () => {
    const lp = [Math.log(0.5), Math.log(0.5), Math.log(1.5), Math.log(1.5), 0];
    const terms = tokenLoss({ name: "ppo_clip" }, lp, [0, 0, 0, 0, 0], [-1, 1, 1, -1, 1]);
    assert.deepEqual([...terms.clippedLow!], [1, 0, 0, 0, 0]);
    assert.deepEqual([...terms.clippedHigh!], [0, 0, 1, 0, 0]);
    // Clipped tokens have zero gradient, unclipped have −A r.
    assertAllClose(terms.grad, [0, -0.5, 0, 1.5, -1]);
  });
});

describe("gspo", () => {
  it("every token's loss is the sequence loss −A·exp(mean log-ratio) inside the clip range", () => {
    const { batch, lp } = seqBatch([0.01, -0.02, 0.004], 2);
    const cfg = resolveAlgorithm({ loss: { name: "gspo", clipLow: 0.1, clipHigh: 0.1 }, aggregation: "seq-mean-token-mean" });
    const out = policyLossTerms(cfg, countsOf(batch), { logprobs: lp }, batch);
    const s = Math.exp((0.01 - 0.02 + 0.004) / 3);
    assertClose(out.loss, -2 * s, 1e-6);
    assertAllClose(out.dLogprobs, [-2 * s / 3, -2 * s / 3, -2 * s / 3], 1e-6);
  });
  it("clips the sequence ratio: outside [1−ε, 1+ε] the whole sequence has zero gradient", () => {
    const { batch, lp } = seqBatch([0.01, 0.02, 0.03], 1);
    const cfg = resolveAlgorithm("gspo"); // ε = 3e-4 / 4e-4
    const out = policyLossTerms(cfg, countsOf(batch), { logprobs: lp }, batch);
    assert.deepEqual([...out.dLogprobs], [0, 0, 0]);
    assert.equal(out.metrics["clipfrac_high"], 1);
  });
  it("gspo and gspo_token agree when the advantage is constant over each sequence", () => {
    const { batch, logprobs } = randomBatch(5, 6, 7, { spread: 0.01 });
    for (const agg of ["token-mean", "seq-mean-token-mean"] as const) {
      const a = policyLossTerms(resolveAlgorithm({ loss: { name: "gspo", clipLow: 0.005, clipHigh: 0.006 }, aggregation: agg }), countsOf(batch), { logprobs }, batch);
      const b = policyLossTerms(resolveAlgorithm({ loss: { name: "gspo_token", clipLow: 0.005, clipHigh: 0.006 }, aggregation: agg }), countsOf(batch), { logprobs }, batch);
      assertClose(a.loss, b.loss, 1e-12, 1e-15);
      assertAllClose(a.dLogprobs, b.dLogprobs, 1e-12, 1e-15);
    }
  });
});

describe("sapo", () => {
  it("at r = 1 the gate times 4/τ is 2/τ and its slope in r is 1 (per unit advantage)", () => {
    for (const [A, tau] of [[1, 1.0], [-1, 1.05]] as const) {
      const [l, dl] = sapoToken(1, A, 1.0, 1.05);
      assertClose(l, (-2 / tau) * A, 1e-12);
      assertClose(dl, -A, 1e-12);
    }
  });
  it("far off-policy tokens fade out instead of being cut", () => {
    const [, dFar] = sapoToken(5, 1, 1, 1.05);
    const [, dNear] = sapoToken(1.1, 1, 1, 1.05);
    assert.ok(Math.abs(dFar) < 0.1 * Math.abs(dNear) && dFar !== 0);
  });
});

describe("cispo", () => {
  it("keeps every token's gradient, weighted by the clipped sg ratio", () => {
    const lp = [Math.log(10), Math.log(0.5), Math.log(1.1)];
    const terms = tokenLoss({ name: "cispo", clipLow: 0.2, clipHigh: 0.28 }, lp, [0, 0, 0], [1, -1, 2]);
    assertAllClose(terms.grad, [-1.28, 0.8, -2.2], 1e-12);
    assertAllClose(terms.loss, [-1.28 * lp[0]!, 0.8 * lp[1]!, -2.2 * lp[2]!], 1e-12);
    assert.deepEqual([...terms.clippedHigh!], [1, 0, 0]);
    assert.deepEqual([...terms.clippedLow!], [0, 1, 0]);
  });
});

describe("topr", () => {
  it("positives get weight 1; negatives the trajectory ratio truncated to [0, 1]", () => {
    const cfg = resolveAlgorithm({ loss: { name: "topr" }, aggregation: "seq-mean-token-sum" });
    // negative sequence with Σ log-ratio = −0.5 → weight e^−0.5; with Σ = +0.7 → weight 1.
    for (const [lr, A, w] of [[[-0.2, -0.3], -1, Math.exp(-0.5)], [[0.3, 0.4], -1, 1], [[-2, -3], 1, 1]] as const) {
      const { batch, lp } = seqBatch([...lr], A);
      const out = policyLossTerms(cfg, countsOf(batch), { logprobs: lp }, batch);
      assertAllClose(out.dLogprobs, [-w * A, -w * A], 1e-6);
      assertClose(out.loss, -w * A * (lp[0]! + lp[1]!), 1e-6);
    }
  });
});

describe("gmpo", () => {
  it("loss −A·exp(mean of sign-aware clipped log-ratios)", () => {
    const cfg = resolveAlgorithm({ loss: { name: "gmpo", clipLow: 0.4, clipHigh: 0.4 }, aggregation: "seq-mean-token-mean" });
    // A > 0: log-ratios above 0.4 are capped; below are kept.
    let { batch, lp } = seqBatch([1.0, -0.6, 0.1], 1.5);
    let out = policyLossTerms(cfg, countsOf(batch), { logprobs: lp }, batch);
    let ratio = Math.exp((0.4 - 0.6 + 0.1) / 3);
    assertClose(out.loss, -1.5 * ratio, 1e-6);
    assertAllClose(out.dLogprobs, [0, -1.5 * ratio / 3, -1.5 * ratio / 3], 1e-6);
    // A < 0: log-ratios below −0.4 are floored; above are kept.
    ({ batch, lp } = seqBatch([1.0, -0.6, 0.1], -1));
    out = policyLossTerms(cfg, countsOf(batch), { logprobs: lp }, batch);
    ratio = Math.exp((1.0 - 0.4 + 0.1) / 3);
    assertClose(out.loss, ratio, 1e-6);
    assertAllClose(out.dLogprobs, [ratio / 3, 0, ratio / 3], 1e-6);
  });
});

describe("bapo", () => {
  it("raises the bounds until positives carry the target share", () => {
    // Many low-ratio negative tokens, a few high-ratio positive ones.
    const n = 40;
    const lp = new Float64Array(n);
    const adv = new Float64Array(n);
    const mask = new Float64Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      if (i < 30) { adv[i] = -1; lp[i] = Math.log(0.62 + 0.01 * i); }
      else { adv[i] = 1; lp[i] = Math.log(1.1 + 0.1 * (i - 30)); }
    }
    const start = bapoClipBounds({ logprobs: lp, advantages: adv, mask }, { target: 0 });
    assert.deepEqual([start.low, start.high, start.iterations], [0.6, 1.2, 0]);
    const b = bapoClipBounds({ logprobs: lp, advantages: adv, mask, oldLogprobs: new Float64Array(n) });
    assert.ok(b.positiveShare >= 0.5, `share ${b.positiveShare}`);
    assert.ok(b.low > 0.6 && b.high > 1.2);
    const capped = bapoClipBounds({ logprobs: lp, advantages: adv, mask, oldLogprobs: new Float64Array(n) }, { target: 0.99 });
    assert.deepEqual([capped.low, capped.high], [0.9, 3.0]);
    assert.ok(capped.positiveShare < 0.99);
  });
  it("uses state.clipBounds, searches on a whole-step batch, refuses a partial micro-batch", () => {
    const { batch, logprobs } = randomBatch(21, 6, 6);
    const cfg = resolveAlgorithm({ loss: { name: "bapo" } });
    const counts = stepCounts([batch], 6);
    const bounds = bapoClipBounds({ logprobs, oldLogprobs: batch.oldLogprobs, advantages: batch.advantages!, mask: batch.lossMask });
    const a = policyLossTerms(cfg, counts, { logprobs }, batch, { state: { clipBounds: bounds } });
    const b = policyLossTerms(cfg, counts, { logprobs }, batch);
    assertClose(a.loss, b.loss, 1e-12, 1e-15);
    assert.equal(a.metrics["bapo/c_low_max"], bounds.low);
    const mb = sliceBatch(batch, 0, 3);
    assert.throws(() => policyLossTerms(cfg, counts, { logprobs: logprobs.slice(0, 18) }, mb), /bapoClipBounds/);
  });
});

describe("makePolicyLoss: inputs, metrics and errors", () => {
  it("on-policy (no oldLogprobs): r = 1 and the gradient is −A·w", () => {
    const { batch, logprobs } = randomBatch(2, 4, 5);
    delete batch.oldLogprobs;
    const cfg = resolveAlgorithm({ aggregation: "token-mean" });
    const counts = countsOf(batch);
    const out = policyLossTerms(cfg, counts, { logprobs }, batch);
    for (let i = 0; i < logprobs.length; i++) {
      const expected = batch.lossMask[i] ? -batch.advantages![i]! / counts.tokens : 0;
      assertClose(out.dLogprobs[i]!, expected, 1e-12, 1e-15);
    }
    assertClose(out.metrics["ratio_mean"]!, 1, 1e-12);
    assert.equal(out.metrics["approx_kl"], 0);
  });
  it("reports the documented metrics", () => {
    const { batch, logprobs, entropy } = randomBatch(4, 4, 6);
    const cfg = resolveAlgorithm({ kl: { coef: 0.01, estimator: "k3" }, entropy: { coef: 0.001 }, mismatch: { level: "token" } });
    const out = makePolicyLoss(cfg, countsOf(batch))({ logprobs: Float32Array.from(logprobs), entropy: Float32Array.from(entropy) }, batch);
    for (const k of ["loss", "loss/policy", "loss/kl", "loss/entropy", "clipfrac_low", "clipfrac_high", "ratio_mean", "ratio_max", "approx_kl", "kl", "entropy", "advantage_mean", "tokens", "sequences", "mismatch/weight_mean", "mismatch/corrected_frac", "mismatch/logprob_gap", "mismatch/ratio_max"]) {
      assert.ok(Number.isFinite(out.metrics[k]), `metric ${k}`);
    }
    assert.ok(out.dEntropy instanceof Float32Array);
    assertClose(out.metrics["loss"]!, out.loss, 1e-12);
  });
  it("errors name the missing input and the fix", () => {
    const { batch, logprobs } = randomBatch(4, 3, 5);
    const counts = countsOf(batch);
    const noRef = { ...batch };
    delete noRef.refLogprobs;
    assert.throws(() => policyLossTerms(resolveAlgorithm({ kl: { coef: 0.1 } }), counts, { logprobs }, noRef), /refLogprobs/);
    assert.throws(() => policyLossTerms(resolveAlgorithm({ entropy: { coef: 0.1 } }), counts, { logprobs }, batch), /entropy: true/);
    const noAdv = { ...batch };
    delete noAdv.advantages;
    assert.throws(() => policyLossTerms(resolveAlgorithm({}), counts, { logprobs }, noAdv), /computeTokenAdvantages/);
    const noSampler = { ...batch };
    delete noSampler.samplerLogprobs;
    assert.throws(() => policyLossTerms(resolveAlgorithm({ mismatch: {} }), counts, { logprobs }, noSampler), /samplerLogprobs/);
    assert.throws(() => policyLossTerms(resolveAlgorithm({}), { ...counts, tokens: 1 }, { logprobs }, batch), /global counts/);
  });
  it("KL in the reward leaves the loss alone but still reports kl", () => {
    const { batch, logprobs } = randomBatch(8, 3, 5);
    const a = policyLossTerms(resolveAlgorithm("rloo"), countsOf(batch), { logprobs }, batch);
    const b = policyLossTerms(resolveAlgorithm({ preset: "rloo", kl: { coef: 0 } }), countsOf(batch), { logprobs }, batch);
    assert.equal(a.loss, b.loss);
    assert.ok(a.metrics["kl"] !== undefined && a.metrics["loss/kl"] === undefined);
  });
});
