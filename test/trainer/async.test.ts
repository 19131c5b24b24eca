/**
 * Asynchronous rollouts with bounded staleness (rl.async): maxStaleness 0 is the synchronous loop
 * bit for bit; maxStaleness 1 trains every step after the first on a batch sampled one policy
 * version earlier (by a copy of the policy in a worker thread), never older — asserted from the
 * versions the rollouts recorded — with mismatch correction on by default.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

const config = (dir: string, rl: Record<string, unknown>) =>
  parseRunConfig({
    seed: 2,
    out: dir,
    model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789,>" },
    data: { task: "maximum", difficulty: 3, trainSize: 256, testSize: 16 },
    rl: { steps: 4, promptsPerStep: 16, groupSize: 4, maxNewTokens: 1, lr: 3e-3, ...rl },
    eval: { maxNewTokens: 1 },
  });

async function run(rl: Record<string, unknown>): Promise<{ rows: Record<string, number>[]; weights: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-async-"));
  try {
    await train(config(dir, rl), { quiet: true });
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((r) => (r["stage"] as unknown) === "rl");
    return { rows, weights: readFileSync(join(dir, "checkpoints", "final", "model.safetensors")) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const untimed = (r: Record<string, number>) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== "time" && !k.startsWith("time/") && !k.startsWith("throughput/")));

test("rl.async maxStaleness 0 is the synchronous loop, bit for bit (metrics and final weights)", { timeout: 180_000 }, async () => {
  const sync = await run({});
  const zero = await run({ async: { maxStaleness: 0 } });
  assert.equal(sync.rows.length, 4);
  assert.deepEqual(zero.rows.map(untimed), sync.rows.map(untimed));
  assert.ok(zero.weights.equals(sync.weights), "identical final weights");
});

test("rl.async maxStaleness 1: batches one version stale after the first step, never more; mismatch correction on", { timeout: 180_000 }, async () => {
  assert.ok(config("x", { async: { maxStaleness: 1 } }).algorithm!.mismatch, "mismatch correction defaults on with rl.async");
  assert.equal(config("x", {}).algorithm!.mismatch, undefined, "and stays off without it");
  const { rows } = await run({ async: { maxStaleness: 1 } });
  assert.equal(rows.length, 4);
  assert.deepEqual(rows.map((r) => r["rollout/staleness_max"]), [0, 1, 1, 1], "the first batch is fresh, each later one was sampled during the previous step's training");
  assert.deepEqual(rows.map((r) => r["policy/version"]), [1, 2, 3, 4]);
  for (const r of rows) assert.ok(Number.isFinite(r["loss/policy"]!) && r["time/weight_sync"]! >= 0, "finite loss, weights synced");
  // The sampler holds the trainer's weights exactly: at equal versions the log-probs agree.
  assert.ok(rows[0]!["rollout/logprob_diff"]! < 1e-5, `fresh batch: sampler and trainer agree (${rows[0]!["rollout/logprob_diff"]})`);
  assert.ok(rows.slice(1).some((r) => r["rollout/logprob_diff"]! > 1e-5), "stale batches: the trainer moved since they were sampled");
});
