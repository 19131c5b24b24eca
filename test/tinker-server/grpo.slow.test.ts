// engine "tinker" end to end: rlvr's own RL step (its pipeline, GRPO loss, rewards) trains a model
// held by `rlvr tinker` through TinkerEngine, and learns a procedural reward.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { contextWith, type RunContext } from "../../src/pipeline/context.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { serveTinker } from "../../src/tinker/server.ts";
import { TinkerEngine } from "../../src/tinker/engine.ts";
import { writeTinyModel } from "../tinker/fixture.ts";

describe("GRPO through TinkerEngine on rlvr tinker", () => {
  it("learns 'first response token is a' in 20 steps", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-grpo-"));
    await writeTinyModel(join(dir, "tiny"));
    const server = await serveTinker({ port: 0, models: { tiny: join(dir, "tiny") }, dataDir: join(dir, "data"), log: () => {} });
    const tokenizer = new CharTokenizer({ alphabet: "0123456789+= abc" });
    const engine = await TinkerEngine.open({ baseUrl: server.url, baseModel: "tiny", rank: 8, vocabSize: tokenizer.vocabSize, maxSeqLen: 64 });
    try {
      const cfg = parseRunConfig({
        seed: 3,
        out: join(dir, "run"),
        model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 64 } },
        tokenizer: { type: "char", alphabet: "0123456789+= abc" },
        data: { task: "addition" },
        rl: { steps: 20, promptsPerStep: 4, groupSize: 8, maxNewTokens: 3, lr: 1e-2, temperature: 1 },
      });
      const examples = ["1+2=", "3+4=", "5+6=", "7+8="].map((p, i) => ({ id: `first-a-${i}`, prompt: p, answer: "a", task: "first-a" }));
      const ctx: RunContext = contextWith({
        cfg,
        tokenizer,
        engine,
        train: examples,
        test: examples,
        verify: (response) => {
          const ok = response.startsWith("a");
          return { correct: ok, reward: ok ? 1 : 0, extracted: response.slice(0, 1), reason: ok ? "ok" : "first token is not a" };
        },
        encodePrompt: (ex) => Int32Array.from([tokenizer.bosId!, ...tokenizer.encode(ex.prompt)]),
      });
      const st = initRlState(ctx, cfg.algorithm!);
      if (st.kl.coef > 0 || cfg.algorithm!.kl.adaptive) await engine.setReference("policy");
      const log = new RunLogger(cfg.out, true);
      const acc: number[] = [];
      for (let i = 0; i < 20; i++) acc.push((await rlStep(ctx, cfg.algorithm!, st, log))["accuracy"]!);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const first = mean(acc.slice(0, 4));
      const last = mean(acc.slice(-4));
      console.log(`# GRPO through TinkerEngine: accuracy ${first.toFixed(2)} (steps 1-4) → ${last.toFixed(2)} (steps 17-20)`);
      assert.ok(last >= first + 0.3, `accuracy ${first} → ${last}: ${acc.map((a) => a.toFixed(2)).join(" ")}`);
    } finally {
      await engine.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
