import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { kValues, passAtK } from "../../src/eval/passk.ts";
import { Rng } from "../../src/util/rng.ts";

/** Exact pass@k of one outcome vector: the fraction of its k-subsets holding a correct sample. */
function enumeratePassAtK(outcomes: boolean[], k: number): number {
  const n = outcomes.length;
  let subsets = 0;
  let hit = 0;
  for (let mask = 0; mask < 1 << n; mask++) {
    let bits = 0;
    let any = false;
    for (let i = 0; i < n; i++) {
      if (mask & (1 << i)) {
        bits++;
        if (outcomes[i]) any = true;
      }
    }
    if (bits !== k) continue;
    subsets++;
    if (any) hit++;
  }
  return hit / subsets;
}

test("pass@k equals exact enumeration of all k-subsets for every n ≤ 10, c, k", () => {
  let cases = 0;
  for (let n = 1; n <= 10; n++) {
    for (let c = 0; c <= n; c++) {
      // Scatter the correct samples (positions do not matter to the estimator, so vary them).
      const outcomes = new Rng(n * 31 + c).shuffle(Array.from({ length: n }, (_, i) => i < c));
      assert.equal(outcomes.filter(Boolean).length, c);
      for (let k = 1; k <= n; k++) {
        const exact = enumeratePassAtK(outcomes, k);
        assert.ok(Math.abs(passAtK(n, c, k) - exact) < 1e-12, `n=${n} c=${c} k=${k}: ${passAtK(n, c, k)} vs ${exact}`);
        cases++;
      }
    }
  }
  assert.equal(cases, 440); // Σ_{n≤10} (n+1)·n (n, c, k) triples
});

test("pass@k matches enumeration on random outcome vectors (property)", () => {
  fc.assert(
    fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), fc.nat(), (outcomes, kk) => {
      const n = outcomes.length;
      const k = 1 + (kk % n);
      const c = outcomes.filter(Boolean).length;
      return Math.abs(passAtK(n, c, k) - enumeratePassAtK(outcomes, k)) < 1e-12;
    }),
    { numRuns: 200, seed: 7 },
  );
});

test("pass@k: known values, monotone in k, bounds, errors", () => {
  assert.equal(passAtK(5, 0, 3), 0);
  assert.equal(passAtK(5, 5, 1), 1);
  assert.equal(passAtK(4, 2, 3), 1); // every 3-subset of 4 holds one of the 2 correct
  assert.ok(Math.abs(passAtK(10, 3, 1) - 0.3) < 1e-15); // pass@1 = c/n
  assert.ok(Math.abs(passAtK(4, 1, 2) - 0.5) < 1e-15); // 3 of 6 pairs contain the correct one
  // Large n stays finite and accurate (the product form; C(200, 100) overflows nothing).
  const big = passAtK(200, 1, 100);
  assert.ok(Math.abs(big - 0.5) < 1e-12, String(big));
  for (let k = 1; k < 16; k++) assert.ok(passAtK(16, 3, k + 1) >= passAtK(16, 3, k));
  assert.throws(() => passAtK(4, 5, 1), /0 <= c <= n/);
  assert.throws(() => passAtK(4, 1, 5), /1 <= k <= n/);
  assert.throws(() => passAtK(4, 1, 0), RangeError);
  assert.throws(() => passAtK(4.5, 1, 1), RangeError);
});

test("kValues: powers of two plus n, or the requested ones ≤ n", () => {
  assert.deepEqual(kValues(1), [1]);
  assert.deepEqual(kValues(8), [1, 2, 4, 8]);
  assert.deepEqual(kValues(10), [1, 2, 4, 8, 10]);
  assert.deepEqual(kValues(10, [10, 1, 5, 5, 64]), [1, 5, 10]);
  assert.deepEqual(kValues(3, [8]), [3]);
  assert.throws(() => kValues(0), RangeError);
  assert.throws(() => kValues(4, [0]), /positive integer/);
});
