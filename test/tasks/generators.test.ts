// Properties every registered procedural task must have.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getTask, listTasks, generateExamples } from "../../src/tasks/index.ts";

const N = 25;

for (const name of listTasks()) {
  const task = getTask(name);
  const { min, max, default: def } = task.difficulties;
  const levels = [...new Set([min, def, Math.min(max, def + 1)])];

  test(`${name}: deterministic in the seed, and seeds differ`, () => {
    const a = generateExamples(task, { n: N, seed: 42, difficulty: def });
    assert.deepEqual(a, generateExamples(task, { n: N, seed: 42, difficulty: def }));
    assert.deepEqual(a.slice(5), generateExamples(task, { n: N - 5, seed: 42, difficulty: def, start: 5 }));
    const b = generateExamples(task, { n: N, seed: 43, difficulty: def });
    assert.notDeepEqual(a.map((e) => e.prompt), b.map((e) => e.prompt));
    assert.equal(new Set(a.map((e) => e.id)).size, N);
  });

  test(`${name}: train and test prompts never overlap`, () => {
    const train = new Set(generateExamples(task, { n: 300, seed: 1, difficulty: min }).map((e) => e.prompt));
    const testSet = generateExamples(task, { n: 60, seed: 1, difficulty: min, split: "test" });
    for (const e of testSet) assert.ok(!train.has(e.prompt), `${name}: "${e.prompt}" is in both splits`);
  });

  test(`${name}: stored solutions verify at every level; junk scores 0`, () => {
    for (const d of levels) {
      for (const split of ["train", "test"] as const) {
        for (const ex of generateExamples(task, { n: 15, seed: 9, difficulty: d, split })) {
          assert.equal(ex.task, name);
          assert.equal(ex.difficulty, d);
          assert.ok(ex.prompt.length > 0 && ex.answer.length > 0);
          assert.doesNotThrow(() => JSON.stringify(ex));
          const ok = task.verify(ex.solution!, ex);
          assert.equal(ok.correct, true, `${name} d${d}: ${ok.reason}\n${ex.prompt}\n${ex.solution}`);
          assert.equal(ok.reward, 1);
          // (ifeval: a junk text can legitimately satisfy e.g. "no commas"; tested in ifeval.test.ts)
          for (const junk of name === "ifeval" ? [] : ["", "   ", "I don't know", "<answer></answer>", "<answer>", "\u0000\u0001", undefined as unknown as string]) {
            const v = task.verify(junk, ex);
            assert.equal(v.correct, false, `${name} accepted junk ${JSON.stringify(junk)}`);
            assert.equal(v.reward, 0);
          }
          // An example stripped of its meta scores 0 without throwing.
          assert.equal(task.verify(ex.solution!, { ...ex, meta: undefined, answer: "\u0000" }).correct, false);
        }
      }
    }
  });

  test(`${name}: difficulty outside [${min}, ${max}] is rejected with the range`, () => {
    assert.throws(() => task.generate({ seed: 1, index: 0, difficulty: max + 1, split: "train" }), new RegExp(`\\[${min}, ${max}\\]`));
    assert.throws(() => task.generate({ seed: 1, index: 0, difficulty: min - 1, split: "train" }), /difficulty must be an integer/);
    assert.ok(task.difficulties.description.length > 10);
  });
}

test("all issue task names are registered", () => {
  for (const n of ["arithmetic", "addition", "countdown", "knights-knaves", "sat", "sudoku", "jigsaw", "graph", "dates", "ifeval"]) assert.ok(listTasks().includes(n), n);
});
