/**
 * rl.async learns: GRPO on `maximum` from a random model with maxStaleness 1 (batches sampled by
 * the previous policy version in a worker thread) reaches the same held-out accuracy band as the
 * synchronous loop with the same seed and budget, and never trains on a batch older than allowed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

async function run(rl: Record<string, unknown>): Promise<{ before: number; after: number; stale: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-async-learn-"));
  try {
    const s = await train(
      parseRunConfig({
        seed: 1,
        out: dir,
        model: { init: { hiddenSize: 32, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
        tokenizer: { type: "char", alphabet: "0123456789,>" },
        data: { task: "maximum", difficulty: 3, trainSize: 2000, testSize: 128 },
        rl: { steps: 60, maxNewTokens: 1, lr: 3e-3, ...rl },
        eval: { maxNewTokens: 1 },
      }),
      { quiet: true },
    );
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((r) => (r["stage"] as unknown) === "rl");
    return { before: s.evals["init"]!.accuracy, after: s.evals["rl"]!.accuracy, stale: rows.map((r) => r["rollout/staleness_max"] ?? 0) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("rl.async maxStaleness 1 learns maximum as well as the synchronous loop", { timeout: 600_000 }, async (t) => {
  const t0 = performance.now();
  const sync = await run({});
  const t1 = performance.now();
  const asyn = await run({ async: { maxStaleness: 1 } });
  t.diagnostic(`sync ${sync.before} -> ${sync.after} in ${((t1 - t0) / 1000).toFixed(1)} s; async ${asyn.before} -> ${asyn.after} in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
  assert.ok(sync.after >= sync.before + 0.15, `sync learns: ${sync.before} -> ${sync.after}`);
  assert.ok(asyn.after >= asyn.before + 0.15, `async learns: ${asyn.before} -> ${asyn.after}`);
  assert.ok(asyn.after >= sync.after - 0.15, `async within 0.15 of sync: ${asyn.after} vs ${sync.after}`);
  assert.equal(Math.max(...asyn.stale), 1, "batches were one version stale, never more");
});
