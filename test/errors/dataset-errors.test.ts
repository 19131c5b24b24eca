/**
 * Exact text of dataset errors: each names the file, the line (JSONL, counting blank lines) or
 * row (Parquet), the field and the fix.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { DatasetError, loadDataset, type LoadOptions } from "../../src/tasks/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";

async function message(path: string, o: LoadOptions = {}): Promise<DatasetError> {
  try {
    await loadDataset(path, o);
  } catch (e) {
    assert.ok(e instanceof DatasetError, `a DatasetError, got ${(e as Error).name}: ${(e as Error).message}`);
    return e;
  }
  assert.fail("no error");
}

test("JSONL: missing field, with the line number (blank lines counted) and the fields seen", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  try {
    const f = join(dir, "train.jsonl");
    writeFileSync(f, '{"prompt":"1+1","answer":"2"}\n\n{"prompt":"2+2","solution":"4"}\n');
    const e = await message(f);
    assert.equal(e.message, `dataset error at ${f} line 3: missing field "answer" (fields: prompt, solution); set data.fields.answer to the field that holds the reference answer`);
    assert.equal(e.line, 3);
    assert.equal(e.field, "answer");
    const g = join(dir, "gsm.jsonl");
    writeFileSync(g, '{"question":"q","answer":"a\\n#### 4"}\n{"question":"q","answer":"no hashes"}\n');
    assert.equal((await message(g, { preset: "gsm8k" })).message, `dataset error at ${g} line 2: field "answer" has no "#### <answer>" line (preset gsm8k); use preset "generic" if it holds the bare answer`);
    const t = join(dir, "types.jsonl");
    writeFileSync(t, '{"prompt":["a"],"answer":"2"}\n');
    assert.equal((await message(t)).message, `dataset error at ${t} line 1: field "prompt" is an array, expected a string or a chat (array of {role, content})`);
    const blank = join(dir, "blank.jsonl");
    writeFileSync(blank, '{"prompt":"  ","answer":"2"}\n');
    assert.equal((await message(blank)).message, `dataset error at ${blank} line 1: field "prompt" is empty`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("JSONL: invalid JSON names the line and the skip option", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  try {
    const f = join(dir, "bad.jsonl");
    writeFileSync(f, '{"prompt":"1+1","answer":"2"}\n{"prompt": "x", answer: 3}\n');
    // The middle part is V8's JSON.parse message, which differs across Node versions.
    const m = (await message(f)).message;
    assert.ok(m.startsWith(`dataset error at ${f} line 2: invalid JSON (`), m);
    assert.ok(m.endsWith('); fix the line, or set data.onBadRow to "skip" to skip bad rows'), m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Parquet: the row number; missing file; unknown preset", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  try {
    const p = join(dir, "train.parquet");
    parquetWriteFile({ filename: p, columnData: [{ name: "problem", data: ["a", "b"], type: "STRING" }, { name: "solution", data: ["\\boxed{1}", "no box"], type: "STRING" }] });
    assert.equal((await message(p, { preset: "math" })).message, `dataset error at ${p} row 2: field "solution" has no \\boxed{...} answer (preset math); set data.fields.answer to a field that holds the bare answer`);
    const none = join(dir, "none.jsonl");
    assert.equal((await message(none)).message, `dataset error at ${none}: file not found; check data.train / data.test`);
    assert.equal((await message(p, { preset: "nope" as never })).message, `dataset error at ${p}: unknown preset "nope"; set data.preset to one of generic, gsm8k, math, deepscaler, orz`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The fixes these messages suggest must be settable in a run config.
test("dataset errors suggest config fields that exist", () => {
  const base = { model: { init: {} }, tokenizer: { type: "char", alphabet: "0123" } };
  parseRunConfig({ ...base, data: { train: "t.jsonl", fields: { answer: "solution" } } });
  parseRunConfig({ ...base, data: { train: "t.jsonl", onBadRow: "skip" } });
});
