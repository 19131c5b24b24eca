import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inPassBand, isInformative, metricValue, summarizeGroups } from "../../src/rollout/filters.ts";
import { fillBatch } from "../../src/rollout/dynamic-sampling.ts";

describe("group filters", () => {
  // Four groups of 4: all wrong, all right, 1 of 4 right, 3 of 4 right.
  const correct = [0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1];
  const ids = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3];

  it("summarizes per group, in order of first appearance, for non-contiguous groups too", () => {
    const s = summarizeGroups([1, 0, 0, 1, 1], [7, 3, 7, 3, 7]);
    assert.deepEqual(s.map((g) => [g.group, g.n, g.min, g.max]), [[7, 3, 0, 1], [3, 2, 0, 1]]);
    assert.ok(Math.abs(s[0]!.mean - 2 / 3) < 1e-12);
    assert.throws(() => summarizeGroups([1], [0, 1]), RangeError);
  });

  it("DAPO dynamic sampling drops all-wrong and all-right groups and keeps mixed ones", () => {
    const keep = summarizeGroups(correct, ids).map((g) => isInformative(g));
    assert.deepEqual(keep, [false, false, true, true]);
  });

  it("on rewards, a group is dropped only when every reward is identical", () => {
    const rewards = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.51];
    const keep = summarizeGroups(rewards, [0, 0, 0, 0, 1, 1, 1, 1]).map((g) => isInformative(g));
    assert.deepEqual(keep, [false, true]);
    assert.deepEqual(summarizeGroups([0.5, 0.5000001], [0, 0]).map((g) => isInformative(g, 1e-3)), [false]);
    assert.equal(isInformative({ group: 0, n: 1, mean: 1, min: 1, max: 1 }), false, "a singleton is never informative");
  });

  it("the closed band [0.25, 0.75] keeps pass rates 0.25 and 0.75 but not 0 or 1", () => {
    const g = summarizeGroups(correct, ids);
    assert.deepEqual(g.map((x) => inPassBand(x, { low: 0.25, high: 0.75, open: false })), [false, false, true, true]);
    // [0.3, 0.8] drops the 1/4 group.
    assert.deepEqual(g.map((x) => inPassBand(x, { low: 0.3, high: 0.8, open: false })), [false, false, false, true]);
  });

  it("the open band (0, 1) keeps exactly the groups that are neither all wrong nor all right", () => {
    const g = summarizeGroups(correct, ids);
    assert.deepEqual(g.map((x) => inPassBand(x, { low: 0, high: 1, open: true })), [false, false, true, true]);
    // The open band (0.25, 0.75) excludes its ends.
    assert.deepEqual(g.map((x) => inPassBand(x, { low: 0.25, high: 0.75, open: true })), [false, false, false, false]);
    // A closed band handles k/n rounding: 1/3 lies in [1/3, 2/3].
    assert.equal(inPassBand(summarizeGroups([1, 0, 0], [0, 0, 0])[0]!, { low: 1 / 3, high: 2 / 3, open: false }), true);
  });

  it("metricValue reads accuracy as 0/1 and reward as is", () => {
    assert.equal(metricValue({ correct: true, reward: 0.3 }, "accuracy"), 1);
    assert.equal(metricValue({ correct: false, reward: 0.3 }, "reward"), 0.3);
  });
});

describe("fillBatch (dynamic sampling with resampling)", () => {
  // Each generated "group" is a number; keep the even ones.
  const gen = (perBatch: number[][]) => {
    let calls = 0;
    return { generate: async (k: number) => (calls++, perBatch[k] ?? []), calls: () => calls };
  };

  it("keeps generating until the batch is full, then trims the surplus in generation order", async () => {
    const g = gen([[1, 2, 3, 5], [4, 7, 9, 11], [6, 8, 10, 12]]);
    const r = await fillBatch({ target: 4, maxGenBatches: 10, generate: g.generate, keep: (x) => x % 2 === 0 });
    assert.deepEqual(r.kept, [2, 4, 6, 8]);
    assert.equal(r.genBatches, 3);
    assert.equal(g.calls(), 3);
    assert.equal(r.dropped, 6);
    assert.equal(r.surplus, 2);
    assert.equal(r.full, true);
    assert.equal(r.generated.length, 12);
  });

  it("stops at maxGenBatches with a partial batch", async () => {
    const g = gen([[1, 2], [3, 5], [4, 6]]);
    const r = await fillBatch({ target: 4, maxGenBatches: 2, generate: g.generate, keep: (x) => x % 2 === 0 });
    assert.deepEqual(r.kept, [2]);
    assert.equal(r.genBatches, 2);
    assert.equal(r.full, false);
  });

  it("with maxGenBatches 1 it is the filter form (one batch, no resampling)", async () => {
    const r = await fillBatch({ target: 3, maxGenBatches: 1, generate: async () => [1, 2, 3], keep: () => true });
    assert.deepEqual(r.kept, [1, 2, 3]);
    assert.equal(r.genBatches, 1);
    await assert.rejects(fillBatch({ target: 0, maxGenBatches: 1, generate: async () => [], keep: () => true }), RangeError);
  });
});
