/**
 * train() on a terminal shows the stages and a progress bar (as `rlvr train`), unless quiet;
 * RunSummary's `before`/`after` are the held-out evaluations before RL and the last one.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { train } from "../../src/index.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-train-progress-"));
after(() => rmSync(root, { recursive: true, force: true }));

const config = (out: string) => ({
  out,
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char" as const, alphabet: "0123456789+=" },
  data: { task: "addition", difficulty: 1, trainSize: 16, testSize: 2 },
  sft: { steps: 2, batchSize: 4 },
  rl: { steps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 2 },
});

async function onTty(quiet: boolean, out: string) {
  const written: string[] = [];
  const stderr = process.stderr as NodeJS.WriteStream & { isTTY: boolean };
  const [write, tty] = [stderr.write.bind(stderr), stderr.isTTY];
  stderr.isTTY = true;
  stderr.write = ((s: string) => (written.push(String(s)), true)) as typeof stderr.write;
  try {
    return { summary: await train(config(out), { quiet }), text: written.join("") };
  } finally {
    stderr.write = write;
    stderr.isTTY = tty;
  }
}

test("train() on a terminal shows stages and progress unless quiet", { timeout: 120_000 }, async () => {
  const loud = await onTty(false, join(root, "loud"));
  for (const s of ["» setup", "» sft (2 steps)", "» eval (before RL)", "» rl (2 steps)", "» save"]) assert.ok(loud.text.includes(s), `${s} in ${JSON.stringify(loud.text.slice(0, 400))}`);
  assert.match(loud.text, /rl \[.*\] 2\/2/);
  const quiet = await onTty(true, join(root, "quiet"));
  assert.equal(quiet.text, "");
  const s = loud.summary;
  assert.equal(s.before, s.evals["sft"]);
  assert.equal(s.after, s.evals["rl"]);
});
