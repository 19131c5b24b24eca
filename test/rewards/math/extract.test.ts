import { test } from "node:test";
import assert from "node:assert/strict";
import { extractAnswer, extractReference } from "../../../src/rewards/math/index.ts";
import { lastBoxed, readBraceGroup } from "../../../src/rewards/math/extract.ts";

const ans = (r: string, o = {}) => extractAnswer(r, o)?.answer ?? null;
const mode = (r: string, o = {}) => extractAnswer(r, o)?.mode ?? null;

test("extract: last \\boxed{} with nested braces, \\fbox, \\boxed without braces", () => {
  assert.equal(ans("first \\boxed{1} then \\boxed{\\frac{1}{2}}"), "\\frac{1}{2}");
  assert.equal(ans("\\boxed{\\left\\{1, \\{2\\}\\right\\}}"), "\\left\\{1, \\{2\\}\\right\\}");
  assert.equal(ans("so \\fbox{7}."), "7");
  assert.equal(ans("so $\\boxed 7$."), "7");
  assert.equal(ans("\\boxed{a^{b^{c}}} and more text"), "a^{b^{c}}");
  // an unclosed last \boxed falls back to the previous well-formed one
  assert.equal(ans("\\boxed{3} ... \\boxed{4"), "3");
  assert.equal(mode("\\boxed{3}"), "boxed");
  assert.equal(lastBoxed("\\boxed{".repeat(5000)), null);
});

test("extract: readBraceGroup honours escaped braces", () => {
  assert.deepEqual(readBraceGroup("{a\\}b}c", 0), { content: "a\\}b", end: 6 });
  assert.equal(readBraceGroup("{a{b}", 0), null);
  assert.equal(readBraceGroup("x", 0), null);
});

test("extract: GSM8K '#### n' takes the rest of the last marker's line", () => {
  assert.equal(ans("48/2 = 24\n#### 72"), "72");
  assert.equal(ans("#### 1\nmore\n#### 1,234."), "1,234");
  assert.equal(mode("#### 5"), "gsm8k");
});

test("extract: <answer> tags (case-insensitive, unclosed at the end, \\boxed inside wins)", () => {
  assert.equal(ans("<think>2+2</think><answer> 4 </answer>"), "4");
  assert.equal(ans("<ANSWER>x=1</ANSWER>"), "x=1");
  assert.equal(ans("<answer>so \\boxed{5}</answer>"), "5");
  assert.equal(ans("<answer>12"), "12");
  assert.equal(mode("<answer>12</answer> \\boxed{3}"), "answerTag");
});

test("extract: 'the answer is' / 'Answer:' up to the end of the sentence, decimals kept", () => {
  assert.equal(ans("So the answer is 3.5. Done."), "3.5");
  assert.equal(ans("The final answer is $\\frac{1}{2}$. I hope it is correct."), "\\frac{1}{2}");
  assert.equal(ans("**Answer:** 144"), "144");
  assert.equal(ans("Answer: x = -4\nbecause ..."), "x = -4");
  assert.equal(ans("the answer is \\boxed{9} obviously"), "9");
});

test("extract: <think> blocks are ignored unless ignoreThink is false", () => {
  assert.equal(ans("<think>\\boxed{1}</think> so \\boxed{2}"), "2");
  assert.equal(ans("<think>maybe \\boxed{1}</think> the result is 2"), "2");
  assert.equal(ans("<think>maybe \\boxed{1}</think> the result is 2", { ignoreThink: false }), "1");
  // a box inside an unclosed <think> is reasoning, not an answer (issue 26); so is text before a lone </think>
  assert.equal(ans("<think>it is \\boxed{6}"), null);
  assert.equal(ans("so \\boxed{6}</think> hmm, not sure"), null);
  assert.equal(ans("\\boxed{5}</think>\n\\boxed{6}"), "6");
  assert.equal(ans("<THINK>\\boxed{5}</THINK> \\boxed{6}"), "6");
  assert.equal(ans("<Thinking>\\boxed{5}</Thinking> so \\boxed{6}"), "6");
  assert.equal(ans("<seed:think>\\boxed{5}</seed:think>\\boxed{6}"), "6");
  assert.equal(ans("<|begin_of_thought|>\\boxed{5}<|end_of_thought|> \\boxed{6}"), "6");
  assert.equal(ans("\u25c1think\u25b7\\boxed{5}\u25c1/think\u25b7 \\boxed{6}"), "6");
  assert.equal(ans("<think>a</think> \\boxed{6} <think>second thoughts \\boxed{7}"), "6");
  assert.equal(ans("[THINK]\\boxed{5}[/THINK] \\boxed{6}"), "6");
  assert.equal(ans("[THINK]\\boxed{5}"), null);
  // harmony (gpt-oss): the final channel only
  const harmony = "<|channel|>analysis<|message|>\\boxed{5}<|end|><|start|>assistant<|channel|>final<|message|>So \\boxed{6}.<|return|>";
  assert.equal(ans(harmony), "6");
  assert.equal(ans("<|channel|>analysis<|message|>\\boxed{5}<|end|>"), null);
});

test("extract: bare short answers and the last-number fallback (on/off)", () => {
  assert.equal(ans("x = 3"), "x = 3");
  assert.equal(ans("$\\frac{7}{2}$"), "\\frac{7}{2}");
  assert.equal(mode("x = 3"), "bareAnswer");
  assert.equal(ans("She ends with 7 apples."), "7");
  assert.equal(mode("She ends with 7 apples."), "lastNumber");
  assert.equal(ans("She ends with 7 apples.", { lastNumberFallback: false }), null);
  assert.equal(ans("costs 1,250,000 dollars in total"), "1,250,000");
  assert.equal(ans("half: 1/2 of it"), "1/2");
  assert.equal(ans("it is \u22123 degrees today"), "-3");
  assert.equal(ans("no numbers here at all"), null);
  assert.equal(ans(""), null);
});

test("extract: custom mode order", () => {
  const r = "The answer is 5. \\boxed{6}";
  assert.equal(ans(r), "6");
  assert.equal(ans(r, { extraction: ["answerIs", "boxed"] }), "5");
  assert.equal(ans("#### 3", { extraction: ["boxed"] }), null);
});

test("extract: references: full solutions are reduced to their answer, plain references used whole", () => {
  assert.deepEqual(extractReference("Thus $\\boxed{\\frac{1}{3}}$."), { answer: "\\frac{1}{3}", mode: "boxed" });
  assert.deepEqual(extractReference("48+24 = <<48+24=72>>72\n#### 72"), { answer: "72", mode: "gsm8k" });
  assert.deepEqual(extractReference("x^2 + 1"), { answer: "x^2 + 1", mode: "whole" });
  assert.deepEqual(extractReference("$42$"), { answer: "42", mode: "whole" });
  assert.equal(extractReference("   "), null);
  assert.deepEqual(extractReference("\\boxed{3}", { extractReference: false }), { answer: "\\boxed{3}", mode: "whole" });
});
