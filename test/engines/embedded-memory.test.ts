/**
 * The embedded engine's memory plan (src/engines/embedded/memory.ts): the parameter count matches
 * the engine's, the pass estimate bounds the Wasm heap a pass really takes, the planner splits the
 * 13.6M-parameter model's RL batch but not the quickstart's, a model too large is refused with one
 * clear error before any weight is allocated, and a forwardBackward split into row chunks gives
 * the unsplit pass's loss, scores and gradients (the loss sees the whole batch once).
 */
import { wasmHeapBytes } from "./helpers/wasm-memory.ts"; // first: records jax-js's Wasm heap
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hfParamNames, type ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { assertFits, countParams, maxRows, passBudget, passBytes, residentBytes, WASM_HEAP_LIMIT } from "../../src/engines/embedded/memory.ts";
import type { TokenLossFn, TokenScores } from "../../src/core/engine.ts";
import { tinyLlama, tinyQwen2, randomBatch, randomHfWeights, Rng } from "./helpers/tiny.ts";

/** The 13.6M model: hidden 512 × 4 layers, 8 heads, SwiGLU 3×, the quickstart's 16-token vocabulary. */
const big = tinyLlama({ vocabSize: 16, hiddenSize: 512, intermediateSize: 1536, numLayers: 4, numHeads: 8, numKvHeads: 8, headDim: 64, maxPositionEmbeddings: 32, tieWordEmbeddings: true });
/** The quickstart's model: hidden 128 × 2 layers. */
const quick = tinyLlama({ vocabSize: 16, hiddenSize: 128, intermediateSize: 384, numLayers: 2, numHeads: 4, numKvHeads: 4, headDim: 32, maxPositionEmbeddings: 32, tieWordEmbeddings: true });

test("countParams equals the engine's parameter count (llama untied, qwen2 tied with biases)", async () => {
  for (const cfg of [tinyLlama(), tinyQwen2(), tinyLlama({ hiddenSize: 32, intermediateSize: 40, numLayers: 3 })]) {
    const engine = await EmbeddedEngine.create(cfg, { seed: 1 });
    assert.equal(countParams(cfg), engine.info().numParams);
    await engine.close();
  }
  const byNames = hfParamNames(big).reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
  assert.equal(countParams(big), byNames);
  assert.ok(Math.abs(countParams(big) / 1e6 - 13.6) < 0.1, `13.6M expected, got ${countParams(big)}`);
});

test("passBytes bounds the Wasm heap one sampling, one scoring and one forward-backward pass take", async () => {
  const cfg = tinyLlama({ vocabSize: 16, hiddenSize: 64, intermediateSize: 192, numLayers: 2, numHeads: 4, numKvHeads: 4, headDim: 16 });
  const engine = await EmbeddedEngine.create(cfg, { seed: 2 });
  const rows = 64;
  const T = 16;
  const batch = randomBatch(new Rng(3), cfg.vocabSize, Array.from({ length: rows }, () => T), { promptLen: 4 });
  const beforeSample = wasmHeapBytes();
  // 64 distinct 4-token prompts + 12 new tokens: a 16-slot cache.
  const prompts = Array.from({ length: rows }, (_, i) => Int32Array.from([1 + (i % 7), 2 + (i % 5), 3, 1 + (i % 3)]));
  await engine.sample({ prompts, n: 1, maxNewTokens: 12, temperature: 1, seed: 4, stopTokens: [] });
  const afterSample = wasmHeapBytes();
  assert.ok(afterSample - beforeSample <= passBytes(cfg, "sample", rows, T), `sampling grew the heap by ${afterSample - beforeSample} B, estimate ${passBytes(cfg, "sample", rows, T)}`);
  const before = wasmHeapBytes();
  await engine.score(batch, { model: "policy" });
  const afterScore = wasmHeapBytes();
  const loss: TokenLossFn = (_s, b) => ({ loss: 0, dLogprobs: new Float32Array(b.lossMask).map((m) => 0.01 * m), metrics: {} });
  await engine.forwardBackward(batch, loss);
  const afterTrain = wasmHeapBytes();
  await engine.close();
  assert.ok(afterScore - before <= passBytes(cfg, "score", rows, T), `scoring grew the heap by ${afterScore - before} B, estimate ${passBytes(cfg, "score", rows, T)}`);
  assert.ok(afterTrain - before <= passBytes(cfg, "train", rows, T), `forward-backward grew the heap by ${afterTrain - before} B, estimate ${passBytes(cfg, "train", rows, T)}`);
  // Not a vacuous bound: the estimate is within 4× of what the pass took.
  assert.ok(passBytes(cfg, "train", rows, T) < 4 * (afterTrain - before), "the estimate is far above the measured heap growth");
});

test("the plan splits the 13.6M model's 512-sequence pass but not the quickstart's", () => {
  const T = 16;
  const bigRows = maxRows(big, "train", T);
  assert.ok(bigRows >= 1 && bigRows < 512, `13.6M: ${bigRows} rows per pass`);
  assert.ok(passBytes(big, "train", bigRows, T) <= passBudget(big));
  assert.ok(passBytes(big, "train", 2 * bigRows, T) > passBudget(big), "the largest power of two that fits");
  assert.ok(residentBytes(big) + 2 * passBytes(big, "train", bigRows, T) < WASM_HEAP_LIMIT);
  assert.ok(maxRows(quick, "train", T) >= 512, "the quickstart's 512 sequences stay one pass");
  assert.ok(maxRows(quick, "sample", 16) >= 128, "the quickstart samples 128 rows a call as before");
  assert.ok(maxRows(big, "score", T) >= bigRows, "scoring keeps less than training");
});

test("an inference-only SmolLM2-135M samples 4 prompts × 4 samples × 32 tokens in one call", () => {
  const smol = tinyLlama({ vocabSize: 49152, hiddenSize: 576, intermediateSize: 1536, numLayers: 30, numHeads: 9, numKvHeads: 3, headDim: 64, maxPositionEmbeddings: 8192, tieWordEmbeddings: true });
  // Its weights and a reference copy resident; before, the full-training plan (10 × parameters) left no room and it sampled one row a call.
  assert.ok(maxRows(smol, "sample", 64, undefined, { baseBytesPerParam: 8, trainable: 0 }) >= 16);
  assert.equal(maxRows(smol, "sample", 64), 1);
});

test("SmolLM2-135M under LoRA prefills chat prompts in chunks that fit: 16 at once exceeded the heap", () => {
  const smol = tinyLlama({ vocabSize: 49152, hiddenSize: 576, intermediateSize: 1536, numLayers: 30, numHeads: 9, numKvHeads: 3, headDim: 64, maxPositionEmbeddings: 8192, tieWordEmbeddings: true });
  const lora = { baseBytesPerParam: 2, trainable: 4_884_480 }; // bfloat16 base, rank-16 adapters on every block module
  // Measured (engine.ts `prefill`): one jitted prefill of 96-token prompts grew the heap by 0.22 GiB a prompt; 16 at once failed.
  const measured = 0.22 * 2 ** 30;
  const rows = maxRows(smol, "prefill", 96, undefined, lora);
  assert.ok(rows >= 2 && rows < 16, `${rows} prompts per prefill`);
  assert.ok(passBytes(smol, "prefill", 1, 96, lora) >= measured, "the estimate bounds the measured growth");
  assert.ok(rows * measured + residentBytes(smol, lora) < WASM_HEAP_LIMIT * 0.9);
  // Decoding those rows afterwards is planned separately and stays wide.
  assert.ok(maxRows(smol, "sample", 96 + 48, undefined, lora) >= 16);
});

for (const shared of [true, false]) {
  test(`sampling whose prefill runs in row chunks equals the one-call prefill (${shared ? "shared prompts" : "every row its own"})`, async () => {
    const cfg = tinyLlama();
    const weights = randomHfWeights(hfParamNames(cfg), new Rng(11), 0.3);
    const make = async (maxPassRows?: number) => {
      const e = await EmbeddedEngine.create(cfg, { seed: 1, maxPassRows, sharedPrefix: shared });
      for (const [n, d] of weights) e.setWeight(n, Float32Array.from(d));
      return e;
    };
    const whole = await make();
    const split = await make(2); // 5 distinct prompts → 8 padded rows → 4 prefill chunks of 2
    const prompts = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 1], [2], [3, 3, 4, 5]].map((p) => Int32Array.from(p));
    const req = { prompts, n: 2, maxNewTokens: 6, temperature: 1, seed: 9, stopTokens: [] as number[] };
    const a = await whole.sample(req);
    const b = await split.sample(req);
    assert.equal(a.length, 10);
    assert.deepEqual(b.map((r) => [...r.tokens]), a.map((r) => [...r.tokens]));
    for (let i = 0; i < a.length; i++) for (let t = 0; t < a[i]!.logprobs.length; t++) assert.ok(Math.abs(a[i]!.logprobs[t]! - b[i]!.logprobs[t]!) < 1e-5);
    await whole.close();
    await split.close();
  });
}

test("a model too large for the 4 GiB Wasm heap is refused before allocation, with the reason", async () => {
  const huge = tinyLlama({ vocabSize: 32000, hiddenSize: 2048, intermediateSize: 5632, numLayers: 22, numHeads: 32, numKvHeads: 4, headDim: 64 });
  assert.doesNotThrow(() => assertFits(big));
  assert.doesNotThrow(() => assertFits(quick));
  assert.throws(() => assertFits(huge), (e: Error) => {
    assert.match(e.message, /model too large for the embedded engine: 1100\.0M parameters need 40\.98 GiB/);
    assert.match(e.message, /memory32 limit/);
    assert.match(e.message, /torch engine/);
    assert.equal(e.message.split("\n").length, 1);
    return true;
  });
  const heapBefore = wasmHeapBytes();
  await assert.rejects(EmbeddedEngine.create(huge), /model too large for the embedded engine/);
  assert.ok(wasmHeapBytes() - heapBefore < 64 << 20, "refused before the weights were allocated");
  // The refusal comes from the heap's size: the same model passes against a (hypothetical) larger heap.
  assert.doesNotThrow(() => assertFits(huge, 64, 2 ** 48));
  // Near the ceiling: hidden 1024 × 4 layers (54.6M) is accepted, hidden 768 × 8 (61.4M) refused.
  const wide = (D: number, L: number) => tinyLlama({ vocabSize: 16, hiddenSize: D, intermediateSize: 3 * D, numLayers: L, numHeads: D / 64, numKvHeads: D / 64, headDim: 64, maxPositionEmbeddings: 32, tieWordEmbeddings: true });
  assert.doesNotThrow(() => assertFits(wide(1024, 4)));
  assert.throws(() => assertFits(wide(768, 8)), /61\.4M parameters/);
});

/** All weights' accumulated gradients of an engine. */
async function grads(engine: EmbeddedEngine): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const name of engine.weightNames()) out.set(name, (await engine.getGrad(name))!);
  return out;
}

for (const [name, cfg] of [["llama", tinyLlama()], ["qwen2 (tied, biases)", tinyQwen2()]] as [string, ModelConfig][]) {
  test(`a forwardBackward split into row chunks equals the unsplit pass (${name})`, async () => {
    const weights = randomHfWeights(hfParamNames(cfg), new Rng(5), 0.25);
    const make = async (maxPassRows?: number) => {
      const e = await EmbeddedEngine.create(cfg, { seed: 1, maxPassRows });
      for (const [n, d] of weights) e.setWeight(n, Float32Array.from(d));
      return e;
    };
    const whole = await make();
    const split = await make(2); // 7 rows → chunks of 2, 2, 2, 1
    const rng = new Rng(6);
    const batch = randomBatch(rng, cfg.vocabSize, [9, 5, 12, 3, 8, 11, 6], { promptLen: 2, extraPad: 1 });
    const c = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
    const e = Float32Array.from(batch.lossMask, (m) => m * rng.normal());
    const seen: { rows: number; scores: TokenScores }[] = [];
    // A whole-batch loss: its cotangent depends on the batch mean of the scores.
    const loss: TokenLossFn = (scores, b) => {
      seen.push({ rows: b.batchSize, scores });
      let mean = 0;
      for (let i = 0; i < scores.logprobs.length; i++) mean += b.lossMask[i]! * scores.logprobs[i]!;
      mean /= scores.logprobs.length;
      const dLogprobs = Float32Array.from(c, (x, i) => x * (1 + mean) * b.lossMask[i]!);
      return { loss: mean, dLogprobs, dEntropy: e, metrics: { m: mean } };
    };
    const rw = await whole.forwardBackward(batch, loss, { entropy: true });
    const rs = await split.forwardBackward(batch, loss, { entropy: true });
    assert.deepEqual(seen.map((s) => s.rows), [7, 7], "the loss is called once, on the whole batch");
    assert.ok(Math.abs(rw.loss - rs.loss) < 1e-6);
    assert.equal(rw.tokens, rs.tokens);
    for (const key of ["logprobs", "entropy"] as const) {
      const a = seen[0]!.scores[key]!;
      const b = seen[1]!.scores[key]!;
      for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) < 1e-5, `${key}[${i}]: ${a[i]} vs ${b[i]}`);
    }
    const gw = await grads(whole);
    const gs = await grads(split);
    for (const [n, a] of gw) {
      const b = gs.get(n)!;
      let scale = 0;
      for (const x of a) scale = Math.max(scale, Math.abs(x));
      assert.ok(scale > 1e-4, `${n}: gradient is not trivially zero`);
      for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) <= 1e-5 + 1e-4 * scale, `${n}[${i}]: ${a[i]} vs ${b[i]}`);
    }
    const sw = await whole.score(batch, { model: "policy", entropy: true });
    const ss = await split.score(batch, { model: "policy", entropy: true });
    for (let i = 0; i < sw.logprobs.length; i++) assert.ok(Math.abs(sw.logprobs[i]! - ss.logprobs[i]!) < 1e-5);
    for (let i = 0; i < sw.entropy!.length; i++) assert.ok(Math.abs(sw.entropy![i]! - ss.entropy![i]!) < 1e-5);
    await whole.close();
    await split.close();
  });
}

test("a non-finite loss on a batch split into chunks accumulates nothing, and the next step is unaffected", async () => {
  const cfg = tinyLlama();
  const weights = randomHfWeights(hfParamNames(cfg), new Rng(5), 0.25);
  const make = async () => {
    const e = await EmbeddedEngine.create(cfg, { seed: 1, maxPassRows: 2 });
    for (const [n, d] of weights) e.setWeight(n, Float32Array.from(d));
    return e;
  };
  const batch = randomBatch(new Rng(6), cfg.vocabSize, [9, 5, 12, 3, 8], { promptLen: 2 }); // chunks 2, 2, 1: the last keeps its forward
  const finite: TokenLossFn = (_s, b) => ({ loss: 1, dLogprobs: Float32Array.from(b.lossMask, (m) => 0.1 * m), metrics: {} });
  const nan: TokenLossFn = (s, b) => ({ ...finite(s, b), loss: NaN });
  const after = await make();
  const r = await after.forwardBackward(batch, nan);
  assert.ok(Number.isNaN(r.loss));
  for (const n of after.weightNames()) assert.equal(await after.getGrad(n), null, `${n}: no gradient after a NaN loss`);
  await after.forwardBackward(batch, finite);
  const fresh = await make();
  await fresh.forwardBackward(batch, finite);
  for (const n of fresh.weightNames()) assert.deepEqual(await after.getGrad(n), await fresh.getGrad(n), n);
  await after.close();
  await fresh.close();
});

test("a batch split into many chunks does not hold every chunk's gradients at once", async () => {
  const cfg = tinyLlama({ vocabSize: 16, hiddenSize: 256, intermediateSize: 768, numLayers: 2, numHeads: 4, numKvHeads: 4, headDim: 64 });
  const P = countParams(cfg) * 4; // bytes of one parameter-sized set of arrays (7 MB)
  const engine = await EmbeddedEngine.create(cfg, { seed: 4, maxPassRows: 2 });
  const T = 8;
  const batch = randomBatch(new Rng(8), cfg.vocabSize, Array.from({ length: 32 }, () => T), { promptLen: 4 }); // 16 chunks
  const loss: TokenLossFn = (_s, b) => ({ loss: 0, dLogprobs: new Float32Array(b.lossMask).map((m) => 0.01 * m), metrics: {} });
  const before = wasmHeapBytes();
  await engine.forwardBackward(batch, loss);
  const grown = wasmHeapBytes() - before;
  await engine.close();
  // Held at once: the accumulated and one chunk's gradients, the chunk's pass. Not 16 chunks' worth.
  assert.ok(grown < 8 * P + passBytes(cfg, "train", 2, T), `the heap grew by ${(grown / P).toFixed(1)} × the parameters' bytes over 16 chunks`);
});
