// Guided-RL loss terms: LUFFY's policy shaping and mixed-policy loss (expert tokens marked by
// batch.weights), CHORD's φ-weighted SFT term, KDRL's reverse-KL term, loss composition. Every
// cotangent is checked against central finite differences (float64), holding sg(·) parts fixed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  AGGREGATION_MODES,
  chordPhi,
  chordSftLossTerms,
  composeLosses,
  kdLossTerms,
  luffyShaping,
  makeKdLoss,
  makePolicyLoss,
  mixedPolicyLossTerms,
  policyLossTerms,
  resolveAlgorithm,
  type LossTerms,
} from "../../src/algorithms/index.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { centralDiff, countsOf, randomBatch } from "../algorithms/helpers.ts";

const H = 1e-6;

function check(fd: number | null, an: number, what: string): void {
  if (fd === null) return; // a clip boundary within H of the point: no derivative to compare
  const tol = 1e-6 * Math.max(Math.abs(an), Math.abs(fd)) + 1e-9;
  assert.ok(Math.abs(fd - an) <= tol, `${what}: finite difference ${fd} vs analytic ${an}`);
}

/** FD over every masked token: f(lp) = loss with sg held at the base log-probs. */
function fdAll(batch: TokenBatch, lp: Float64Array, f: (x: Float64Array) => LossTerms, what: string): void {
  const base = f(lp);
  let kinks = 0;
  for (let i = 0; i < lp.length; i++) {
    if (!(batch.lossMask[i]! > 0)) {
      assert.equal(base.dLogprobs[i], 0, `${what}: off-mask cotangent at ${i}`);
      continue;
    }
    const fd = centralDiff((x) => f(x).loss, lp, i, H);
    if (fd === null) kinks++;
    check(fd, base.dLogprobs[i]!, `${what} dL/dlp[${i}]`);
  }
  assert.ok(kinks <= 1, `${what}: ${kinks} tokens on a kink: the finite-difference check is not checking`);
}

/** Mark the tokens of sequences with b % 3 === 0 as expert tokens (weights 1), others 0. */
function markExperts(batch: TokenBatch): void {
  const T = batch.seqLen;
  const w = new Float32Array(batch.batchSize * T);
  for (let b = 0; b < batch.batchSize; b++) for (let t = 0; t < T; t++) if (b % 3 === 0) w[b * T + t] = batch.lossMask[b * T + t]!;
  batch.weights = w;
}

describe("LUFFY policy shaping f(p) = p/(p + γ)", () => {
  it("values, bounds and the derivative with respect to the log-prob", () => {
    for (const gamma of [0.01, 0.1, 1]) {
      for (const lp of [-8, -2, -0.5, -1e-3]) {
        const p = Math.exp(lp);
        const [f, d] = luffyShaping(lp, gamma);
        assert.ok(Math.abs(f - p / (p + gamma)) < 1e-15);
        assert.ok(f > 0 && f < 1 / (1 + gamma) + 1e-12);
        check((luffyShaping(lp + H, gamma)[0] - luffyShaping(lp - H, gamma)[0]) / (2 * H), d, `f'(${lp}) γ=${gamma}`);
      }
    }
    // The shaped gradient p·γ/(p+γ)² exceeds the plain ratio's gradient p at small p (less vanishing).
    const lp = Math.log(0.01);
    assert.ok(luffyShaping(lp, 0.1)[1] / 0.01 > 5);
    assert.throws(() => luffyShaping(-1, 0), /gamma must be > 0/);
  });
});

describe("mixed-policy loss (LUFFY)", () => {
  it("on-policy tokens get the configured policy loss; expert tokens (weights > 0) get −A·f(p)", () => {
    const cfg = resolveAlgorithm({ preset: "grpo", kl: { coef: 0 }, aggregation: "token-mean" });
    const { batch, logprobs } = randomBatch(11, 6, 7);
    markExperts(batch);
    const counts = countsOf(batch);
    const mixed = mixedPolicyLossTerms(cfg, counts, { logprobs }, batch, { gamma: 0.1 });
    const onMask = Float32Array.from(batch.lossMask, (m, i) => (batch.weights![i]! > 0 ? 0 : m));
    const on = policyLossTerms(cfg, counts, { logprobs }, { ...batch, lossMask: onMask });
    let expected = on.loss;
    for (let i = 0; i < logprobs.length; i++) {
      if (batch.weights![i]! > 0 && batch.lossMask[i]! > 0) {
        expected += (1 / counts.tokens) * -batch.advantages![i]! * luffyShaping(logprobs[i]!, 0.1)[0];
        assert.notEqual(mixed.dLogprobs[i], on.dLogprobs[i]);
      } else assert.equal(mixed.dLogprobs[i], on.dLogprobs[i]);
    }
    assert.ok(Math.abs(mixed.loss - expected) < 1e-12);
    assert.ok(mixed.metrics["luffy/expert_tokens"]! > 0);
  });

  it("without expert tokens it equals the policy loss", () => {
    const cfg = resolveAlgorithm("grpo");
    const { batch, logprobs } = randomBatch(5, 4, 6);
    delete batch.weights;
    const counts = countsOf(batch);
    const a = mixedPolicyLossTerms(cfg, counts, { logprobs }, batch, { gamma: 0.1 });
    const b = policyLossTerms(cfg, counts, { logprobs }, batch);
    assert.equal(a.loss, b.loss);
  });

  for (const agg of AGGREGATION_MODES) {
    it(`finite differences / ${agg}`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
          const cfg = resolveAlgorithm({ loss: { name: "ppo_clip", clipHigh: 0.28 }, aggregation: agg, kl: { coef: 0 } });
          const { batch, logprobs } = randomBatch(seed, 6, 7);
          markExperts(batch);
          const counts = countsOf(batch, 9);
          fdAll(batch, logprobs, (x) => mixedPolicyLossTerms(cfg, counts, { logprobs: x }, batch, { gamma: 0.1, detached: logprobs }), "luffy");
        }),
        { numRuns: 8 },
      );
    });
  }
});

describe("CHORD-φ SFT term", () => {
  it("φ(p) = p(1 − p), at most ¼, 0 at p → 0 and p = 1", () => {
    assert.equal(chordPhi(0), 0);
    assert.ok(Math.abs(chordPhi(Math.log(0.5)) - 0.25) < 1e-15);
    assert.ok(chordPhi(-30) < 1e-12);
    for (const lp of [-5, -1, -0.1]) assert.ok(chordPhi(lp) <= 0.25);
  });
  it("equals Σ w·φ·(−lp) and matches finite differences (φ held fixed)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.constantFrom(...AGGREGATION_MODES), (seed, agg) => {
        const { batch, logprobs } = randomBatch(seed, 5, 6);
        const counts = countsOf(batch, 8);
        const t = chordSftLossTerms(counts, { logprobs }, batch, { aggregation: agg });
        if (agg === "token-mean") {
          let e = 0;
          for (let i = 0; i < logprobs.length; i++) if (batch.lossMask[i]) e += (batch.weights![i]! * chordPhi(logprobs[i]!) * -logprobs[i]!) / counts.tokens;
          assert.ok(Math.abs(t.loss - e) <= 1e-6 * Math.abs(e) + 1e-12, `${t.loss} vs ${e}`); // weights are float32
        }
        fdAll(batch, logprobs, (x) => chordSftLossTerms(counts, { logprobs: x }, batch, { aggregation: agg, detached: logprobs }), "chord");
      }),
      { numRuns: 10 },
    );
  });
});

describe("KDRL reverse-KL term", () => {
  for (const est of ["k1", "k2", "k3"] as const) {
    it(`finite differences (${est}), every aggregation`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.constantFrom(...AGGREGATION_MODES), (seed, agg) => {
          const { batch, logprobs } = randomBatch(seed, 5, 7);
          const counts = countsOf(batch, 9);
          // k1/k2/k3 have no stop-gradient: perturb the log-prob everywhere (true gradient).
          fdAll(batch, logprobs, (x) => kdLossTerms(counts, { logprobs: x }, batch, { coef: 0.3, estimator: est, aggregation: agg }), `kd ${est}`);
        }),
        { numRuns: 8 },
      );
    });
  }
  it("k2: zero loss and gradient where the student equals the teacher; pulls lp toward lp_T", () => {
    const { batch, logprobs } = randomBatch(3, 4, 6);
    batch.refLogprobs = Float32Array.from(logprobs);
    const t = kdLossTerms(countsOf(batch), { logprobs: Float64Array.from(batch.refLogprobs) }, batch, { coef: 1 });
    assert.ok(Math.abs(t.loss) < 1e-12);
    assert.ok(t.dLogprobs.every((d) => Math.abs(d) < 1e-12));
    const shifted = Float64Array.from(batch.refLogprobs, (x) => x + 0.5);
    const u = kdLossTerms(countsOf(batch), { logprobs: shifted }, batch, { coef: 1 });
    for (let i = 0; i < shifted.length; i++) if (batch.lossMask[i]) assert.ok(u.dLogprobs[i]! > 0, "gradient descent lowers an lp above the teacher's");
  });
  it("needs the teacher's log-probs", () => {
    const { batch, logprobs } = randomBatch(3, 2, 4);
    delete batch.refLogprobs;
    assert.throws(() => kdLossTerms(countsOf(batch), { logprobs }, batch, { coef: 1 }), /refLogprobs/);
  });
  it("composeLosses adds losses and cotangents (GRPO + β·KD)", () => {
    const cfg = resolveAlgorithm({ preset: "grpo", kl: { coef: 0 } });
    const { batch, logprobs } = randomBatch(9, 5, 6);
    const counts = countsOf(batch);
    const scores = { logprobs: Float32Array.from(logprobs) };
    const a = makePolicyLoss(cfg, counts)(scores, batch);
    const b = makeKdLoss(counts, { coef: 0.2 })(scores, batch);
    const c = composeLosses([{ fn: makePolicyLoss(cfg, counts) }, { fn: makeKdLoss(counts, { coef: 0.2 }), coef: 2 }])(scores, batch);
    assert.ok(Math.abs(c.loss - (a.loss + 2 * b.loss)) < 1e-6);
    for (let i = 0; i < c.dLogprobs.length; i++) assert.ok(Math.abs(c.dLogprobs[i]! - (a.dLogprobs[i]! + 2 * b.dLogprobs[i]!)) < 1e-6);
    assert.ok(c.metrics["kd/kl"] !== undefined && c.metrics["clipfrac_low"] !== undefined);
  });
});
