/**
 * sft.stopAt: the warm-up ends once greedy accuracy on held-back training prompts reaches the
 * target; those prompts are never SFT demonstrations; an unreachable target runs to the cap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { initSftState, sftCheckSet } from "../../src/trainer/sft.ts";

const config = (out: string, accuracy: number): RunConfigInput => ({
  seed: 5,
  out,
  model: { init: { hiddenSize: 32, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789,>" },
  data: { task: "maximum", difficulty: 3, trainSize: 500, testSize: 32 },
  sft: { steps: 60, batchSize: 32, lr: 3e-3, schedule: "constant", stopAt: { accuracy, every: 4, prompts: 64 } },
  eval: { maxNewTokens: 2 },
});

const sftLines = (dir: string) =>
  readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.stage === "sft");

test("sft.stopAt stops at the first check that reaches the target; the check set is held out", { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-sftstop-"));
  try {
    const cfg = parseRunConfig(config(dir, 0.3));
    const ctx = await buildContext(cfg);
    const held = new Set(sftCheckSet(ctx).map((e) => e.id));
    assert.equal(held.size, 64);
    const st = initSftState(ctx);
    assert.equal(st.order.length, 500 - 64);
    for (const i of st.order) assert.ok(!held.has(ctx.train[i]!.id), "a check prompt is an SFT demonstration");
    await ctx.close();

    await train(cfg, { quiet: true });
    const lines = sftLines(dir);
    const checks = lines.filter((l) => l["check/accuracy"] !== undefined);
    const steps = lines.filter((l) => l["loss"] !== undefined);
    assert.ok(checks.length >= 1);
    const last = checks.at(-1)!;
    assert.equal(last["check/stopped"], 1);
    assert.ok(last["check/accuracy"] >= 0.3);
    for (const c of checks.slice(0, -1)) assert.ok(c["check/accuracy"] < 0.3 && c["check/stopped"] === 0);
    assert.equal(last.step % 4, 0);
    assert.equal(steps.length, last.step, "no SFT step after the stop");
    assert.ok(last.step < 60, `stopped at ${last.step}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sft.stopAt with an unreachable target runs to the cap, checking on schedule", { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-sftstop-"));
  try {
    await train(parseRunConfig({ ...config(dir, 1), sft: { ...config(dir, 1).sft!, steps: 12 } }), { quiet: true });
    const lines = sftLines(dir);
    assert.equal(lines.filter((l) => l["loss"] !== undefined).length, 12);
    assert.deepEqual(lines.filter((l) => l["check/accuracy"] !== undefined).map((l) => l.step), [4, 8]);
    assert.throws(() => parseRunConfig({ ...config(dir, 0), out: dir }), /sft\.stopAt\.accuracy/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sft.stopAt on resume: a run resumed from the checkpoint of the stopping step stops there too", { timeout: 240_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-sftstop-"));
  try {
    const A = join(root, "a");
    const B = join(root, "b");
    const withCkpt = (out: string): RunConfigInput => ({ ...config(out, 0.3), checkpoint: { every: 4, keepLast: 100 } });
    await train(parseRunConfig(withCkpt(A)), { quiet: true });
    const strip = (ls: Record<string, unknown>[]) => ls.map((l) => Object.fromEntries(Object.entries(l).filter(([k]) => k !== "time" && k !== "step_time")));
    const linesA = sftLines(A);
    const stopStep = linesA.find((l) => l["check/stopped"] === 1)!.step as number;
    // B: the run as it was when killed right after the stopping step's checkpoint, before its check.
    cpSync(A, B, { recursive: true });
    for (const d of readdirSync(join(B, "checkpoints"))) {
      if (d !== `step-${stopStep}`) rmSync(join(B, "checkpoints", d), { recursive: true, force: true });
    }
    rmSync(join(B, "eval.jsonl"), { force: true });
    const s = await train(parseRunConfig(withCkpt(B)), { quiet: true, resume: B });
    assert.ok(s.resumedFrom, "resumed");
    const linesB = sftLines(B);
    assert.deepEqual(strip(linesB), strip(linesA), "the resumed run logs the same SFT steps and the same stopping check");
    assert.equal(linesB.filter((l) => l["loss"] !== undefined).length, stopStep, "no SFT step after the stop");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
