/**
 * A learning test on a task other than addition: the quickstart's recipe (a short SFT warm-up
 * whose cosine schedule ends at 1e-3, then GRPO at that rate with 128 prompts × 4 samples a step)
 * pointed at `jigsaw-compact` at its lowest difficulty (two pieces: `A=[7 10] B=[1 4]` → `BA`).
 * The warm-up has a fixed length here instead of the quickstart's 50% accuracy stop: with two
 * possible answers, 50% is chance. RL must raise held-out pass@1 at temperature 1 (4 samples per
 * prompt) and greedy accuracy over the checkpoint it started from. Measured on the 2-core CI
 * machine: pass@1 50.3% → 63.8%, greedy 59.0% → 65.2%.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

const SFT_STEPS = 150;
const RL_STEPS = 60;

test("jigsaw (2 pieces): GRPO after a short SFT warm-up raises held-out accuracy", { timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-learn-jigsaw-"));
  try {
    const cfg = parseRunConfig({
      seed: 1,
      out: dir,
      model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 32 } },
      tokenizer: { type: "char", alphabet: " 0123456789=AB[]" },
      data: { task: "jigsaw-compact", difficulty: 2, trainSize: 4000, testSize: 256 },
      sft: { steps: SFT_STEPS, batchSize: 64, lr: 3e-3, schedule: "cosine", minLrRatio: 1 / 3, warmupSteps: 10, weightDecay: 0.01 },
      rl: { steps: RL_STEPS, promptsPerStep: 128, groupSize: 4, maxNewTokens: 3, lr: 1e-3, warmupSteps: 10, algorithm: "grpo" },
      eval: { temperature: 1, samples: 4, greedy: true, maxNewTokens: 3 },
    });
    const s = await train(cfg, { quiet: true });
    const before = s.evals["sft"]!;
    const after = s.evals["rl"]!;
    process.stderr.write(
      `jigsaw learning: pass@1 (T=1) ${before.meanAtN.toFixed(3)} -> ${after.meanAtN.toFixed(3)}; greedy ${before.greedy!.toFixed(3)} -> ${after.greedy!.toFixed(3)}\n`,
    );
    assert.ok(after.meanAtN >= before.meanAtN + 0.1, `pass@1 at T=1 rose by ${(after.meanAtN - before.meanAtN).toFixed(3)} (need >= 0.10)`);
    assert.ok(after.greedy! >= before.greedy! + 0.05, `greedy accuracy rose by ${(after.greedy! - before.greedy!).toFixed(3)} (need >= 0.05)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
