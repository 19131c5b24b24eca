/**
 * `rlvr eval <run>` without --task/--data evaluates the run's own held-out set with the run's
 * reward (here a plugin's), template and budget, after importing the run's plugins — and gives
 * the number the run logged. Unknown names get "did you mean". (The same through the CLI
 * processes: test/cli/plugin-commands.slow.test.ts.)
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { train, getVerifier, getTask } from "../../src/index.ts";
import { runEval } from "../../src/cli/commands/eval.ts";
import { closest, didYouMean } from "../../src/util/suggest.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-eval-run-"));
after(() => rmSync(root, { recursive: true, force: true }));
const api = new URL("../../src/index.ts", import.meta.url).href;

test("rlvr eval <run> uses the run's plugins, held-out set, reward and budget: the run's own number", { timeout: 120_000 }, async () => {
  writeFileSync(
    join(root, "plugin.mjs"),
    `import { defineReward, defineTask } from ${JSON.stringify(api)};
defineTask({ name: "evalrun-max2", sample: (rng) => { const a = rng.int(0, 9), b = rng.int(0, 9); return { prompt: a + "," + b + ">", answer: String(Math.max(a, b)) }; }, verify: (r, ex) => r.trim() === ex.answer });
defineReward({ name: "evalrun-first-char", score: (r, ex) => (r.trim()[0] === ex.answer ? 1 : 0) });\n`,
  );
  const out = join(root, "run");
  await train(
    {
      seed: 4,
      out,
      plugins: ["./plugin.mjs"],
      model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
      tokenizer: { type: "char", alphabet: "0123456789,>" },
      data: { task: "evalrun-max2", trainSize: 64, testSize: 12 },
      reward: { verifier: "evalrun-first-char" },
      sft: { steps: 20, batchSize: 16 },
      rl: { steps: 1, promptsPerStep: 2, groupSize: 2, maxNewTokens: 2 },
      eval: { maxNewTokens: 2 },
    },
    { quiet: true, baseDir: root },
  );
  const logged = readFileSync(join(out, "eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).find((l) => l.label === "rl");
  let printed = "";
  const doc = (await runEval(out, { n: 256, samples: 1, temperature: 0, topP: 1, seed: 1, bootstrap: 0, level: 0.95, json: true }, (s) => (printed += s))) as { settings: Record<string, unknown>; result: { accuracy: number; prompts: number } };
  assert.deepEqual([doc.settings.run, doc.settings.maxNewTokens, doc.settings.template, doc.result.prompts], [join(out, "config.yaml"), 2, "plain", 12]);
  assert.equal(doc.result.accuracy, logged.accuracy);
  assert.equal(JSON.parse(printed).accuracy, logged.accuracy);
  await assert.rejects(runEval(root, { n: 4, samples: 1, temperature: 0, topP: 1, seed: 1, bootstrap: 0, level: 0.95 }, () => {}), /is not a run directory \(no config\.yaml beside it or above it\); give --task/);
});

test("did you mean: near misses only (transpositions count one edit)", () => {
  assert.equal(closest("exatc", ["exact", "math"], 1), "exact");
  assert.equal(didYouMean("exactt", ["exact", "f1"]), 'did you mean "exact"? ');
  assert.equal(didYouMean("nope", ["code", "exact"]), "");
  assert.throws(() => getVerifier("mathh"), /unknown verifier "mathh"; did you mean "math"\? registered verifiers: /);
  assert.throws(() => getTask("additoin"), /unknown task "additoin"; did you mean "addition"\? known tasks: /);
});
