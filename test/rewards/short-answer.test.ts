import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyChoice, extractChoice } from "../../src/rewards/choice.ts";
import { verifyExactMatch, verifyTokenF1, tokenF1 } from "../../src/rewards/exact.ts";
import { verifyFormat, compileTemplate } from "../../src/rewards/format.ts";
import { normalizeAnswer, lastBoxed } from "../../src/rewards/text.ts";

test("choice: labels in the usual wrappings", () => {
  const cases: [string, string | null][] = [
    ["B", "B"],
    ["(B)", "B"],
    ["b.", "B"],
    ["Answer: B", "B"],
    ["I think it's C. Final answer: (D)", "D"],
    ["The answer is (C).", "C"],
    ["Reasoning...\n\\boxed{B}", "B"],
    ["\\boxed{\\text{(C)}}", "C"],
    ["<answer>A</answer>", "A"],
    ["**Answer: E**", "E"],
    ["Let me think.\nOption A is wrong, B too.\nSo (D)", "D"],
    ["I cannot decide.", null],
    ["A cat sat on the mat for a while and then left the house", null],
  ];
  for (const [resp, want] of cases) assert.equal(extractChoice(resp), want, resp);
});

test("choice: option text match and keys given as text", () => {
  const options = { A: "Paris", B: "London", C: "New York City" };
  assert.equal(extractChoice("The capital of France is Paris.", { options }), "A");
  assert.equal(extractChoice("I believe the answer is new york city", { options }), "C");
  assert.equal(extractChoice("Paris or London?", { options }), null);
  assert.equal(verifyChoice("Answer: London", "B", { options }).correct, true);
  assert.equal(verifyChoice("Answer: B", "London", { options }).correct, true);
  assert.equal(verifyChoice("(A)", "B").correct, false);
  assert.equal(verifyChoice("(A)", "(a)").correct, true);
  const r = verifyChoice("no idea", "A");
  assert.equal(r.extracted, null);
  assert.match(r.reason, /no choice/);
});

test("choice: custom labels", () => {
  assert.equal(extractChoice("Answer: 3", { labels: ["1", "2", "3", "4"] }), "3");
  assert.equal(verifyChoice("(2)", "2", { labels: ["1", "2"] }).correct, true);
});

test("exact match and token F1 follow SQuAD normalisation", () => {
  assert.equal(normalizeAnswer("The  Eiffel-Tower!"), "eiffel tower");
  assert.equal(verifyExactMatch("Answer: the Eiffel Tower.", "Eiffel tower").correct, true);
  assert.equal(verifyExactMatch("<answer>Paris</answer>", ["London", "paris"]).correct, true);
  assert.equal(verifyExactMatch("Paris, France", "Paris").correct, false);
  assert.equal(tokenF1("the cat sat", "cat sat down"), (2 * (2 / 2) * (2 / 3)) / (2 / 2 + 2 / 3));
  assert.equal(tokenF1("", ""), 1);
  assert.equal(tokenF1("a", "cat"), 0);
  const f = verifyTokenF1("Answer: Barack Obama", ["Obama", "President Barack Obama"], { threshold: 0.5 });
  assert.ok(Math.abs(f.reward - 0.8) < 1e-12);
  assert.equal(f.correct, true);
});

test("lastBoxed handles nesting and picks the last", () => {
  assert.equal(lastBoxed("\\boxed{1} then \\boxed{\\frac{1}{2}}"), "\\frac{1}{2}");
  assert.equal(lastBoxed("\\boxed{unclosed"), null);
});

test("format: think/answer layout", () => {
  const good = "<think>\nsteps\n</think>\n<answer>42</answer>";
  const r = verifyFormat(good);
  assert.equal(r.correct, true);
  assert.equal(r.extracted, "42");
  assert.equal(r.groups.think, "\nsteps\n");
  assert.equal(verifyFormat("<think>a</think><answer>1</answer><answer>2</answer>").correct, false);
  assert.equal(verifyFormat("preamble <think>a</think><answer>1</answer>").correct, false);
  assert.equal(verifyFormat("<answer>1</answer><think>a</think>").correct, false);
  assert.equal(verifyFormat("<think>a</think>").correct, false);
});

test("format: templates and regexes", () => {
  const tpl = "<reasoning>{why}</reasoning> Final: {answer}";
  const r = verifyFormat("<reasoning>because</reasoning>\n\nFinal: 7", { template: tpl });
  assert.equal(r.correct, true);
  assert.deepEqual(r.groups, { why: "because", answer: "7" });
  assert.equal(verifyFormat("Final: 7", { template: tpl }).correct, false);
  assert.equal(verifyFormat("x <b>y</b> z", { template: "<b>{...}</b>", allowSurrounding: true }).correct, true);
  assert.equal(verifyFormat("ANSWER=5", { template: /^ANSWER=(?<answer>\d+)$/ }).extracted, "5");
  assert.throws(() => compileTemplate("{a}{a}"), /used twice/);
});
