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

// The fixes these messages suggest must be settable in a run config, and reach the loader.
test("dataset errors suggest config fields that exist", () => {
  const base = { model: { init: {} }, tokenizer: { type: "char", alphabet: "0123" } };
  const data = { train: "t.jsonl", verifier: "math" };
  assert.deepEqual(parseRunConfig({ ...base, data: { ...data, fields: { answer: "solution" } } }).data.fields, { answer: "solution" });
  assert.equal(parseRunConfig({ ...base, data: { ...data, onBadRow: "skip" } }).data.onBadRow, "skip");
  assert.equal(parseRunConfig({ ...base, data }).data.onBadRow, "error");
  assert.throws(() => parseRunConfig({ ...base, data: { ...data, onBadRow: "ignore" } }), /at data\.onBadRow: /);
});

/** Write raw bytes (lines joined by \n) to `name` in a fresh folder; returns the path. */
function bytesFile(dir: string, name: string, lines: (string | Uint8Array)[]): string {
  const f = join(dir, name);
  const parts = lines.map((l) => (typeof l === "string" ? Buffer.from(l, "utf8") : Buffer.from(l)));
  writeFileSync(f, Buffer.concat(parts.flatMap((p) => [p, Buffer.from("\n")])));
  return f;
}

const good = (q: string) => JSON.stringify({ prompt: q, answer: "2" });

test("JSONL: invalid UTF-8 names the line and the byte instead of turning into U+FFFD", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  try {
    // Line 3: a Latin-1 "é" (0xE9) inside the prompt; line 4: a truncated 3-byte sequence.
    const latin1 = Uint8Array.from([...Buffer.from('{"prompt":"caf'), 0xe9, ...Buffer.from('","answer":"2"}')]);
    const f = bytesFile(dir, "bad-utf8.jsonl", [good("1+1"), "", latin1, good("1+2")]);
    const e = await message(f);
    assert.equal(e.message, `dataset error at ${f} line 3: invalid UTF-8 at byte 15 of the line (bytes e9 22 2c 22); save the file as UTF-8, or set data.onBadRow to "skip" to skip bad rows`);
    assert.equal(e.line, 3);
    const cut = Uint8Array.from([...Buffer.from('{"prompt":"x'), 0xe2, 0x82]);
    assert.match((await message(bytesFile(dir, "cut.jsonl", [cut]))).message, / line 1: invalid UTF-8 at byte 13 of the line \(bytes e2 82\)/);
    // Overlong and surrogate encodings are invalid too; valid multi-byte text and a BOM are fine.
    const overlong = Uint8Array.from([...Buffer.from('{"prompt":"'), 0xc0, 0xaf, ...Buffer.from('","answer":"2"}')]);
    assert.match((await message(bytesFile(dir, "overlong.jsonl", [overlong]))).message, /invalid UTF-8 at byte 12 /);
    const cesu = Uint8Array.from([...Buffer.from('{"prompt":"'), 0xed, 0xa0, 0x80, ...Buffer.from('","answer":"2"}')]);
    assert.match((await message(bytesFile(dir, "cesu.jsonl", [cesu]))).message, /invalid UTF-8 at byte 12 /);
    const ok = await loadDataset(bytesFile(dir, "ok.jsonl", ["\ufeff" + good("café 日本 𝔸"), good("b")]));
    assert.deepEqual(ok.examples.map((x) => x.prompt), ["café 日本 𝔸", "b"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("JSONL: a lone surrogate in any string names the field; non-string fields are refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  try {
    const f = bytesFile(dir, "lone.jsonl", [good("a"), '{"prompt":"x\\ud800y","answer":"2"}']);
    assert.equal(
      (await message(f)).message,
      `dataset error at ${f} line 2: field "prompt" holds a lone UTF-16 surrogate at character 2 (a \\ud800-\\udfff escape without its pair), which no tokenizer can encode; fix the text, or set data.onBadRow to "skip"`,
    );
    const low = bytesFile(dir, "low.jsonl", ['{"prompt":"q","answer":"2","meta":{"notes":["ok","\\udc00"]}}']);
    assert.match((await message(low)).message, / line 1: field "meta\.notes\[1\]" holds a lone UTF-16 surrogate at character 1 /);
    // A proper pair written as escapes is one character, not an error.
    const pair = await loadDataset(bytesFile(dir, "pair.jsonl", ['{"prompt":"\\ud835\\udd38","answer":"2"}']));
    assert.equal(pair.examples[0]!.prompt, "𝔸");
    const obj = bytesFile(dir, "obj.jsonl", ['{"prompt":"q","answer":"2","solution":{"steps":[]}}']);
    assert.equal((await message(obj)).message, `dataset error at ${obj} line 1: field "solution" is an object, expected a string or a number`);
    const task = bytesFile(dir, "task.jsonl", ['{"prompt":"q","answer":"2","task":["math"]}']);
    assert.equal((await message(task)).message, `dataset error at ${task} line 1: field "task" is an array, expected a string or a number`);
    const answer = bytesFile(dir, "answer.jsonl", ['{"prompt":"q","answer":true}']);
    assert.equal((await message(answer)).message, `dataset error at ${answer} line 1: field "answer" is a boolean, expected a string or a number`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('onBadRow "skip": bad UTF-8, lone surrogates, bad JSON and bad fields are skipped and counted with their lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  try {
    const latin1 = Uint8Array.from([...Buffer.from('{"prompt":"caf'), 0xe9, ...Buffer.from('","answer":"2"}')]);
    const f = bytesFile(dir, "mixed.jsonl", [good("a"), latin1, '{"prompt":"\\udfff","answer":"1"}', "{nope", good("b"), '{"prompt":"q","answer":"2","id":{}}', good("c")]);
    const r = await loadDataset(f, { onBadRow: "skip" });
    assert.deepEqual(r.examples.map((x) => x.prompt), ["a", "b", "c"]);
    assert.equal(r.skipped, 4);
    assert.deepEqual(r.skippedRows.map((x) => x.line), [2, 3, 4, 6]);
    assert.match(r.skippedRows[0]!.reason, /^invalid UTF-8 at byte 15/);
    assert.match(r.skippedRows[1]!.reason, /lone UTF-16 surrogate/);
    assert.match(r.skippedRows[2]!.reason, /^invalid JSON/);
    assert.match(r.skippedRows[3]!.reason, /^field "id" is an object/);
    // Nothing was replaced: every prompt kept is well formed.
    for (const x of r.examples) assert.equal(/[\ud800-\udfff\ufffd]/.test(x.prompt), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a training run with onBadRow "skip" says how many rows it left out and why', async () => {
  const { buildData } = await import("../../src/trainer/context.ts");
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ds-"));
  const write = process.stderr.write.bind(process.stderr);
  let said = "";
  try {
    const f = bytesFile(dir, "train.jsonl", [good("a"), '{"prompt":"\\udfff","answer":"1"}', "{nope", good("b")]);
    const cfg = parseRunConfig({ model: { init: {} }, tokenizer: { type: "char", alphabet: "0123" }, data: { train: f, test: f, verifier: "math", onBadRow: "skip" } });
    process.stderr.write = ((s: string) => ((said += s), true)) as typeof process.stderr.write;
    const { train } = await buildData(cfg);
    process.stderr.write = write;
    assert.deepEqual(train.map((x) => x.prompt), ["a", "b"]);
    assert.match(said, new RegExp(`^data: skipped 2 bad row\\(s\\) of ${f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(data\\.onBadRow: skip\\); the first, line 2: field "prompt" holds a lone UTF-16 surrogate`));
  } finally {
    process.stderr.write = write;
    rmSync(dir, { recursive: true, force: true });
  }
});
