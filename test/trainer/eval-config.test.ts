/**
 * The run's held-out evaluation follows the `eval` block: several samples per prompt at a
 * temperature (pass@1 as mean@n, pass@k) with a separate greedy decode alongside.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { tinyConfig } from "./helpers.ts";

test("eval.samples and eval.greedy: n samples per prompt at the temperature, plus greedy accuracy", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-evalcfg-"));
  try {
    const base = tinyConfig(dir);
    const cfg = parseRunConfig({ ...base, rl: { ...base.rl!, steps: 2 }, checkpoint: { every: 0 }, eval: { every: 0, temperature: 1, samples: 3, greedy: true } });
    const s = await train(cfg, { quiet: true });
    const rows = readFileSync(join(dir, "eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(rows.map((r) => r.label), ["sft", "rl"]);
    for (const r of rows) {
      assert.equal(r.samples, 3);
      assert.equal(r.prompts, 8);
      assert.ok(typeof r.greedy === "number" && r.greedy >= 0 && r.greedy <= 1, "greedy accuracy reported");
      assert.ok(typeof r.passAtK["pass@3"] === "number" && r.passAtK["pass@3"] >= r.meanAtN - 1e-12, "pass@3 ≥ mean@3");
    }
    assert.equal(s.evals["rl"]!.samples, 3);
    // Temperature 0 keeps one (greedy) sample per prompt whatever `samples` says.
    assert.throws(() => parseRunConfig({ ...base, eval: { samples: 0 } }), /eval\.samples/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
