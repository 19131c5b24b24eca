/**
 * Native kernels (EmbeddedEngineOptions.nativeKernels, ort-runtime.ts): the embedded engine's
 * decoder as an ONNX graph on onnxruntime's CPU kernels must sample what the jax-js path samples —
 * the same tokens for a seed and log-probs within float32 rounding — for Llama (GQA, untied head),
 * Qwen2 (q/k/v biases, tied head), shared and distinct prompts of different lengths, and LoRA
 * (block and head adapters beside the base); scoring without LoRA; and one case of layer-by-layer
 * LoRA training and scoring (helpers/native.ts; the other cases in native-kernels.slow.test.ts),
 * whose forward and head backward run natively: the jax-js path's scores and adapter gradients
 * within float32 rounding, in one chunk and in row chunks, for the policy after a step (the cached
 * host weights follow the version) and for the reference. Skipped where onnxruntime-node is not
 * installed, unless RLVR_REQUIRE_ORT=1 (CI), which makes its absence a failure.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedEngine, type EmbeddedEngineOptions } from "../../src/engines/embedded/engine.ts";
import { loadOrt } from "../../src/engines/embedded/ort-runtime.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import type { ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import type { SampleRequest, TokenLossFn } from "../../src/core/engine.ts";
import { tinyLlama, tinyQwen2, randomBatch, groupBatch, randomHfWeights, maxAbsDiff, Rng } from "./helpers/tiny.ts";
import { hfParamNames } from "../../src/engines/embedded/hf-config.ts";
import { checkLayerwiseNative, layerwiseCases } from "./helpers/native.ts";

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

/** Samples `r` with native kernels off and on (same weights); returns both and the worst |Δ log-prob|. */
async function both(cfg: ModelConfig, opts: EmbeddedEngineOptions, r: SampleRequest, setup?: (e: EmbeddedEngine) => Promise<void>) {
  const wasm = await EmbeddedEngine.create(cfg, { seed: 4, ...opts, nativeKernels: false });
  const native = await EmbeddedEngine.create(cfg, { seed: 4, ...opts, nativeKernels: true });
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

describe("native kernels (onnxruntime) against the jax-js path", { skip }, () => {
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
      const engines = await Promise.all([false, true].map((nativeKernels) => EmbeddedEngine.create(cfg, { seed: 3, nativeKernels })));
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

  test("full-weight training (native forward and backward): every weight's gradient is jax-js's, in one pass and in row chunks", async () => {
    for (const [cfg, makeBatch] of [
      [tinyLlama({ vocabSize: 23 }), (rng: Rng) => randomBatch(rng, 23, [9, 5, 12, 3, 7], { promptLen: 2, extraPad: 1 })],
      [tinyQwen2({ vocabSize: 23 }), (rng: Rng) => groupBatch(rng, 23, 2, 3, 6, 4)],
    ] as const) {
      const engines = await Promise.all(
        ([{ nativeKernels: false }, { nativeKernels: true }, { nativeKernels: true, maxPassRows: 2 }] as EmbeddedEngineOptions[]).map((o) => EmbeddedEngine.create(cfg, { seed: 3, ...o })),
      );
      try {
        // Weights at a healthy scale, so every gradient stands well above float32 rounding.
        const weights = randomHfWeights(hfParamNames(cfg), new Rng(5), 0.25);
        for (const e of engines) for (const [n, d] of weights) e.setWeight(n, Float32Array.from(d));
        const rng = new Rng(2);
        const batch = makeBatch(rng);
        const c = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
        const ce = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
        const seen: Float32Array[] = [];
        const loss: TokenLossFn = (scores) => {
          seen.push(scores.logprobs);
          return { loss: 0, dLogprobs: c, dEntropy: ce, metrics: {} };
        };
        for (const e of engines) await e.forwardBackward(batch, loss, { entropy: true });
        for (const lp of seen.slice(1)) assert.ok(maxAbsDiff(lp, seen[0]!) < 1e-4);
        let differs = 0;
        for (const n of engines[0]!.weightNames()) {
          const g = (await engines[0]!.getGrad(n))!;
          const scale = maxAbsDiff(g, new Float32Array(g.length));
          // The key bias's gradient is zero in exact arithmetic (it shifts a query's scores by a constant).
          if (!n.endsWith("k_proj.bias")) assert.ok(scale > 1e-3, `${n}: the gradient is not trivially zero`);
          for (const other of engines.slice(1)) {
            const d = maxAbsDiff((await other.getGrad(n))!, g);
            assert.ok(d <= 1e-4 * Math.max(1, scale), `${n}: gradients differ by ${d} (largest entry ${scale})`);
            differs = Math.max(differs, d);
          }
        }
        assert.ok(differs > 0, "bit-identical gradients: the jax-js backward ran on both paths");
      } finally {
        await Promise.all(engines.map((e) => e.close()));
      }
    }
  });

  // One layer-by-layer case here (shared prefix, the head's backward native too); the others run
  // in native-kernels.slow.test.ts.
  const quick = layerwiseCases.find((c) => c.name.endsWith("shared-prefix layout, no head adapter"))!;
  test(`layer-by-layer LoRA training and scoring: native = jax-js (${quick.name}; one chunk and row chunks of 2)`, () => checkLayerwiseNative(quick));
});

test("RLVR_NATIVE_KERNELS accepts on/off only", async () => {
  const old = process.env.RLVR_NATIVE_KERNELS;
  process.env.RLVR_NATIVE_KERNELS = "yes";
  const e = await EmbeddedEngine.create(tinyLlama(), { seed: 1 });
  try {
    await assert.rejects(e.sample(req), /RLVR_NATIVE_KERNELS=yes: expected on or off/);
  } finally {
    if (old === undefined) delete process.env.RLVR_NATIVE_KERNELS;
    else process.env.RLVR_NATIVE_KERNELS = old;
    await e.close();
  }
});
