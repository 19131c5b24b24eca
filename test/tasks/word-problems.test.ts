import { test } from "node:test";
import assert from "node:assert/strict";
import { generateExamples, getTask, wordProblemsTask } from "../../src/tasks/index.ts";

/** Replay a worked solution's steps: each line `a op b = c` must hold and chain into the next. */
function replay(solution: string): number {
  const lines = solution.trim().split("\n");
  const final = lines.pop()!;
  let prev: number | null = null;
  for (const l of lines) {
    const m = /^(\d+) ([-+*/]) (\d+) = (\d+)$/.exec(l);
    assert.ok(m, `a step reads "a op b = c": ${l}`);
    const [a, op, b, c] = [Number(m[1]), m[2], Number(m[3]), Number(m[4])];
    if (prev !== null) assert.equal(a, prev, "each step starts from the previous amount");
    const v = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : a / b;
    assert.equal(v, c, l);
    prev = c;
  }
  assert.match(final, /^#### \d+$/);
  return Number(final.slice(5));
}

test("word-problems: d events, a worked solution that replays to the answer, integers >= 0", () => {
  assert.equal(getTask("word-problems"), wordProblemsTask);
  for (const d of [1, 3, 8]) {
    for (const ex of generateExamples(wordProblemsTask, { n: 150, seed: 5, difficulty: d })) {
      assert.equal(ex.solution!.trim().split("\n").length, Math.max(1, d - 1) + 1);
      assert.equal(String(replay(ex.solution!)), ex.answer);
      assert.ok(Number(ex.answer) >= 0 && Number.isInteger(Number(ex.answer)));
      assert.match(ex.prompt, /How many \w+ does \w+ have now\?\nWrite the final answer as a number after "####"\.$/);
      assert.equal(wordProblemsTask.verify(ex.solution!, ex).reward, 1, "the worked solution scores 1");
    }
  }
});

test("word-problems: train and test stories never overlap", () => {
  const train = new Set(generateExamples(wordProblemsTask, { n: 400, seed: 1, difficulty: 1, split: "train" }).map((e) => e.prompt));
  const test_ = generateExamples(wordProblemsTask, { n: 200, seed: 1, difficulty: 1, split: "test" });
  for (const e of test_) assert.ok(!train.has(e.prompt));
});

test("word-problems verifier: final-answer conventions score 1, wrong or missing answers 0", () => {
  const ex = generateExamples(wordProblemsTask, { n: 1, seed: 9, difficulty: 2 })[0]!;
  const a = ex.answer;
  const wrong = String(Number(a) + 1);
  for (const r of [`#### ${a}`, `So the total is ${a}.\n#### ${a}`, `The answer is ${a}.`, `\\boxed{${a}}`]) {
    assert.equal(wordProblemsTask.verify(r, ex).reward, 1, r);
  }
  for (const r of ["", "I don't know.", `#### ${wrong}`, `The answer is ${wrong}.`, `\\boxed{${wrong}}`]) {
    assert.equal(wordProblemsTask.verify(r, ex).reward, 0, r);
  }
});
