import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dapoOverlongPenalty } from "../../src/rewards/shaping/overlong.ts";
import { dapoOverlongPenalty as algorithmsOverlong } from "../../src/algorithms/shaping.ts";
import { cosineLengthReward, cosFn } from "../../src/rewards/shaping/cosine.ts";
import { grpoLambdaRewards, grpoLambdaSelect, kimiLengthReward } from "../../src/rewards/shaping/grpo-lambda.ts";

const goldenPath = process.env["RLVR_GOLDEN"] ?? new URL("../fixtures/golden.json", import.meta.url);
const golden = JSON.parse(readFileSync(goldenPath, "utf8")) as {
  cases: { dapo_overlong: { length: number; max_len: number; buffer: number; penalty: number; factor?: number }[] };
};

test("DAPO overlong penalty matches golden.json cases.dapo_overlong to 1e-6", () => {
  const cases = golden.cases.dapo_overlong;
  assert.ok(cases.length > 0);
  for (const c of cases) {
    const got = dapoOverlongPenalty(c.length, { maxLength: c.max_len, buffer: c.buffer, factor: c.factor ?? 1 });
    assert.ok(Math.abs(got - c.penalty) <= 1e-6, `len ${c.length}: ${got} vs ${c.penalty}`);
  }
});

test("overlong: DAPO Eq. 13 — 0, a ramp, −factor at the cap and clamped at −factor beyond it", () => {
  const o = { maxLength: 100, buffer: 20, factor: 0.5 };
  assert.equal(dapoOverlongPenalty(10, o), 0);
  assert.equal(dapoOverlongPenalty(80, o), 0);
  assert.equal(dapoOverlongPenalty(90, o), -0.25);
  assert.equal(dapoOverlongPenalty(100, o), -0.5);
  assert.equal(dapoOverlongPenalty(120, o), -0.5); // the paper's third case: −1 · factor past L_max
  assert.equal(dapoOverlongPenalty(1e6, o), -0.5);
  assert.ok(Object.is(dapoOverlongPenalty(0, o), 0), "no −0");
  // Positional and options forms are the same function; the algorithm library re-exports it.
  assert.equal(algorithmsOverlong, dapoOverlongPenalty);
  assert.equal(dapoOverlongPenalty(90, 100, 20, 0.5), -0.25);
  assert.throws(() => dapoOverlongPenalty(1, { maxLength: 10, buffer: 0 }), /buffer/);
  assert.throws(() => dapoOverlongPenalty(1, 10, 11), /buffer/);
  assert.throws(() => dapoOverlongPenalty(1, 10, 5, -1), /factor/);
});

test("cosine length scaling: endpoints, monotonicity, exceed", () => {
  const o = { maxLength: 1000 };
  assert.equal(cosFn(0, 10, 1, 2), 2);
  assert.ok(Math.abs(cosFn(10, 10, 1, 2) - 1) < 1e-12);
  assert.ok(Math.abs(cosFn(5, 10, 1, 2) - 1.5) < 1e-12);
  assert.equal(cosineLengthReward(true, 0, o), 2);
  assert.equal(cosineLengthReward(false, 0, o), -10);
  assert.equal(cosineLengthReward(true, 1000, o), -10);
  assert.equal(cosineLengthReward(true, 10, o, true), -10);
  let prevC = Infinity;
  let prevW = -Infinity;
  for (let L = 0; L < 1000; L += 50) {
    const c = cosineLengthReward(true, L, o);
    const w = cosineLengthReward(false, L, o);
    assert.ok(c <= prevC && c >= 1 && c <= 2);
    assert.ok(w >= prevW && w <= 0 && w >= -10);
    prevC = c;
    prevW = w;
  }
});

test("GRPO-λ: Kimi length reward", () => {
  const r = kimiLengthReward([true, true, false, false], [10, 30, 10, 30]);
  assert.deepEqual(r, [1.5, 0.5, 0, -0.5]);
  assert.deepEqual(kimiLengthReward([true, false], [5, 5]), [1, 0]);
});

test("GRPO-λ: top-λ fraction of groups vs ratio ≥ λ", () => {
  const ratios = [0.25, 1, 0.75, 0, 0.5];
  assert.deepEqual(grpoLambdaSelect(ratios, { lambda: 0.4 }), [false, true, true, false, false]);
  assert.deepEqual(grpoLambdaSelect(ratios, { lambda: 0.5, selection: "ratio" }), [false, true, true, false, true]);
  assert.deepEqual(grpoLambdaSelect([0, 0], { lambda: 1 }), [false, false]);
  assert.deepEqual(grpoLambdaSelect([0, 0], { lambda: 1, requireCorrect: false }), [true, true]);
  assert.deepEqual(grpoLambdaSelect([0.5, 0.5, 0.5], { lambda: 0.2 }), [true, false, false]);
  assert.throws(() => grpoLambdaSelect([1], { lambda: 2 }), /lambda/);
});

test("GRPO-λ rewards: penalised groups get length-aware rewards, others 0/1", () => {
  const groups = [
    { correct: [true, true, true, false], lengths: [10, 20, 30, 40] },
    { correct: [true, false, false, false], lengths: [10, 20, 30, 40] },
  ];
  const { rewards, penalised } = grpoLambdaRewards(groups, { lambda: 0.5 });
  assert.deepEqual(penalised, [true, false]);
  assert.deepEqual(rewards[1], [1, 0, 0, 0]);
  const r0 = rewards[0]!;
  assert.ok(r0[0]! > r0[1]! && r0[1]! > r0[2]!, "shorter correct answers earn more");
  assert.ok(Math.abs(r0[3]! - -0.5) < 1e-12, "longest wrong answer is pushed below 0");
});
