// KL-in-reward, KL and entropy coefficient controllers, mismatch weights, SFT loss, overlong.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AdaptiveEntropyController,
  AdaptiveKlController,
  FixedKlController,
  applyKlToRewards,
  dapoOverlongPenalty,
  klPenaltyPerToken,
  klToken,
  makeSftLoss,
  mismatchWeights,
  policyLossTerms,
  resolveAlgorithm,
} from "../../src/algorithms/index.ts";
import { assertAllClose, assertClose, countsOf, randomBatch } from "./helpers.ts";

describe("KL", () => {
  it("k3+ has k3's value and k2's gradient; k3 clamps", () => {
    const [v, g] = klToken("k3+", -1, -1, -1.5);
    assertClose(v, klToken("k3", -1, -1, -1.5)[0], 1e-15);
    assertClose(g, klToken("k2", -1, -1, -1.5)[1], 1e-15);
    assert.deepEqual(klToken("k3", -30, -30, 0), [10, 0]);
  });
  it("applyKlToRewards subtracts β Σ_t m·kl_t; NaN rewards stay NaN", () => {
    const lp = Float32Array.from([0, -1, -2, 0, -0.5, -0.5]);
    const ref = Float32Array.from([0, -1.5, -1, 0, -0.5, -1]);
    const mask = Float32Array.from([0, 1, 1, 0, 1, 1]);
    const out = applyKlToRewards(Float64Array.from([1, Number.NaN]), lp, ref, mask, 0.1, "k1");
    assertClose(out[0]!, 1 - 0.1 * (0.5 + -1), 1e-6);
    assert.ok(Number.isNaN(out[1]!));
    assertAllClose(klPenaltyPerToken(lp, ref, mask, "k2"), [0, 0.125, 0.5, 0, 0, 0.125], 1e-6);
  });
  it("adaptive β moves toward the target, at most 20% × n/horizon per update", () => {
    const c = new AdaptiveKlController(0.1, 0.05, 1000);
    assertClose(c.update(1.0, 500), 0.1 * (1 + 0.2 * 0.5), 1e-12);
    const before = c.coef;
    assertClose(c.update(0.04, 1000), before * (1 - 0.2), 1e-12);
    assert.equal(new FixedKlController(0.3).update(), 0.3);
    assert.throws(() => new AdaptiveKlController(0, 1, 1), /must be > 0/);
  });
  it("the loss uses state.klCoef when given", () => {
    const { batch, logprobs } = randomBatch(1, 3, 5);
    const cfg = resolveAlgorithm({ kl: { coef: 0.1 } });
    const a = policyLossTerms(cfg, countsOf(batch), { logprobs }, batch, { state: { klCoef: 0.2 } });
    const b = policyLossTerms(cfg, countsOf(batch), { logprobs }, batch);
    assertClose(a.metrics["loss/kl"]!, 2 * b.metrics["loss/kl"]!, 1e-12);
  });
});

describe("entropy", () => {
  it("adaptive coefficient rises below target, falls above, applies only below", () => {
    const c = new AdaptiveEntropyController({ init: 0, target: 0.2, step: 0.005 });
    assertClose(c.update(0.1), 0.005, 1e-12);
    assertClose(c.update(0.1), 0.01, 1e-12);
    assert.equal(c.update(0.3), 0);
    assertClose(c.internal, 0.005, 1e-12);
    for (let i = 0; i < 1000; i++) c.update(0);
    assert.equal(c.internal, 1);
  });
  it("the bonus is −c·agg(H) with dL/dH = −c·w", () => {
    const { batch, logprobs, entropy } = randomBatch(3, 3, 5);
    const counts = countsOf(batch);
    const cfg = resolveAlgorithm({ aggregation: "token-mean" });
    const out = policyLossTerms(cfg, counts, { logprobs, entropy }, batch, { state: { entropyCoef: 0.01 } });
    let meanH = 0;
    for (let i = 0; i < entropy.length; i++) meanH += batch.lossMask[i]! * entropy[i]!;
    meanH /= counts.tokens;
    assertClose(out.metrics["loss/entropy"]!, -0.01 * meanH, 1e-9);
    for (let i = 0; i < entropy.length; i++) assertClose(out.dEntropy![i]!, batch.lossMask[i] ? -0.01 / counts.tokens : 0, 1e-12, 1e-15);
  });
});

describe("mismatch correction", () => {
  const train = Float64Array.from([0, -1, -1, -1, -1, -1]);
  const sampler = Float64Array.from([0, -1 - Math.log(4), -1 + Math.log(2), -1, -1 - Math.log(0.25), -1]);
  const mask = Float64Array.from([0, 1, 1, 1, 1, 1]);
  it("token truncate (TIS) caps the ratio", () => {
    const w = mismatchWeights(train, sampler, mask, 2, 3, { level: "token", mode: "truncate", cap: 3, low: 0.5, high: 5 });
    assertAllClose(w.weights, [0, 3, 0.5, 1, 0.25, 1], 1e-12);
    assert.equal(w.correctedTokens, 1);
    assertClose(w.ratioMax, 4, 1e-12);
  });
  it("token mask (MIS) zeroes ratios outside the band", () => {
    const w = mismatchWeights(train, sampler, mask, 2, 3, { level: "token", mode: "mask", cap: 3, low: 0.5, high: 3 });
    assertAllClose(w.weights, [0, 0, 0.5, 1, 0, 1], 1e-12);
  });
  it("sequence level multiplies the token ratios; geometric takes their geometric mean", () => {
    const s = mismatchWeights(train, sampler, mask, 2, 3, { level: "sequence", mode: "truncate", cap: 10, low: 0.5, high: 5 });
    assertAllClose(s.weights, [0, 2, 2, 0.25, 0.25, 0.25], 1e-12);
    const g = mismatchWeights(train, sampler, mask, 2, 3, { level: "geometric", mode: "truncate", cap: 10, low: 0.5, high: 5 });
    const c = Math.cbrt(0.25);
    assertAllClose(g.weights, [0, Math.SQRT2, Math.SQRT2, c, c, c], 1e-12);
  });
  it("the policy term is multiplied by the weights", () => {
    const { batch, logprobs } = randomBatch(9, 4, 6);
    const cfg = resolveAlgorithm({ loss: { name: "vanilla_pg" }, mismatch: { level: "token", cap: 1.2 } });
    const out = policyLossTerms(cfg, countsOf(batch), { logprobs }, batch);
    const w = mismatchWeights(batch.oldLogprobs!, batch.samplerLogprobs!, batch.lossMask, 4, 6, cfg.mismatch!);
    const N = countsOf(batch).tokens;
    for (let i = 0; i < logprobs.length; i++) assertClose(out.dLogprobs[i]!, batch.lossMask[i] ? (-batch.advantages![i]! * w.weights[i]!) / N : 0, 1e-9, 1e-15);
  });
});

describe("SFT loss", () => {
  it("token-mean NLL, optionally weighted", () => {
    const { batch, logprobs } = randomBatch(5, 3, 6);
    const counts = countsOf(batch);
    const out = makeSftLoss(counts)({ logprobs: Float32Array.from(logprobs) }, batch);
    let nll = 0;
    let wnll = 0;
    for (let i = 0; i < logprobs.length; i++) {
      nll += batch.lossMask[i]! * -Math.fround(logprobs[i]!);
      wnll += batch.lossMask[i]! * batch.weights![i]! * -Math.fround(logprobs[i]!);
    }
    assertClose(out.loss, wnll / counts.tokens, 1e-6);
    assertClose(out.metrics["nll"]!, nll / counts.tokens, 1e-6);
    const unweighted = makeSftLoss(counts, { useWeights: false })({ logprobs: Float32Array.from(logprobs) }, batch);
    assertClose(unweighted.loss, nll / counts.tokens, 1e-6);
  });
});

describe("DAPO overlong", () => {
  it("ramps from 0 to −f across the buffer and stays at −f beyond the cap", () => {
    assert.equal(dapoOverlongPenalty(100, 1000, 200), 0);
    assertClose(dapoOverlongPenalty(900, 1000, 200, 0.5), -0.25, 1e-12);
    assert.equal(dapoOverlongPenalty(5000, 1000, 200, 0.5), -0.5);
    assert.throws(() => dapoOverlongPenalty(1, 10, 20), /buffer/);
  });
});
