/**
 * Native kernels checks shared by test/engines/native-kernels.test.ts (npm test: one case) and
 * native-kernels.slow.test.ts (npm run test:slow: the others): layer-by-layer LoRA training and
 * scoring with the forward (and, without a head adapter, the head's backward) on onnxruntime must
 * give the jax-js path's scores, entropies and adapter gradients within float32 rounding.
 */
import assert from "node:assert/strict";
import { EmbeddedEngine, type EmbeddedEngineOptions } from "../../../src/engines/embedded/engine.ts";
import { loadOrt } from "../../../src/engines/embedded/ort-runtime.ts";
import { loraConfigSchema, type LoraConfig } from "../../../src/engines/lora.ts";
import { hfParamNames, type ModelConfig } from "../../../src/engines/embedded/hf-config.ts";
import type { TokenBatch, TokenLossFn, TokenScores } from "../../../src/core/engine.ts";
import { tinyLlama, tinyQwen2, randomBatch, randomHfWeights, groupBatch, maxAbsDiff, Rng } from "./tiny.ts";

const ort = await loadOrt();
if (!ort && process.env.RLVR_REQUIRE_ORT === "1") throw new Error("RLVR_REQUIRE_ORT=1 but onnxruntime-node does not load");
/** node:test's `skip` option: false where onnxruntime-node loads. */
export const nativeSkip: false | string = ort ? false : "onnxruntime-node is not installed";

const blocks = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
/** With a head adapter the head's backward stays on jax-js; without one it runs natively too. */
const loras: [string, LoraConfig][] = [
  ["head adapter", loraConfigSchema.parse({ rank: 2, alpha: 4, targets: [...blocks, "lm_head"], baseDtype: "float32" })],
  ["no head adapter", loraConfigSchema.parse({ rank: 2, alpha: 4, targets: blocks, baseDtype: "float32" })],
  // The native block backward unpacks a bfloat16 base first (its translation has no bit casts).
  ["bfloat16 base, no head adapter", loraConfigSchema.parse({ rank: 2, alpha: 4, targets: blocks, baseDtype: "bfloat16" })],
];
const layouts: [string, ModelConfig, (rng: Rng, V: number) => TokenBatch][] = [
  ["llama, full layout", tinyLlama(), (rng, V) => randomBatch(rng, V, [9, 5, 12, 3, 8, 11, 6], { promptLen: 2, extraPad: 1 })],
  ["qwen2 (tied, biases), shared-prefix layout", tinyQwen2(), (rng, V) => groupBatch(rng, V, 3, 4, 7, 5)],
];

/** The layer-by-layer cases: every layout × with and without a head adapter. */
export const layerwiseCases = layouts.flatMap(([layout, cfg, makeBatch]) => loras.map(([loraName, lora]) => ({ name: `${layout}, ${loraName}`, cfg, makeBatch, lora })));

/**
 * One case: engines on the same base and adapters — jax-js, native, native in row chunks of 2 —
 * train one layer-by-layer step and score (policy after the step, reference); all must agree.
 */
export async function checkLayerwiseNative({ cfg, makeBatch, lora }: (typeof layerwiseCases)[number]): Promise<void> {
  const base = randomHfWeights(hfParamNames(cfg), new Rng(5), 0.25);
  const make = async (o: EmbeddedEngineOptions) => {
    const e = await EmbeddedEngine.create(cfg, { seed: 1, lora, layerwise: true, ...o });
    // A bfloat16 base keeps the seed's initial weights (setWeight refuses packed ones): the same in every engine.
    if (lora.baseDtype !== "bfloat16") for (const [n, d] of base) e.setWeight(n, Float32Array.from(d));
    const rng = new Rng(7);
    for (const n of e.weightNames().filter((w) => w.includes("lora_B"))) e.setWeight(n, Float32Array.from((await e.getWeight(n)).map(() => 0.3 * rng.normal())));
    await e.setReference("policy");
    return e;
  };
  const engines = [await make({ nativeKernels: false }), await make({ nativeKernels: true }), await make({ nativeKernels: true, maxPassRows: 2 })];
  try {
    const rng = new Rng(6);
    const batch = makeBatch(rng, cfg.vocabSize);
    const c = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
    const e = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
    const seen: TokenScores[] = [];
    const loss: TokenLossFn = (scores, b) => {
      seen.push(scores);
      let mean = 0;
      for (let i = 0; i < scores.logprobs.length; i++) mean += b.lossMask[i]! * scores.logprobs[i]!;
      mean /= scores.logprobs.length;
      return { loss: mean, dLogprobs: Float32Array.from(c, (x, i) => x * (1 + mean) * b.lossMask[i]!), dEntropy: e, metrics: {} };
    };
    for (const eng of engines) await eng.forwardBackward(batch, loss, { entropy: true });
    for (const sc of seen.slice(1)) {
      const d = Math.max(maxAbsDiff(sc.logprobs, seen[0]!.logprobs), maxAbsDiff(sc.entropy!, seen[0]!.entropy!));
      assert.ok(d < 1e-4 && d > 0, `scores differ by ${d} (0 would mean the jax-js forward ran)`);
    }
    for (const n of engines[0]!.weightNames().filter((w) => w.includes("lora_"))) {
      const g = (await engines[0]!.getGrad(n))!;
      const scale = maxAbsDiff(g, new Float32Array(g.length));
      assert.ok(scale > 1e-3, `${n}: gradient is not trivially zero`);
      for (const other of engines.slice(1)) {
        const d = maxAbsDiff((await other.getGrad(n))!, g);
        assert.ok(d <= 1e-4 * Math.max(1, scale), `${n}: gradients differ by ${d} (largest entry ${scale})`);
      }
    }
    // After a step (the policy's cached host weights must follow) and for the reference (the weights before it).
    for (const eng of engines) await eng.optimStep({ lr: 1e-2 });
    for (const model of ["policy", "reference"] as const) {
      const s0 = await engines[0]!.score(batch, { model, entropy: true });
      for (const other of engines.slice(1)) {
        const s1 = await other.score(batch, { model, entropy: true });
        assert.ok(maxAbsDiff(s1.logprobs, s0.logprobs) < 1e-4 && maxAbsDiff(s1.entropy!, s0.entropy!) < 1e-4, `${model} scores`);
      }
    }
    const moved = await engines[1]!.score(batch, { model: "policy" });
    const ref = await engines[1]!.score(batch, { model: "reference" });
    assert.ok(maxAbsDiff(moved.logprobs, ref.logprobs) > 1e-4, "the step moved the policy away from the reference");
  } finally {
    await Promise.all(engines.map((x) => x.close()));
  }
}
