import { test } from "node:test";
import assert from "node:assert/strict";
import { CHARTS, chartKeys, evalKs, fmt, niceTicks, otherKeys, series, smooth, type MetricRecord } from "../../dashboard/src/data.ts";

const recs: MetricRecord[] = [
  { stage: "sft", step: 1, loss: 2 },
  { stage: "rl", step: 1, "reward/mean": 0.1, "reward/format": 1, accuracy: 0.1, custom: 3 },
  { stage: "rl", step: 2, "reward/mean": Number.NaN, "reward/format": 1, accuracy: 0.3, custom: 4 },
  { stage: "rl", step: 3, "reward/mean": 0.5, accuracy: 0.5 },
];

test("series: one stage and key, non-finite values skipped", () => {
  assert.deepEqual(series(recs, "rl", "reward/mean"), { x: [1, 3], y: [0.1, 0.5] });
  assert.deepEqual(series(recs, "sft", "loss"), { x: [1], y: [2] });
  assert.deepEqual(series(recs, "rl", "missing"), { x: [], y: [] });
});

test("chartKeys and otherKeys: default charts, reward components by pattern, the rest offered", () => {
  const spec = (id: string) => CHARTS.find((c) => c.id === id)!;
  assert.deepEqual(chartKeys(spec("reward"), recs), ["reward/mean"]);
  assert.deepEqual(chartKeys(spec("reward-components"), recs), ["reward/format"]);
  assert.deepEqual(chartKeys(spec("sft-loss"), recs), ["loss"]);
  assert.deepEqual(chartKeys(spec("kl"), recs), []);
  assert.deepEqual(otherKeys(recs), [{ stage: "rl", key: "custom" }]);
});

test("smooth: EMA with debiasing; 0 = raw", () => {
  assert.deepEqual(smooth([1, 2, 3], 0), [1, 2, 3]);
  const s = smooth([1, 1, 1], 0.9);
  for (const v of s) assert.ok(Math.abs(v - 1) < 1e-12); // debiased: a constant stays constant
  const t = smooth([0, 1], 0.5);
  assert.equal(t[0], 0);
  assert.ok(Math.abs(t[1]! - 0.5 / 0.75) < 1e-12);
});

test("niceTicks and fmt", () => {
  assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(3, 27, 5), [5, 10, 15, 20, 25]);
  assert.deepEqual(niceTicks(-0.03, 0.031, 4), [-0.02, 0, 0.02]);
  // Bounds equal up to rounding (an SFT chart of loss and nll after one step) end instead of looping forever.
  assert.deepEqual(niceTicks(3.2, 3.2 + 4.440892098500626e-16, 4), [3.2]);
  assert.deepEqual(niceTicks(2, 2), [2]);
  assert.equal(fmt(0.4567, true), "45.7%");
  assert.equal(fmt(0.05, true), "5.00%");
  assert.equal(fmt(12), "12");
  assert.equal(fmt(1.23456), "1.235");
  assert.equal(fmt(0.00001), "1.00e-5");
  assert.equal(fmt(null), "–");
  assert.equal(fmt(Number.NaN), "–");
});

test("evalKs: sorted union of k values", () => {
  assert.deepEqual(evalKs([{ passAtK: { "pass@4": 1, "pass@1": 0 } }, { passAtK: { "pass@16": 1 } }, {}], "passAtK"), [1, 4, 16]);
  assert.deepEqual(evalKs([{ majAtK: { "maj@2": 1 } }], "majAtK"), [2]);
});
