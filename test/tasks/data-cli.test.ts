import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runDataGen, inspectDataset } from "../../src/cli/commands/data.ts";
import { loadDataset } from "../../src/tasks/index.ts";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "test/helpers/cli-driver.ts", ...args], { encoding: "utf8" });

test("rlvr data gen writes JSONL to stdout and to --out, readable by the loader", async () => {
  const r = cli("data", "gen", "addition", "--n", "5", "--difficulty", "2", "--seed", "4");
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(rows.length, 5);
  assert.match(rows[0].prompt, /^\d+\+\d+=$/);
  assert.equal(r.stdout, runDataGen("addition", { n: 5, seed: 4, difficulty: 2 }));

  const out = join(mkdtempSync(join(tmpdir(), "rlvr-cli-")), "t.jsonl");
  const w = cli("data", "gen", "countdown", "--n", "4", "--seed", "2", "--split", "test", "--out", out);
  assert.equal(w.status, 0, w.stderr);
  const { examples } = await loadDataset(out);
  assert.equal(examples.length, 4);
  assert.ok(examples.every((e) => e.id.startsWith("countdown-test-d4-")));
  assert.match(await inspectDataset(out, {}), /examples: 4 {3}skipped rows: 0\nfields: id, prompt, answer, task, difficulty, meta, solution\n {2}countdown \(difficulty 4\): 4/);
  assert.equal(readFileSync(out, "utf8").split("\n").length, 5);
});

test("rlvr data gen reports unknown tasks and bad options", () => {
  const a = cli("data", "gen", "nope", "--n", "1");
  assert.notEqual(a.status, 0);
  assert.match(a.stderr, /unknown task "nope"; known tasks: /);
  const b = cli("data", "gen", "addition", "--n", "-1");
  assert.notEqual(b.status, 0);
  assert.match(b.stderr, /--n: expected an integer >= 0, got "-1"/);
  const c = cli("data", "gen", "addition", "--n", "1", "--split", "val");
  assert.match(c.stderr, /--split: expected train or test, got "val"/);
  assert.equal(runDataGen("addition", { n: 0, seed: 1 }), "");
});
