// Micro-batch invariance: splitting one optimizer step's batch into 1, 2, 3 or 7 micro-batches
// (with the step's global counts) gives the same summed loss, the same gradient (to 1e-6) and the
// same combined metrics, for every aggregation mode and every loss.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  AGGREGATION_MODES,
  bapoClipBounds,
  combineMetrics,
  makePolicyLoss,
  makeSftLoss,
  policyLossTerms,
  resolveAlgorithm,
  stepCounts,
  type AlgorithmConfigInput,
  type StepState,
} from "../../src/algorithms/index.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { assertClose, randomBatch, sliceBatch } from "./helpers.ts";

const SPLITS = [1, 2, 3, 7];
const LOSSES: AlgorithmConfigInput["loss"][] = [
  { name: "ppo_clip", clipHigh: 0.28, dualClip: 3 },
  { name: "gspo", clipLow: 0.05, clipHigh: 0.08 },
  { name: "gspo_token", clipLow: 0.05, clipHigh: 0.08 },
  { name: "cispo" },
  { name: "sapo" },
  { name: "importance_sampling" },
  { name: "vanilla_pg" },
  { name: "topr" },
  { name: "gmpo" },
  { name: "bapo" },
];

/** Split B rows into k contiguous chunks of near-equal size. */
function chunks(B: number, k: number): [number, number][] {
  const out: [number, number][] = [];
  for (let j = 0; j < k; j++) out.push([Math.floor((j * B) / k), Math.floor(((j + 1) * B) / k)]);
  return out;
}

describe("micro-batch invariance (1, 2, 3, 7 micro-batches)", () => {
  for (const agg of AGGREGATION_MODES) {
    for (const loss of LOSSES) {
      it(`${agg} / ${loss!.name}`, () => {
        fc.assert(
          fc.property(
            fc.integer({ min: 1, max: 2 ** 31 - 1 }),
            fc.integer({ min: 7, max: 16 }),
            fc.constantFrom("none", "k3", "k3+"),
            fc.boolean(),
            (seed, B, kl, mismatch) => {
              const { batch, logprobs, entropy } = randomBatch(seed, B, 6, { tokenAdv: seed % 2 === 0 });
              const input: AlgorithmConfigInput = {
                loss,
                aggregation: agg,
                kl: kl === "none" ? { coef: 0 } : { coef: 0.05, estimator: kl as "k3", placement: "loss" },
                entropy: { coef: 0.01 },
              };
              if (mismatch) input.mismatch = { level: "sequence", mode: "truncate", cap: 2 };
              const cfg = resolveAlgorithm(input);
              const counts = stepCounts([batch], 8);
              const state: StepState = {};
              if (loss!.name === "bapo") {
                state.clipBounds = bapoClipBounds({ logprobs, oldLogprobs: batch.oldLogprobs, advantages: batch.advantages!, mask: batch.lossMask });
              }
              const full = policyLossTerms(cfg, counts, { logprobs, entropy }, batch, { state });
              for (const k of SPLITS) {
                const parts = chunks(B, k).map(([a, b]) => ({ a, b, mb: sliceBatch(batch, a, b) }));
                assert.deepEqual(stepCounts(parts.map((p) => p.mb), 8), counts, "stepCounts of the parts");
                const grad = new Float64Array(B * 6);
                const dEnt = new Float64Array(B * 6);
                let loss = 0;
                const metrics: Record<string, number>[] = [];
                for (const { a, b, mb } of parts) {
                  const T = 6;
                  const out = policyLossTerms(cfg, counts, { logprobs: logprobs.slice(a * T, b * T), entropy: entropy.slice(a * T, b * T) }, mb, { state });
                  loss += out.loss;
                  grad.set(out.dLogprobs, a * T);
                  dEnt.set(out.dEntropy!, a * T);
                  metrics.push(out.metrics);
                }
                assertClose(loss, full.loss, 1e-9, 1e-12, `loss with ${k} micro-batches`);
                for (let i = 0; i < grad.length; i++) {
                  assertClose(grad[i]!, full.dLogprobs[i]!, 1e-6, 1e-12, `dL/dlogp[${i}] with ${k} micro-batches`);
                  assertClose(dEnt[i]!, full.dEntropy![i]!, 1e-6, 1e-12, `dL/dH[${i}] with ${k} micro-batches`);
                }
                const combined = combineMetrics(metrics);
                for (const [key, v] of Object.entries(full.metrics)) assertClose(combined[key]!, v, 1e-9, 1e-12, `metric ${key} with ${k} micro-batches`);
              }
            },
          ),
          { numRuns: 8 },
        );
      });
    }
  }

  it("makePolicyLoss (float32 engine output) sums the same way", () => {
    const { batch, logprobs, entropy } = randomBatch(7, 14, 6);
    const cfg = resolveAlgorithm("dapo");
    const counts = stepCounts([batch], 6);
    const lossFn = makePolicyLoss(cfg, counts);
    const full = lossFn({ logprobs: Float32Array.from(logprobs), entropy: Float32Array.from(entropy) }, batch);
    const grad = new Float32Array(14 * 6);
    let loss = 0;
    for (const [a, b] of chunks(14, 3)) {
      const mb: TokenBatch = sliceBatch(batch, a, b);
      const out = lossFn({ logprobs: Float32Array.from(logprobs.slice(a * 6, b * 6)) }, mb);
      loss += out.loss;
      grad.set(out.dLogprobs, a * 6);
    }
    assertClose(loss, full.loss, 1e-6);
    for (let i = 0; i < grad.length; i++) assertClose(grad[i]!, full.dLogprobs[i]!, 1e-6, 1e-12);
  });

  it("SFT loss sums over micro-batches for every aggregation", () => {
    const { batch, logprobs } = randomBatch(11, 9, 5);
    for (const agg of AGGREGATION_MODES) {
      const counts = stepCounts([batch], 5);
      const fn = makeSftLoss(counts, { aggregation: agg });
      const full = fn({ logprobs: Float32Array.from(logprobs) }, batch);
      for (const k of SPLITS) {
        let loss = 0;
        const grad = new Float32Array(45);
        for (const [a, b] of chunks(9, k)) {
          const out = fn({ logprobs: Float32Array.from(logprobs.slice(a * 5, b * 5)) }, sliceBatch(batch, a, b));
          loss += out.loss;
          grad.set(out.dLogprobs, a * 5);
        }
        assertClose(loss, full.loss, 1e-6, 1e-12, `${agg} k=${k}`);
        for (let i = 0; i < 45; i++) assertClose(grad[i]!, full.dLogprobs[i]!, 1e-6, 1e-12);
      }
    }
  });

  it("a micro-batch's local counts would NOT be invariant (the reason counts are global)", () => {
    const { batch, logprobs } = randomBatch(3, 8, 6);
    const cfg = resolveAlgorithm({ aggregation: "token-mean" });
    const full = policyLossTerms(cfg, stepCounts([batch], 6), { logprobs }, batch);
    let loss = 0;
    for (const [a, b] of chunks(8, 2)) {
      const mb = sliceBatch(batch, a, b);
      loss += policyLossTerms(cfg, stepCounts([mb], 6), { logprobs: logprobs.slice(a * 6, b * 6) }, mb).loss;
    }
    assert.ok(Math.abs(loss - full.loss) > 1e-9);
  });
});
