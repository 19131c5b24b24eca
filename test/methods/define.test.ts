/**
 * A method a user defines with defineMethod plugs into the RL step without editing src/: enabled by
 * name in the config's `methods` block, validated, run in the reward stage. And the registries'
 * declared capabilities drive config validation (a loss that needs whole updates, unknown names).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { defineMethod } from "../../src/methods/index.ts";
import { train } from "../../src/trainer/run.ts";

defineMethod<{ amount: number }>({
  name: "test-bonus",
  stages: ["reward"],
  validate(_cfg, o) {
    if (typeof o.amount !== "number" || !Number.isFinite(o.amount)) throw new Error("config error at methods.test-bonus.amount: expected a finite number");
  },
  build: (_ctx, o) => ({
    rewards: (s) => ({ rewards: s.rewards.map((r) => r + o.amount), metrics: { "bonus/amount": o.amount } }),
  }),
});

const base = (dir: string, extra: Record<string, unknown> = {}) => ({
  seed: 5,
  out: dir,
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789,>" },
  data: { task: "maximum", difficulty: 3, trainSize: 32, testSize: 4 },
  rl: { steps: 2, promptsPerStep: 4, groupSize: 4, maxNewTokens: 2, lr: 1e-3 },
  eval: { maxNewTokens: 2 },
  ...extra,
});

test("a user method enabled by `methods:` transforms the rewards of every step", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-method-"));
  try {
    await train(parseRunConfig(base(dir, { methods: { "test-bonus": { amount: 0.25 } } })), { quiet: true });
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((r) => (r["stage"] as unknown) === "rl");
    assert.equal(rows.length, 2);
    for (const r of rows) {
      assert.equal(r["bonus/amount"], 0.25);
      assert.ok(Math.abs(r["reward/mean"]! - r["reward/verifier"]! - 0.25) < 1e-6, `reward/mean ${r["reward/mean"]} = verifier ${r["reward/verifier"]} + 0.25`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a method's own validation and unknown method names are config errors naming the field", () => {
  assert.throws(() => parseRunConfig(base("x", { methods: { "test-bonus": { amount: "lots" } } })), /methods\.test-bonus\.amount/);
  assert.throws(() => parseRunConfig(base("x", { methods: { "no-such-method": {} } })), /at methods\.no-such-method: no method "no-such-method" is registered; registered: .*test-bonus/);
});

test("a loss that needs whole updates (bapo) refuses a micro-batch size that splits them, at config time", () => {
  const alg = { preset: "grpo", loss: { name: "bapo" } };
  assert.throws(() => parseRunConfig(base("x", { rl: { steps: 1, promptsPerStep: 8, groupSize: 4, microBatchSize: 8, algorithm: alg } })), /at rl\.microBatchSize: loss "bapo" needs each optimizer update's 32 sequences in one pass/);
  assert.doesNotThrow(() => parseRunConfig(base("x", { rl: { steps: 1, promptsPerStep: 8, groupSize: 4, microBatchSize: 32, algorithm: alg } })));
  assert.doesNotThrow(() => parseRunConfig(base("x", { rl: { steps: 1, promptsPerStep: 8, groupSize: 4, microBatchSize: 8, algorithm: "grpo" } })));
});

test("methods that change the weights between RL steps refuse rl.async, naming the field", () => {
  assert.throws(() => parseRunConfig(base("x", { rl: { steps: 1, promptsPerStep: 4, groupSize: 4, async: { maxStaleness: 1 } }, guided: { relift: {} } })), /at rl\.async: relift \(guided\.relift\) changes the weights between RL steps/);
  assert.doesNotThrow(() => parseRunConfig(base("x", { rl: { steps: 1, promptsPerStep: 4, groupSize: 4, async: { maxStaleness: 0 } }, guided: { relift: {} } })));
});
