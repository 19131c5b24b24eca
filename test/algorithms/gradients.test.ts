// Central finite differences (float64) of dL/dlogp and dL/dentropy for every policy loss and
// every aggregation, on random batches drawn by fast-check; plus KL-in-loss, entropy bonus,
// mismatch weights, on- and off-policy batches, and the SFT loss.
//
// The cotangent of a loss with stop-gradients is the gradient of its surrogate with the sg(·)
// parts held at their current values: the FD perturbs scores.logprobs while `detached` keeps the
// base log-probs. For the losses whose value has no stop-gradient (PPO clip, IS, vanilla PG, SAPO,
// GSPO, GMPO, k1/k2/k3), a second test perturbs both and checks the analytic gradient is the TRUE
// gradient of the loss value.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  AGGREGATION_MODES,
  bapoClipBounds,
  policyLossTerms,
  resolveAlgorithm,
  sftLossTerms,
  type AlgorithmConfig,
  type AlgorithmConfigInput,
  type StepState,
} from "../../src/algorithms/index.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { centralDiff, countsOf, randomBatch, rng } from "./helpers.ts";

const H = 1e-6;
const REL = 1e-6;
const ABS = 1e-9;

const LOSSES: { label: string; loss: AlgorithmConfigInput["loss"]; sgFree: boolean }[] = [
  { label: "ppo_clip", loss: { name: "ppo_clip" }, sgFree: true },
  { label: "ppo_clip clip-higher + dual clip", loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.28, dualClip: 3 }, sgFree: true },
  { label: "gspo", loss: { name: "gspo", clipLow: 0.05, clipHigh: 0.08 }, sgFree: true },
  { label: "gspo_token", loss: { name: "gspo_token", clipLow: 0.05, clipHigh: 0.08 }, sgFree: false },
  { label: "cispo", loss: { name: "cispo", clipLow: 0.2, clipHigh: 0.3 }, sgFree: false },
  { label: "sapo", loss: { name: "sapo" }, sgFree: true },
  { label: "importance_sampling", loss: { name: "importance_sampling" }, sgFree: true },
  { label: "vanilla_pg", loss: { name: "vanilla_pg" }, sgFree: true },
  { label: "topr (sequence)", loss: { name: "topr" }, sgFree: false },
  { label: "topr (token)", loss: { name: "topr", level: "token" }, sgFree: false },
  { label: "gmpo", loss: { name: "gmpo", clipLow: 0.3, clipHigh: 0.3 }, sgFree: true },
  { label: "bapo", loss: { name: "bapo" }, sgFree: false },
];

interface Variant {
  kl: "none" | "k1" | "k2" | "k3" | "k3+";
  entropy: number;
  mismatch: "none" | "token" | "sequence";
  onPolicy: boolean;
  tokenAdv: boolean;
}

const variantArb = fc.record({
  kl: fc.constantFrom("none", "k1", "k2", "k3", "k3+"),
  entropy: fc.constantFrom(0, 0.01, -0.003),
  mismatch: fc.constantFrom("none", "token", "sequence"),
  onPolicy: fc.boolean(),
  tokenAdv: fc.boolean(),
}) as fc.Arbitrary<Variant>;

function config(loss: AlgorithmConfigInput["loss"], aggregation: string, v: Variant): AlgorithmConfig {
  const input: AlgorithmConfigInput = {
    loss,
    aggregation: aggregation as AlgorithmConfig["aggregation"],
    kl: v.kl === "none" ? { coef: 0 } : { coef: 0.1, estimator: v.kl, placement: "loss" },
    entropy: { coef: Math.abs(v.entropy) },
  };
  if (v.mismatch === "token") input.mismatch = { level: "token", mode: "truncate", cap: 1.5 };
  if (v.mismatch === "sequence") input.mismatch = { level: "sequence", mode: "mask", low: 0.3, high: 3 };
  return resolveAlgorithm(input);
}

function setup(seed: number, v: Variant): { batch: TokenBatch; lp: Float64Array; ent: Float64Array } {
  const r = randomBatch(seed, 5, 7, { tokenAdv: v.tokenAdv });
  if (v.onPolicy) delete r.batch.oldLogprobs;
  return { batch: r.batch, lp: r.logprobs, ent: r.entropy };
}

/** Indices of up to k masked tokens. */
function pick(batch: TokenBatch, seed: number, k = 10): number[] {
  const idx: number[] = [];
  for (let i = 0; i < batch.lossMask.length; i++) if (batch.lossMask[i]! > 0) idx.push(i);
  const u = rng(seed ^ 0x9e3779b9);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(u() * (i + 1));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx.slice(0, k);
}

function check(fd: number | null, an: number, what: string): void {
  if (fd === null) return; // a kink within H of the point: no derivative to compare

  const tol = REL * Math.max(Math.abs(an), Math.abs(fd)) + ABS;
  assert.ok(Math.abs(fd - an) <= tol, `${what}: finite difference ${fd} vs analytic ${an} (|diff| ${Math.abs(fd - an)}, tol ${tol})`);
}

function fdCheck(cfg: AlgorithmConfig, batch: TokenBatch, lp: Float64Array, ent: Float64Array, seed: number, trueGradient: boolean): void {
  const counts = countsOf(batch, 9);
  const state: StepState = {};
  if (cfg.loss.name === "bapo") {
    state.clipBounds = bapoClipBounds({ logprobs: lp, oldLogprobs: batch.oldLogprobs, advantages: batch.advantages!, mask: batch.lossMask });
  }
  const base = policyLossTerms(cfg, counts, { logprobs: lp, entropy: ent }, batch, { state, detached: lp });
  const f = (x: Float64Array, e: Float64Array): number =>
    policyLossTerms(cfg, counts, { logprobs: x, entropy: e }, batch, { state, detached: trueGradient ? x : lp }).loss;
  const picked = pick(batch, seed);
  let kinks = 0;
  for (const i of picked) {
    const fd = centralDiff((x) => f(x, ent), lp, i, H);
    if (fd === null) kinks++;
    check(fd, base.dLogprobs[i]!, `dL/dlogp[${i}]`);
    if (base.dEntropy) check(centralDiff((e) => f(lp, e), ent, i, H), base.dEntropy[i]!, `dL/dentropy[${i}]`);
  }
  // A kink within H of a random point is rare; many would mean the kink test excuses real errors.
  assert.ok(kinks <= 1, `${kinks} of ${picked.length} tokens sit on a kink: the finite-difference check is not checking`);
  // Off-mask tokens get zero cotangents.
  for (let i = 0; i < batch.lossMask.length; i++) {
    if (batch.lossMask[i] === 0) {
      assert.equal(base.dLogprobs[i], 0);
      if (base.dEntropy) assert.equal(base.dEntropy[i], 0);
    }
  }
}

describe("finite differences: every loss × aggregation (surrogate gradient, sg held fixed)", () => {
  for (const { label, loss } of LOSSES) {
    for (const agg of AGGREGATION_MODES) {
      it(`${label} / ${agg}`, () => {
        fc.assert(
          fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), variantArb, (seed, v) => {
            const cfg = config(loss, agg, v);
            const { batch, lp, ent } = setup(seed, v);
            fdCheck(cfg, batch, lp, ent, seed, false);
          }),
          { numRuns: 12 },
        );
      });
    }
  }
});

describe("finite differences: the analytic gradient is the true gradient of losses without stop-gradients", () => {
  for (const { label, loss, sgFree } of LOSSES) {
    if (!sgFree) continue;
    for (const agg of AGGREGATION_MODES) {
      it(`${label} / ${agg}`, () => {
        fc.assert(
          fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.constantFrom("none", "k1", "k2", "k3"), (seed, kl) => {
            const v: Variant = { kl: kl as Variant["kl"], entropy: 0.01, mismatch: "none", onPolicy: false, tokenAdv: false };
            const cfg = config(loss, agg, v);
            const { batch, lp, ent } = setup(seed, v);
            fdCheck(cfg, batch, lp, ent, seed, true);
          }),
          { numRuns: 12 },
        );
      });
    }
  }
});

describe("finite differences at a kink", () => {
  it("a token within H of GMPO's clip boundary is skipped, every other token still checked (seed 2029998030, CI's counterexample)", () => {
    const v: Variant = { kl: "none", entropy: 0, mismatch: "none", onPolicy: false, tokenAdv: true };
    const cfg = config({ name: "gmpo", clipLow: 0.3, clipHigh: 0.3 }, "seq-mean-token-sum", v);
    const { batch, lp, ent } = setup(2029998030, v);
    const counts = countsOf(batch, 9);
    const f = (x: Float64Array): number => policyLossTerms(cfg, counts, { logprobs: x, entropy: ent }, batch, { state: {}, detached: lp }).loss;
    const masked = [...batch.lossMask.keys()].filter((i) => batch.lossMask[i]! > 0);
    const onKink = masked.filter((i) => Math.abs(Math.abs(lp[i]! - batch.oldLogprobs![i]!) - 0.3) < H);
    assert.equal(onKink.length, 1, "the counterexample has one token 1e-6 from the clip boundary");
    for (const i of masked) assert.equal(centralDiff(f, lp, i, H) === null, onKink.includes(i), `token ${i}`);
  });

  it("a wrong analytic gradient is still caught away from kinks", () => {
    const v: Variant = { kl: "k3", entropy: 0.01, mismatch: "none", onPolicy: false, tokenAdv: false };
    const cfg = config({ name: "ppo_clip" }, "token-mean", v);
    const { batch, lp, ent } = setup(7, v);
    const counts = countsOf(batch, 9);
    const f = (x: Float64Array): number => policyLossTerms(cfg, counts, { logprobs: x, entropy: ent }, batch, { state: {}, detached: lp }).loss;
    const base = policyLossTerms(cfg, counts, { logprobs: lp, entropy: ent }, batch, { state: {}, detached: lp });
    const i = pick(batch, 7)[0]!;
    assert.throws(() => check(centralDiff(f, lp, i, H), base.dLogprobs[i]! * 1.01, "perturbed"), /finite difference/);
  });
});

describe("finite differences: SFT loss", () => {
  for (const agg of AGGREGATION_MODES) {
    it(agg, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.boolean(), (seed, useWeights) => {
          const { batch, logprobs: lp } = randomBatch(seed, 4, 6);
          const counts = countsOf(batch, 8);
          const base = sftLossTerms(counts, { logprobs: lp }, batch, { aggregation: agg, useWeights });
          const f = (x: Float64Array): number => sftLossTerms(counts, { logprobs: x }, batch, { aggregation: agg, useWeights }).loss;
          for (const i of pick(batch, seed, 6)) {
            const fd = centralDiff(f, lp, i, H);
            assert.notEqual(fd, null, "the SFT loss is smooth: no kink may excuse a token");
            check(fd, base.dLogprobs[i]!, `sft dL/dlogp[${i}]`);
          }
        }),
        { numRuns: 10 },
      );
    });
  }
});
