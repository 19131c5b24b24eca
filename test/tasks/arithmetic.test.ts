import { test } from "node:test";
import assert from "node:assert/strict";
import { getTask, generateExamples, additionTask, arithmeticTask, createArithmeticTask, evaluateTerms, paddedAdditionTask } from "../../src/tasks/index.ts";

test("addition prompts are short and regular; answer is the sum", () => {
  for (const ex of generateExamples(additionTask, { n: 200, seed: 3, difficulty: 4 })) {
    assert.match(ex.prompt, /^\d{1,4}\+\d{1,4}=$/);
    const [a, b] = ex.prompt.slice(0, -1).split("+").map(Number);
    assert.equal(ex.answer, String(a! + b!));
    assert.equal(ex.solution, ex.answer);
    assert.equal(ex.task, "addition");
    assert.equal(ex.difficulty, 4);
  }
});

test("addition-padded: fixed-width operands and answer; the verifier compares integers", () => {
  for (const d of [1, 2, 5]) {
    for (const ex of generateExamples(paddedAdditionTask, { n: 100, seed: 2, difficulty: d })) {
      assert.match(ex.prompt, new RegExp(`^\\d{${d}}\\+\\d{${d}}=$`));
      assert.equal(ex.answer.length, d + 1);
      const [a, b] = ex.prompt.slice(0, -1).split("+").map(Number);
      assert.equal(Number(ex.answer), a! + b!);
      assert.equal(ex.task, "addition-padded");
      assert.ok(paddedAdditionTask.verify(ex.answer, ex).correct);
      assert.ok(paddedAdditionTask.verify(String(a! + b!), ex).correct, "the unpadded integer is the same answer");
      assert.ok(!paddedAdditionTask.verify(String(a! + b! + 1).padStart(d + 1, "0"), ex).correct);
    }
  }
  // three terms of 2 digits: the largest sum 297 has 3 digits
  const three = createArithmeticTask({ name: "add3", terms: 3, pad: true }).generate({ seed: 1, index: 0, difficulty: 2, split: "train" });
  assert.match(three.prompt, /^\d\d\+\d\d\+\d\d=$/);
  assert.equal(three.answer.length, 3);
  assert.throws(() => createArithmeticTask({ ops: ["+", "*"], pad: true }), /only defined for addition/);
  const test = new Set(generateExamples(paddedAdditionTask, { n: 200, seed: 1, difficulty: 2, split: "test" }).map((e) => e.prompt));
  for (const e of generateExamples(paddedAdditionTask, { n: 2000, seed: 1, difficulty: 2, split: "train" })) assert.ok(!test.has(e.prompt));
});

test("addition is deterministic in the seed and differs across seeds", () => {
  const a = generateExamples(additionTask, { n: 50, seed: 7, difficulty: 5 });
  const b = generateExamples(additionTask, { n: 50, seed: 7, difficulty: 5 });
  const c = generateExamples(additionTask, { n: 50, seed: 8, difficulty: 5 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.map((e) => e.prompt), c.map((e) => e.prompt));
});

test("addition train and test never share a prompt (even at 1 digit, even across seeds)", () => {
  for (const d of [1, 2, 3]) {
    const train = new Set(
      [1, 2].flatMap((seed) => generateExamples(additionTask, { n: 400, seed, difficulty: d, split: "train" }).map((e) => e.prompt)),
    );
    const test = generateExamples(additionTask, { n: 100, seed: 1, difficulty: d, split: "test" });
    for (const e of test) assert.ok(!train.has(e.prompt), `${e.prompt} in both splits`);
  }
});

test("addition verifier: digits then end/whitespace/special token; exact integer match", () => {
  const ex = additionTask.generate({ seed: 1, index: 0, difficulty: 3, split: "train" });
  const ans = ex.answer;
  assert.equal(additionTask.verify(ans, ex).correct, true);
  assert.equal(additionTask.verify(` ${ans}\n`, ex).correct, true);
  assert.equal(additionTask.verify(`${ans} and more`, ex).correct, true);
  assert.equal(additionTask.verify(`${ans}<|endoftext|>`, ex).correct, true);
  assert.equal(additionTask.verify(`0${ans}`, ex).correct, true); // same integer
  const wrong = additionTask.verify(String(Number(ans) + 1), ex);
  assert.equal(wrong.correct, false);
  assert.equal(wrong.reward, 0);
  assert.equal(wrong.extracted, String(Number(ans) + 1));
  assert.equal(additionTask.verify(`${ans}x`, ex).correct, false);
  assert.equal(additionTask.verify(`x${ans}`, ex).extracted, null);
  assert.equal(additionTask.verify("", ex).reason, "no answer found");
  assert.equal(additionTask.verify(undefined as unknown as string, ex).correct, false);
});

test("addition difficulty range is checked", () => {
  assert.throws(() => additionTask.generate({ seed: 1, index: 0, difficulty: 0, split: "train" }), /difficulty must be an integer in \[1, 18\], got 0/);
  const ex = additionTask.generate({ seed: 1, index: 0, difficulty: 18, split: "train" });
  const [a, b] = ex.prompt.slice(0, -1).split("+").map(BigInt);
  assert.equal(ex.answer, String(a! + b!));
});

test("addition with more terms", () => {
  const t = createArithmeticTask({ terms: 4, name: "add4" });
  const ex = t.generate({ seed: 2, index: 5, difficulty: 2, split: "train" });
  const parts = ex.prompt.slice(0, -1).split("+").map(Number);
  assert.equal(parts.length, 4);
  assert.equal(ex.answer, String(parts.reduce((s, x) => s + x, 0)));
});

test("arithmetic respects precedence and allows negatives", () => {
  assert.equal(evaluateTerms([2n, 3n, 4n], ["+", "*"]), 14n);
  assert.equal(evaluateTerms([2n, 3n, 4n], ["-", "*"]), -10n);
  assert.equal(evaluateTerms([2n, 3n, 4n, 5n], ["*", "-", "*"]), -14n);
  for (const ex of generateExamples(arithmeticTask, { n: 100, seed: 1, difficulty: 2 })) {
    assert.match(ex.prompt, /^\d+([-+*]\d+){2}=$/);
    // independent check: JS numbers are exact at this size
    const expected = Function(`return (${ex.prompt.slice(0, -1)})`)() as number;
    assert.equal(ex.answer, String(expected));
    assert.equal(arithmeticTask.verify(ex.answer, ex).correct, true);
  }
  const neg = { id: "x", prompt: "1-5=", answer: "-4", task: "arithmetic" };
  assert.equal(arithmeticTask.verify("-4", neg).correct, true);
  assert.equal(arithmeticTask.verify("4", neg).correct, false);
});

test("registry has the built-in tasks and names unknown ones", () => {
  assert.equal(getTask("addition"), additionTask);
  assert.throws(() => getTask("nope"), /unknown task "nope"; known tasks: .*addition.*countdown/);
});
