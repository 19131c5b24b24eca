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
import { openEngine } from "../../src/engines/open.ts";
import { EmbeddedWorkerSampler } from "../../src/rollout/samplers/embedded-worker.ts";
import { CharTokenizer } from "../../src/tokenizers/char.ts";

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
  breakdown(sync.rows);
  for (const r of sync.rows) assert.ok(r["time/overlap"]! < 0.02 * r["time/step"]! + 0.005, `synchronous: sampling and training never overlap (overlap ${r["time/overlap"]} s of ${r["time/step"]} s)`);
});

/** Where each step's time went: trainer waiting + sampler waiting + both at work = the step. */
function breakdown(rows: Record<string, number>[]): void {
  for (const r of rows) {
    const [w, s, o, step] = [r["time/wait_rollouts"]!, r["time/wait_weights"]!, r["time/overlap"]!, r["time/step"]!];
    assert.ok([w, s, o].every((x) => Number.isFinite(x) && x >= 0), "the three parts are logged");
    assert.ok(Math.abs(w + s + o - step) < 1e-6 || (o === 0 && w + s >= step), `they add up to the step (${w} + ${s} + ${o} vs ${step})`);
  }
}

test("rl.async maxStaleness 1: batches one version stale after the first step, never more; mismatch correction on", { timeout: 180_000 }, async () => {
  assert.ok(config("x", { async: { maxStaleness: 1 } }).algorithm!.mismatch, "mismatch correction defaults on with rl.async");
  assert.equal(config("x", {}).algorithm!.mismatch, undefined, "and stays off without it");
  const { rows } = await run({ async: { maxStaleness: 1 } });
  assert.equal(rows.length, 4);
  assert.deepEqual(rows.map((r) => r["rollout/staleness_max"]), [0, 1, 1, 1], "the first batch is fresh, each later one was sampled during the previous step's training");
  assert.deepEqual(rows.map((r) => r["policy/version"]), [1, 2, 3, 4]);
  for (const r of rows) assert.ok(Number.isFinite(r["loss/policy"]!) && r["time/sync"]! >= 0, "finite loss, weights synced");
  breakdown(rows);
  assert.ok(rows.slice(1).some((r) => r["time/overlap"]! > 0), "the prefetched batch was sampled while the trainer trained");
});

test("the embedded worker sampler samples exactly what the trainer engine samples with the same weights and seed", { timeout: 120_000 }, async () => {
  const tokenizer = new CharTokenizer({ alphabet: "0123456789,>" });
  const engine = await openEngine({ init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16, tieWordEmbeddings: true, ropeTheta: 10000 } }, { tokenizer, seed: 4 });
  const sampler = new EmbeddedWorkerSampler();
  try {
    await assert.rejects(sampler.sample({ prompts: [], n: 1, maxNewTokens: 1, temperature: 1, seed: 1 }), /syncWeights must run before/);
    await sampler.syncWeights(engine, 0);
    assert.equal(sampler.version(), 0);
    const req = { prompts: [Int32Array.from(tokenizer.encode("3,8,5>")), Int32Array.from(tokenizer.encode("1,2>"))], n: 3, maxNewTokens: 4, temperature: 1, seed: 7, stopTokens: [tokenizer.eosId] };
    const a = await engine.sample(req);
    const b = await sampler.sample(req);
    assert.deepEqual(b.map((o) => [...o.tokens]), a.map((o) => [...o.tokens]));
    assert.deepEqual(b.map((o) => [...o.logprobs]), a.map((o) => [...o.logprobs]));
  } finally {
    await sampler.close();
    await engine.close();
  }
});
