import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { domainWeights, drawIndex, updateDomainRewards } from "../../src/rollout/domain-weights.ts";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("domain-aware dynamic sampling weights", () => {
  it("gives lower-reward domains higher weight, sums to 1 and respects the floor", () => {
    const w = domainWeights(["a", "b", "c"], { a: 0.9, b: 0.5, c: 0.1 }, 0.05);
    assert.ok(Math.abs(sum(w) - 1) < 1e-12);
    assert.ok(w[2]! > w[1]! && w[1]! > w[0]!);
    // u = [0.1, 0.5, 0.9] / 1.5; p = 0.05 + 0.85 u
    assert.ok(Math.abs(w[0]! - (0.05 + (0.85 * 0.1) / 1.5)) < 1e-12);
    const solved = domainWeights(["a", "b"], { a: 1, b: 0 }, 0.1);
    assert.deepEqual(solved.map((x) => +x.toFixed(12)), [0.1, 0.9], "a solved domain keeps the floor");
  });

  it("treats unseen domains as reward 0, is uniform when all are solved, and rejects a floor too large", () => {
    const w = domainWeights(["a", "b"], { a: 0.5 }, 0);
    assert.ok(w[1]! > w[0]!);
    assert.deepEqual(domainWeights(["a", "b"], { a: 1, b: 1 }, 0.1), [0.5, 0.5]);
    assert.throws(() => domainWeights(["a", "b", "c"], {}, 0.4), RangeError);
    assert.throws(() => domainWeights([], {}, 0), RangeError);
  });

  it("updates an EMA per domain (first observation taken as is; others untouched)", () => {
    let r = updateDomainRewards({}, new Map([["a", [1, 0]]]), 0.5);
    assert.deepEqual(r, { a: 0.5 });
    r = updateDomainRewards(r, new Map([["a", [1, 1]], ["b", [0]]]), 0.5);
    assert.deepEqual(r, { a: 0.75, b: 0 });
    r = updateDomainRewards(r, new Map([["b", [Number.NaN]]]), 0.5);
    assert.deepEqual(r, { a: 0.75, b: 0 }, "non-finite rewards are ignored");
  });

  it("the weights move towards a domain whose reward drops", () => {
    let r = updateDomainRewards({}, new Map([["a", [0.5]], ["b", [0.5]]]), 0.5);
    const before = domainWeights(["a", "b"], r, 0.05);
    r = updateDomainRewards(r, new Map([["a", [0]], ["b", [1]]]), 0.5);
    const after = domainWeights(["a", "b"], r, 0.05);
    assert.ok(after[0]! > before[0]!);
  });

  it("drawIndex inverts the cumulative distribution", () => {
    assert.equal(drawIndex([0.2, 0.3, 0.5], 0), 0);
    assert.equal(drawIndex([0.2, 0.3, 0.5], 0.2), 1);
    assert.equal(drawIndex([0.2, 0.3, 0.5], 0.49), 1);
    assert.equal(drawIndex([0.2, 0.3, 0.5], 0.999999), 2);
  });
});
