// Advantage estimators beyond the golden vectors: NaN handling, group-order invariance, the
// estimators golden.json does not cover, and token broadcasting.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  broadcastToTokens,
  computeAdvantages,
  computeTokenAdvantages,
  listAdvantages,
} from "../../src/algorithms/index.ts";
import { assertAllClose, assertClose } from "./helpers.ts";

const SEQUENCE_ESTIMATORS = ["grpo", "dr_grpo", "grpo_batch_std", "rloo", "reinforce_pp_baseline", "opo", "gpg", "passk_grpo", "stratified_grpo"];

/** A random batch of groups: rewards (some NaN), ids, lengths, strata. */
const batchArb = fc
  .array(
    fc.record({
      g: fc.integer({ min: -5, max: 5 }),
      r: fc.oneof(fc.constantFrom(0, 1, 0.5, Number.NaN), fc.double({ min: -3, max: 3, noNaN: true })),
      len: fc.integer({ min: 1, max: 50 }),
      s: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 1, maxLength: 24 },
  );

function run(name: string, rows: { g: number; r: number; len: number; s: number }[], options: Record<string, unknown> = {}): Float32Array {
  return computeAdvantages(name, {
    rewards: Float64Array.from(rows, (x) => x.r),
    groupIds: Int32Array.from(rows, (x) => x.g),
    lengths: Int32Array.from(rows, (x) => x.len),
    strata: Int32Array.from(rows, (x) => x.s),
  }, options);
}

describe("advantages: properties of every sequence estimator", () => {
  it("all built-ins are registered", () => {
    for (const n of [...SEQUENCE_ESTIMATORS, "reinforce_pp"]) assert.ok(listAdvantages().includes(n), n);
  });
  for (const name of SEQUENCE_ESTIMATORS) {
    it(`${name}: unscorable (NaN) rewards get 0 and do not change the others`, () => {
      fc.assert(
        fc.property(batchArb, (rows) => {
          const out = run(name, rows);
          const kept = rows.filter((x) => !Number.isNaN(x.r));
          const outKept = run(name, kept);
          let j = 0;
          rows.forEach((x, i) => {
            if (Number.isNaN(x.r)) assert.equal(out[i], 0);
            else assertClose(out[i]!, outKept[j++]!, 1e-6, 1e-6, `${name}[${i}]`);
            assert.ok(Number.isFinite(out[i]!), `${name}[${i}] finite`);
          });
        }),
        { numRuns: 60 },
      );
    });
    it(`${name}: invariant to the order of samples and to relabelling group ids`, () => {
      fc.assert(
        fc.property(batchArb, fc.integer({ min: 1, max: 1000 }), (rows, salt) => {
          const out = run(name, rows);
          const perm = rows.map((_, i) => i).sort((a, b) => ((a * salt) % 7) - ((b * salt) % 7) || b - a);
          const shuffled = perm.map((i) => ({ ...rows[i]!, g: rows[i]!.g * 31 + salt }));
          const out2 = run(name, shuffled);
          perm.forEach((i, k) => {
            // passk_grpo breaks ties by first index; with equal maxima both candidates get 0.
            assertClose(out2[k]!, out[i]!, 1e-5, 1e-6, `${name} sample ${i}`);
          });
        }),
        { numRuns: 60 },
      );
    });
  }
});

describe("advantages: formulas not in golden.json", () => {
  const ids = Int32Array.from([7, 7, 7, 3, 3]);
  const r = Float64Array.from([1, 0, 0, 0.2, 0.6]);
  it("grpo_batch_std: group mean, batch std", () => {
    const mean = (1 + 0 + 0 + 0.2 + 0.6) / 5;
    const sd = Math.sqrt([1, 0, 0, 0.2, 0.6].reduce((s, x) => s + (x - mean) ** 2, 0) / 4);
    const expected = [1 - 1 / 3, -1 / 3, -1 / 3, -0.2, 0.2].map((x) => x / (sd + 1e-6));
    assertAllClose(computeAdvantages("grpo_batch_std", { rewards: r, groupIds: ids }), expected, 1e-6);
  });
  it("gpg: centred advantage scaled by B / #nonzero", () => {
    const rr = Float64Array.from([1, 1, 1, 0.2, 0.6]);
    // group 7 is constant (3 zero advantages), so α = 5 / 2.
    assertAllClose(computeAdvantages("gpg", { rewards: rr, groupIds: ids }), [0, 0, 0, -0.2 * 2.5, 0.2 * 2.5], 1e-6, 1e-9);
  });
  it("passk_grpo: singleton groups and ties get 0", () => {
    const out = computeAdvantages("passk_grpo", { rewards: Float64Array.from([0.7, 1, 1, 0.2]), groupIds: Int32Array.from([1, 2, 2, 2]) });
    assert.deepEqual([...out], [0, 0, 0, 0]);
  });
  it("stratified_grpo: normalises inside (group, stratum) cells and blends with GRPO", () => {
    const rewards = Float64Array.from([1, 0, 1, 1, 0, 0]);
    const groupIds = Int32Array.from([0, 0, 0, 0, 0, 0]);
    const strata = Int32Array.from([0, 0, 1, 1, 1, 2]);
    const san = computeAdvantages("stratified_grpo", { rewards, groupIds, strata }, { alpha: 1 });
    const sd0 = Math.SQRT1_2; // std of {1, 0}
    const mu1 = 2 / 3;
    const sd1 = Math.sqrt(((1 - mu1) ** 2 * 2 + mu1 ** 2) / 2);
    assertAllClose(san, [0.5 / (sd0 + 1e-6), -0.5 / (sd0 + 1e-6), (1 - mu1) / (sd1 + 1e-6), (1 - mu1) / (sd1 + 1e-6), -mu1 / (sd1 + 1e-6), 0], 1e-6);
    const grpo = computeAdvantages("grpo", { rewards, groupIds });
    const blend = computeAdvantages("stratified_grpo", { rewards, groupIds, strata }, { alpha: 0.25 });
    for (let i = 0; i < 6; i++) assertClose(blend[i]!, 0.25 * san[i]! + 0.75 * grpo[i]!, 1e-6, 1e-7);
    assert.throws(() => computeAdvantages("stratified_grpo", { rewards, groupIds }), /strata/);
  });
  it("opo needs lengths", () => {
    assert.throws(() => computeAdvantages("opo", { rewards: r, groupIds: ids }), /lengths/);
  });
  it("mismatched lengths name the field", () => {
    assert.throws(() => computeAdvantages("grpo", { rewards: r, groupIds: Int32Array.from([1, 2]) }), /groupIds has length 2/);
  });
  it("unknown estimator lists the registered ones", () => {
    assert.throws(() => computeAdvantages("nope", { rewards: r, groupIds: ids }), /registered: .*grpo/);
  });
});

describe("advantages: reinforce_pp (token level)", () => {
  const T = 4;
  const mask = Float32Array.from([0, 1, 1, 1, /**/ 0, 1, 0, 1, /**/ 0, 1, 1, 0]);
  const rewards = Float64Array.from([1, 0, Number.NaN]);
  const groupIds = Int32Array.from([0, 1, 2]);
  it("discounted returns over masked tokens, whitened over the batch", () => {
    const tokenRewards = Float32Array.from([0, -0.1, 0, -0.2, /**/ 0, 0.3, 5, 0, /**/ 0, 1, 1, 0]);
    const out = computeTokenAdvantages("reinforce_pp", { rewards, groupIds, mask, seqLen: T, tokenRewards }, { gamma: 0.5, whiten: false });
    // seq 0: r = [-0.1, 0, -0.2 + 1] → R3 = 0.8, R2 = 0 + 0.4 = 0.4, R1 = -0.1 + 0.2 = 0.1
    // seq 1: r = [0.3, (skip: mask 0), 0 + 0] → R3 = 0, R1 = 0.3
    assertAllClose(out, [0, 0.1, 0.4, 0.8, 0, 0.3, 0, 0, 0, 0, 0, 0], 1e-6, 1e-7);
    const w = computeTokenAdvantages("reinforce_pp", { rewards, groupIds, mask, seqLen: T, tokenRewards }, { gamma: 0.5 });
    const vals = [0.1, 0.4, 0.8, 0.3, 0];
    const mu = vals.reduce((a, b) => a + b) / 5;
    const sd = Math.sqrt(vals.reduce((a, b) => a + (b - mu) ** 2, 0) / 4 + 1e-8);
    assertAllClose(w, [0, (0.1 - mu) / sd, (0.4 - mu) / sd, (0.8 - mu) / sd, 0, (0.3 - mu) / sd, 0, (0 - mu) / sd, 0, 0, 0, 0], 1e-5, 1e-6);
  });
  it("needs mask and seqLen; computeAdvantages refuses it", () => {
    assert.throws(() => computeTokenAdvantages("reinforce_pp", { rewards, groupIds }), /mask/);
    assert.throws(() => computeAdvantages("reinforce_pp", { rewards, groupIds }), /token-level/);
  });
});

describe("advantages: broadcast", () => {
  it("broadcastToTokens puts the sequence advantage on its masked tokens", () => {
    const out = broadcastToTokens(Float32Array.from([2, -1]), Float32Array.from([0, 1, 1, 1, 0, 0]), 3);
    assert.deepEqual([...out], [0, 2, 2, -1, 0, 0]);
  });
  it("computeTokenAdvantages broadcasts sequence estimators", () => {
    const out = computeTokenAdvantages("dr_grpo", { rewards: Float64Array.from([1, 0]), groupIds: Int32Array.from([4, 4]), mask: Float32Array.from([1, 1, 0, 1]), seqLen: 2 });
    assert.deepEqual([...out], [0.5, 0.5, 0, -0.5]);
  });
});
