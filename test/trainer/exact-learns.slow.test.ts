/**
 * A user's own JSONL task scored with `reward: {verifier: exact}` is learnable: RL alone (GRPO, no
 * SFT) raises held-out accuracy on "the largest of three digits" ("3,8,1>" → "8") from a random
 * 32-wide model, through the same train() a user runs, on the embedded engine.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { Rng } from "../../src/tasks/rng.ts";

test("reward: {verifier: exact} on a JSONL task raises held-out accuracy", { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-exact-learns-"));
  try {
    // All 1000 digit triples, shuffled with a fixed seed: 600 train rows, 100 held-out rows.
    const rng = new Rng(11);
    const all = Array.from({ length: 1000 }, (_, i) => [Math.floor(i / 100), Math.floor(i / 10) % 10, i % 10]);
    for (let i = all.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    const row = (d: number[]) => JSON.stringify({ prompt: `${d.join(",")}>`, answer: String(Math.max(...d)) });
    writeFileSync(join(dir, "train.jsonl"), all.slice(0, 600).map(row).join("\n") + "\n");
    writeFileSync(join(dir, "test.jsonl"), all.slice(900).map(row).join("\n") + "\n");
    const cfg = parseRunConfig({
      seed: 7,
      out: join(dir, "run"),
      model: { init: { hiddenSize: 32, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
      tokenizer: { type: "char", alphabet: "0123456789,>" },
      data: { train: join(dir, "train.jsonl"), test: join(dir, "test.jsonl"), testSize: 100 },
      reward: { verifier: "exact" },
      rl: { steps: STEPS, promptsPerStep: 16, groupSize: 8, maxNewTokens: 1, lr: 3e-3 },
      eval: { maxNewTokens: 1 },
    });
    const t0 = performance.now();
    const s = await train(cfg, { quiet: true });
    const before = s.evals["init"]!.accuracy;
    const after = s.evals["rl"]!.accuracy;
    process.stderr.write(`exact-learns: held-out accuracy ${before.toFixed(3)} -> ${after.toFixed(3)} in ${STEPS} steps, ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    assert.ok(after >= before + MARGIN, `held-out accuracy rose by ${(after - before).toFixed(3)} (need >= ${MARGIN}): ${before} -> ${after}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const STEPS = 30;
const MARGIN = 0.3; // measured 0.000 -> 0.750 (seed 7, 2-core loaded machine, 25 s)
