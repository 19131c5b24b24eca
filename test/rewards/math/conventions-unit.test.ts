// Unit tests of the answer conventions added for issue 15: box groups, math spans, statements, word-bounded
// numbers, the decimalComma option in all three modes, labels, matrix arithmetic and sums.
import { test } from "node:test";
import assert from "node:assert/strict";
import { extractAnswer, mathEquivalent, verifyMath } from "../../../src/rewards/math/index.ts";
import { allBoxed, lastBoxedGroup, mathSpans, statementValue } from "../../../src/rewards/math/extract.ts";

const ans = (r: string) => extractAnswer(r)?.answer ?? null;
const mode = (r: string) => extractAnswer(r)?.mode ?? null;
const ok = (r: string, ref: string, o = {}) => verifyMath(r, ref, o).correct;

test("box groups: connectors join boxes, prose separates them, nested boxes count once", () => {
  assert.deepEqual(allBoxed("\\boxed{\\boxed{1}} and \\boxed{2}").map((b) => b.content), ["\\boxed{1}", "2"]);
  assert.equal(lastBoxedGroup("$\\boxed{1}\\boxed{2}$")?.answer, "1, 2");
  assert.equal(lastBoxedGroup("\\boxed{(2,2)} \\text{and} \\boxed{(6,2)}")?.answer, "(2,2), (6,2)");
  assert.equal(lastBoxedGroup("$x_1=\\boxed{3}$ and $x_2 = \\boxed{4}$")?.answer, "3, 4");
  assert.equal(lastBoxedGroup("\\boxed{1} is wrong, the check gives \\boxed{2}")?.answer, "2");
  assert.equal(lastBoxedGroup("no box"), null);
});

test("math spans: $…$ on one line, $$…$$, \\(…\\), \\[…\\]; currency dollars around prose are not math", () => {
  assert.deepEqual(mathSpans("a $x$ b $$y$$ c \\(z\\) d \\[w\\]").map((s) => s.content), ["x", "y", "z", "w"]);
  assert.deepEqual(mathSpans("it costs $5 and the pen costs $3 today").map((s) => s.content), []);
  assert.deepEqual(mathSpans("a $x\ny$ b").map((s) => s.content), []);
  assert.deepEqual(mathSpans("price \\$5 and $t$").map((s) => s.content), ["t"]);
});

test("statements: a leading value is kept, otherwise the value after the last verb; spans joined", () => {
  assert.equal(statementValue(" is 5 because x = 3."), "5");
  assert.equal(statementValue(": The largest $n$ is 34."), "34");
  assert.equal(statementValue(" The integers are $1$ and $-2$."), "1, -2");
  assert.equal(statementValue(" is $\\frac12$, i.e. one half"), "\\frac12");
  assert.equal(statementValue(": The value is \\boxed{7} exactly"), "7");
});

test("extraction priority: a later final-answer statement beats a box; a box after it wins", () => {
  assert.equal(ans("First \\boxed{12}. Rechecking, the final answer is $13$."), "13");
  assert.equal(mode("First \\boxed{12}. Rechecking, the final answer is $13$."), "finalAnswer");
  assert.equal(ans("The final answer is below.\n\\boxed{13}"), "13");
  assert.equal(ans("\\boxed{4} is the final answer to the question."), "4");
  assert.equal(ans("Final Answer: The largest $n$ is 34."), "34");
  assert.equal(ans("Therefore $x \\geq 5$ is the solution."), "x \\geq 5");
  assert.equal(mode("Therefore $x \\geq 5$ is the solution."), "lastMath");
  assert.equal(ans("There are 12 ways to choose $k$."), "12");
});

test("numbers: never a digit inside a word or a math span", () => {
  assert.equal(ans("The code is AZYUK2A"), null);
  assert.equal(ans("Water is H2O, we add 3 cups"), "3");
  assert.equal(ok("The answer is $2^{10}.$", "2"), false);
  assert.equal(ok("The answer is $1/3.$", "1"), false);
  assert.equal(ok("Total: 1,000.99€", "1000.99"), true);
});

test("decimalComma: never / auto (default) / always", () => {
  // auto: a comma that cannot be a thousands separator, against a single number
  assert.equal(ok("1,22", "1.22"), true);
  assert.equal(ok("1000,99", "1000.99"), true);
  assert.equal(ok("0,111", "0.111"), true);
  assert.equal(ok("1,222", "1222"), true);
  assert.equal(ok("1,222", "1.222"), false);
  assert.equal(ok("1,22", "1, 22"), true); // against a list it is a list
  assert.equal(ok("Total: 3,5 €", "3.5"), true); // plain text
  assert.equal(ok("$3,5$", "3.5"), false); // in math, two answers
  assert.match(verifyMath("1,22", "1.22").reason, /decimal comma/);
  // never
  assert.equal(ok("1,22", "1.22", { decimalComma: "never" }), false);
  assert.equal(ok("1,22", "1, 22", { decimalComma: "never" }), true);
  // always
  assert.equal(ok("$3,5$", "3.5", { decimalComma: "always" }), true);
  assert.equal(ok("1,222", "1.222", { decimalComma: "always" }), true);
  assert.equal(ok("1,2", "1, 2", { decimalComma: "always" }), false);
});

test("labels and chains: the value named by a label is compared, on either side", () => {
  assert.equal(mathEquivalent("AB=4,CD=5", "4,5").equivalent, true);
  assert.equal(mathEquivalent("4,5", "AB=4,CD=5").equivalent, true);
  assert.equal(mathEquivalent("V_1:V_2=11:21", "11:21").equivalent, true);
  assert.equal(mathEquivalent("V_1:V_2=11:21", "21:11").equivalent, false);
  assert.equal(mathEquivalent("|AB|=1", "1").equivalent, true);
  assert.equal(mathEquivalent("\\frac{NO}{BO}=\\frac{1}{\\sqrt6}", "\\frac{\\sqrt6}{6}").equivalent, true);
  assert.equal(mathEquivalent("p=5,q=2;p=7,q=2", "(5,2),(7,2)").equivalent, true);
  assert.equal(mathEquivalent("p=5,q=2;p=7,q=2", "(2,5),(7,2)").equivalent, false);
  assert.equal(mathEquivalent("n=1,2,3", "3,2,1").equivalent, true);
  assert.equal(mathEquivalent("\\angle ABC = 60^\\circ", "60").equivalent, true);
  // a number on the left is not a label: 2x = 6 does not state 6
  assert.equal(mathEquivalent("2x=6", "6").equivalent, false);
});

test("sets, tuples and intervals: (0;-2;6), glued 'or', repeats, chained inequalities, |z| bounds", () => {
  assert.equal(mathEquivalent("(0;-2;6)", "(0,-2,6)").equivalent, true);
  assert.equal(mathEquivalent("(11,7)or(7,11)", "(7,11),(11,7)").equivalent, true);
  assert.equal(mathEquivalent("(1,2),(1,2),(3,4)", "\\{(1,2),(3,4)\\}").equivalent, true);
  assert.equal(mathEquivalent("0<f(x)<1", "(0,1)").equivalent, true);
  assert.equal(mathEquivalent("0<f(x)<1", "[0,1)").equivalent, false);
  assert.equal(mathEquivalent("1\\le|z|\\le\\frac32", "[-\\frac32,-1]\\cup[1,\\frac32]").equivalent, true);
  assert.equal(mathEquivalent("1\\le|z|\\le\\frac32", "[1,\\frac32]").equivalent, false);
  assert.equal(mathEquivalent("x<-2 \\text{ or } x>3", "(-\\infty,-2)\\cup(3,\\infty)").equivalent, true);
});

test("matrix arithmetic and sums are evaluated, not compared as text", () => {
  const I = "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}";
  const A = "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}";
  assert.equal(mathEquivalent(`${I}+${A}`, "\\begin{pmatrix}2&2\\\\3&5\\end{pmatrix}").equivalent, true);
  assert.equal(mathEquivalent(`${I}\\cdot ${I}`, I).equivalent, true);
  assert.equal(mathEquivalent(`${A}^2`, "\\begin{pmatrix}7&10\\\\15&22\\end{pmatrix}").equivalent, true);
  assert.equal(mathEquivalent(`${A}^T`, "\\begin{pmatrix}1&3\\\\2&4\\end{pmatrix}").equivalent, true);
  assert.equal(mathEquivalent(`2${A}`, "\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix}").equivalent, true);
  assert.equal(mathEquivalent(`${A}${I}`, "\\begin{pmatrix}1&2\\\\3&5\\end{pmatrix}").equivalent, false);
  assert.equal(mathEquivalent("\\sum_{k=1}^{10} k^2", "385").equivalent, true);
  assert.equal(mathEquivalent("\\sum_{i=1}^{10} i", "55").equivalent, true);
  assert.equal(mathEquivalent("\\prod_{k=1}^{5} k", "120").equivalent, true);
  assert.equal(mathEquivalent("\\sum_{k=1}^{10} k", "56").equivalent, false);
  assert.equal(mathEquivalent("\\sum_{k=1}^{n} k", "\\frac{n(n+1)}{2}").equivalent, false); // symbolic bounds: text only
});

test("text answers: \\text{Even} vs $Even$, case-insensitive", () => {
  assert.equal(ok("$Even$", "\\text{Even}"), true);
  assert.equal(ok("So the function is $\\text{even}$.", "Even"), true);
  assert.equal(ok("$Even$", "\\text{Odd}"), false);
});
