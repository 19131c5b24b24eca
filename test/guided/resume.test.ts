// Resuming a guided run: ReLIFT's demonstration buffer (and its counters) and CHORD's
// demonstration cursor are written into checkpoints (trainer.json rl.methods), so a run resumed
// from a mid-RL checkpoint logs exactly the metrics, samples and evaluations of the
// uninterrupted run and ends with bit-identical weights (embedded engine, same seed).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { metricsWithoutTiming } from "../trainer/helpers.ts";

let root = "";

/** 2 SFT steps, then 6 RL steps; a checkpoint every 2 global steps (step-2 … step-8). */
function cfg(name: string, over: Partial<RunConfigInput>): RunConfigInput {
  return {
    seed: 5,
    out: join(root, name),
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789+=,>?-*" },
    data: { task: "addition", difficulty: 1, trainSize: 64, testSize: 8 },
    sft: { steps: 2, batchSize: 16, lr: 0.01 },
    rl: { steps: 6, promptsPerStep: 4, groupSize: 4, maxNewTokens: 3, lr: 1e-3, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 3, every: 2 },
    checkpoint: { every: 2, keepLast: 10 },
    ...over,
  };
}

/**
 * Train `name` uninterrupted, then copy it, drop every checkpoint after `from` (and the final
 * model), resume the copy and compare.
 * @returns the trainer.json the copy resumed from.
 */
async function resumeMatches(name: string, over: Partial<RunConfigInput>, from: number): Promise<{ rl: { methods?: Record<string, unknown> } }> {
  const A = join(root, name);
  await train(parseRunConfig(cfg(name, over)), { quiet: true });
  const B = join(root, `${name}-resumed`);
  cpSync(A, B, { recursive: true });
  for (const s of [4, 6, 8].filter((s) => s > from)) rmSync(join(B, "checkpoints", `step-${s}`), { recursive: true });
  rmSync(join(B, "checkpoints", "final"), { recursive: true });
  const state = JSON.parse(readFileSync(join(B, "checkpoints", `step-${from}`, "trainer.json"), "utf8")) as { rl: { methods?: Record<string, unknown> } };
  const s = await train(parseRunConfig(cfg(`${name}-unused`, over)), { quiet: true, resume: B });
  assert.equal(s.resumedFrom, join(B, "checkpoints", `step-${from}`));
  assert.deepEqual(metricsWithoutTiming(B), metricsWithoutTiming(A), "metrics.jsonl");
  for (const f of ["samples.jsonl", "eval.jsonl"]) assert.equal(readFileSync(join(B, f), "utf8"), readFileSync(join(A, f), "utf8"), f);
  const w = (d: string) => readFileSync(join(d, "checkpoints", "final", "model.safetensors"));
  assert.ok(w(B).equals(w(A)), "final weights are bit-identical");
  return state;
}

describe("resuming guided runs", { timeout: 300_000 }, () => {
  before(() => {
    root = mkdtempSync(join(tmpdir(), "rlvr-guided-resume-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("ReLIFT: the buffer, the SFT-step count and the added count survive a resume", async () => {
    // Every group counts as hard; a batch of 6 leaves demonstrations in the buffer between SFT steps.
    const state = await resumeMatches("relift", { guided: { relift: { hardness: 1, batchSize: 6 } } }, 4);
    const r = state.rl.methods?.["relift"] as { buffer: { items: { prompt: number[]; response: number[] }[] }; sftSteps: number; added: number } | undefined;
    assert.ok(r, "trainer.json holds ReLIFT's state");
    assert.ok(r.buffer.items.length > 0, "the checkpoint was taken with demonstrations waiting in the buffer");
    assert.ok(r.buffer.items[0]!.response.length > 0);
    assert.ok(r.added >= r.buffer.items.length);
    const lines = readFileSync(join(root, "relift", "metrics.jsonl"), "utf8");
    assert.ok(lines.includes('"stage":"relift-sft"'), "SFT steps were taken");
  });

  it("CHORD: the demonstration cursor survives a resume", async () => {
    const state = await resumeMatches("chord", { guided: { expert: { mode: "chord", batchSize: 4, mu: { start: 0.5, end: 0.1 } } } }, 4);
    const c = state.rl.methods?.["chord"] as { cursor: number } | undefined;
    assert.ok(c, "trainer.json holds CHORD's cursor");
    assert.equal(c.cursor, 8, "2 RL steps × 1 update × 4 demonstrations");
  });

  it("self-play keeps no state outside the weights and the RL counters: it resumes exactly too", async () => {
    // Proposals and solver samples are seeded by (seed, step); the seed SFT steps run once, before RL.
    const state = await resumeMatches("selfplay", { labelfree: { selfPlay: { kind: "arithmetic", proposals: 8, solverGroup: 4, seedSteps: 2, maxItems: 3 } } }, 4);
    assert.equal(state.rl.methods, undefined, "nothing method-specific to save");
  });
});
