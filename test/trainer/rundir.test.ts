/**
 * A fresh start into a directory that already holds a run is refused in one line (naming the
 * directory and the fixes) and writes nothing; `overwrite: true` deletes exactly the run's files
 * (and says which) and leaves anything else in the directory alone.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { train, RunDirError } from "../../src/index.ts";
import { prepareFreshRunDir } from "../../src/trainer/rundir.ts";
import type { RunConfigInput } from "../../src/config/schema.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-rundir-"));
after(() => rmSync(root, { recursive: true, force: true }));

const config = (out: string): RunConfigInput => ({
  seed: 1,
  out,
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789+=" },
  data: { task: "addition", difficulty: 1, trainSize: 16, testSize: 2 },
  rl: { steps: 1, promptsPerStep: 2, groupSize: 2, maxNewTokens: 2 },
});

test("a finished run's directory is refused for a fresh start; overwrite deletes only the run's files", { timeout: 120_000 }, async () => {
  const out = join(root, "run");
  await train(config(out), { quiet: true });
  const metrics = readFileSync(join(out, "metrics.jsonl"), "utf8");
  const evals = readFileSync(join(out, "eval.jsonl"), "utf8");
  writeFileSync(join(out, "notes.txt"), "mine\n");

  await assert.rejects(train(config(out), { quiet: true }), (e: Error) => {
    assert.ok(e instanceof RunDirError, String(e));
    assert.equal(e.message.split("\n").length, 1);
    assert.match(e.message, /^run directory .*\/run already holds a run \(config\.yaml, metrics\.jsonl, samples\.jsonl, eval\.jsonl, report\.md, checkpoints\/\); continue it with --resume .*, set a new out \(--out\), or pass --overwrite/);
    return true;
  });
  assert.equal(readFileSync(join(out, "metrics.jsonl"), "utf8"), metrics, "nothing appended");
  assert.equal(readFileSync(join(out, "eval.jsonl"), "utf8"), evals, "nothing appended");

  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => (lines.push(String(s)), true)) as typeof process.stderr.write;
  try {
    await train(config(out), { quiet: true, overwrite: true });
  } finally {
    process.stderr.write = write;
  }
  assert.match(lines.join(""), /^overwrite: deleted .*config\.yaml, .*metrics\.jsonl, .*samples\.jsonl, .*eval\.jsonl, .*report\.md, .*checkpoints\/\n/m);
  // The same seed and config: the new run's logs replace the old ones instead of following them.
  assert.equal(readFileSync(join(out, "eval.jsonl"), "utf8").split("\n").length, evals.split("\n").length);
  assert.equal(readFileSync(join(out, "metrics.jsonl"), "utf8").split("\n").length, metrics.split("\n").length);
  assert.equal(readFileSync(join(out, "notes.txt"), "utf8"), "mine\n", "other files stay");
  assert.ok(existsSync(join(out, "checkpoints", "final", "config.json")));
});

test("a directory with only a failed start's config.yaml is reused; other files are refused", () => {
  const dir = join(root, "failed-start");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  writeFileSync(join(dir, "config.yaml"), "seed: 1\n");
  writeFileSync(join(dir, "notes.txt"), "mine\n");
  prepareFreshRunDir(dir, false, () => assert.fail("nothing to delete"));
  // An empty log holds nothing to mix with (a start that failed before its first line): reused too.
  writeFileSync(join(dir, "metrics.jsonl"), "");
  prepareFreshRunDir(dir, false, () => assert.fail("nothing to delete"));
  writeFileSync(join(dir, "metrics.jsonl"), '{"step":1}\n');
  assert.throws(() => prepareFreshRunDir(dir, false, () => {}), /already holds a run \(config\.yaml, metrics\.jsonl\)/);
});
