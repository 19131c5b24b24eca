// Property test: 10,000 random strings (plain, binary, LaTeX-ish junk, and rare huge adversarial inputs)
// through verifyMath, against realistic references and against each other. No call may throw and no call
// may take longer than PER_CALL_MS (generous for a loaded CI machine; typical calls take well under 1 ms).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mathEquivalent, verifyMath } from "../../../src/rewards/math/index.ts";

const RUNS = 10_000;
const PER_CALL_MS = 1000;

const latexPieces = [
  "\\boxed{", "\\fbox{", "}", "{", "\\{", "\\}", "<answer>", "</answer>", "<think>", "</think>", "#### ", "The answer is ", "Answer:",
  "\\frac", "\\dfrac", "{1}{2}", "12", "3", "0.5", ".", ",", "1,000", "-", "\u2212", "+", "*", "/", "^", "_", "(", ")", "[", "]", "|",
  "\\left(", "\\right)", "\\sqrt", "\\sqrt[3]", "\\pi", "\\infty", "\\cup", "\\text{", "\\mathrm{", "cm", " dollars", "%", "\\%",
  "x", "y", "e", "i", "=", "<", "\\le", "\\pm", "\\sin", "\\log_", "!", "\\binom", "\\begin{pmatrix}", "\\end{pmatrix}", "&", "\\\\",
  "9^9^9^9", "^{9^{9}}", "10^{100000}", "1e308", "\\overline{3}", "\\approx", "$", " ", "\n", "\\", "😀", "\u0000",
];
const junk = fc.oneof(
  { arbitrary: fc.string({ maxLength: 200 }), weight: 6 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 120 }), weight: 3 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...latexPieces), maxLength: 60 }), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      "", "\\boxed{".repeat(3000), "{".repeat(5000) + "1", "(".repeat(4000) + "1" + ")".repeat(4000), "1".repeat(30000),
      "x^".repeat(2000) + "2", "9^{".repeat(300) + "9" + "}".repeat(300), "\\sqrt{".repeat(500) + "2" + "}".repeat(500),
      "1, ".repeat(3000), "\\frac{".repeat(400) + "1" + "}{2}".repeat(400), "a ".repeat(20000), "-".repeat(10000) + "1",
      "(" + "x+".repeat(2000) + "1)^{99}", "\\begin{pmatrix}" + "1&".repeat(2000) + "1\\end{pmatrix}",
    ),
    weight: 1,
  },
);
const refs = ["1/2", "3", "x+1", "\\frac{\\sqrt{2}}{2}", "(1, 2)", "[0, 1)", "42\\%", "2\\pi", "x = 3", "-0.25", "\\{1,2\\}", "#### 72", "9^{9^{9^{9}}}"];

function timed<T>(f: () => T, stats: { slowest: number; what: string }, what: () => string): T {
  const t0 = performance.now();
  const v = f();
  const dt = performance.now() - t0;
  if (dt > stats.slowest) {
    stats.slowest = dt;
    stats.what = what();
  }
  return v;
}

test(`math fuzz: ${RUNS} random responses vs realistic references, and ${RUNS} random pairs`, { timeout: 300_000 }, (t) => {
  const stats = { slowest: 0, what: "" };
  let i = 0;
  const check = (response: string, reference: string) => {
    const v = timed(() => verifyMath(response, reference), stats, () => `${JSON.stringify(response.slice(0, 40))} vs ${JSON.stringify(reference.slice(0, 40))}`);
    assert.equal(typeof v.correct, "boolean");
    assert.equal(typeof v.reason, "string");
    assert.ok(v.extracted === null || typeof v.extracted === "string");
    const e = timed(() => mathEquivalent(response, reference), stats, () => `mathEquivalent ${JSON.stringify(response.slice(0, 40))}`);
    assert.equal(typeof e.equivalent, "boolean");
  };
  fc.assert(fc.property(junk, (r) => check(r, refs[i++ % refs.length]!)), { numRuns: RUNS, seed: 1234 });
  fc.assert(fc.property(junk, junk, check), { numRuns: RUNS, seed: 5678 });
  t.diagnostic(`slowest call ${stats.slowest.toFixed(1)} ms: ${stats.what}`);
  assert.ok(stats.slowest < PER_CALL_MS, `slowest call ${stats.slowest.toFixed(0)} ms (${stats.what})`);
});

test("math fuzz: a verifier that agrees with itself (reflexive) on random LaTeX-ish answers", { timeout: 120_000 }, () => {
  const answer = fc.string({ unit: fc.constantFrom(...latexPieces.slice(13, 60)), minLength: 1, maxLength: 12 });
  fc.assert(
    fc.property(answer, (a) => {
      const r = mathEquivalent(a, a);
      // an answer that normalises to something non-empty is equivalent to itself
      if (r.normalizedA.length > 0) assert.equal(r.equivalent, true, `${JSON.stringify(a)}: ${r.reason}`);
    }),
    { numRuns: 2000, seed: 42 },
  );
});
