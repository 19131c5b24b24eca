// Fail closed at load: rows are checked against the exampleSchema of every verifier their reward
// calls, before any response is graded (training data, rlvr eval --data, rlvr verify lines).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { compileReward } from "../../src/rewards/compile.ts";
import { rewardConfigSchema, type RewardConfigInput } from "../../src/rewards/config.ts";
import { registerVerifier } from "../../src/rewards/registry.ts";
import { exampleIssue, fieldPath, referenceAnswerSchema } from "../../src/rewards/example-schema.ts";
import { loadDataset, DatasetError } from "../../src/tasks/dataset.ts";
import { buildData } from "../../src/trainer/context.ts";
import { evalExamples, type EvalCommandOptions } from "../../src/cli/commands/eval.ts";
import { verifyRow } from "../../src/cli/commands/verify.ts";
import type { RunConfig } from "../../src/config/schema.ts";
import "./fixtures/schema-rewards.ts";

const reward = (r: RewardConfigInput) => compileReward(rewardConfigSchema.parse(r));

function withRows(rows: unknown[], f: (path: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-schema-"));
  const path = join(dir, "train.jsonl");
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return f(path).finally(() => rmSync(dir, { recursive: true, force: true }));
}

const good = { prompt: "Write about a cat.", answer: "-", meta: { keywords: ["cat", "purr"] } };

test("fieldPath writes zod paths as row fields", () => {
  assert.equal(fieldPath(["meta", "tests", 0, "call"]), "meta.tests[0].call");
  assert.equal(fieldPath([]), "");
  assert.deepEqual(exampleIssue(referenceAnswerSchema, { id: "x", prompt: "p", task: "t", answer: "", meta: { answers: ["a", " "] } }), { field: "meta.answers[1]", message: "a reference answer is empty" });
  assert.equal(exampleIssue(referenceAnswerSchema, { id: "x", prompt: "p", task: "t", answer: "Paris" }), null);
});

test("a row that does not match the reward's schema is refused at load with file, line and field", async () => {
  const r = await reward({ verifier: "fixture-all-keywords" });
  await withRows([good, { ...good, meta: { keywords: ["cat", ""] } }], async (path) => {
    await assert.rejects(loadDataset(path, { check: r.checkExample }), (e: unknown) => {
      assert.ok(e instanceof DatasetError);
      assert.equal(e.line, 2);
      assert.equal(e.field, "meta.keywords[1]");
      assert.match(e.message, /^dataset error at .*train\.jsonl line 2: field "meta\.keywords\[1\]": .*\(verifier "fixture-all-keywords"\); fix the row/);
      assert.equal(e.message.split("\n").length, 1);
      return true;
    });
    // The control: without the reward's check the same file loads (the loader alone cannot know).
    assert.equal((await loadDataset(path)).examples.length, 2);
  });
});

test("with onBadRow skip the refused rows are counted and left out, never graded", async () => {
  const r = await reward({ verifier: "fixture-all-keywords" });
  await withRows([good, { prompt: "no keywords", answer: "-" }, { ...good, meta: { keywords: [] } }], async (path) => {
    const res = await loadDataset(path, { check: r.checkExample, onBadRow: "skip" });
    assert.equal(res.examples.length, 1);
    assert.equal(res.skipped, 2);
    assert.deepEqual(res.skippedRows.map((s) => s.line), [2, 3]);
    assert.match(res.skippedRows[0]!.reason, /^field "meta"/);
    assert.match(res.skippedRows[1]!.reason, /^field "meta\.keywords"/);
  });
});

test("training data: buildData checks rows with the run's reward (error, and skip with a count)", async () => {
  const r = await reward({ verifier: "fixture-all-keywords" });
  await withRows([good, { ...good, meta: { keywords: "cat" } }], async (path) => {
    const cfg = (onBadRow: "error" | "skip") => ({ seed: 1, data: { train: path, preset: "generic", onBadRow, testSize: 10 } }) as unknown as RunConfig;
    await assert.rejects(buildData(cfg("error"), r.checkExample), /line 2: field "meta\.keywords": /);
    const { train } = await buildData(cfg("skip"), r.checkExample);
    assert.equal(train.length, 1);
  });
});

test("composite rewards check every component's schema; the field maps back to the row's own name", async () => {
  registerVerifier("fixture-needs-answer", () => ({ correct: true, reward: 1, extracted: null, reason: "" }), { replace: true, exampleSchema: z.looseObject({ answer: z.string().regex(/^\d+$/, { message: "expected digits" }) }) });
  const r = await reward({ components: [{ verifier: "format", weight: 0.2 }, { name: "acc", verifier: "fixture-needs-answer" }] });
  await withRows([{ question: "q", final: "12" }, { question: "q", final: "twelve" }], async (path) => {
    await assert.rejects(loadDataset(path, { fields: { prompt: "question", answer: "final" }, check: r.checkExample }), /line 2: field "final": expected digits \(verifier "fixture-needs-answer"\)/);
  });
  assert.deepEqual(r.checkExample({ id: "x", prompt: "p", task: "t", answer: "5", meta: { template: 3 } }), { field: "meta.template", message: "Invalid input: expected string, received number", component: "format", verifier: "format" });
});

test("built-in schemas: choice options and exact/f1 references", async () => {
  const choice = await reward({ verifier: "choice" });
  assert.equal(choice.checkExample({ id: "x", prompt: "p", task: "t", answer: "B", meta: { options: ["1", "2"] } }), null);
  assert.equal(choice.checkExample({ id: "x", prompt: "p", task: "t", answer: "B", meta: { options: "1,2" } })?.field, "meta.options");
  const exact = await reward({ verifier: "exact" });
  assert.equal(exact.checkExample({ id: "x", prompt: "p", task: "t", answer: "  " })?.field, "answer");
  assert.equal(exact.checkExample({ id: "x", prompt: "p", task: "t", answer: "", meta: { answers: ["Paris"] } }), null);
});

test("a reward module's export declares its schema", async () => {
  const r = await reward({ module: new URL("./fixtures/schema-rewards.ts", import.meta.url).href, export: "allKeywords" });
  assert.equal(r.checkExample({ id: "x", prompt: "p", task: "t", answer: "-" })?.field, "meta");
  assert.equal(r.checkExample({ id: "x", prompt: "p", task: "t", answer: "-", meta: { keywords: ["a"] } }), null);
});

test("rlvr eval --data rows are checked too", async () => {
  const r = await reward({ verifier: "fixture-all-keywords" });
  await withRows([good, { ...good, meta: {} }], async (path) => {
    await assert.rejects(evalExamples({ data: path, n: 10 } as EvalCommandOptions, r.checkExample), /line 2: field "meta\.keywords"/);
  });
});

test("rlvr verify lines: a missing reference or a bad field is an error naming it, never graded", async () => {
  // Before: a line without "reference" was graded against the string "undefined".
  await assert.rejects(verifyRow("exact", { response: "undefined" }), /"reference"/);
  await assert.rejects(verifyRow("exact", { response: "x", reference: " " }), /field "reference": the reference answer is empty/);
  await assert.rejects(verifyRow("choice", { response: "A", reference: "A", options: "A,B" }), /field "options": /);
  assert.equal((await verifyRow("exact", { response: "Paris", reference: "Paris" })).reward, 1);
});
