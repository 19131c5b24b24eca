/**
 * Native sampling (EmbeddedEngineOptions.nativeSampling, ort-sampler.ts): the embedded engine's
 * decoder as an ONNX graph on onnxruntime's CPU kernels must sample what the jax-js path samples —
 * the same tokens for a seed and log-probs within float32 rounding — for Llama (GQA, untied head),
 * Qwen2 (q/k/v biases, tied head), shared and distinct prompts of different lengths, and LoRA
 * (merged block adapters, an attached head adapter). Skipped where onnxruntime-node is not
 * installed, unless RLVR_REQUIRE_ORT=1 (CI), which makes its absence a failure.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedEngine, type EmbeddedEngineOptions } from "../../src/engines/embedded/engine.ts";
import { loadOrt } from "../../src/engines/embedded/ort-sampler.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import type { ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import type { SampleRequest } from "../../src/core/engine.ts";
import { tinyLlama, tinyQwen2, Rng } from "./helpers/tiny.ts";

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

/** Samples `r` with native sampling off and on (same weights); returns both and the worst |Δ log-prob|. */
async function both(cfg: ModelConfig, opts: EmbeddedEngineOptions, r: SampleRequest, setup?: (e: EmbeddedEngine) => Promise<void>) {
  const wasm = await EmbeddedEngine.create(cfg, { seed: 4, ...opts, nativeSampling: false });
  const native = await EmbeddedEngine.create(cfg, { seed: 4, ...opts, nativeSampling: true });
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

describe("native sampling (onnxruntime) against the jax-js decoder", { skip }, () => {
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

  test("LoRA (block adapters merged, head adapter attached): the same tokens; the adapters matter", async () => {
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
  });

  test("fails closed: native sampling with unmerged LoRA sampling is an error naming both options", async () => {
    const e = await EmbeddedEngine.create(tinyLlama(), { seed: 1, lora: loraConfigSchema.parse({ rank: 2 }), mergedSampling: false, nativeSampling: true });
    await assert.rejects(e.sample(req), /nativeSampling needs mergedSampling/);
    await e.close();
  });
});

test("RLVR_NATIVE_SAMPLING accepts on/off only", async () => {
  const old = process.env.RLVR_NATIVE_SAMPLING;
  process.env.RLVR_NATIVE_SAMPLING = "yes";
  const e = await EmbeddedEngine.create(tinyLlama(), { seed: 1 });
  try {
    await assert.rejects(e.sample(req), /RLVR_NATIVE_SAMPLING=yes: expected on or off/);
  } finally {
    if (old === undefined) delete process.env.RLVR_NATIVE_SAMPLING;
    else process.env.RLVR_NATIVE_SAMPLING = old;
    await e.close();
  }
});
