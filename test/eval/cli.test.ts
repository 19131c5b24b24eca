import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { resolveCheckpoint, runEval, type EvalCommandOptions } from "../../src/cli/commands/eval.ts";

/** Two tiny random char-level models saved as run directories (config.yaml + checkpoints/final). */
async function makeRuns(root: string): Promise<[string, string]> {
  const tokenizer = new CharTokenizer({ alphabet: "0123456789+=" });
  const dirs: string[] = [];
  for (const seed of [1, 2]) {
    const engine = await EmbeddedEngine.create(
      { modelType: "llama", vocabSize: tokenizer.vocabSize, hiddenSize: 16, intermediateSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, headDim: 8, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: 32, tieWordEmbeddings: true, attentionBias: false, bosTokenId: tokenizer.bosId, eosTokenId: tokenizer.eosId },
      { seed, tokenizer, modelId: `tiny-${seed}` },
    );
    const run = join(root, `run${seed}`);
    await engine.save(join(run, "checkpoints", "final"));
    await engine.close();
    writeFileSync(join(run, "config.yaml"), "seed: 1\nmodel: { path: checkpoints/final }\ndata: { task: addition }\n");
    dirs.push(run);
  }
  return dirs as [string, string];
}

const base: EvalCommandOptions = { task: "addition", difficulty: "1,2", verifier: "math", n: 6, samples: 4, temperature: 1, topP: 1, maxNewTokens: 4, seed: 3, template: "plain", bootstrap: 200, level: 0.9 };

test("rlvr eval: a tiny random checkpoint, compared with another, JSON out and --record", async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-eval-"));
  try {
    const [a, b] = await makeRuns(root);
    let printed = "";
    const out = join(root, "cmp.json");
    const doc = (await runEval(a, { ...base, compare: b, labels: "base,trained", greedy: true, out, record: true }, (s) => (printed += s))) as Record<string, any>;
    // Tables: both reports, the comparison and the curve.
    assert.match(printed, /^base: 12 prompts × 4 samples$/m);
    assert.match(printed, /^trained: 12 prompts × 4 samples$/m);
    assert.match(printed, /^metric\s+base\s+trained\s+trained − base$/m);
    assert.match(printed, /^per difficulty$/m);
    assert.match(printed, /pass@k: b = base, t = trained/);
    // The JSON file holds both results with every sample and the comparison.
    const file = JSON.parse(readFileSync(out, "utf8"));
    assert.equal(file.a.result.prompts, 12);
    assert.equal(file.a.result.outcomes.length, 12);
    assert.equal(file.a.result.outcomes[0].samples.length, 4);
    assert.equal(typeof file.a.result.outcomes[0].samples[0].response, "string");
    assert.deepEqual(Object.keys(file.a.result.byDifficulty), ["addition@1", "addition@2"]);
    assert.deepEqual(file.comparison.curve.k, [1, 2, 4]);
    assert.equal(file.comparison.paired, 12);
    assert.equal(file.a.result.level, 0.9);
    assert.ok(file.a.result.greedy !== undefined);
    // Recompute mean@n from the stored samples with the task's verifier.
    let c = 0;
    for (const p of file.b.result.outcomes) for (const s of p.samples) c += s.correct ? 1 : 0;
    assert.equal(doc.b.result.meanAtN, c / 48);
    // --record appended one summary line per checkpoint to A's eval.jsonl.
    const lines = readFileSync(join(a, "eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.label), ["eval:base", "eval:trained"]);
    assert.equal(lines[0].outcomes, undefined);
    assert.equal(lines[0].passAtK["pass@4"], file.a.result.passAtK["pass@4"]);
    // Same seed, same prompts: evaluating A again gives identical numbers.
    const again = (await runEval(a, { ...base, greedy: true, json: true }, () => {})) as Record<string, any>;
    assert.deepEqual(again.result.passAtK, file.a.result.passAtK);
    assert.deepEqual(again.result.ci, file.a.result.ci);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("rlvr eval (command line): --json, --k, and clear errors", async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-eval-cli-"));
  try {
    const [a] = await makeRuns(root);
    const run = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "test/helpers/cli-driver.ts", "eval", ...args], { encoding: "utf8" });
    const r = run(a, "--task", "addition", "--n", "3", "--samples", "3", "--k", "1,3", "--temperature", "1", "--max-new-tokens", "3", "--json");
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(j.passAtK), ["pass@1", "pass@3"]);
    assert.deepEqual(Object.keys(j.majAtK), ["maj@1", "maj@3"]);
    assert.equal(j.prompts, 3);
    assert.equal(j.outcomes, undefined);
    // The default budget (32 tokens) does not fit this 32-position model after a prompt: it is fitted, with a note.
    const fitted = run(a, "--task", "addition", "--n", "2", "--json");
    assert.equal(fitted.status, 0, fitted.stderr);
    assert.match(fitted.stderr, /--max-new-tokens 32 lowered to 2[0-9] \(the model's context is 32 tokens, the longest prompt [0-9]+\)/);
    assert.ok(JSON.parse(fitted.stdout).maxLength <= 32);
    const badEngine = run(a, "--task", "addition", "--n", "2", "--engine", "tpu");
    assert.equal(badEngine.status, 1);
    assert.equal(badEngine.stderr.trim(), 'error: rlvr eval: --engine must be one of embedded, torch, vllm, auto, got "tpu"');
    if (TorchEngine.probe().ok) {
      // --engine torch opens the checkpoint in the torch worker: greedy answers as the embedded engine's.
      const args = ["--task", "addition", "--n", "4", "--max-new-tokens", "3", "--json"];
      const viaTorch = run(a, ...args, "--engine", "torch");
      assert.equal(viaTorch.status, 0, viaTorch.stderr);
      assert.deepEqual(JSON.parse(viaTorch.stdout).passAtK, JSON.parse(run(a, ...args).stdout).passAtK);
    }
    rmSync(join(a, "config.yaml"));
    // Without --task/--data and without a run config: not a run directory.
    const missing = run(a);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /error: rlvr eval: .* is not a run directory \(no config\.yaml beside it or above it\); give --task <name\[,name\.\.\.\]> or --data <file>/);
    assert.throws(() => resolveCheckpoint(root), /no checkpoint at .*: expected config.json there or in .*checkpoints\/final/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
