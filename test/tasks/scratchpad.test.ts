import { test } from "node:test";
import assert from "node:assert/strict";
import {
  getTask,
  generateExamples,
  scratchpadAdditionTask as task,
  parseScratchpad,
  scratchpadLengthBounds,
  columnNotes,
  SCRATCHPAD_ALPHABET,
  SCRATCHPAD_RATES,
} from "../../src/tasks/index.ts";
import { getVerifier } from "../../src/rewards/registry.ts";

const sample = (d: number, n = 2000, seed = 1) => generateExamples(task, { n, seed, difficulty: d });

test("registered as a task and as a verifier under its name", async () => {
  assert.equal(getTask("addition-scratchpad"), task);
  const ex = sample(3, 1)[0]!;
  assert.equal((await getVerifier("addition-scratchpad").verify(ex.solution!, ex)).correct, true);
});

test("golden example: 47+85 with carries", () => {
  const { notes, sum } = columnNotes("47", "85");
  assert.equal(sum, "132");
  assert.deepEqual(notes, [
    { x: 7, y: 5, carryIn: 0, sum: 12 },
    { x: 4, y: 8, carryIn: 1, sum: 13 },
  ]);
  const ex = { id: "x", task: task.name, prompt: "47+85=", answer: "132", meta: { operands: ["47", "85"] } };
  for (const r of ["7+5=12;4+8+1=13#132", "47+85;7+5=12;7+5=12;4+8+1=13#132", "#132", "anything at all #132", "7+5=12;4+8+1=13# 0132\n"]) {
    assert.equal(task.verify(r, ex).correct, true, r);
  }
  assert.equal(parseScratchpad("47+85;7+5=12;7+5=12;4+8+1=13#132", ex).consistent, true);
  assert.equal(parseScratchpad("7+5=12;4+8=12#132", ex).consistent, false, "a wrong note is not consistent");
  assert.equal(parseScratchpad("7+5=12;4+8=12#132", ex).wellFormed, true);
  assert.equal(parseScratchpad("7+5=12;hello#132", ex).wellFormed, false);
  assert.equal(parseScratchpad("7+5=12;4+8+1=13", ex).wellFormed, false, "no marker");
  // equal columns in a row: a repeat is still told apart from a missing column
  const same = { id: "y", task: task.name, prompt: "11+22=", answer: "33", meta: { operands: ["11", "22"] } };
  assert.equal(parseScratchpad("1+2=3;1+2=3;1+2=3#33", same).consistent, true);
  assert.equal(parseScratchpad("1+2=3#33", same).consistent, false);
});

test("the verifier accepts every demonstration, and each demonstration's notes are right", () => {
  for (const d of [1, 2, 3, 6, 12]) {
    for (const ex of sample(d, 500)) {
      const v = task.verify(ex.solution!, ex);
      assert.equal(v.correct, true, `${ex.prompt} ${ex.solution}: ${v.reason}`);
      assert.equal(v.reward, 1);
      const p = parseScratchpad(ex.solution!, ex);
      assert.ok(p.wellFormed && p.consistent, `${ex.prompt} ${ex.solution}`);
      const [a, b] = ex.prompt.slice(0, -1).split("+");
      assert.equal(a!.length, d);
      assert.equal(b!.length, d);
      assert.equal(BigInt(ex.answer), BigInt(a!) + BigInt(b!));
      for (const ch of ex.prompt + ex.solution!) assert.ok(SCRATCHPAD_ALPHABET.includes(ch), `"${ch}" outside the alphabet`);
    }
  }
});

test("the verifier rejects corrupted demonstrations: wrong final digit, missing marker, truncated", () => {
  let truncatedChecked = 0;
  for (const ex of sample(3, 400)) {
    const s = ex.solution!;
    const last = s[s.length - 1]!;
    const wrongDigit = s.slice(0, -1) + String((Number(last) + 1) % 10);
    assert.equal(task.verify(wrongDigit, ex).correct, false, wrongDigit);
    assert.equal(task.verify(s.replace("#", ";"), ex).correct, false, "marker replaced");
    assert.equal(task.verify(s.replace("#", ""), ex).correct, false, "marker dropped");
    // truncation anywhere before the end of the answer: before the marker there is no answer;
    // after it, a prefix of the answer is a different integer (the answer has no leading zero)
    for (let cut = 0; cut < s.length; cut++) {
      const v = task.verify(s.slice(0, cut), ex);
      assert.equal(v.correct, false, `truncated at ${cut}: ${s.slice(0, cut)}`);
      assert.equal(v.reward, 0);
      truncatedChecked++;
    }
    assert.equal(task.verify(`${s}7`, ex).correct, false, "an extra digit");
  }
  assert.ok(truncatedChecked > 400 * 15);
  for (const junk of ["", "#", "##", "#-5", "#abc", "<eos>", "#1e3"]) {
    assert.equal(task.verify(junk, sample(2, 1)[0]!).correct, false, junk);
  }
  // never throws, even on non-strings
  assert.equal(task.verify(undefined as unknown as string, sample(2, 1)[0]!).correct, false);
});

test("lengths vary as documented: bounds per example, restatement and repeat rates, spread", () => {
  const expected: Record<number, { mean: [number, number] }> = {
    // measured over 2000 examples at seed 1: d=2 13..41 mean 20.8; d=4 27..74 mean 41.6
    2: { mean: [19, 23] },
    4: { mean: [38, 45] },
  };
  for (const d of [2, 4]) {
    const ex = sample(d);
    const lengths = ex.map((e) => e.solution!.length);
    for (const e of ex) {
      const { min, max } = scratchpadLengthBounds(d, e.answer.length);
      assert.ok(e.solution!.length >= min && e.solution!.length <= max, `${e.solution} outside [${min}, ${max}]`);
    }
    const min = Math.min(...lengths);
    const max = Math.max(...lengths);
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    assert.ok(mean >= expected[d]!.mean[0] && mean <= expected[d]!.mean[1], `d=${d}: mean ${mean}`);
    // the table in docs/tasks.md (2000 demonstrations, seed 1): golden, since generation is deterministic
    const documented: Record<number, [number, number, string]> = { 2: [13, 41, "20.8"], 4: [27, 74, "41.6"] };
    assert.deepEqual([min, max, mean.toFixed(1)], documented[d], `d=${d}: docs/tasks.md's length table is out of date`);
    assert.ok(max - min >= 4 * d, `d=${d}: lengths ${min}..${max} should spread`);
    const restated = ex.filter((e) => e.solution!.startsWith(e.prompt.slice(0, -1) + ";")).length / ex.length;
    assert.ok(Math.abs(restated - SCRATCHPAD_RATES.restate) < 0.04, `restate rate ${restated}`);
    // repeated notes: notes parsed minus distinct columns, over all columns
    let repeats = 0;
    for (const e of ex) repeats += parseScratchpad(e.solution!, e).notes.length - d;
    const rate = repeats / (ex.length * d);
    assert.ok(Math.abs(rate - SCRATCHPAD_RATES.repeat) < 0.03, `repeat rate ${rate}`);
  }
});

test("generation is deterministic per seed and differs across seeds", () => {
  assert.deepEqual(sample(3, 100, 7), sample(3, 100, 7));
  assert.notDeepEqual(sample(3, 100, 7).map((e) => e.solution), sample(3, 100, 8).map((e) => e.solution));
});

test("train and test never share a prompt", () => {
  for (const d of [1, 2, 3]) {
    const train = new Set([1, 2].flatMap((seed) => generateExamples(task, { n: 500, seed, difficulty: d, split: "train" }).map((e) => e.prompt)));
    for (const e of generateExamples(task, { n: 100, seed: 1, difficulty: d, split: "test" })) assert.ok(!train.has(e.prompt), e.prompt);
  }
  assert.throws(() => task.generate({ seed: 1, index: 0, difficulty: 13, split: "train" }), /difficulty must be an integer in \[1, 12\]/);
});
