// Accuracy of the math verifier on the labelled case set test/fixtures/math/cases.jsonl
// (response, reference, equivalent, category). Must stay >= 99%; the misses are printed (and listed in
// docs/rewards-math.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { auditMath, type MathCase } from "../../../src/rewards/math/audit.ts";

const file = new URL("../../fixtures/math/cases.jsonl", import.meta.url);
const cases: MathCase[] = readFileSync(file, "utf8")
  .split("\n")
  .filter((l) => l.trim().length > 0)
  .map((l, i) => {
    const c = JSON.parse(l) as MathCase;
    assert.equal(typeof c.response, "string", `line ${i + 1}: response`);
    assert.equal(typeof c.reference, "string", `line ${i + 1}: reference`);
    assert.equal(typeof c.equivalent, "boolean", `line ${i + 1}: equivalent`);
    assert.equal(typeof c.category, "string", `line ${i + 1}: category`);
    return c;
  });

test("math cases: at least 400 labelled cases, both labels and every format represented", () => {
  assert.ok(cases.length >= 400, `only ${cases.length} cases`);
  const pos = cases.filter((c) => c.equivalent).length;
  assert.ok(pos > 100 && cases.length - pos > 100, `labels unbalanced: ${pos} equivalent of ${cases.length}`);
  const cats = new Set(cases.map((c) => c.category));
  for (const need of [
    "extract_boxed", "extract_gsm8k", "extract_answer_is", "extract_answer_tag", "extract_last_number", "reference_solution",
    "integer", "decimal", "fraction", "mixed_number", "percent", "scientific", "negative", "latex_wrapper", "units", "pi_sqrt",
    "symbolic", "equation", "tuple", "interval", "set", "multiple_answers", "matrix", "infinity", "adversarial",
  ])
    assert.ok(cats.has(need), `no case of category ${need}`);
});

test("math cases: verifier accuracy >= 99% (misses printed)", (t) => {
  const r = auditMath(cases);
  const misses = [...r.falseNegatives, ...r.falsePositives];
  for (const m of misses)
    t.diagnostic(
      `${m.equivalent ? "false negative" : "false positive"} [${m.category}] ${JSON.stringify(m.verdict.normalizedAnswer ?? m.response)} vs ` +
        `${JSON.stringify(m.verdict.normalizedReference ?? m.reference)}: ${m.verdict.reason}`,
    );
  t.diagnostic(
    `accuracy ${(r.accuracy * 100).toFixed(2)}% on ${r.n} cases (${r.falseNegatives.length} false negatives, ` +
      `${r.falsePositives.length} false positives), ${(r.elapsedMs / r.n).toFixed(3)} ms/case`,
  );
  assert.ok(r.accuracy >= 0.99, `accuracy ${(r.accuracy * 100).toFixed(2)}% < 99%`);
});

test("math cases: adversarial near-misses are all rejected", () => {
  const r = auditMath(cases.filter((c) => c.category === "adversarial"));
  assert.deepEqual(
    r.falsePositives.map((m) => `${m.response} vs ${m.reference}`),
    [],
  );
});
