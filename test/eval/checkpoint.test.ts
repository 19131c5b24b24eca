// evaluateCheckpoint: the public evaluation of a trained checkpoint equals the number the run
// itself logged (its last eval.jsonl line), and hand-built evaluation as docs/api.md and
// docs/evaluation.md show it (loadTokenizer + openEngine + evaluate, prompts by tokenizer.encode)
// gives the same number — encode adds the special tokens training's prompts carry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runEval } from "../../src/cli/commands/eval.ts";
import { train, evaluateCheckpoint, evaluate, openEngine, loadTokenizer, getTask, generateExamples, type Example } from "../../src/index.ts";

test("evaluateCheckpoint(run) equals the run's own final evaluation; hand-built evaluation from the docs agrees", { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-evalckpt-"));
  try {
    const out = join(dir, "run");
    const run = await train(
      {
        seed: 5,
        out,
        model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
        tokenizer: { type: "char", alphabet: "0123456789,>" },
        data: { task: "maximum", trainSize: 256, testSize: 24 },
        sft: { steps: 40, batchSize: 32, lr: 0.02 },
        rl: { steps: 2, promptsPerStep: 4, groupSize: 4, maxNewTokens: 1 },
        eval: { maxNewTokens: 1, temperature: 1, samples: 4, greedy: true },
      },
      { quiet: true },
    );
    const lines = readFileSync(join(out, "eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { label: string; accuracy: number; greedy: number; meanAtN: number; passAtK: Record<string, number> });
    const logged = lines.at(-1)!;
    assert.equal(logged.label, "rl");
    assert.ok(logged.greedy > 0.2, `the model learned something (greedy ${logged.greedy}), so a wrong prompt would show`);

    const mine = await evaluateCheckpoint(out);
    assert.equal(mine.accuracy, logged.accuracy);
    assert.equal(mine.greedy, logged.greedy);
    assert.equal(mine.meanAtN, logged.meanAtN);
    assert.deepEqual(mine.passAtK, logged.passAtK);
    assert.equal(mine.accuracy, run.evals["rl"]!.accuracy);
    // `rlvr eval <run>` without --task/--data: the run's test set and reward; greedy = the run's greedy.
    const cli = (await runEval(out, { n: 256, samples: 1, temperature: 0, topP: 1, maxNewTokens: 1, seed: 5, bootstrap: 0, level: 0.95 }, () => {})) as { result: { accuracy: number; prompts: number } };
    assert.deepEqual([cli.result.prompts, cli.result.accuracy], [24, logged.greedy]);

    // As docs/api.md "Engines" and docs/evaluation.md "From code" show it.
    const ckpt = join(out, "checkpoints", "final");
    const tokenizer = await loadTokenizer(ckpt);
    const engine = await openEngine({ path: ckpt }, { tokenizer });
    const task = getTask("maximum");
    const held = generateExamples(task, { n: 24, seed: 5, split: "test" });
    try {
      const byHand = await evaluate(
        { engine, tokenizer, verify: (r: string, ex: Example) => task.verify(r, ex), encodePrompt: (ex: Example) => Int32Array.from(tokenizer.encode(ex.prompt)) },
        held,
        { maxNewTokens: 1, temperature: 0, seed: 5 },
      );
      assert.equal(byHand.accuracy, logged.greedy, "greedy accuracy by hand = the run's");
      process.stderr.write(`run logged pass@1 ${logged.accuracy} greedy ${logged.greedy}; evaluateCheckpoint ${mine.accuracy} / ${mine.greedy}; by hand ${byHand.accuracy}\n`);
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
