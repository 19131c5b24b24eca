/**
 * End to end: RL (GRPO, no SFT) raises held-out accuracy on a procedural task, through the same
 * train() a user runs, on the embedded engine. The `maximum` task's answers are one character, so a
 * random policy starts near chance (~10%) and the verifier's reward is the only teacher.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

/** Train on `maximum` of 3 digits from a random 32-wide model with the given RL block; held-out accuracy before/after and the RL metric rows. */
async function runMaximum(prefix: string, rl: Record<string, unknown>): Promise<{ before: number; after: number; rows: Record<string, number>[] }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    const cfg = parseRunConfig({
      seed: 7,
      out: dir,
      model: { init: { hiddenSize: 32, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
      tokenizer: { type: "char", alphabet: "0123456789,>" },
      data: { task: "maximum", difficulty: 3, trainSize: 2000, testSize: 128 },
      rl: { steps: 60, maxNewTokens: 1, lr: 3e-3, ...rl },
      eval: { maxNewTokens: 1 },
    });
    const s = await train(cfg, { quiet: true });
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.stage === "rl");
    return { before: s.evals["init"]!.accuracy, after: s.evals["rl"]!.accuracy, rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("GRPO raises held-out accuracy over its starting checkpoint (maximum of 3 digits, no SFT)", { timeout: 300_000 }, async () => {
  const { before, after, rows: rl } = await runMaximum("rlvr-e2e-", { promptsPerStep: 16, groupSize: 8, algorithm: "grpo" });
  assert.equal(rl.length, 60);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const early = mean(rl.slice(0, 10).map((l) => l["reward/mean"]!));
  const late = mean(rl.slice(-10).map((l) => l["reward/mean"]!));
  process.stderr.write(`e2e: held-out accuracy ${before.toFixed(3)} -> ${after.toFixed(3)}; train reward ${early.toFixed(3)} -> ${late.toFixed(3)}\n`);
  assert.ok(after >= before + 0.15, `held-out accuracy rose by ${(after - before).toFixed(3)} (need >= 0.15): ${before} -> ${after}`);
  assert.ok(late > early + 0.1, `training reward rose by ${(late - early).toFixed(3)}`);
});

test("REINFORCE++ with one response per prompt (rl.groupSize: 1) raises held-out accuracy", { timeout: 300_000 }, async () => {
  // REINFORCE++ whitens returns over the batch, so it needs no group: 128 prompts × 1 response per
  // step, the same 128 samples a step as the GRPO test above (and its per-token KL-in-reward path).
  const { before, after, rows: rl } = await runMaximum("rlvr-e2e-rpp-", { promptsPerStep: 128, groupSize: 1, algorithm: "reinforce_pp" });
  assert.equal(rl.length, 60);
  assert.ok(rl.every((l) => l["groups/trained_seqs"] === 128), "every response trained on (no group dropped)");
  assert.ok(rl.some((l) => l["kl"]! > 0), "the reference model was scored (KL in the reward)");
  process.stderr.write(`e2e REINFORCE++ k=1: held-out accuracy ${before.toFixed(3)} -> ${after.toFixed(3)}\n`);
  assert.ok(after >= before + 0.15, `held-out accuracy rose by ${(after - before).toFixed(3)} (need >= 0.15): ${before} -> ${after}`);
});
