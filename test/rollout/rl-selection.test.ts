// The data-selection pieces inside the real RL loop (train()): DAPO dynamic sampling resamples and
// logs its generation batches, the curriculum moves and is logged, truncated responses are masked,
// and a run resumed from a mid-RL checkpoint continues with the same curriculum and prompts.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { metricsWithoutTiming } from "../trainer/helpers.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-selection-"));
after(() => rmSync(root, { recursive: true, force: true }));

function config(out: string, rl: Record<string, unknown>): RunConfigInput {
  return {
    seed: 11,
    out,
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 24 } },
    tokenizer: { type: "char", alphabet: "0123456789,>" },
    data: { task: "maximum", difficulty: 4, trainSize: 64, testSize: 8 },
    rl: { steps: 6, promptsPerStep: 4, groupSize: 4, maxNewTokens: 1, lr: 3e-3, algorithm: { preset: "grpo", kl: { coef: 0 } }, ...rl } as RunConfigInput["rl"],
    checkpoint: { every: 2, keepLast: 4 },
  };
}
const rlLines = (dir: string) =>
  readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((l) => (l as unknown as { stage: string }).stage === "rl");

describe("data selection in the RL loop", () => {
  it("dynamic sampling + curriculum + masked truncation: logged, and resumed bit-identically", { timeout: 120_000 }, async () => {
    const A = join(root, "a");
    // raiseAbove 0.01 over a 1-step window: the difficulty rises whenever any response is right.
    const rl = { dynamicSampling: { maxGenBatches: 3 }, curriculum: { start: 2, max: 5, window: 1, raiseAbove: 0.01, lowerBelow: 0 }, maskTruncated: true };
    await train(parseRunConfig(config(A, rl)), { quiet: true });
    const m = rlLines(A);
    assert.equal(m.length, 6);
    for (const l of m) {
      assert.ok(l["rollout/gen_batches"]! >= 1 && l["rollout/gen_batches"]! <= 3);
      assert.ok(l["rollout/groups_kept"]! <= 4);
      assert.equal(l["rollout/groups_kept"]! + l["rollout/groups_dropped"]! + l["rollout/groups_surplus"]!, 4 * l["rollout/gen_batches"]!);
      assert.equal(l["rollout/sampled_tokens"], 16 * l["rollout/gen_batches"]!, "one token per response");
      // maxNewTokens 1: every response that is not a lone end-of-sequence token is cut off and masked.
      assert.ok(l["rollout/masked_truncated"]! <= l["groups/trained_seqs"]!);
    }
    assert.ok(m.reduce((a, l) => a + l["rollout/masked_truncated"]!, 0) > 0);
    assert.equal(m.at(-1)!["rollout/sampled_tokens_total"], m.reduce((a, l) => a + l["rollout/sampled_tokens"]!, 0));
    const ds = m.map((l) => l["curriculum/difficulty"]!);
    assert.ok(ds.every((d) => d >= 2 && d <= 5));
    assert.ok(ds.at(-1)! > 2, `the curriculum rose: ${ds.join(",")}`);
    const samples = readFileSync(join(A, "samples.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { step: number; prompt: string });
    // Prompts of step s are drawn at the difficulty logged after step s − 1 (2 at step 1).
    for (const s of samples) assert.equal(s.prompt.split(",").length, s.step === 1 ? 2 : ds[s.step - 2]);

    // Resume from RL step 2 (checkpoints step-2, -4, -6): the same logs as the uninterrupted run.
    const B = join(root, "b");
    cpSync(A, B, { recursive: true });
    for (const d of ["step-4", "step-6", "final"]) rmSync(join(B, "checkpoints", d), { recursive: true, force: true });
    await train(parseRunConfig(config(B, rl)), { quiet: true, resume: B });
    assert.deepEqual(metricsWithoutTiming(B), metricsWithoutTiming(A));
    assert.equal(readFileSync(join(B, "samples.jsonl"), "utf8"), readFileSync(join(A, "samples.jsonl"), "utf8"));
  });

  it("without a filter, one generation batch per step; with rl.dynamicSampling, groups are filtered", { timeout: 120_000 }, async () => {
    const P = join(root, "plain");
    await train(parseRunConfig({ ...config(P, {}), checkpoint: { every: 0 } }), { quiet: true });
    for (const l of rlLines(P)) {
      assert.equal(l["rollout/gen_batches"], 1);
      assert.equal(l["rollout/groups_kept"], 4);
      assert.equal(l["groups/trained_seqs"], 16);
    }
    const D = join(root, "dapo-flag");
    await train(parseRunConfig({ ...config(D, { algorithm: { preset: "grpo", kl: { coef: 0 } }, dynamicSampling: {} }), checkpoint: { every: 0 } }), { quiet: true });
    for (const l of rlLines(D)) {
      assert.equal(l["groups/zero_std_frac"], 0, "no kept group has identical accuracy");
      assert.equal(l["groups/trained_seqs"], 4 * l["rollout/groups_kept"]!);
    }
  });
});
