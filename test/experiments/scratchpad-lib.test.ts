import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parseRunConfig } from "../../src/config/schema.ts";
import { cell, markdownTable, readRun, scratchpadRecipe, series, window } from "../../scripts/experiments/scratchpad-lib.ts";

test("the recipe and every experiment arm's overrides are valid run configs with the intended settings", () => {
  const parse = (o: Parameters<typeof scratchpadRecipe>[1]) => parseRunConfig({ ...scratchpadRecipe(2, o), out: "scratch/x" }, "test");
  const base = parse({});
  assert.equal(base.seed, 2);
  assert.equal(base.model.engine, "torch");
  assert.deepEqual([base.rl!.steps, base.rl!.promptsPerStep, base.rl!.groupSize, base.rl!.maxNewTokens, base.rl!.lr, base.rl!.miniBatches], [20, 64, 8, 48, 3e-4, 1]);
  assert.equal(base.algorithm!.kl.coef, 0);
  assert.deepEqual([base.algorithm!.loss.clipLow, base.algorithm!.loss.clipHigh], [0.2, 0.2]);
  const higher = parse({ rl: { miniBatches: 4 }, algorithm: { loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.28 } } });
  assert.deepEqual([higher.rl!.miniBatches, higher.algorithm!.loss.clipLow, higher.algorithm!.loss.clipHigh, higher.rl!.lr], [4, 0.2, 0.28, 3e-4]);
  const dr = parse({ algorithm: { preset: "dr_grpo" } });
  assert.equal(dr.algorithm!.aggregation, "seq-mean-token-sum-norm");
  assert.equal(dr.algorithm!.advantage.name, "dr_grpo");
  const lam = parse({ reward: { verifier: "addition-scratchpad", shaping: [{ type: "grpo_lambda", lambda: 0.5 }] } });
  assert.equal(lam.reward!.shaping[0]!.type, "grpo_lambda");
  assert.equal(parse({ rl: { lr: 1e-3 } }).rl!.lr, 1e-3);
});

test("readRun, series and window read a run directory's logs; cell and markdownTable format them", () => {
  const dir = mkdtempSync(join(tmpdir(), "sp-lib-"));
  const lines = [1, 2, 3, 4].map((s) => JSON.stringify({ stage: "rl", step: s, accuracy: s / 10, "response/length_mean": 20 - s }));
  writeFileSync(join(dir, "metrics.jsonl"), [JSON.stringify({ stage: "sft", step: 1, loss: 1 }), ...lines].join("\n") + "\n");
  const ev = (label: string, greedy: number) => JSON.stringify({ label, step: 0, greedy, passAtK: { "pass@1": greedy / 2 }, meanLength: 18, truncated: 0 });
  writeFileSync(join(dir, "eval.jsonl"), [ev("init", 0.25), ev("rl", 0.5)].join("\n") + "\n");
  const r = readRun(dir, "grpo", 3);
  assert.deepEqual([r.before.greedy, r.after.greedy, r.after.pass1, r.steps], [0.25, 0.5, 0.25, 4]);
  assert.ok(Number.isNaN(r.seconds));
  assert.deepEqual(series(dir, "accuracy"), [0.1, 0.2, 0.3, 0.4]);
  assert.equal(window(series(dir, "response/length_mean"), 2, "first"), 18.5);
  assert.equal(window(series(dir, "response/length_mean"), 2, "last"), 16.5);
  assert.equal(cell([0.1, 0.2, 0.3], 1, 100), "20.0 ± 10.0");
  assert.equal(cell([NaN]), "–");
  assert.equal(markdownTable(["a", "b"], [["1", "2"]]), "| a | b |\n|---|---|\n| 1 | 2 |");
});
