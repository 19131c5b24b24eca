import { test } from "node:test";
import assert from "node:assert/strict";
import {
  countdownTask,
  createCountdownTask,
  generateExamples,
  verifyCountdown,
  extractCountdownExpression,
  evaluateExpression,
  Rational,
  type Example,
} from "../../src/tasks/index.ts";

const ex = (numbers: number[], target: number, usage: "at-most-once" | "exactly-once" = "at-most-once"): Example => ({
  id: "t",
  prompt: "",
  answer: String(target),
  task: "countdown",
  meta: { numbers, target, usage },
});

test("every generated instance is solvable with all numbers exactly once; the verifier accepts the stored solution", () => {
  const strict = createCountdownTask({ usage: "exactly-once", name: "countdown-strict" });
  for (const d of [3, 4, 5, 6]) {
    for (const split of ["train", "test"] as const) {
      for (const e of generateExamples(countdownTask, { n: 60, seed: 11, difficulty: d, split })) {
        const m = e.meta as { numbers: number[]; target: number };
        assert.equal(m.numbers.length, d);
        assert.ok(m.target >= 1 && m.target <= 100);
        assert.ok(m.numbers.every((n) => n >= 1 && n <= 100));
        assert.ok(e.prompt.includes(`[${m.numbers.join(", ")}]`) && e.prompt.includes(`make ${m.target}`));
        assert.equal(countdownTask.verify(e.solution!, e).correct, true, e.solution);
        assert.equal(countdownTask.verify(`<answer>${e.solution}</answer>`, e).correct, true);
        assert.equal(strict.verify(e.solution!, { ...e, meta: { ...m, usage: "exactly-once" } }).correct, true);
      }
    }
  }
});

test("countdown is deterministic and train/test are disjoint", () => {
  const a = generateExamples(countdownTask, { n: 30, seed: 5, difficulty: 4 });
  assert.deepEqual(a, generateExamples(countdownTask, { n: 30, seed: 5, difficulty: 4 }));
  const key = (e: Example) => e.prompt;
  const train = new Set(generateExamples(countdownTask, { n: 500, seed: 5, difficulty: 3 }).map(key));
  for (const e of generateExamples(countdownTask, { n: 200, seed: 5, difficulty: 3, split: "test" })) assert.ok(!train.has(key(e)));
});

test("the verifier accepts any valid expression, not only the stored one", () => {
  const e = ex([3, 5, 7, 2], 16);
  assert.equal(countdownTask.verify("<answer>(3 + 5) * 2</answer>", e).correct, true); // subset
  assert.equal(countdownTask.verify("<answer>7 + 3 * 2 + 5 - 2 + 2 - 2</answer>", e).reason, "uses 2 2 times but it is given 1 time(s)");
  assert.equal(countdownTask.verify("<answer>7*2+5-3</answer>", e).correct, true); // all four numbers
  assert.equal(countdownTask.verify("<answer>7×2+5−3</answer>", e).correct, true);
  assert.equal(countdownTask.verify("<answer>[7 ÷ 7]</answer>", e).correct, false);
  assert.equal(countdownTask.verify("I think it is\n(7 - 5) * (3 + 5)\n", ex([7, 5, 3, 5], 16)).correct, true);
  assert.equal(countdownTask.verify("Answer: 2 * (3 + 5) = 16", e).correct, true);
  assert.equal(countdownTask.verify("16 = 2 * (3 + 5)", e).correct, true);
  // rational intermediate values are fine when the result is exact
  assert.equal(verifyCountdown("(3 / 7 + 5) * 7 - 22", [3, 7, 5, 22], 16).correct, false); // 7 used twice
  assert.equal(verifyCountdown("<answer>(1 / 3 + 1) * 6</answer>", [1, 3, 1, 6], 8).correct, true);
});

test("exactly-once mode rejects unused numbers", () => {
  const e = ex([3, 5, 7, 2], 16, "exactly-once");
  assert.equal(countdownTask.verify("<answer>(3 + 5) * 2</answer>", e).reason, "does not use 7");
  assert.match(countdownTask.verify("<answer>(7 + 3 - 2) * (5 - 3)</answer>", e).reason, /uses 3 2 times/);
  assert.equal(countdownTask.verify("<answer>7 * 2 + 5 - 3</answer>", e).correct, true);
  assert.equal(countdownTask.verify("<answer>(7 - 5) * (3 + 5)</answer>", e).correct, false);
  assert.equal(countdownTask.verify("<answer>(7 + 5 - 3) * 2 - 2</answer>", e).correct, false);
});

test("wrong and malformed answers score 0 with a reason", () => {
  const e = ex([3, 5, 7, 2], 16);
  const cases: [string, RegExp][] = [
    ["", /no expression found/],
    ["no numbers here", /no expression found/],
    ["<answer>3 + 5</answer>", /evaluates to 8, not 16/],
    ["<answer>(3 + 5 * 2</answer>", /missing closing parenthesis/],
    ["<answer>3 + + </answer>", /ends too early/],
    ["<answer>8 * 2</answer>", /uses 8, which is not one of the given numbers/],
    ["<answer>7 / (5 - 5)</answer>", /division by zero|uses 5/],
    ["<answer>7 / (3 - 3)</answer>", /division by zero/],
    ["<answer>7 + 3 + 3 + 3</answer>", /uses 3 2 times/],
    ["<answer>2.5 * 7</answer>", /decimal numbers are not allowed/],
    ["<answer>3 5</answer>", /unexpected "5"/],
  ];
  for (const [resp, why] of cases) {
    const v = countdownTask.verify(resp, e);
    assert.equal(v.correct, false, resp);
    assert.equal(v.reward, 0);
    assert.match(v.reason, why, resp);
  }
  assert.match(verifyCountdown("<answer>6 / (3 - 3)</answer>", [6, 3, 3], 2).reason, /division by zero/);
  assert.equal(countdownTask.verify("x", { id: "a", prompt: "", answer: "1", task: "countdown" }).correct, false);
});

test("expression evaluation is exact and rejects junk", () => {
  assert.ok(evaluateExpression("1/3 + 1/3 + 1/3").value.equals(Rational.of(1)));
  assert.ok(evaluateExpression("-(2 - 5) * 2").value.equals(Rational.of(6)));
  assert.equal(evaluateExpression("10 - 4 - 3").value.toString(), "3");
  assert.equal(evaluateExpression("12 / 4 / 3").value.toString(), "1");
  assert.equal(evaluateExpression("2 / 4").value.toString(), "1/2");
  assert.deepEqual(evaluateExpression("(1+2)*3").numbers, [1, 2, 3]);
  assert.throws(() => evaluateExpression(""), /empty expression/);
  assert.throws(() => evaluateExpression("2 ** 3"), /unexpected "\*"/);
  assert.throws(() => evaluateExpression("eval(1)"), /unexpected character "e"/);
  assert.equal(extractCountdownExpression("<answer>1+2</answer> then <answer>3*4</answer>"), "3*4");
  assert.equal(extractCountdownExpression("<answer> 5 + 6"), "5 + 6");
});

test("text inside <answer> tags must be only the expression", () => {
  const e = ex([3, 5, 7, 2], 16);
  assert.match(countdownTask.verify("<answer>I used 3 then 2 * (3 + 5)</answer>", e).reason, /unexpected character "I"/);
  assert.equal(countdownTask.verify("<answer> 2 * (3 + 5) = 16. </answer>", e).correct, true);
  assert.equal(countdownTask.verify("so the answer is 2 * (3 + 5).", e).correct, true);
});
