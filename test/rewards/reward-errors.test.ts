/**
 * Reward errors are loud: the first failure is warned about on the console, `verifier/errors`
 * counts every error (in-process too), and a component that fails on more than
 * `reward.maxErrorRate` of a step's samples stops the run with one line naming it and its first
 * error — a thrown RewardError from train(), exit status 1 from `rlvr train` — keeping every log
 * line and checkpoint already written. Control: a reward failing on a few samples runs to the end.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { defineReward, defineTask, train, RewardError } from "../../src/index.ts";
import type { RunConfigInput } from "../../src/config/schema.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-reward-errors-"));
after(() => rmSync(root, { recursive: true, force: true }));

defineReward({ name: "test-always-throws", score: () => { throw new Error("boom: no answer field\nsecond line"); } });
let calls = 0;
defineReward({ name: "test-throws-sometimes", score: (r, ex) => { if (++calls % 4 === 0) throw new Error("every fourth"); return r.trim() === ex.answer ? 1 : 0; } });
defineTask({ name: "test-task-throws", sample: (rng) => ({ prompt: `${rng.int(0, 9)}=`, answer: "1" }), verify: () => { throw new Error("task verify broke"); } });

const config = (out: string, reward: RunConfigInput["reward"], over: Partial<RunConfigInput> = {}): RunConfigInput => ({
  seed: 2,
  out,
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789+=" },
  data: { task: "addition", difficulty: 1, trainSize: 40, testSize: 4 },
  ...(reward ? { reward } : {}),
  sft: { steps: 2, batchSize: 8 },
  rl: { steps: 3, promptsPerStep: 2, groupSize: 4, maxNewTokens: 2 },
  eval: { maxNewTokens: 2 },
  checkpoint: { every: 2 },
  ...over,
});

/** Run `fn` with stderr captured. */
async function captureStderr<T>(fn: () => Promise<T>): Promise<{ value?: T; error?: unknown; stderr: string }> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => (lines.push(String(s)), true)) as typeof process.stderr.write;
  try {
    return { value: await fn(), stderr: lines.join("") };
  } catch (error) {
    return { error, stderr: lines.join("") };
  } finally {
    process.stderr.write = write;
  }
}

test("a reward that always throws stops train() with one line naming it; what was written stays", { timeout: 120_000 }, async () => {
  for (const [name, cfg, who, first] of [
    ["always", config(join(root, "always"), { verifier: "test-always-throws" }), /reward component "test-always-throws"/, /first error: boom: no answer field$/],
    ["task", config(join(root, "task"), undefined, { data: { task: "test-task-throws", trainSize: 40, testSize: 4 } }), /reward component "test-task-throws" failed/, /first error: task verify broke$/],
  ] as const) {
    const r = await captureStderr(() => train(cfg, { quiet: true }));
    assert.ok(r.error instanceof RewardError, `${name}: ${String(r.error)}`);
    const msg = (r.error as Error).message;
    assert.equal(msg.split("\n").length, 1);
    assert.match(msg, /^reward error: /);
    assert.match(msg, who);
    assert.match(msg, /failed on 8 of 8 samples of RL step 1 \(more than reward\.maxErrorRate 0\.5\)/);
    assert.match(msg, first);
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("reward warning:"));
    assert.equal(warnings.length, 1, r.stderr);
    const out = cfg.out!;
    const lines = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.filter((l) => l.stage === "sft").length, 2, "SFT lines stay");
    assert.equal(lines.filter((l) => l.stage === "rl").length, 0, "the failed step is not logged or trained");
    assert.ok(existsSync(join(out, "checkpoints", "step-2", "trainer.json")), "the checkpoint stays");
    assert.ok(existsSync(join(out, "eval.jsonl")));
  }
});

test("a reward failing on a quarter of the samples runs to the end; verifier/errors counts each failure", { timeout: 120_000 }, async () => {
  const out = join(root, "sometimes");
  const r = await captureStderr(() => train(config(out, { verifier: "test-throws-sometimes" }), { quiet: true }));
  assert.equal(r.error, undefined, String(r.error));
  const warnings = r.stderr.split("\n").filter((l) => l.startsWith("reward warning:"));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0]!, /reward component "test-throws-sometimes" failed.*: every fourth \(the sample gets the fallback reward; counted as reward\/errors\/test-throws-sometimes; the run stops when more than 0\.5/);
  const rl = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.stage === "rl");
  assert.equal(rl.length, 3);
  for (const row of rl) {
    assert.equal(row["verifier/errors"], row["reward/errors/test-throws-sometimes"]);
    assert.equal(row["verifier/errors"], 2, "8 samples a step, every fourth call throws");
  }
});

test("rlvr train: a reward module that always throws exits 1 with the error as the last line", { timeout: 120_000 }, () => {
  const dir = join(root, "cli");
  writeFileSync(join(root, "throws.mjs"), `export default () => { throw new Error("cannot parse the answer"); };\n`);
  const cfg = { ...config(dir, { module: "./throws.mjs" }), checkpoint: undefined, sft: undefined };
  writeFileSync(join(root, "cli.yaml"), stringify(cfg));
  const r = spawnSync(process.execPath, [join(import.meta.dirname, "../../bin/rlvr.js"), "train", join(root, "cli.yaml")], {
    encoding: "utf8",
    env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off" },
    timeout: 110_000,
  });
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l.trim() !== "" && !/npm warn/.test(l));
  assert.match(lines.at(-1)!, /^reward error: reward component "default" \(throws\.mjs#default\) failed on 8 of 8 samples of RL step 1 \(more than reward\.maxErrorRate 0\.5\); first error: cannot parse the answer$/);
  assert.equal(lines.filter((l) => l.startsWith("reward warning:")).length, 1, r.stderr);
  assert.ok(existsSync(join(dir, "eval.jsonl")), "the held-out eval before RL stays");
});
