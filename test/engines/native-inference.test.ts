/**
 * Native inference (EmbeddedEngineOptions.nativeInference, ort-runtime.ts): the embedded engine's
 * decoder as an ONNX graph on onnxruntime's CPU kernels must sample what the jax-js path samples —
 * the same tokens for a seed and log-probs within float32 rounding — for Llama (GQA, untied head),
 * Qwen2 (q/k/v biases, tied head), shared and distinct prompts of different lengths, and LoRA
 * (merged block adapters, an attached head adapter); and layer-by-layer LoRA training and scoring,
 * whose forward without gradient (block inputs, the head's log-probs) runs natively, must give the
 * jax-js path's scores and adapter gradients within float32 rounding, in the full and the
 * shared-prefix layouts, in one chunk and in row chunks, for the policy after a step (the cached
 * host weights follow the version) and for the reference. Skipped where onnxruntime-node is not
 * installed, unless RLVR_REQUIRE_ORT=1 (CI), which makes its absence a failure.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedEngine, type EmbeddedEngineOptions } from "../../src/engines/embedded/engine.ts";
import { loadOrt } from "../../src/engines/embedded/ort-runtime.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import type { ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import type { SampleRequest } from "../../src/core/engine.ts";
import type { TokenBatch, TokenLossFn, TokenScores } from "../../src/core/engine.ts";
import { hfParamNames } from "../../src/engines/embedded/hf-config.ts";
import { tinyLlama, tinyQwen2, randomBatch, randomHfWeights, groupBatch, maxAbsDiff, Rng } from "./helpers/tiny.ts";

const ort = await loadOrt();
if (!ort && process.env.RLVR_REQUIRE_ORT === "1") throw new Error("RLVR_REQUIRE_ORT=1 but onnxruntime-node does not load");
const skip = ort ? false : "onnxruntime-node is not installed";

const req: SampleRequest = {
  prompts: [Int32Array.from([1, 5, 7]), Int32Array.from([2, 3, 4, 9, 11, 6, 1]), Int32Array.from([8])],
  n: 3,
  maxNewTokens: 12,
  temperature: 1,
  seed: 9,
  stopTokens: [],
};

/** Samples `r` with native inference off and on (same weights); returns both and the worst |Δ log-prob|. */
async function both(cfg: ModelConfig, opts: EmbeddedEngineOptions, r: SampleRequest, setup?: (e: EmbeddedEngine) => Promise<void>) {
  const wasm = await EmbeddedEngine.create(cfg, { seed: 4, ...opts, nativeInference: false });
  const native = await EmbeddedEngine.create(cfg, { seed: 4, ...opts, nativeInference: true });
  try {
    if (setup) {
      await setup(wasm);
      await setup(native);
    }
    const a = await wasm.sample(r);
    const b = await native.sample(r);
    let worst = 0;
    a.forEach((x, i) => x.logprobs.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - b[i]!.logprobs[j]!)))));
    return { a, b, worst };
  } finally {
    await Promise.all([wasm.close(), native.close()]);
  }
}

const tokens = (rs: { tokens: Int32Array }[]) => rs.map((r) => [...r.tokens]);

describe("native inference (onnxruntime) against the jax-js path", { skip }, () => {
  for (const [name, cfg] of [
    ["llama, GQA, untied head", tinyLlama({ vocabSize: 23, numLayers: 3 })],
    ["qwen2, q/k/v biases, tied head", tinyQwen2({ vocabSize: 23 })],
  ] as const) {
    test(`${name}: the same tokens for a seed, log-probs within 1e-4, and not bit-identical (two paths)`, async () => {
      const { a, b, worst } = await both(cfg, {}, req);
      assert.deepEqual(tokens(b), tokens(a));
      assert.deepEqual(b.map((r) => r.stopReason), a.map((r) => r.stopReason));
      assert.ok(worst < 1e-4, `max |Δ log-prob| ${worst}`);
      assert.ok(worst > 0, "the native path computed its own logits (a bit-identical result would mean one path ran twice)");
    });
  }

  test("stop tokens, one row per prompt, greedy and top-k: the same tokens and stop reasons", async () => {
    const cfg = tinyLlama({ vocabSize: 23 });
    for (const r of [
      { ...req, n: 1, stopTokens: [3, 7] },
      { ...req, temperature: 0 },
      { ...req, topK: 4, seed: 2 },
    ]) {
      const { a, b, worst } = await both(cfg, {}, r);
      assert.deepEqual(tokens(b), tokens(a));
      assert.deepEqual(b.map((x) => x.stopReason), a.map((x) => x.stopReason));
      assert.ok(worst < 1e-4);
    }
  });

  test("LoRA (block and head adapters beside a bfloat16 base): the same tokens; the adapters matter", async () => {
    const cfg = tinyLlama({ vocabSize: 23 });
    const lora = loraConfigSchema.parse({ rank: 4, alpha: 8, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"], baseDtype: "bfloat16" });
    const setB = async (e: EmbeddedEngine) => {
      const rng = new Rng(17);
      for (const n of e.weightNames().filter((w) => w.endsWith("lora_B.weight"))) e.setWeight(n, Float32Array.from({ length: (await e.getWeight(n)).length }, () => 0.3 * rng.normal()));
    };
    const { a, b, worst } = await both(cfg, { lora }, req, setB);
    assert.deepEqual(tokens(b), tokens(a));
    assert.ok(worst < 1e-4 && worst > 0, `max |Δ log-prob| ${worst}`);
    const plain = await both(cfg, { lora }, req);
    assert.notDeepEqual(plain.b.map((r) => [...r.logprobs]), b.map((r) => [...r.logprobs]), "the adapters change the native path's samples");
    // The native path runs the adapters beside the base whatever mergedSampling says (the jax-js path's switch).
    const unmerged = await both(cfg, { lora, mergedSampling: false }, req, setB);
    assert.deepEqual(tokens(unmerged.b), tokens(b));
    assert.ok(maxAbsDiff(unmerged.b.flatMap((r) => [...r.logprobs]), b.flatMap((r) => [...r.logprobs])) === 0, "the native path is the same with mergedSampling false");
  });

  test("scoring without LoRA (every weight trained): policy after a step and reference, full and shared-prefix layouts", async () => {
    for (const [cfg, makeBatch] of [
      [tinyLlama({ vocabSize: 23 }), (rng: Rng) => randomBatch(rng, 23, [9, 5, 12, 3], { promptLen: 2, extraPad: 1 })],
      [tinyQwen2({ vocabSize: 23 }), (rng: Rng) => groupBatch(rng, 23, 2, 3, 6, 4)],
    ] as const) {
      const engines = await Promise.all([false, true].map((nativeInference) => EmbeddedEngine.create(cfg, { seed: 3, nativeInference })));
      try {
        const batch = makeBatch(new Rng(2));
        const loss: TokenLossFn = (scores, b) => ({ loss: 0, dLogprobs: Float32Array.from(b.lossMask, (m) => -m), metrics: {} });
        for (const e of engines) {
          await e.setReference("policy");
          await e.forwardBackward(batch, loss);
          await e.optimStep({ lr: 1e-2 });
        }
        for (const model of ["policy", "reference"] as const) {
          const [a, b] = await Promise.all(engines.map((e) => e.score(batch, { model, entropy: true })));
          const d = Math.max(maxAbsDiff(a!.logprobs, b!.logprobs), maxAbsDiff(a!.entropy!, b!.entropy!));
          assert.ok(d < 1e-4 && d > 0, `${model}: scores differ by ${d}`);
        }
      } finally {
        await Promise.all(engines.map((e) => e.close()));
      }
    }
  });

  const blocks = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
  // With a head adapter the head's backward stays on jax-js; without one it runs natively too.
  const loras = [
    ["head adapter", loraConfigSchema.parse({ rank: 2, alpha: 4, targets: [...blocks, "lm_head"], baseDtype: "float32" })],
    ["no head adapter", loraConfigSchema.parse({ rank: 2, alpha: 4, targets: blocks, baseDtype: "float32" })],
  ] as const;
  const cases: [string, ModelConfig, (rng: Rng, V: number) => TokenBatch][] = [
    ["llama, full layout", tinyLlama(), (rng, V) => randomBatch(rng, V, [9, 5, 12, 3, 8, 11, 6], { promptLen: 2, extraPad: 1 })],
    ["qwen2 (tied, biases), shared-prefix layout", tinyQwen2(), (rng, V) => groupBatch(rng, V, 3, 4, 7, 5)],
  ];
  for (const [name, cfg, makeBatch] of cases) for (const [loraName, lora] of loras) {
    test(`layer-by-layer LoRA training and scoring: native = jax-js (${name}, ${loraName}; one chunk and row chunks of 2)`, async () => {
      const base = randomHfWeights(hfParamNames(cfg), new Rng(5), 0.25);
      const make = async (o: EmbeddedEngineOptions) => {
        const e = await EmbeddedEngine.create(cfg, { seed: 1, lora, layerwise: true, ...o });
        for (const [n, d] of base) e.setWeight(n, Float32Array.from(d));
        const rng = new Rng(7);
        for (const n of e.weightNames().filter((w) => w.includes("lora_B"))) e.setWeight(n, Float32Array.from((await e.getWeight(n)).map(() => 0.3 * rng.normal())));
        await e.setReference("policy");
        return e;
      };
      const engines = [await make({ nativeInference: false }), await make({ nativeInference: true }), await make({ nativeInference: true, maxPassRows: 2 })];
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
    });
  }
});

test("RLVR_NATIVE_INFERENCE accepts on/off only", async () => {
  const old = process.env.RLVR_NATIVE_INFERENCE;
  process.env.RLVR_NATIVE_INFERENCE = "yes";
  const e = await EmbeddedEngine.create(tinyLlama(), { seed: 1 });
  try {
    await assert.rejects(e.sample(req), /RLVR_NATIVE_INFERENCE=yes: expected on or off/);
  } finally {
    if (old === undefined) delete process.env.RLVR_NATIVE_INFERENCE;
    else process.env.RLVR_NATIVE_INFERENCE = old;
    await e.close();
  }
});
