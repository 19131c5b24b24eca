/**
 * The RL step applies the KL-in-reward penalty after every method's reward transform, so no
 * transform can drop it (with rloo + TTRL the rewards used to be exactly 0/1 while kl was 0.38).
 * For each method that transforms the reward stage, the final rewards must equal the method's
 * transformed rewards minus β·Σ_t kl_t of each response, with kl_t ≠ 0 here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseRunConfig } from "../../src/config/schema.ts";
import { buildMethodHooks, enabledMethods } from "../../src/methods/index.ts";
import { reward } from "../../src/pipeline/reward.ts";
import { reference } from "../../src/pipeline/reference.ts";
import type { StepBatch } from "../../src/pipeline/batch.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import type { RunContext } from "../../src/pipeline/context.ts";
import { getTask } from "../../src/tasks/index.ts";
import type { Example } from "../../src/core/example.ts";
import type { TokenBatch, TokenScores } from "../../src/core/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/char.ts";
import { ScriptedEngine } from "../rollout/fake-engine.ts";

/** Sampler log-probs are −0.5 per token; the reference gives −0.7, so k1 KL is 0.2 per response token. */
class RefEngine extends ScriptedEngine {
  override async score(batch: TokenBatch, opts: { model: "policy" | "reference" }): Promise<TokenScores> {
    return { logprobs: new Float32Array(batch.batchSize * batch.seqLen).fill(opts.model === "reference" ? -0.7 : -0.5) };
  }
}

const BETA = 0.5;
const texts = ["7", "7", "3", "x9", /**/ "9", "5", "5", "95"];
const answers = ["7", "9"];

function setup(extra: Record<string, unknown>, klCoef: number) {
  const cfg = parseRunConfig({
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2 } },
    tokenizer: { type: "char", alphabet: "0123456789,>x" },
    data: { task: "maximum", trainSize: 8, testSize: 2 },
    rl: { steps: 1, groupSize: 4, promptsPerStep: 2, algorithm: { preset: "grpo", advantage: { name: "rloo" }, kl: { coef: klCoef, placement: "reward", estimator: "k1" } } },
    ...extra,
  });
  const tokenizer = new CharTokenizer({ alphabet: "0123456789,>x" });
  const task = getTask("maximum");
  const examples: Example[] = answers.map((a, i) => ({ id: `m${i}`, prompt: "3,7>", answer: a, task: "maximum", solution: a }));
  const ctx = {
    cfg, tokenizer, engine: new RefEngine(() => 0), train: examples, test: [],
    verify: (r: string, e: Example) => task.verify(r, e),
    encodePrompt: (e: Example) => Int32Array.from(tokenizer.encode(e.prompt, { addSpecialTokens: false })),
    verifyBatch: async () => ({ verdicts: [], events: {} }),
    close: async () => {},
  } as unknown as RunContext;
  const rollouts = texts.map((t, i) => {
    const tokens = Int32Array.from(tokenizer.encode(t, { addSpecialTokens: false }));
    return { promptIndex: Math.floor(i / 4), tokens, logprobs: new Float32Array(tokens.length).fill(-0.5), stopReason: "completed" as const, sampledTokens: tokens.length };
  });
  const batch: StepBatch = {
    step: 0, examples, prompts: examples.map(ctx.encodePrompt), rollouts, texts: [...texts],
    verdicts: texts.map((t, i) => task.verify(t, examples[Math.floor(i / 4)]!)),
    rewards: new Float32Array(8), groupIds: Int32Array.from(rollouts.map((o) => o.promptIndex)),
    lengths: Int32Array.from(rollouts.map((o) => o.tokens.length)), strata: new Int32Array(8),
    seqs: rollouts.map((o) => ({ prompt: ctx.encodePrompt(examples[o.promptIndex]!), response: o.tokens, oldLogprobs: o.logprobs, groupId: o.promptIndex })),
    extra: { seqs: [], rewards: [] }, advantages: new Float32Array(0),
    generated: { rollouts: [], verdicts: [], examples: [], genBatches: 1, dropped: 0, surplus: 0, full: true, discardedTokens: 0, events: {}, metrics: {} },
    metrics: {}, times: {}, kl: 0, scoredReference: false, trainVersion: 0, maskedTruncated: 0,
  };
  return { cfg, ctx, batch };
}

async function finalRewards(extra: Record<string, unknown>, klCoef: number): Promise<{ rewards: number[]; kl: number; methods: string[] }> {
  const { cfg, ctx, batch } = setup(extra, klCoef);
  const hooks = buildMethodHooks(ctx, cfg);
  const st = initRlState(ctx, cfg.algorithm!);
  await reward(ctx, cfg.algorithm!, batch, hooks);
  await reference(ctx, cfg.algorithm!, st, batch);
  return { rewards: [...batch.rewards], kl: batch.kl, methods: enabledMethods(cfg).map((m) => m.method.name) };
}

const methods: [string, Record<string, unknown>][] = [
  ["ttrl", { labelfree: { ttrl: {} } }],
  ["evol", { labelfree: { evol: {} } }],
  ["ttrl+evol", { labelfree: { ttrl: {}, evol: {} } }],
  ["relift", { guided: { relift: {} } }],
  ["luffy", { guided: { expert: { mode: "luffy" } } }],
];

for (const [name, extra] of methods) {
  test(`${name}: the KL-in-reward penalty survives the method's reward transform`, async () => {
    const plain = await finalRewards(extra, 0);
    const withKl = await finalRewards(extra, BETA);
    assert.ok(plain.methods.length > 0, "the method is enabled");
    assert.ok(Math.abs(withKl.kl - 0.2) < 1e-6, `k1 KL per token is 0.2, got ${withKl.kl}`);
    texts.forEach((t, i) => {
      const expected = plain.rewards[i]! - BETA * 0.2 * t.length;
      assert.ok(Math.abs(withKl.rewards[i]! - expected) < 1e-5, `${name} response ${i}: ${withKl.rewards[i]} vs transformed ${plain.rewards[i]} − β·KL = ${expected}`);
    });
  });
}

test("ttrl: the transformed rewards are the majority vote (not the verifier's), so the check above is not vacuous", async () => {
  const { rewards } = await finalRewards({ labelfree: { ttrl: {} } }, 0);
  assert.deepEqual(rewards, [1, 1, 0, 0, 0, 1, 1, 0]);
});

test("kdrl holds the reference slot: a KL penalty with guided.kd is a config error naming the field", () => {
  assert.throws(() => setup({ guided: { kd: { teacher: "/nonexistent" } } }, BETA), /rl\.algorithm\.kl\.coef/);
});
