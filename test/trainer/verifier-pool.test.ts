/**
 * RL scoring through the verifier pool: the same rewards as in-process scoring, and a verifier
 * that hangs costs the fallback reward and counted timeouts, never the run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import "./fixtures/hanging-task.ts";

const hangingModule = fileURLToPath(new URL("./fixtures/hanging-task.ts", import.meta.url));
const poolOnlyModule = fileURLToPath(new URL("./fixtures/pool-only-task.ts", import.meta.url));

function config(dir: string, task: string, pool: Record<string, unknown>, reward?: Record<string, unknown>) {
  return parseRunConfig({
    ...(reward ? { reward } : {}),
    seed: 5,
    out: dir,
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789,>" },
    data: { task, difficulty: 3, trainSize: 64, testSize: 4 },
    rl: { steps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 1, lr: 1e-3, algorithm: "dr_grpo", verifierPool: pool },
    eval: { maxNewTokens: 1 },
  });
}

const rlLines = (dir: string) =>
  readFileSync(join(dir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((l) => l.stage === "rl");

test("pool scoring gives the same rewards as in-process scoring", { timeout: 120_000 }, async () => {
  const a = mkdtempSync(join(tmpdir(), "rlvr-pool-a-"));
  const b = mkdtempSync(join(tmpdir(), "rlvr-pool-b-"));
  try {
    await train(config(a, "maximum", {}), { quiet: true });
    await train(config(b, "maximum", { enabled: true, size: 1 }), { quiet: true });
    const ra = rlLines(a).map((l) => l["reward/mean"]);
    const rb = rlLines(b).map((l) => l["reward/mean"]);
    assert.deepEqual(rb, ra);
    assert.ok(rlLines(b).every((l) => l["verifier/timeouts"] === 0 && l["verifier/errors"] === 0));
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

test("a hung verifier times out in the pool: fallback reward, counted, the run completes (reward.maxErrorRate 1)", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-pool-hang-"));
  try {
    // maxErrorRate 1: count the timeouts without stopping (by default, a step whose samples time
    // out more than half the time stops the run: test/rewards/reward-errors.test.ts).
    const cfg = config(dir, "hanging-maximum", { enabled: true, size: 1, timeoutMs: 300, fallback: 0, modules: [hangingModule] }, { verifier: "hanging-maximum", maxErrorRate: 1 });
    await train(cfg, { quiet: true });
    const rl = rlLines(dir);
    assert.equal(rl.length, 2);
    const timeouts = rl.reduce((s, l) => s + l["verifier/timeouts"], 0);
    assert.ok(timeouts > 0 && timeouts <= rl.length * 4, `timeouts ${timeouts}`);
    assert.ok(rl.every((l) => l["reward/mean"] === 0));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a task registered only by a pool module: the trainer loads the module in the main process too", { timeout: 120_000 }, async () => {
  const { hasTask } = await import("../../src/tasks/index.ts");
  assert.equal(hasTask("pool-only-maximum"), false, "the test itself does not import the module");
  const dir = mkdtempSync(join(tmpdir(), "rlvr-pool-main-"));
  try {
    await train(config(dir, "pool-only-maximum", { enabled: true, size: 1, modules: [poolOnlyModule] }), { quiet: true });
    const rl = rlLines(dir);
    assert.equal(rl.length, 2);
    assert.ok(rl.every((l) => l["verifier/errors"] === 0 && l["verifier/timeouts"] === 0));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a pool module that cannot load stops the run at once with one line naming it", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-pool-bad-"));
  const missing = join(dir, "no-such-task.ts");
  try {
    await assert.rejects(train(config(dir, "maximum", { enabled: true, size: 1, modules: [missing] }), { quiet: true }), (e: Error) => {
      assert.match(e.message, /^config error at rl\.verifierPool\.modules: cannot load verifier module file:\/\/.*no-such-task\.ts: /);
      assert.equal(e.message.includes("\n"), false);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
