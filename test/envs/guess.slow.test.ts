// The multi-turn env example learns (examples/guess): a tiny character-level model from scratch,
// trained through the public train() on the env "guess" (4 guesses at a secret digit, the env
// answering ">" or "<"), learns the action format and to guess inside the interval the answers
// leave, and finds the secret far more often (measured, seed 1, first 10 steps -> last 20 of 150:
// reward 0.08 -> 0.64, found 3% -> 42%, inconsistent guesses per episode 1.96 (peak) -> 0.75).
// ~20 s on 2 CPU cores.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { train } from "../../src/index.ts";
import { GUESS_ALPHABET } from "../../examples/guess/env.ts";

test("guess env: RL raises the reward and the found rate of a tiny model from scratch", async (t) => {
  const out = mkdtempSync(join(tmpdir(), "rlvr-guess-"));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  await train(
    {
      seed: 1,
      out,
      model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 32 } },
      tokenizer: { type: "char", alphabet: GUESS_ALPHABET },
      env: { name: "guess", maxTurns: 4, maxTokens: 12 },
      data: { trainSize: 5000, testSize: 16 },
      rl: { steps: 150, promptsPerStep: 16, groupSize: 8, maxNewTokens: 12, temperature: 1, lr: 0.02, algorithm: { preset: "grpo", kl: { coef: 0 } } },
      eval: { temperature: 0, maxNewTokens: 12 },
    },
    { quiet: true },
  );
  const rows = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number | string>).filter((r) => r["stage"] === "rl");
  assert.equal(rows.length, 150);
  const mean = (xs: Record<string, number | string>[], k: string) => xs.reduce((a, r) => a + Number(r[k] ?? 0), 0) / xs.length;
  const first = rows.slice(0, 10);
  const last = rows.slice(-20);
  const peak = Math.max(...rows.slice(0, 60).map((r) => Number(r["env/inconsistent"] ?? 0)));
  const line = `reward ${mean(first, "reward/mean").toFixed(3)} -> ${mean(last, "reward/mean").toFixed(3)}, found ${mean(first, "env/found").toFixed(3)} -> ${mean(last, "env/found").toFixed(3)}, malformed ${mean(first, "env/malformed").toFixed(3)} -> ${mean(last, "env/malformed").toFixed(3)}, inconsistent guesses per episode (peak of steps 1-60) ${peak.toFixed(3)} -> ${mean(last, "env/inconsistent").toFixed(3)}, turns ${mean(last, "env/turns").toFixed(2)}`;
  t.diagnostic(line);
  assert.ok(mean(last, "env/malformed") < 0.1, `the model learns the action format (one digit, then eos): ${line}`);
  assert.ok(mean(last, "env/found") >= 0.3 && mean(last, "env/found") > 5 * mean(first, "env/found"), `the secret is found far more often: ${line}`);
  assert.ok(mean(last, "reward/mean") > 3 * mean(first, "reward/mean"), line);
  assert.ok(mean(last, "env/turns") > 3, `episodes run several turns (observations between them): ${line}`);
  // Guesses outside the interval the env's answers leave: less than half as many as at their peak.
  assert.ok(mean(last, "env/inconsistent") < 0.5 * peak, `the policy uses the observations: ${line}`);
});
