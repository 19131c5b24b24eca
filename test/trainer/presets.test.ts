/**
 * Every algorithm preset, every registered advantage estimator and every registered policy loss
 * runs through the trainer: two RL steps on `maximum` from a random model, through the same train()
 * a user runs. Each step must train on its batch with finite losses and leave a checkpoint. (The
 * reinforce_pp preset once stopped at the first step — its estimator is token-level, which the RL
 * step did not support — and stratified_grpo needed strata the step did not pass.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listAdvantages, listPolicyLosses, listPresets } from "../../src/algorithms/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

const cases: [string, string | Record<string, unknown>][] = [
  ...listPresets().map((p): [string, string] => [`preset ${p}`, p]),
  ...listAdvantages().map((a): [string, Record<string, unknown>] => [`advantage ${a}`, { advantage: { name: a } }]),
  ...listPolicyLosses().map((l): [string, Record<string, unknown>] => [`loss ${l}`, { loss: { name: l } }]),
];

for (const [label, algorithm] of cases) {
  test(`${label}: two RL steps with finite losses`, { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-alg-"));
    try {
      const cfg = parseRunConfig({
        seed: 3,
        out: dir,
        model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
        tokenizer: { type: "char", alphabet: "0123456789,>" },
        data: { task: "maximum", difficulty: 3, trainSize: 64, testSize: 8 },
        rl: { steps: 2, promptsPerStep: 8, groupSize: 4, maxNewTokens: 2, lr: 1e-3, algorithm },
        eval: { maxNewTokens: 2 },
      });
      await train(cfg, { quiet: true });
      const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number | string>).filter((r) => r["stage"] === "rl");
      assert.equal(rows.length, 2);
      for (const r of rows) {
        assert.ok(Number.isFinite(r["loss/policy"] as number), `finite policy loss, got ${r["loss/policy"]}`);
        assert.equal(r["skipped"], 0, "no update skipped");
        assert.ok((r["groups/trained_seqs"] as number) > 0 && (r["updates"] as number) >= 1, `trained on a batch: ${r["groups/trained_seqs"]} sequences, ${r["updates"]} updates`);
      }
      assert.ok(existsSync(join(dir, "checkpoints", "final")), "final checkpoint written");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
