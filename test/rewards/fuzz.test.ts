// Property test: 10,000 random strings through every verifier. No throw may escape, every result
// must have the common shape, and no call may take longer than PER_CALL_MS (a hang would show up
// as the test's own timeout). The code verifier's parsing runs on all 10,000; its sandbox on a
// sample (spawning 10,000 processes would take minutes).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { verifyChoice } from "../../src/rewards/choice.ts";
import { verifyExactMatch, verifyTokenF1 } from "../../src/rewards/exact.ts";
import { verifyFormat } from "../../src/rewards/format.ts";
import { verifyConstraints, listConstraints } from "../../src/rewards/ifeval/index.ts";
import { extractCode, runCodeTests } from "../../src/rewards/code/run-tests.ts";
import { loadMath, type MathModule } from "../../src/rewards/math-bridge.ts";

const RUNS = 10_000;
const PER_CALL_MS = 5000; // generous: this bound is about hangs, not speed, and CI machines are shared (pool default timeout: 10 s)

const pieces = [
  "\\boxed{", "\\fbox{", "}", "{", "<answer>", "</answer>", "<think>", "</think>", "Answer:", "answer is", " ", "\n", "(B)", "B",
  "1", "0.5", "/", "\\frac", "{1}{2}", "$", "```", "```python\n", "*", "**", "<<", ">>", "[x]", "P.S.", "SECTION 1", ",", ".", "!",
  "Привет", "你好", "\u0000", "\uFFFF", "😀", "\\", "%", "e", "-", "=", "x", "(", ")", "^", "\\sqrt", "\\pi", "\\left(", "\\right)",
];
const junk = fc.oneof(
  { arbitrary: fc.string({ maxLength: 300 }), weight: 10 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 200 }), weight: 10 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...pieces), maxLength: 120 }), weight: 10 },
  // rare, huge, adversarial inputs (deep nesting, long runs: regex backtracking, recursion)
  { arbitrary: fc.constantFrom("", " ", "\\boxed{".repeat(2000), "{".repeat(5000), "1".repeat(20000), "a ".repeat(10000), "(".repeat(3000) + "B"), weight: 1 },
);
/** Realistic references for the math verifier (its CAS makes junk-vs-junk pairs slow; those get
 *  MATH_JUNK_PAIRS runs instead of RUNS). */
const mathRefs = ["1/2", "3", "x+1", "\\frac{\\sqrt{2}}{2}", "(1, 2)", "[0, 1)", "42\\%", "2\\pi", "x = 3", "-0.25"];
const MATH_JUNK_PAIRS = 500;
const MATH_PER_CALL_MS = 5000; // well under the pool's default 10 s timeout

function checkShape(r: { correct: unknown; reward: unknown; reason: unknown }): void {
  assert.equal(typeof r.correct, "boolean");
  assert.equal(typeof r.reward, "number");
  assert.ok(Number.isFinite(r.reward as number));
  assert.equal(typeof r.reason, "string");
}

const allConstraints = listConstraints().map((c) => ({
  type: c.name,
  num_words: 3, num_sentences: 2, num_paragraphs: 2, num_chars: 10, nth_paragraph: 1, first_word: "a",
  keywords: ["a"], forbidden_words: ["b"], keyword: "x", frequency: 1, letter: "a", let_frequency: 1,
  capital_frequency: 1, end_phrase: "end", start_phrase: "start", script: "latin", pattern: "a+", num_bullets: 2,
  num_placeholders: 1, num_sections: 1, num_highlights: 1,
}));

test(`fuzz: ${RUNS} random strings through every in-process verifier`, { timeout: 240_000 }, () => {
  let slowest = 0;
  let slowestWhat = "";
  const timed = <T,>(what: string, f: () => T): T => {
    const t0 = performance.now();
    const v = f();
    const dt = performance.now() - t0;
    if (dt > slowest) {
      slowest = dt;
      slowestWhat = what;
    }
    return v;
  };
  fc.assert(
    fc.property(junk, junk, (response, reference) => {
      checkShape(timed("choice", () => verifyChoice(response, reference)));
      checkShape(timed("choice+options", () => verifyChoice(response, reference, { options: [reference, "x", response.slice(0, 10)] })));
      checkShape(timed("exact", () => verifyExactMatch(response, reference)));
      checkShape(timed("f1", () => verifyTokenF1(response, [reference, response])));
      checkShape(timed("format", () => verifyFormat(response)));
      checkShape(timed("format-template", () => verifyFormat(response, { template: "<a>{x}</a> {answer}" })));
      checkShape(timed("ifeval", () => verifyConstraints(response, allConstraints as never)));
      assert.equal(typeof timed("extractCode", () => extractCode(response, "python")), "string");
    }),
    { numRuns: RUNS, seed: 4242 },
  );
  assert.ok(slowest < PER_CALL_MS, `slowest call ${slowest.toFixed(0)} ms (${slowestWhat})`);
});

test(`fuzz: ${RUNS} random responses (and ${MATH_JUNK_PAIRS} random pairs) through the math verifier`, { timeout: 240_000 }, async (t) => {
  let math: MathModule;
  try {
    math = await loadMath();
  } catch (e) {
    t.skip(`math verifier not available: ${(e as Error).message}`);
    return;
  }
  let slowest = 0;
  let slowestWhat = "";
  const check = (response: string, reference: string) => {
    const t0 = performance.now();
    const m = math.verifyMath(response, reference);
    const dt = performance.now() - t0;
    if (dt > slowest) {
      slowest = dt;
      slowestWhat = `${JSON.stringify(response.slice(0, 30))} vs ${JSON.stringify(reference.slice(0, 30))}`;
    }
    assert.equal(typeof m.correct, "boolean");
    assert.equal(typeof m.reason, "string");
  };
  let i = 0;
  fc.assert(fc.property(junk, (response) => check(response, mathRefs[i++ % mathRefs.length]!)), { numRuns: RUNS, seed: 99 });
  fc.assert(fc.property(junk, junk, check), { numRuns: MATH_JUNK_PAIRS, seed: 100 });
  t.diagnostic(`math: slowest call ${slowest.toFixed(0)} ms (${slowestWhat})`);
  assert.ok(slowest < MATH_PER_CALL_MS, `slowest math call ${slowest.toFixed(0)} ms (${slowestWhat})`);
});

test("fuzz: random programs through the code sandbox never throw", { timeout: 120_000 }, async () => {
  const samples = fc.sample(junk, { numRuns: 16, seed: 7 });
  for (const [i, code] of samples.entries()) {
    const r = await runCodeTests(code, [{ input: "1", output: "1" }, { call: "f(1)", expected: 1 }], {
      language: i % 2 ? "python" : "javascript",
      limits: { timeoutMs: 2000 },
    });
    checkShape(r);
    assert.equal(r.cases.length, 2);
  }
});
