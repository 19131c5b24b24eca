// Issue 26 (graders that fail closed), math rows: the generated convention set (test/fixtures/math/failclosed.jsonl,
// labels by construction in generate-failclosed.ts), the peer set in Math-Verify's conventions
// (test/fixtures/math/peer-mathverify.jsonl, own cases), and exploit/control pairs through the registered `math`
// verifier — the path `rlvr verify math` takes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { auditMath, type MathCase } from "../../../src/rewards/math/audit.ts";
import { getVerifier } from "../../../src/rewards/index.ts";

const load = (name: string): MathCase[] =>
  readFileSync(new URL(`../../fixtures/math/${name}`, import.meta.url), "utf8")
    .split("\n")
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l) as MathCase);

const CATEGORIES = ["words_after_number", "numeric_equation", "percent", "tolerance", "think_tags", "last_statement", "unicode", "latex_eval"];

test("issue-26 conventions: every category with both labels; >= 99% agreement, <= 0.5% false positives", (t) => {
  const cases = load("failclosed.jsonl");
  assert.ok(cases.length >= 500, `only ${cases.length} cases`);
  assert.deepEqual([...new Set(cases.map((c) => c.category))].sort(), [...CATEGORIES].sort());
  for (const cat of CATEGORIES) {
    const mine = cases.filter((c) => c.category === cat);
    assert.ok(mine.some((c) => c.equivalent) && mine.some((c) => !c.equivalent), `category ${cat} lacks a positive or a negative`);
  }
  const r = auditMath(cases);
  for (const [cat, b] of Object.entries(r.byCategory)) t.diagnostic(`${cat.padEnd(20)} ${b.correct}/${b.n}`);
  for (const m of [...r.falseNegatives, ...r.falsePositives])
    t.diagnostic(`${m.equivalent ? "false negative" : "false positive"} [${m.category}] ${JSON.stringify(m.response)} vs ${JSON.stringify(m.reference)}: ${m.verdict.reason}`);
  t.diagnostic(`agreement ${(r.accuracy * 100).toFixed(2)}% on ${r.n} cases, ${r.falsePositives.length} false positives`);
  assert.ok(r.accuracy >= 0.99, `agreement ${(r.accuracy * 100).toFixed(2)}% < 99%`);
  assert.ok(r.falsePositives.length <= 0.005 * r.n, `${r.falsePositives.length} false positives > 0.5% of ${r.n}`);
});

test("Math-Verify-convention peer set: >= 97% agreement with <= 1 false positive (agreement printed)", (t) => {
  const r = auditMath(load("peer-mathverify.jsonl"));
  for (const m of [...r.falseNegatives, ...r.falsePositives])
    t.diagnostic(`${m.equivalent ? "false negative" : "false positive"} [${m.category}] ${JSON.stringify(m.response)} vs ${JSON.stringify(m.reference)}: ${m.verdict.reason}`);
  t.diagnostic(`peer agreement ${(r.accuracy * 100).toFixed(2)}% on ${r.n} cases, ${r.falsePositives.length} false positives`);
  assert.ok(r.n >= 200);
  assert.ok(r.accuracy >= 0.97, `agreement ${(r.accuracy * 100).toFixed(2)}% < 97%`);
  assert.ok(r.falsePositives.length <= 1, `${r.falsePositives.length} false positives`);
});

/** [exploit response, control response, reference]: the exploit must score 0, the control 1. */
const PAIRS: [string, string, string][] = [
  ["\\boxed{8 \\text{ is not the answer}}", "\\boxed{8 \\text{ pencils}}", "8"],
  ["The final answer is 8 below zero.", "The final answer is 8.", "8"],
  ["\\boxed{8 \\text{ or more}}", "\\boxed{8}", "8"],
  ["The answer is 15 or sixteen.", "The answer is 15.", "15"],
  ["\\boxed{4 \\text{ hundred}}", "\\boxed{4}", "4"],
  ["\\boxed{4 \\text{ hundred}}", "\\boxed{4 \\text{ hundred}}", "400"],
  ["\\boxed{6 \\text{ squared}}", "\\boxed{6}", "6"],
  ["\\boxed{6}", "\\boxed{6 \\text{ squared}}", "36"],
  ["\\boxed{5 = 9}", "\\boxed{4 + 5 = 9}", "9"],
  ["\\boxed{900\\%}", "\\boxed{9\\%}", "9"],
  ["\\boxed{6283185307}", "\\boxed{2\\pi \\cdot 10^{9}}", "2000000000\\pi"],
  ["<think>so \\boxed{21}", "<think>hmm</think> \\boxed{21}", "21"],
  ["I get \\boxed{21}</think> wait", "Reasoning.</think>\n\\boxed{21}", "21"],
  ["A tempting slip is \\boxed{21}; the answer is 22.", "A tempting slip is \\boxed{20}; the answer is 21.", "21"],
  ["Maybe \\boxed{21}. Final: \\boxed{}", "Maybe \\boxed{20}. Final: \\boxed{21}", "21"],
  ["\\boxed{\\lfloor 21.9 \\rfloor}", "\\boxed{\\lfloor 22.9 \\rfloor}", "22"],
  ["\\boxed{23 \\bmod 5}", "\\boxed{23 \\bmod 5}", "3"],
  ["\\boxed{23 \\bmod 5}", "\\boxed{23}", "23"],
  ["\\boxed{٢٣}", "\\boxed{٢٢}", "22"],
  ["\\boxed{\\color{red}{23}}", "\\boxed{\\color{red}{22}}", "22"],
  // differing <answer> tags hedge (no answer, no fallback to a box or a number); the same one repeated is one answer
  ["<answer>8</answer> <answer>7</answer>", "<answer>7</answer> <answer> 7 </answer>", "7"],
  ["<answer>none of the above</answer> <answer>\\frac{1}{2}</answer>", "<answer>\\boxed{\\frac{1}{2}}</answer> <answer>\\frac12</answer>", "\\frac{1}{2}"],
  ["<answer>8 <answer>7</answer>", "<think><answer>8</answer></think><answer>7</answer>", "7"],
  // a bound before the number is not the number; "approximately", a sign, an inequality answer stay as they were
  ["at least 7", "-7", "-7"],
  ["So the total is at most 24.", "So the total is 24.", "24"],
  ["There are more than 24 legs.", "There are 24 legs.", "24"],
  ["up to 7", "approximately 3.14", "3.14"],
  ["We need no fewer than 7 boxes.", "x \\geq 7", "x \\ge 7"],
  ["so n \\geq 7", "so n = 7", "7"],
  ["almost 7", "about 7", "7"],
  // a final "the answer is …" after the last box wins, even when it is not math; one that points back keeps the box
  ["A common mistake is \\boxed{\\frac{1}{2}}; the answer is none of the above.", "A common mistake is \\boxed{\\frac{1}{3}}; the answer is $\\frac{1}{2}$.", "\\frac{1}{2}"],
  ["So \\boxed{7}. Hmm, the answer is not correct.", "So \\boxed{7}. I hope the answer is correct.", "7"],
  ["So \\boxed{7}. Actually the answer is therefore eight.", "\\boxed{7}. Note the answer is independent of the order.", "7"],
];

test("math exploits (issue 26) score 0 through the registered verifier; each control scores 1", async () => {
  const v = getVerifier("math");
  const row = (answer: string) => ({ id: "x", prompt: "q", task: "t", answer }) as never;
  for (const [exploit, control, ref] of PAIRS) {
    const bad = await v.verify(exploit, row(ref));
    const good = await v.verify(control, row(ref));
    // a pair whose two sides are the same response checks an evaluation (4 hundred is 400): it must score 1
    assert.equal(bad.reward, exploit === control ? 1 : 0, `exploit ${JSON.stringify(exploit)} vs ${ref}: ${bad.reason}`);
    assert.equal(good.reward, 1, `control ${JSON.stringify(control)} vs ${ref}: ${good.reason}`);
  }
});
