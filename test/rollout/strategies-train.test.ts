// The rollout strategies run inside the real RL step (train(), embedded engine, tiny model):
// metrics are logged, tree rollouts stay within budget, hint and agent sequences train.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

function cfg(out: string, rl: Record<string, unknown>, alphabet = "0123456789+="): RunConfigInput {
  return {
    seed: 2,
    out,
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 48 } },
    tokenizer: { type: "char", alphabet },
    data: { task: "addition", difficulty: 2, trainSize: 64, testSize: 8 },
    rl: { steps: 2, promptsPerStep: 4, groupSize: 4, maxNewTokens: 4, lr: 1e-3, ...rl },
  };
}

async function runRl(rl: Record<string, unknown>, alphabet?: string): Promise<Record<string, number>[]> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-rollout-"));
  try {
    await train(parseRunConfig(cfg(dir, rl, alphabet)), { quiet: true });
    return readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((m) => m.stage === "rl");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("rl.tree: tree rollouts in the RL step stay within budget and log tree metrics", { timeout: 120_000 }, async () => {
  const ms = await runRl({ tree: { roots: 1, budget: 10 } });
  assert.equal(ms.length, 2);
  for (const m of ms) {
    assert.equal(m["tree/forks"], 4 * 3);
    assert.ok(m["rollout/sampled_tokens"]! <= 4 * 10, `sampled ${m["rollout/sampled_tokens"]}`);
    assert.equal(m["rollout/sampled_tokens"], m["tree/sampled_tokens"]);
    assert.ok(Number.isFinite(m["loss/policy"]!));
  }
});

test("rl.hints: zero-accuracy groups are re-sampled with hints and counted", { timeout: 120_000 }, async () => {
  const ms = await runRl({ hints: { fractions: [0.5] } });
  for (const m of ms) {
    assert.ok(m["hints/zero_acc_groups"]! >= 0 && m["hints/hinted_groups"]! <= m["hints/zero_acc_groups"]!);
    assert.ok(Number.isFinite(m["loss/policy"]!));
  }
  assert.ok(ms.some((m) => m["hints/hinted_groups"]! > 0), "an untrained model leaves some group at zero accuracy");
});

test("rl.agent: the agent loop runs in the RL step (observations masked) and config errors name the field", { timeout: 120_000 }, async () => {
  const ms = await runRl({ maxNewTokens: 24, agent: { tools: ["calc"], maxTurns: 1 } }, "0123456789+=<>/calout");
  for (const m of ms) {
    assert.ok("agent/tool_use_frac" in m && "agent/engine_calls" in m);
    assert.ok(Number.isFinite(m["loss/policy"]!));
  }
  await assert.rejects(runRl({ agent: { tools: ["nope"] } }), /rl\.agent\.tools: unknown tool "nope"/);
  await assert.rejects(runRl({ tree: { roots: 4 } }), /rl\.tree\.roots: must be below rl\.groupSize/);
});
