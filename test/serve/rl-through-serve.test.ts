// RL with rollouts from an OpenAI-compatible server: `rollout: {engine: openai}` against
// `rlvr serve --weight-sync`. The sampler pushes the trainer's weights before the first collect
// and after every update, so rollouts come from the current policy: the trainer's log-probs match
// the server's (rollout/logprob_diff ~ 0) and the server ends on the last version. With one
// on-policy update a step the trainer's log-probs come from the update's own forward (no
// `time/rescore`); with two epochs a re-score pass runs first (src/pipeline/collect.ts rescoreReason).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { train } from "../../src/api/train.ts";
import { openEngine } from "../../src/engines/open.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { serve } from "../../src/serve/server.ts";

// GRPO without its KL term: the reference stage would read the trainer's log-probs before the update.
const algorithm = { preset: "grpo", kl: { coef: 0 } } as const;
for (const epochs of [1, 2]) {
  const mode = epochs === 1 ? "without a re-score pass (one on-policy update)" : "with a re-score pass (rl.epochs 2)";
  test(`train() with rollout: {engine: openai} samples from rlvr serve and keeps it on-policy, ${mode}`, { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-rl-serve-"));
    const alphabet = "0123456789,>";
    const init = { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16, tieWordEmbeddings: true, ropeTheta: 10000, intermediateSize: 48 };
    const tokenizer = new CharTokenizer({ alphabet });
    // The server starts from other weights (seed 99): the first sync must replace them.
    const engine = await openEngine({ init }, { tokenizer, seed: 99 });
    const server = await serve({ engine, tokenizer, port: 0, modelName: "policy", weightSync: true });
    try {
      const out = join(dir, "run");
      await train(
        {
          out,
          model: { init },
          tokenizer: { type: "char", alphabet },
          data: { task: "maximum", trainSize: 64, testSize: 8 },
          rl: { steps: 3, promptsPerStep: 4, groupSize: 4, maxNewTokens: 1, lr: 0.01, epochs, algorithm },
          eval: { maxNewTokens: 1 },
          rollout: { engine: "openai", baseURL: server.url, model: "policy" },
        },
        { quiet: true },
      );
      const rows = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((r) => r["rollout/logprob_diff"] !== undefined);
      assert.equal(rows.length, 3);
      for (const r of rows) assert.ok(r["rollout/logprob_diff"]! < 1e-3 && r["rollout/logprob_diff_max"]! < 1e-3, `logprob diff ${r["rollout/logprob_diff"]}`);
      for (const r of rows) assert.equal(r["time/rescore"] !== undefined, epochs > 1, `time/rescore ${r["time/rescore"]} with rl.epochs ${epochs}`);
      assert.equal(server.policyVersion, 3, "the server holds the weights of the last step");
      assert.ok(server.ctx.batcher.stats.calls >= 3, "rollouts came from the server");
    } finally {
      await server.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
