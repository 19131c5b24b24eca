import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import {
  additionTask,
  countdownTask,
  generateExamples,
  writeExamplesJsonl,
  loadDataset,
  extractBoxed,
  extractGsm8kAnswer,
  DatasetError,
} from "../../src/tasks/index.ts";

const dir = mkdtempSync(join(tmpdir(), "rlvr-dataset-"));
const file = (name: string, lines: string[]) => {
  const p = join(dir, name);
  writeFileSync(p, lines.join("\n") + "\n");
  return p;
};

test("generated examples round-trip through JSONL and the loader, and still verify", async () => {
  const exs = [
    ...generateExamples(additionTask, { n: 20, seed: 1, difficulty: 3 }),
    ...generateExamples(countdownTask, { n: 20, seed: 1, difficulty: 4, split: "test" }),
  ];
  const p = join(dir, "sub", "gen.jsonl");
  writeExamplesJsonl(p, exs);
  const { examples, skipped } = await loadDataset(p);
  assert.equal(skipped, 0);
  assert.deepEqual(examples, exs);
  for (const ex of examples) {
    const task = ex.task === "addition" ? additionTask : countdownTask;
    assert.equal(task.verify(ex.solution!, ex).correct, true);
  }
});

test("missing answer: exact error naming file, line, field and fix", async () => {
  const p = file("gsm-bad.jsonl", [
    JSON.stringify({ question: "1+1?", answer: "2\n#### 2" }),
    "",
    JSON.stringify({ question: "2+2?", solution: "4" }),
  ]);
  await assert.rejects(loadDataset(p, { preset: "gsm8k" }), (e: unknown) => {
    assert.ok(e instanceof DatasetError);
    assert.equal(
      e.message,
      `dataset error at ${p} line 3: missing field "answer" (fields: question, solution); set data.fields.answer to the field that holds the reference answer`,
    );
    assert.equal(e.line, 3);
    assert.equal(e.field, "answer");
    assert.equal(e.file, p);
    return true;
  });
});

test("other malformed rows give exact messages", async () => {
  const cases: [string[], string][] = [
    [["{not json"], `line 1: invalid JSON`],
    [["[1,2]"], `line 1: expected a JSON object, got an array`],
    [[JSON.stringify({ answer: "3" })], `line 1: missing field "prompt" (fields: answer); set data.fields.prompt to the field that holds the prompt`],
    [[JSON.stringify({ prompt: "q", answer: { v: 1 } })], `line 1: field "answer" is an object, expected a string or a number`],
    [[JSON.stringify({ prompt: "  ", answer: "1" })], `line 1: field "prompt" is empty`],
    [[JSON.stringify({ prompt: 5, answer: "1" })], `line 1: field "prompt" is a number, expected a string or a chat (array of {role, content})`],
  ];
  let k = 0;
  for (const [lines, expected] of cases) {
    const p = file(`bad-${k++}.jsonl`, lines);
    await assert.rejects(loadDataset(p), (e: unknown) => {
      assert.ok(e instanceof DatasetError);
      assert.ok(e.message.startsWith(`dataset error at ${p} ${expected}`), e.message);
      return true;
    });
  }
  const gsm = file("gsm-nohash.jsonl", [JSON.stringify({ question: "q", answer: "the answer is 4" })]);
  await assert.rejects(loadDataset(gsm, { preset: "gsm8k" }), {
    message: `dataset error at ${gsm} line 1: field "answer" has no "#### <answer>" line (preset gsm8k); use preset "generic" if it holds the bare answer`,
  });
  await assert.rejects(loadDataset(join(dir, "nope.jsonl")), { message: `dataset error at ${join(dir, "nope.jsonl")}: file not found; check data.train / data.test` });
  await assert.rejects(loadDataset(gsm, { preset: "nope" as "gsm8k" }), /unknown preset "nope"; set data.preset to one of generic, gsm8k, math, deepscaler, orz/);
});

test("skip policy counts bad rows and keeps good ones", async () => {
  const p = file("mixed.jsonl", [
    JSON.stringify({ prompt: "a", answer: "1" }),
    "{oops",
    JSON.stringify({ prompt: "b" }),
    "",
    JSON.stringify({ prompt: "c", answer: 3 }),
    "42",
  ]);
  const res = await loadDataset(p, { onBadRow: "skip" });
  assert.equal(res.examples.length, 2);
  assert.equal(res.skipped, 3);
  assert.deepEqual(res.skippedRows.map((s) => s.line), [2, 3, 6]);
  assert.deepEqual(res.examples.map((e) => [e.id, e.prompt, e.answer, e.task]), [
    ["mixed-1", "a", "1", "dataset"],
    ["mixed-5", "c", "3", "dataset"],
  ]);
  await assert.rejects(loadDataset(p), /line 2: invalid JSON/);
});

test("GSM8K and MATH presets extract the reference answer", async () => {
  const g = file("gsm8k.jsonl", [JSON.stringify({ question: "How many?", answer: "3 * 500 = 1500\n#### 1,500" })]);
  const [ge] = (await loadDataset(g, { preset: "gsm8k" })).examples;
  assert.deepEqual(ge, { id: "gsm8k-1", prompt: "How many?", answer: "1500", task: "math", solution: "3 * 500 = 1500\n#### 1,500" });
  const m = file("math.jsonl", [
    JSON.stringify({ problem: "Simplify.", solution: "So $x = \\boxed{\\frac{1}{2}}$.", level: "Level 2" }),
    JSON.stringify({ problem: "No box.", solution: "It is 3." }),
  ]);
  const mres = await loadDataset(m, { preset: "math", onBadRow: "skip" });
  assert.equal(mres.examples[0]!.answer, "\\frac{1}{2}");
  assert.equal(mres.skipped, 1);
  assert.match(mres.skippedRows[0]!.reason, /has no \\boxed\{\.\.\.\} answer \(preset math\)/);
  const d = file("dsr.jsonl", [JSON.stringify({ problem: "p", answer: "7", solution: "because" })]);
  assert.deepEqual((await loadDataset(d, { preset: "deepscaler" })).examples[0], { id: "dsr-1", prompt: "p", answer: "7", task: "math", solution: "because" });
});

test("field mapping with dotted paths and chat prompts", async () => {
  const p = file("verl.jsonl", [
    JSON.stringify({
      prompt: [
        { role: "system", content: "be brief" },
        { role: "user", content: "What is 2+3?" },
      ],
      reward_model: { ground_truth: "5" },
      data_source: "toy",
    }),
  ]);
  const [ex] = (await loadDataset(p, { fields: { answer: "reward_model.ground_truth", task: "data_source" } })).examples;
  assert.equal(ex!.prompt, "What is 2+3?");
  assert.equal(ex!.answer, "5");
  assert.equal(ex!.task, "toy");
  assert.deepEqual((ex!.meta as { messages: unknown[] }).messages.length, 2);
});

test("Parquet files load with the GSM8K and MATH schemas", async () => {
  const g = join(dir, "gsm8k.parquet");
  parquetWriteFile({
    filename: g,
    columnData: [
      { name: "question", data: ["q1", "q2", "q3"], type: "STRING" },
      { name: "answer", data: ["a\n#### 12", "b\n#### -3", "no final answer"], type: "STRING" },
    ],
  });
  const res = await loadDataset(g, { preset: "gsm8k", onBadRow: "skip" });
  assert.deepEqual(res.examples.map((e) => [e.id, e.prompt, e.answer]), [
    ["gsm8k-1", "q1", "12"],
    ["gsm8k-2", "q2", "-3"],
  ]);
  assert.equal(res.skipped, 1);
  await assert.rejects(loadDataset(g, { preset: "gsm8k" }), /dataset error at .*gsm8k\.parquet row 3: field "answer" has no "#### <answer>" line/);

  const m = join(dir, "math.parquet");
  parquetWriteFile({
    filename: m,
    columnData: [
      { name: "problem", data: ["Find x."], type: "STRING" },
      { name: "solution", data: ["Thus $x=\\boxed{\\{1,2\\}}$ and done."], type: "STRING" },
      { name: "level", data: [3], type: "INT32" },
    ],
  });
  const [me] = (await loadDataset(m, { preset: "math" })).examples;
  assert.equal(me!.answer, "\\{1,2\\}");
  assert.equal(me!.task, "math");
  const bad = file("notparquet.parquet", ["hello"]);
  await assert.rejects(loadDataset(bad), /cannot read the file as parquet/);
});

test("answer extractors", () => {
  assert.equal(extractGsm8kAnswer("x\n#### 72"), "72");
  assert.equal(extractGsm8kAnswer("#### 1,234,567"), "1234567");
  assert.equal(extractGsm8kAnswer("no"), null);
  assert.equal(extractGsm8kAnswer("####  "), null);
  assert.equal(extractBoxed("\\boxed{1} then \\boxed{\\frac{a}{b}}"), "\\frac{a}{b}");
  assert.equal(extractBoxed("\\boxed{x^{2}+1}"), "x^{2}+1");
  assert.equal(extractBoxed("\\fbox{7}"), "7");
  assert.equal(extractBoxed("$\\boxed 5$"), "5");
  assert.equal(extractBoxed("\\boxed{unclosed"), null);
  assert.equal(extractBoxed("none"), null);
});
