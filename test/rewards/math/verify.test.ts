import { test } from "node:test";
import assert from "node:assert/strict";
import { mathEquivalent, verifyMath, type CasBackend } from "../../../src/rewards/math/index.ts";
import { auditMath } from "../../../src/rewards/math/audit.ts";

const eq = (a: string, b: string, o = {}) => mathEquivalent(a, b, o).equivalent;

test("verifyMath: verdict shape, extraction mode and rule in the reason", () => {
  const v = verifyMath("so $\\boxed{\\frac{3}{4}}$.", "The solution ... $\\boxed{0.75}$");
  assert.deepEqual(v, {
    correct: true,
    extracted: "\\frac{3}{4}",
    normalizedAnswer: "\\frac{3}{4}",
    normalizedReference: "0.75",
    reason: "boxed: equivalent (exact rational)",
  });
  const none = verifyMath("I don't know", "5");
  assert.equal(none.correct, false);
  assert.equal(none.extracted, null);
  assert.equal(none.normalizedReference, "5");
  assert.match(none.reason, /no answer extracted/);
  assert.equal(verifyMath("\\boxed{5}", "").reason, "empty reference");
});

test("verifyMath: never throws on non-string input", () => {
  for (const bad of [undefined, null, 5, {}, []] as unknown[]) {
    const v = verifyMath(bad as string, bad as string);
    assert.equal(v.correct, false);
    const e = mathEquivalent(bad as string, "1");
    assert.equal(e.equivalent, false);
  }
});

test("equivalence: numbers in many spellings", () => {
  assert.ok(eq("1,000", "1000") && eq("1 000", "1000") && eq("1{,}000", "1000"));
  assert.ok(eq("\\frac12", "0.5") && eq("\\dfrac{1}{2}", "1/2") && eq("\\tfrac{2}{4}", ".5"));
  assert.ok(eq("2\\frac{1}{2}", "2.5") && eq("2 1/2", "5/2"));
  assert.ok(eq("1.2e3", "1200") && eq("1.2\\times10^{3}", "1200"));
  assert.ok(eq("\u22123", "-3") && eq("0.\\overline{3}", "1/3"));
  assert.ok(!eq("0.5", "0.05") && !eq("1/2", "2/1") && !eq("2\\frac{1}{2}", "1"));
  assert.ok(!eq("123456789012345678901234567891", "123456789012345678901234567890"));
});

test("equivalence: percent modes", () => {
  assert.ok(eq("50\\%", "0.5") && eq("50\\%", "50"));
  assert.ok(eq("50\\%", "0.5", { percent: "strict" }) && !eq("50\\%", "50", { percent: "strict" }));
  assert.ok(eq("50\\%", "50", { percent: "ignore" }) && !eq("50\\%", "0.5", { percent: "ignore" }));
  assert.ok(!eq("0.5", "50"));
});

test("equivalence: units stripped only when asked", () => {
  assert.ok(eq("5\\text{ cm}", "5") && eq("12 dollars", "12") && eq("\\$1,500", "1500"));
  assert.ok(!eq("5\\text{ cm}", "5", { stripUnits: false }));
  assert.ok(!eq("5x", "5"));
});

test("equivalence: tolerance and rounded decimals", () => {
  // Math-Verify's convention (issue 26): a rounded decimal needs 6 significant digits by default
  assert.ok(eq("3.14159", "\\pi") && eq("0.333333", "1/3") && eq("0.0833333333", "\\frac{1}{12}"));
  assert.ok(!eq("3.1416", "\\pi") && !eq("0.333", "1/3"), "fewer than 6 significant digits are not enough by default");
  assert.ok(eq("3.1416", "\\pi", { roundedDecimalDigits: 3 }) && eq("0.333", "1/3", { roundedDecimalDigits: 3 }));
  assert.ok(!eq("0.33", "1/3", { roundedDecimalDigits: 3 }));
  assert.ok(eq("0.33", "1/3", { roundedDecimalDigits: 2 }));
  assert.ok(!eq("3.1416", "\\pi", { roundedDecimalDigits: 0 }));
  assert.ok(!eq("0.125", "0.13"), "a terminating reference is never rounded");
  assert.ok(eq("1.41421", "\\sqrt2", { roundedDecimalDigits: 0, relTol: 1e-5 }));
  assert.ok(!eq("1.41421", "\\sqrt2", { roundedDecimalDigits: 0 }));
});

test("equivalence: structure (equations, tuples, intervals, sets, lists)", () => {
  assert.ok(eq("x = 3", "3") && !eq("x=3", "3x") && eq("y = 2x+1", "2x + 1 = y"));
  assert.ok(eq("(1,2)", "(1, 2)") && !eq("(1,2)", "(2,1)") && !eq("(1,2)", "[1,2]"));
  assert.ok(eq("[0, \\infty)", "x \\ge 0") && !eq("(0,\\infty)", "[0,\\infty)"));
  assert.ok(eq("\\{1,2\\}", "\\{2,1\\}") && !eq("\\{12\\}", "\\{1,2\\}"));
  assert.ok(eq("1, 2", "2, 1") && !eq("12", "1,2"));
  assert.ok(!eq("1, 2", "2, 1", { unorderedLists: false }) && eq("1, 2", "1, 2", { unorderedLists: false }));
  assert.ok(eq("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}"));
});

test("equivalence: symbolic through the CAS, and a custom backend is used when given", () => {
  assert.ok(eq("(x+1)^2", "x^2+2x+1") && !eq("(x+1)^2", "x^2+1"));
  let calls = 0;
  const counting: CasBackend = {
    name: "counting",
    compile: (n, v, p) => {
      calls++;
      return null; // cannot compile anything: symbolic answers are then judged not equivalent
    },
  };
  const r = mathEquivalent("(x+1)^2", "x^2+2x+1", { cas: counting });
  assert.equal(r.equivalent, false);
  assert.match(r.reason, /cas could not compile/);
  assert.ok(calls > 0);
  // exact rationals never need the CAS
  calls = 0;
  assert.ok(mathEquivalent("\\frac{1}{2}", "0.5", { cas: counting }).equivalent);
  assert.equal(calls, 0);
});

test("equivalence: pathological inputs are refused quickly", () => {
  const t0 = performance.now();
  assert.ok(!eq("9^{9^{9^{9}}}", "8^{8^{8^{8}}}"));
  assert.ok(!eq("10^{1000}", "10^{1000}+1"));
  assert.ok(eq("2^{100}", "1267650600228229401496703205376"));
  assert.ok(!eq("(" .repeat(3000) + "1", "1"));
  assert.ok(!eq("x^".repeat(3000) + "2", "2"));
  assert.ok(performance.now() - t0 < 2000);
});

test("auditMath: counts, accuracy and misses", () => {
  const r = auditMath([
    { response: "\\boxed{1/2}", reference: "0.5", equivalent: true, category: "a" },
    { response: "\\boxed{2}", reference: "0.5", equivalent: true, category: "a" },
    { response: "\\boxed{3}", reference: "3", equivalent: false, category: "b" },
    { response: "\\boxed{4}", reference: "5", equivalent: false },
  ]);
  assert.equal(r.n, 4);
  assert.equal(r.accuracy, 0.5);
  assert.equal(r.falseNegatives.length, 1);
  assert.equal(r.falsePositives.length, 1);
  assert.equal(r.falseNegatives[0]!.verdict.extracted, "2");
  assert.deepEqual(r.byCategory, { a: { n: 2, correct: 1 }, b: { n: 1, correct: 0 }, uncategorised: { n: 1, correct: 1 } });
  assert.equal(auditMath([]).accuracy, 1);
});
