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
import type { TokenBatch } from "../../src/engines/engine.ts";
import { countsOf, randomBatch, rng } from "./helpers.ts";

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

function check(fd: number, an: number, what: string): void {
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
  for (const i of pick(batch, seed)) {
    const p = Float64Array.from(lp);
    const m = Float64Array.from(lp);
    p[i] = lp[i]! + H;
    m[i] = lp[i]! - H;
    check((f(p, ent) - f(m, ent)) / (2 * H), base.dLogprobs[i]!, `dL/dlogp[${i}]`);
    if (base.dEntropy) {
      const ep = Float64Array.from(ent);
      const em = Float64Array.from(ent);
      ep[i] = ent[i]! + H;
      em[i] = ent[i]! - H;
      check((f(lp, ep) - f(lp, em)) / (2 * H), base.dEntropy[i]!, `dL/dentropy[${i}]`);
    }
  }
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

describe("finite differences: SFT loss", () => {
  for (const agg of AGGREGATION_MODES) {
    it(agg, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.boolean(), (seed, useWeights) => {
          const { batch, logprobs: lp } = randomBatch(seed, 4, 6);
          const counts = countsOf(batch, 8);
          const base = sftLossTerms(counts, { logprobs: lp }, batch, { aggregation: agg, useWeights });
          for (const i of pick(batch, seed, 6)) {
            const p = Float64Array.from(lp);
            const m = Float64Array.from(lp);
            p[i] = lp[i]! + H;
            m[i] = lp[i]! - H;
            const fd =
              (sftLossTerms(counts, { logprobs: p }, batch, { aggregation: agg, useWeights }).loss -
                sftLossTerms(counts, { logprobs: m }, batch, { aggregation: agg, useWeights }).loss) / (2 * H);
            check(fd, base.dLogprobs[i]!, `sft dL/dlogp[${i}]`);
          }
        }),
        { numRuns: 10 },
      );
    });
  }
});
