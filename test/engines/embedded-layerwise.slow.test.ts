/**
 * The embedded engine's layer-by-layer LoRA training (engine.ts `loraForwardBackwardLayers`: the
 * path a batch too large for one pass takes — blocks run one at a time with only their inputs
 * kept, the head in chunks of positions, the loss called once on the whole batch, each block's
 * backward recomputed from its input): the loss's scores and every adapter gradient equal the
 * one-pass vjp path's within 1e-5 (gradients: relative to their largest entry when it exceeds 1), for the full and the shared-prefix layouts, in one chunk and
 * split into row chunks, with adapters on every block module and on the head; and scoring layer by
 * layer equals one-pass scoring.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hfParamNames, type ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import type { TokenBatch, TokenLossFn, TokenScores } from "../../src/core/engine.ts";
import { tinyLlama, tinyQwen2, randomBatch, randomHfWeights, groupBatch, maxAbsDiff, Rng } from "./helpers/tiny.ts";

const lora = loraConfigSchema.parse({ rank: 2, alpha: 4, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"], baseDtype: "float32" });

/** Engines on the same random base and adapters (B ≠ 0, so every adapter has a gradient). */
async function engines(cfg: ModelConfig, variants: { layerwise: boolean; maxPassRows?: number }[]): Promise<EmbeddedEngine[]> {
  const base = randomHfWeights(hfParamNames(cfg), new Rng(5), 0.25);
  const out: EmbeddedEngine[] = [];
  for (const v of variants) {
    const e = await EmbeddedEngine.create(cfg, { seed: 1, lora, ...v });
    for (const [n, d] of base) e.setWeight(n, Float32Array.from(d));
    const rng = new Rng(7);
    for (const n of e.weightNames().filter((n) => n.includes("lora_B"))) e.setWeight(n, Float32Array.from((await e.getWeight(n)).map(() => 0.3 * rng.normal())));
    out.push(e);
  }
  return out;
}

const cases: [string, ModelConfig, (rng: Rng, V: number) => TokenBatch][] = [
  ["llama, full layout", tinyLlama(), (rng, V) => randomBatch(rng, V, [9, 5, 12, 3, 8, 11, 6], { promptLen: 2, extraPad: 1 })],
  ["qwen2 (tied, biases), shared-prefix layout", tinyQwen2(), (rng, V) => groupBatch(rng, V, 3, 4, 7, 5)],
];

for (const [name, cfg, makeBatch] of cases) {
  test(`layer-by-layer LoRA forwardBackward equals the one-pass path (${name}; one chunk and row chunks of 2)`, async () => {
    const [once, layers, chunked] = await engines(cfg, [{ layerwise: false }, { layerwise: true }, { layerwise: true, maxPassRows: 2 }]);
    const rng = new Rng(6);
    const batch = makeBatch(rng, cfg.vocabSize);
    const c = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
    const e = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
    const seen: { rows: number; scores: TokenScores }[] = [];
    // A whole-batch loss: its cotangent depends on the batch mean of the scores.
    const loss: TokenLossFn = (scores, b) => {
      seen.push({ rows: b.batchSize, scores });
      let mean = 0;
      for (let i = 0; i < scores.logprobs.length; i++) mean += b.lossMask[i]! * scores.logprobs[i]!;
      mean /= scores.logprobs.length;
      return { loss: mean, dLogprobs: Float32Array.from(c, (x, i) => x * (1 + mean) * b.lossMask[i]!), dEntropy: e, metrics: {} };
    };
    const reports = [];
    for (const eng of [once!, layers!, chunked!]) reports.push(await eng.forwardBackward(batch, loss, { entropy: true }));
    assert.deepEqual(seen.map((s) => s.rows), [batch.batchSize, batch.batchSize, batch.batchSize], "the loss is called once, on the whole batch");
    for (const r of reports.slice(1)) assert.ok(Math.abs(r.loss - reports[0]!.loss) < 1e-6);
    for (const s of seen.slice(1)) {
      assert.ok(maxAbsDiff(s.scores.logprobs, seen[0]!.scores.logprobs) < 1e-5, "log-probs");
      assert.ok(maxAbsDiff(s.scores.entropy!, seen[0]!.scores.entropy!) < 1e-5, "entropies");
    }
    const names = once!.weightNames().filter((n) => n.includes("lora_"));
    assert.ok(names.some((n) => n.includes("lm_head")));
    for (const n of names) {
      const g = (await once!.getGrad(n))!;
      const scale = maxAbsDiff(g, new Float32Array(g.length));
      assert.ok(scale > 1e-3, `${n}: gradient is not trivially zero`);
      // 1e-5 relative to the gradient's largest entry where that exceeds 1 (float32 summation order).
      for (const other of [layers!, chunked!]) {
        const d = maxAbsDiff((await other.getGrad(n))!, g);
        assert.ok(d <= 1e-5 * Math.max(1, scale), `${n}: gradients differ by ${d} (largest entry ${scale})`);
      }
    }
    // Scoring layer by layer (after the step: adapters moved) equals the one-pass scoring.
    for (const eng of [once!, layers!, chunked!]) await eng.optimStep({ lr: 1e-2 });
    const s0 = await once!.score(batch, { model: "policy", entropy: true });
    for (const other of [layers!, chunked!]) {
      const s1 = await other.score(batch, { model: "policy", entropy: true });
      assert.ok(maxAbsDiff(s1.logprobs, s0.logprobs) < 1e-5 && maxAbsDiff(s1.entropy!, s0.entropy!) < 1e-5, "score");
    }
    for (const eng of [once!, layers!, chunked!]) await eng.close();
  });
}
