/**
 * The worked example of docs/rewards.md runs as written: examples/custom-reward/config.yaml (a JSONL
 * task scored by a user reward module, paths relative to the config file) trains, its held-out
 * accuracy rises, every component is logged, and `rlvr eval --data` on the run directory scores
 * with the run's own reward (not a default verifier).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { evalVerifier } from "../../src/cli/commands/eval.ts";
import type { Example } from "../../src/core/example.ts";

const config = join(import.meta.dirname, "..", "..", "examples", "custom-reward", "config.yaml");

test("examples/custom-reward trains with its reward module and rlvr eval takes the run's reward", { timeout: 300_000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), "rlvr-custom-reward-"));
  try {
    const cfg = { ...loadRunConfig(config), out };
    const s = await train(cfg, { quiet: true });
    const before = s.evals["init"]!.accuracy;
    const after = s.evals["rl"]!.accuracy;
    process.stderr.write(`custom-reward example: held-out accuracy ${before.toFixed(3)} -> ${after.toFixed(3)}\n`);
    assert.ok(after >= before + 0.3, `held-out accuracy rose by ${(after - before).toFixed(3)}: ${before} -> ${after}`);
    const rl = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.stage === "rl");
    for (const row of rl) for (const k of ["reward/largest", "reward/exact"]) assert.ok(Number.isFinite(row[k]), k);
    // Partial credit shows the module, not exact match, made the reward.
    assert.ok(rl.some((row) => row["reward/largest"] > row["reward/exact"]), "partial credit reached the reward");

    const ex: Example = { id: "x", prompt: "3,8,1>", answer: "8", task: "dataset" };
    const verify = await evalVerifier({ data: "held-out.jsonl" }, out);
    assert.deepEqual(await verify("3", ex), { reward: 0.1, correct: false, extracted: "3", reason: "a digit of the prompt, not the largest" });
    assert.equal((await verify("8", ex)).reward, 1);
    const noRun = join(out, "elsewhere", "a", "b"); // a checkpoint with no run config.yaml beside or above it
    await assert.rejects(evalVerifier({ data: "held-out.jsonl" }, noRun), /--data rows need a verifier; pass --verifier <name>/);
    assert.equal((await (await evalVerifier({ data: "x", verifier: "exact" }, noRun))("8", ex)).reward, 1);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
