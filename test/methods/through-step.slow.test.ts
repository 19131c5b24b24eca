// RAFT and self-play run through the normal RL step (no step-replacement hook): they log the
// step's real entropy and, with a reference model, its KL; RAFT runs with a curriculum; RAFT's loss
// is the SFT loss on the kept responses.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeSftLoss, resolveAlgorithm, stepCounts } from "../../src/algorithms/index.ts";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { packSequences } from "../../src/core/sequence.ts";
import { HOOK_STAGES, defineMethod } from "../../src/methods/index.ts";
import { makeRaftLoss, raftFilter } from "../../src/methods/raft.ts";
import type { RewardStage } from "../../src/pipeline/hooks.ts";
import { train } from "../../src/trainer/run.ts";

let root = "";

function cfg(name: string, over: Partial<RunConfigInput>, rl: Record<string, unknown> = {}): RunConfigInput {
  return {
    seed: 3,
    out: join(root, name),
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789+=,>?-*" },
    data: { task: "addition", difficulty: 1, trainSize: 64, testSize: 8 },
    sft: { steps: 2, batchSize: 16, lr: 0.01 },
    // A KL penalty in the loss: the reference model is scored every step.
    rl: { steps: 3, promptsPerStep: 4, groupSize: 4, maxNewTokens: 3, lr: 0.05, algorithm: { preset: "grpo", kl: { coef: 0.01, placement: "loss" } }, ...rl },
    eval: { maxNewTokens: 3 },
    ...over,
  };
}

async function rlRows(c: RunConfigInput): Promise<Record<string, number>[]> {
  await train(parseRunConfig(c), { quiet: true });
  const rows = readFileSync(join(c.out as string, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  return rows.filter((r) => r["stage"] === "rl") as Record<string, number>[];
}

describe("RAFT and self-play through the normal step", { timeout: 240_000 }, () => {
  before(() => {
    root = mkdtempSync(join(tmpdir(), "rlvr-through-step-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("RAFT logs real entropy and KL; it keeps the best of each group", async () => {
    const m = await rlRows(cfg("raft", { methods: { raft: { threshold: 0 } } }));
    assert.equal(m.length, 3);
    for (const r of m) {
      assert.equal(r["raft/kept"], 4, "threshold 0 keeps the best of each of 4 prompts");
      assert.ok(r["entropy"]! > 0, `entropy ${r["entropy"]}`);
      assert.equal(r["updates"], 1);
    }
    assert.ok(Math.abs(m[0]!["kl"]!) < 1e-6, "step 1 samples with the reference's own weights");
    // k1 over the sampled tokens: an unbiased estimate, of either sign on a small batch.
    assert.ok(m.slice(1).every((r) => Math.abs(r["kl"]!) > 1e-4), `kl ${m.map((r) => r["kl"]).join(",")}`);
  });

  it("RAFT with a curriculum (it could not before: it drew prompts by hand)", async () => {
    const m = await rlRows(cfg("raft-cur", { methods: { raft: { threshold: 0 } } }, { curriculum: { start: 1, max: 3, window: 1, raiseAbove: 0.01, lowerBelow: 0 } }));
    assert.equal(m.length, 3);
    for (const r of m) {
      assert.ok(r["curriculum/difficulty"]! >= 1 && r["curriculum/difficulty"]! <= 3, `difficulty ${r["curriculum/difficulty"]}`);
      assert.ok(r["entropy"]! > 0, `entropy ${r["entropy"]}`);
    }
  });

  it("self-play logs real entropy and KL, and its own metrics", async () => {
    const m = await rlRows(cfg("selfplay", { sft: undefined, methods: { selfPlay: { kind: "arithmetic", proposals: 8, solverGroup: 4, seedSteps: 2, maxItems: 3 } } }));
    assert.equal(m.length, 3);
    for (const r of m) {
      for (const k of ["selfplay/valid_frac", "selfplay/solve_rate", "selfplay/learnability", "selfplay/tasks"]) assert.equal(typeof r[k], "number", k);
      assert.ok(r["selfplay/tasks"]! <= 3, "the proposer's group and at most promptsPerStep − 1 task groups");
      assert.ok(r["entropy"]! > 0, `entropy ${r["entropy"]}`);
    }
    // k1 over the sampled tokens: an unbiased estimate, of either sign on a small batch.
    assert.ok(m.slice(1).every((r) => Math.abs(r["kl"]!) > 1e-4), `kl ${m.map((r) => r["kl"]).join(",")}`);
  });

  it("every built-in method logs the step's real entropy and, with a reference model, its KL", async () => {
    // KDRL is absent: its teacher occupies the reference slot (it refuses a KL penalty; kd/kl is its KL).
    const methods: [string, Partial<RunConfigInput>, Record<string, unknown>?][] = [
      ["ttrl+ear", { methods: { ttrl: {}, ear: {} } }],
      ["evol", { methods: { evol: {} } }],
      ["relift", { methods: { relift: { hardness: 1, batchSize: 2 } } }],
      ["luffy", { methods: { expert: { mode: "luffy" } } }],
      ["chord", { methods: { expert: { mode: "chord", batchSize: 4 } } }],
      ["ghpo", {}, { hints: { fractions: [0.5] } }],
    ];
    for (const [name, over, rl] of methods) {
      const m = await rlRows(cfg(`each-${name}`, over, { steps: 2, ...rl }));
      assert.equal(m.length, 2, name);
      for (const r of m) assert.ok(r["entropy"]! > 0, `${name}: entropy ${r["entropy"]}`);
      assert.ok(Math.abs(m[1]!["kl"]!) > 1e-4, `${name}: kl ${m.map((r) => r["kl"]).join(",")}`);
    }
  });

  it("RAFT's loss is the SFT loss (token-mean NLL) on the kept responses; the filter masks the rest", () => {
    const seqs = [0, 1, 2, 3].map((i) => ({ prompt: Int32Array.from([1, 2]), response: Int32Array.from([3 + i, 4, 5].slice(0, 1 + (i % 3))), groupId: i >> 1 }));
    const rollouts = seqs.map((q, i) => ({ promptIndex: q.groupId, tokens: q.response, logprobs: new Float32Array(q.response.length), stopReason: "completed" as const, i }));
    const stage = { step: 0, examples: [], prompts: [], rollouts, texts: [], verdicts: [], rewards: Float32Array.from([0.2, 0.9, 1, 0.5]), seqs } as unknown as RewardStage;
    const res = raftFilter(stage, { keep: "best", threshold: 0, perPrompt: 1 });
    assert.deepEqual(res.metrics, { "raft/kept": 2, "raft/kept_frac": 0.5 });
    assert.deepEqual(seqs.map((q) => (q as { mask?: Float32Array }).mask === undefined), [false, true, true, false]);
    const batch = packSequences(seqs, 0);
    const kept = packSequences([seqs[1]!, seqs[2]!], 0);
    const lp = Float32Array.from({ length: batch.batchSize * batch.seqLen }, (_, i) => -0.1 * (1 + (i % 7)));
    const keptLp = Float32Array.from([...lp.slice(batch.seqLen, 2 * batch.seqLen), ...lp.slice(2 * batch.seqLen, 3 * batch.seqLen)]);
    const raft = makeRaftLoss(resolveAlgorithm({ preset: "grpo", kl: { coef: 0 } }), stepCounts([batch], 3), {})({ logprobs: lp }, batch);
    const sft = makeSftLoss(stepCounts([kept], 3))({ logprobs: keptLp }, kept);
    assert.ok(Math.abs(raft.loss - sft.loss) < 1e-6, `${raft.loss} vs ${sft.loss}`);
    assert.equal(raft.dLogprobs.filter((d) => d !== 0).length, 5, "only the kept responses' 2 + 3 tokens get a gradient");
  });

  it("no hook replaces the step: a method declaring the stage 'step' is refused", () => {
    assert.equal(Object.hasOwn(HOOK_STAGES, "step"), false);
    assert.throws(() => defineMethod({ name: "whole-step", stages: ["step" as never], build: () => ({}) }), /stages must be a list of/);
  });
});
