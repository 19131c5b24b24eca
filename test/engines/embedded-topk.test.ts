/**
 * EmbeddedEngine.topLogprobs (Tinker's topk_prompt_logprobs): with k = V every row is the whole
 * next-token distribution (sums to 1, sorted), and each token's entry equals its `score` log-prob,
 * with and without LoRA adapters (a head adapter included).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { adapterTensorName, loraConfigSchema } from "../../src/engines/lora.ts";
import { tinyLlama, Rng } from "./helpers/tiny.ts";

const CFG = tinyLlama({ vocabSize: 19 });

test("topLogprobs with k = V is the full distribution; each token's entry equals score's log-prob (≤ 1e-5)", async () => {
  const plain = await EmbeddedEngine.create(CFG, { seed: 4 });
  const lora = await EmbeddedEngine.create(CFG, { seed: 4, lora: loraConfigSchema.parse({ rank: 2, targets: ["v_proj", "lm_head"], baseDtype: "float32" }) });
  const rng = new Rng(9);
  lora.setWeight(adapterTensorName(-1, "lm_head", "B"), Float32Array.from({ length: 19 * 2 }, () => 0.5 * rng.normal()));
  const tokens = Int32Array.from([3, 7, 1, 18, 0, 5, 5, 12, 9]);
  const T = tokens.length;
  for (const e of [plain, lora]) {
    const V = CFG.vocabSize;
    const top = await e.topLogprobs(tokens, V);
    const lp = (await e.score({ batchSize: 1, seqLen: T, tokens, lengths: Int32Array.from([T]), lossMask: new Float32Array(T) }, { model: "policy" })).logprobs;
    assert.equal(top.ids[0], -1);
    for (let t = 1; t < T; t++) {
      const row = Array.from({ length: V }, (_, j) => [top.ids[t * V + j]!, top.logprobs[t * V + j]!] as const);
      assert.ok(Math.abs(row.reduce((s, [, l]) => s + Math.exp(l), 0) - 1) < 1e-5, `row ${t} sums to 1`);
      for (let j = 1; j < V; j++) assert.ok(row[j]![1] <= row[j - 1]![1]);
      assert.deepEqual([...new Set(row.map(([id]) => id))].length, V);
      assert.ok(Math.abs(row.find(([id]) => id === tokens[t])![1] - lp[t]!) < 1e-5, `position ${t}`);
    }
    const top3 = await e.topLogprobs(tokens, 3);
    assert.deepEqual(Array.from(top3.ids.subarray(3, 6)), Array.from(top.ids.subarray(V, V + 3)));
  }
  await assert.rejects(plain.topLogprobs(tokens, 0), /k must be an integer in \[1, 19\]/);
  await Promise.all([plain.close(), lora.close()]);
});
