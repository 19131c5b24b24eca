import { test } from "node:test";
import assert from "node:assert/strict";
import { bootstrapMeans } from "../../src/eval/bootstrap.ts";
import { breakdown, promptColumns, summarize, type PromptOutcome, type SampleOutcome } from "../../src/eval/summary.ts";
import { compareResults, passAtKCurve } from "../../src/eval/compare.ts";
import { asciiCurve, formatComparison, formatReport } from "../../src/eval/report.ts";
import { passAtK } from "../../src/eval/passk.ts";
import { Rng } from "../../src/util/rng.ts";

const s = (correct: boolean, extracted: string | null, length = 4, truncated = false): SampleOutcome => ({ correct, extracted, length, truncated });

/** Two prompts × 4 samples, hand-checkable. */
function handOutcomes(): PromptOutcome[] {
  return [
    { id: "p0", task: "add", difficulty: 1, samples: [s(true, "3"), s(false, "4"), s(false, "4"), s(true, "3", 8, true)] },
    { id: "p1", task: "add", difficulty: 2, samples: [s(false, "9", 2), s(false, null, 10, true), s(true, "7", 2), s(false, "9", 2)] },
  ];
}

test("summarize: exact metrics on a hand-built case", () => {
  const r = summarize(handOutcomes(), { bootstrap: 0 });
  assert.equal(r.prompts, 2);
  assert.equal(r.samples, 4);
  assert.equal(r.accuracy, 0.5); // p0's first sample right, p1's wrong
  assert.equal(r.meanAtN, (2 / 4 + 1 / 4) / 2);
  assert.deepEqual(Object.keys(r.passAtK), ["pass@1", "pass@2", "pass@4"]);
  assert.equal(r.passAtK["pass@2"], (passAtK(4, 2, 2) + passAtK(4, 1, 2)) / 2);
  assert.equal(r.passAtK["pass@4"], 1);
  // maj@2: p0 blocks [3,4] → 3 (tie, earliest, right), [4,3] → 4 wrong → 0.5; p1 [9,null] → 9 wrong, [7,9] → 7 right → 0.5
  assert.equal(r.majAtK["maj@2"], 0.5);
  // maj@4: p0 tie 3 vs 4 (2–2) → earliest "3" right → 1; p1 "9" ×2 wrong → 0
  assert.equal(r.majAtK["maj@4"], 0.5);
  assert.equal(r.meanLength, (4 + 4 + 4 + 8 + 2 + 10 + 2 + 2) / 8);
  assert.equal(r.maxLength, 10);
  assert.equal(r.truncated, 2 / 8);
  assert.equal(r.greedy, undefined);
  assert.equal(r.ci, undefined);
});

test("summarize: greedy column, requested ks, mismatched n rejected", () => {
  const o = handOutcomes();
  o[0]!.greedy = s(true, "3");
  o[1]!.greedy = s(true, "7");
  const r = summarize(o, { ks: [1, 3], bootstrap: 0 });
  assert.equal(r.greedy, 1);
  assert.deepEqual(Object.keys(r.passAtK), ["pass@1", "pass@3"]);
  assert.deepEqual(Object.keys(r.majAtK), ["maj@1", "maj@3"]);
  o[1]!.samples.pop();
  assert.throws(() => summarize(o), /prompt p1 has 3 samples, expected 4/);
});

test("breakdown per task and per task@difficulty", () => {
  const o = [...handOutcomes(), { id: "q0", task: "sat", samples: [s(true, "x"), s(true, "x"), s(true, "x"), s(true, "x")] }];
  const b = breakdown(o);
  assert.deepEqual(Object.keys(b.byTask), ["add", "sat"]);
  assert.equal(b.byTask["add"]!.prompts, 2);
  assert.equal(b.byTask["sat"]!.accuracy, 1);
  assert.deepEqual(Object.keys(b.byDifficulty), ["add@1", "add@2"]);
  assert.equal(b.byDifficulty["add@2"]!.meanAtN, 0.25);
  assert.equal(b.byTask["add"]!.ci, undefined);
});

test("bootstrap: seeded, contains the mean, width near the normal approximation", () => {
  const rng = new Rng(3);
  const P = 400;
  const col = Float64Array.from({ length: P }, () => (rng.next() < 0.5 ? 1 : 0));
  const m = col.reduce((a, b) => a + b, 0) / P;
  const a = bootstrapMeans({ acc: col }, { seed: 1 });
  const b = bootstrapMeans({ acc: col }, { seed: 1 });
  const c = bootstrapMeans({ acc: col }, { seed: 2 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.ok(a["acc"]!.low < m && m < a["acc"]!.high);
  const width = a["acc"]!.high - a["acc"]!.low;
  const normal = 2 * 1.96 * Math.sqrt((m * (1 - m)) / P);
  assert.ok(Math.abs(width - normal) < 0.2 * normal, `width ${width} vs ${normal}`);
  // A constant column has a degenerate interval.
  assert.deepEqual(bootstrapMeans({ k: new Float64Array(10).fill(0.25) })["k"], { low: 0.25, high: 0.25 });
  assert.throws(() => bootstrapMeans({ a: [1, 2], b: [1] }), /column b has 1 values/);
});

test("summarize attaches intervals for every metric column", () => {
  const r = summarize(handOutcomes(), { seed: 5 });
  assert.ok(r.ci);
  assert.equal(r.level, 0.95);
  for (const k of Object.keys(promptColumns(handOutcomes()))) {
    assert.ok(r.ci![k], k);
    assert.ok(r.ci![k]!.low <= r.ci![k]!.high);
  }
});

test("compare: paired deltas, curve JSON, text table and ASCII curve", () => {
  const rng = new Rng(11);
  const mk = (p: number): PromptOutcome[] =>
    Array.from({ length: 60 }, (_, i) => ({ id: `e${i}`, task: "add", samples: Array.from({ length: 4 }, () => (rng.next() < p ? s(true, "1") : s(false, "2"))) }));
  const base2 = mk(0.2);
  const a = { ...summarize(base2, { seed: 1 }), outcomes: base2 };
  const trained = mk(0.8);
  const b = { ...summarize(trained, { seed: 1 }), outcomes: trained };
  const c = compareResults(a, b, { labels: ["base", "trained"], seed: 1 });
  assert.equal(c.paired, 60);
  const acc = c.rows.find((r) => r.metric === "meanAtN")!;
  assert.equal(acc.delta, b.meanAtN - a.meanAtN);
  assert.ok(acc.deltaCi && acc.deltaCi.low > 0.4 && acc.deltaCi.high < 0.8, JSON.stringify(acc.deltaCi));
  assert.deepEqual(c.curve.k, [1, 2, 4]);
  assert.deepEqual(c.curve.series.map((x) => x.label), ["base", "trained"]);
  assert.equal(c.curve.series[1]!.passAtK[2], b.passAtK["pass@4"]);
  const table = formatComparison(c);
  assert.match(table, /^metric\s+base\s+trained\s+trained − base$/m);
  assert.match(table, /^pass@4\s+\d+\.\d% \[[\d.]+, [\d.]+\]/m);
  assert.match(table, /paired over 60 prompts, 95% bootstrap intervals/);
  const plot = asciiCurve(passAtKCurve([{ label: "base", result: a }, { label: "trained", result: b }]));
  assert.match(plot, /b = base, t = trained/);
  assert.ok(plot.includes("t") && plot.split("\n").length > 10);
  assert.match(formatReport(b, "trained"), /trained: 60 prompts × 4 samples/);
});
