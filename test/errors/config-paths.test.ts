/** Paths in a config file resolve against the file's folder, not the working directory (`out` excepted). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadRunConfig } from "../../src/config/schema.ts";
import { resolveConfigPaths } from "../../src/config/paths.ts";

test("data, model, tokenizer and module paths resolve against the config's folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-paths-"));
  try {
    const sub = join(dir, "configs");
    mkdirSync(sub);
    const file = join(sub, "run.yaml");
    writeFileSync(
      file,
      [
        "out: runs/x",
        "model: {path: ../models/base}",
        "tokenizer: {type: hf, path: tok}",
        "data: {train: data/train.jsonl, test: ./data/test.jsonl, verifier: math}",
        "rl: {steps: 1, verifierPool: {enabled: true, modules: [./task.ts, ../lib/v.mjs, some-package, file:///abs/x.js]}}",
      ].join("\n"),
    );
    const cfg = loadRunConfig(file);
    assert.equal(cfg.data.train, join(sub, "data", "train.jsonl"));
    assert.equal(cfg.data.test, join(sub, "data", "test.jsonl"));
    assert.equal(cfg.model.path, join(dir, "models", "base"));
    assert.deepEqual(cfg.tokenizer, { type: "hf", path: join(sub, "tok") });
    assert.deepEqual(cfg.rl!.verifierPool.modules, [join(sub, "task.ts"), join(dir, "lib", "v.mjs"), "some-package", "file:///abs/x.js"]);
    assert.equal(cfg.out, "runs/x", "the run directory stays relative to where rlvr runs");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("resolveConfigPaths leaves absolute paths, wrong types and the input alone", () => {
  const raw = { data: { train: "/abs/t.jsonl", test: 5 }, model: { path: "m" }, rl: { verifierPool: { modules: "not-a-list" } } };
  const out = resolveConfigPaths(raw, "/base") as typeof raw;
  assert.deepEqual(out, { data: { train: "/abs/t.jsonl", test: 5 }, model: { path: "/base/m" }, rl: { verifierPool: { modules: "not-a-list" } } });
  assert.equal(raw.model.path, "m", "the input is not modified");
  assert.equal(resolveConfigPaths(null, "/base"), null);
});
