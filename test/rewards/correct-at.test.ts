/**
 * `correct` is separate from `reward`: a reward that gives partial credit (0.5 for a wrong answer)
 * never counts as correct — not in a verdict, the step's accuracy, samples.jsonl, `sft.stopAt`,
 * the held-out eval or report.md. A reward function that returns only a number is correct at
 * reward ≥ `reward.correctAt` (default 1). Controls: full credit counts everywhere.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineReward, train } from "../../src/index.ts";
import { compileReward } from "../../src/rewards/compile.ts";
import { rewardConfigSchema } from "../../src/rewards/config.ts";
import type { Example } from "../../src/core/example.ts";
import type { RunConfigInput } from "../../src/config/schema.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-correct-at-"));
after(() => rmSync(root, { recursive: true, force: true }));

// 1 for the reference answer, 0.5 (a "near miss") for anything else.
defineReward({ name: "test-half-credit", score: (r, ex) => (r.trim() === ex.answer ? 1 : 0.5) });
defineReward({ name: "test-half-always", score: () => 0.5 });
defineReward({ name: "test-full-always", score: () => ({ reward: 1 }) });
const mod = join(root, "half.mjs");
writeFileSync(mod, `export default (r, ex) => ({ reward: r.trim() === ex.answer ? 1 : 0.5, reason: "half" });\n`);

const ex: Example = { id: "a", task: "t", prompt: "1+1=", answer: "2" };

test("a bare-number or {reward} verdict is correct at reward ≥ correctAt (default 1), never at > 0", async () => {
  for (const block of [{ verifier: "test-half-credit" }, { module: mod }, { components: [{ verifier: "test-half-credit", weight: 2 }] }]) {
    const r = await compileReward(rewardConfigSchema.parse(block));
    const b = await r.scoreBatch(["7", "2"], [ex, ex]);
    assert.deepEqual(b.verdicts.map((v) => v.correct), [false, true], JSON.stringify(block));
    assert.equal(b.verdicts[0]!.reward, "components" in block ? 1 : 0.5, "partial credit is still the reward");
    assert.equal((await r.verifyOne("7", ex)).correct, false);
    assert.equal((await r.verifyOne("2", ex)).correct, true);
    const lenient = await compileReward(rewardConfigSchema.parse({ ...block, correctAt: 0.5 }));
    assert.deepEqual((await lenient.scoreBatch(["7", "2"], [ex, ex])).verdicts.map((v) => v.correct), [true, true]);
  }
  // An explicit `correct` wins over the threshold either way.
  defineReward({ name: "test-explicit", score: () => ({ reward: 0.2, correct: true }) });
  assert.equal((await (await compileReward(rewardConfigSchema.parse({ verifier: "test-explicit" }))).verifyOne("x", ex)).correct, true);
});

const config = (out: string, verifier: string): RunConfigInput => ({
  seed: 2,
  out,
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789+=" },
  data: { task: "addition", difficulty: 1, trainSize: 40, testSize: 4 },
  reward: { verifier },
  sft: { steps: 4, batchSize: 8, stopAt: { accuracy: 0.01, every: 2, prompts: 8 } },
  rl: { steps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 2 },
  eval: { maxNewTokens: 2 },
  logging: { samplesPerStep: 4 },
});

const jsonl = (f: string) => readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

test("a reward of 0.5 on every sample is 0% accuracy everywhere; a reward of 1 is 100% (control)", { timeout: 120_000 }, async () => {
  for (const [verifier, acc] of [["test-half-always", 0], ["test-full-always", 1]] as const) {
    const out = join(root, verifier);
    const s = await train(config(out, verifier), { quiet: true });
    const m = jsonl(join(out, "metrics.jsonl"));
    const checks = m.filter((l) => l["check/accuracy"] !== undefined);
    assert.deepEqual(checks.map((l) => l["check/accuracy"]), [acc], `${verifier}: sft.stopAt check (at step 2; the cap, step 4, is not checked)`);
    assert.equal(checks.at(-1)!["check/stopped"], acc, `${verifier}: sft.stopAt fired`);
    const rl = m.filter((l) => l.stage === "rl");
    assert.deepEqual(rl.map((l) => l["accuracy"]), [acc, acc], `${verifier}: step accuracy`);
    assert.deepEqual(rl.map((l) => l["reward/mean"]), acc ? [1, 1] : [0.5, 0.5]);
    for (const row of jsonl(join(out, "samples.jsonl"))) assert.equal(row["correct"], acc === 1, `${verifier}: samples.jsonl`);
    for (const e of jsonl(join(out, "eval.jsonl"))) assert.deepEqual([e["accuracy"], e["meanAtN"]], [acc, acc], `${verifier}: eval.jsonl ${e["label"]}`);
    for (const e of Object.values(s.evals)) assert.equal(e.accuracy, acc);
    assert.match(readFileSync(join(out, "report.md"), "utf8"), new RegExp(`\\| rl \\| ${acc ? "100" : "0"}\\.0% \\|`));
  }
});
