/**
 * ReLIFT's teacher can be any OpenAI-compatible server that shares the student's tokenizer: with
 * `guided.relift.teacherEndpoint` pointing at `rlvr serve` of a checkpoint, the run collects the
 * same demonstrations and ends with the same weights as with `teacher: <that checkpoint>`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { serve } from "../../src/serve/index.ts";

const alphabet = "0123456789,>";

test("relift.teacherEndpoint (rlvr serve) gives the demonstrations a teacher checkpoint gives", { timeout: 300_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-relift-endpoint-"));
  // A teacher that is right on part of the prompts: a few SFT steps from a random model.
  const t = await train(
    parseRunConfig({
      seed: 11,
      out: join(root, "teacher-run"),
      model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
      tokenizer: { type: "char", alphabet },
      data: { task: "maximum", difficulty: 3, trainSize: 512, testSize: 8 },
      sft: { steps: 40, batchSize: 32, lr: 3e-3 },
      eval: { maxNewTokens: 1 },
    }),
    { quiet: true },
  );
  const teacherDir = t.checkpoint;
  const server = await serve({ checkpoint: teacherDir, host: "127.0.0.1", port: 0 });
  try {
    const run = async (name: string, relift: Record<string, unknown>) => {
      const out = join(root, name);
      await train(
        parseRunConfig({
          seed: 3,
          out,
          model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
          tokenizer: { type: "char", alphabet },
          data: { task: "maximum", difficulty: 3, trainSize: 64, testSize: 8 },
          rl: { steps: 3, promptsPerStep: 8, groupSize: 4, maxNewTokens: 1, lr: 1e-3 },
          eval: { maxNewTokens: 1 },
          guided: { relift: { source: "teacher", every: 1, batchSize: 4, ...relift } },
        }),
        { quiet: true },
      );
      const rows = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>);
      return { added: rows.filter((r) => (r["stage"] as unknown) === "rl").map((r) => r["relift/added"]), weights: readFileSync(join(out, "checkpoints", "final", "model.safetensors")) };
    };
    const local = await run("local", { teacher: teacherDir });
    const remote = await run("remote", { teacherEndpoint: { baseURL: server.url, model: server.ctx.modelName } });
    assert.ok(local.added.reduce((a, b) => a + b!, 0)! > 0, `the teacher supplied demonstrations: ${local.added}`);
    assert.deepEqual(remote.added, local.added);
    assert.ok(remote.weights.equals(local.weights), "same demonstrations, same SFT steps, same weights");
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test("relift: teacher and teacherEndpoint together are a config error naming the field", () => {
  assert.throws(
    () => parseRunConfig({ model: { init: {} }, tokenizer: { type: "char", alphabet }, data: { task: "maximum" }, rl: { steps: 1, groupSize: 2 }, guided: { relift: { source: "teacher", teacher: "/x", teacherEndpoint: { baseURL: "http://127.0.0.1:1/v1", model: "m" } } } }),
    /guided\.relift\.teacherEndpoint/,
  );
});
