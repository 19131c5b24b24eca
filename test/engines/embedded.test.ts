/**
 * The embedded engine (src/engines/embedded) on tiny models: gradients against central finite
 * differences, micro-batch accumulation, exact save → load round trips (optimizer included),
 * seeded sampling, the Hugging Face checkpoint layout against an independent float64 reference
 * forward (and transformers when Python has it), AdamW and schedules, and flat memory.
 */
import { wasmHeapBytes } from "./helpers/wasm-memory.ts"; // first: records jax-js's Wasm heap
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hfParamNames, parseHfConfig, type ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { readSafetensors } from "../../src/engines/embedded/safetensors.ts";
import { decays } from "../../src/engines/embedded/optimizer.ts";
import { learningRate } from "../../src/core/schedule.ts";
import type { SampleRequest, TokenBatch } from "../../src/core/engine.ts";
import { referenceLogits, referenceScores, logSoftmaxRow, type RefWeights } from "./helpers/reference-llama.ts";
import {
  tinyLlama,
  tinyQwen2,
  refConfig,
  randomBatch,
  sliceBatch,
  randomHfWeights,
  linearLoss,
  writeHfCheckpoint,
  LetterTokenizer,
  maxAbsDiff,
  Rng,
} from "./helpers/tiny.ts";

let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-embedded-"));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** An engine for `cfg` whose weights are random with a healthy scale (HF-layout copy returned). */
async function randomEngine(cfg: ModelConfig, seed: number, opts: { std?: number; maxSampleBatch?: number } = {}) {
  const engine = await EmbeddedEngine.create(cfg, { seed, maxSampleBatch: opts.maxSampleBatch });
  const weights = randomHfWeights(hfParamNames(cfg), new Rng(seed), opts.std ?? 0.25);
  for (const [name, data] of weights) engine.setWeight(name, Float32Array.from(data));
  return { engine, weights };
}

/** All weights of an engine in the HF layout. */
async function engineWeights(engine: EmbeddedEngine): Promise<RefWeights> {
  const w: RefWeights = new Map();
  for (const name of engine.weightNames()) w.set(name, await engine.getWeight(name));
  return w;
}

/** Reference log-probs of every sequence of `batch`, in the contract's [B*T] layout. */
function referenceBatchLogprobs(cfg: ModelConfig, w: RefWeights, batch: TokenBatch): Float64Array {
  const out = new Float64Array(batch.batchSize * batch.seqLen);
  for (let b = 0; b < batch.batchSize; b++) {
    const len = batch.lengths[b]!;
    const toks = batch.tokens.subarray(b * batch.seqLen, b * batch.seqLen + len);
    out.set(referenceScores(refConfig(cfg), w, toks).logprobs, b * batch.seqLen);
  }
  return out;
}

// ---------------------------------------------------------------------------------- gradients

describe("embedded engine gradients", () => {
  const cases: [string, ModelConfig][] = [
    ["llama (untied lm_head)", tinyLlama()],
    ["qwen2 (q/k/v biases, tied embeddings)", tinyQwen2()],
  ];
  for (const [label, cfg] of cases) {
    test(`match central finite differences of score for every weight kind: ${label}`, async () => {
      const rng = new Rng(11);
      const { engine } = await randomEngine(cfg, 3);
      // Varied lengths, a prompt excluded from the loss, and padding beyond the longest row.
      const batch = randomBatch(rng, cfg.vocabSize, [7, 4, 6], { promptLen: 2, extraPad: 1 });
      const c = new Float32Array(batch.tokens.length).map(() => rng.normal());
      const e = new Float32Array(batch.tokens.length).map(() => rng.normal());
      const loss = linearLoss(c, e);
      const report = await engine.forwardBackward(batch, loss.fn, { entropy: true });
      assert.equal(report.tokens, batch.lossMask.reduce((a, b) => a + b, 0));
      const lossAt = async () => {
        const s = await engine.score(batch, { model: "policy", entropy: true });
        return loss.value(s.logprobs, s.entropy!, batch.lossMask);
      };
      assert.ok(Math.abs((await lossAt()) - report.loss) < 1e-5 * (1 + Math.abs(report.loss)), "forwardBackward's loss equals the loss of score()");

      const eps = 1e-2;
      const names = engine.weightNames();
      assert.deepEqual([...names].sort(), hfParamNames(cfg).map((s) => s.name).sort());
      let diff2 = 0;
      let ref2 = 0;
      let checked = 0;
      for (const name of names) {
        const g = (await engine.getGrad(name))!;
        const w = await engine.getWeight(name);
        let scale = 0;
        let argmax = 0;
        g.forEach((x, i) => {
          if (Math.abs(x) > scale) [scale, argmax] = [Math.abs(x), i];
        });
        assert.ok(scale > 1e-3, `${name}: gradient is (near) zero everywhere (max |g| = ${scale}); the test would be vacuous`);
        for (const i of [argmax, rng.int(0, g.length - 1), rng.int(0, g.length - 1)]) {
          const w0 = w[i]!;
          w[i] = w0 + eps;
          engine.setWeight(name, w);
          const plus = await lossAt();
          w[i] = w0 - eps;
          engine.setWeight(name, w);
          const minus = await lossAt();
          w[i] = w0;
          engine.setWeight(name, w);
          const fd = (plus - minus) / (2 * eps);
          // Float32 Wasm with eps = 1e-2 agrees to a few 1e-3 of the tensor's gradient scale.
          const tol = 1e-2 * scale + 1e-2 * Math.abs(fd);
          assert.ok(Math.abs(fd - g[i]!) <= tol, `${name}[${i}]: engine gradient ${g[i]} vs finite difference ${fd} (tolerance ${tol.toExponential(2)})`);
          diff2 += (fd - g[i]!) ** 2;
          ref2 += fd ** 2;
          checked++;
        }
      }
      assert.ok(checked >= 3 * names.length);
      assert.ok(Math.sqrt(diff2 / ref2) < 5e-3, `overall relative error ${Math.sqrt(diff2 / ref2)}`);
      await engine.close();
    });
  }

  test("two forwardBackward calls on halves accumulate the gradient of one call on the whole batch", async () => {
    const cfg = tinyQwen2();
    const rng = new Rng(5);
    const batch = randomBatch(rng, cfg.vocabSize, [6, 3, 7, 5], { promptLen: 2 });
    const c = new Float32Array(batch.tokens.length).map(() => rng.normal());
    const e = new Float32Array(batch.tokens.length).map(() => rng.normal());
    const { engine: whole } = await randomEngine(cfg, 9);
    const { engine: halves } = await randomEngine(cfg, 9);
    const full = await whole.forwardBackward(batch, linearLoss(c, e).fn, { entropy: true });
    const T = batch.seqLen;
    const r1 = await halves.forwardBackward(sliceBatch(batch, 0, 2), linearLoss(c.slice(0, 2 * T), e.slice(0, 2 * T)).fn, { entropy: true });
    const r2 = await halves.forwardBackward(sliceBatch(batch, 2, 4), linearLoss(c.slice(2 * T), e.slice(2 * T)).fn, { entropy: true });
    assert.ok(Math.abs(r1.loss + r2.loss - full.loss) < 1e-4);
    for (const name of whole.weightNames()) {
      const a = (await whole.getGrad(name))!;
      const b = (await halves.getGrad(name))!;
      const scale = Math.max(...a.map(Math.abs));
      assert.ok(maxAbsDiff(a, b) <= 1e-5 * scale + 1e-7, `${name}: micro-batched gradient differs by ${maxAbsDiff(a, b)} (scale ${scale})`);
    }
    await whole.close();
    await halves.close();
  });
});

// ---------------------------------------------------------------------------------- save / load

describe("embedded engine checkpoints", () => {
  test("save → load round-trips exactly, optimizer state included", async () => {
    const cfg = tinyLlama();
    const rng = new Rng(21);
    const batch = randomBatch(rng, cfg.vocabSize, [6, 4], { promptLen: 1 });
    const c = new Float32Array(batch.tokens.length).map(() => rng.normal());
    const e = new Float32Array(batch.tokens.length).map(() => rng.normal());
    const step = { lr: 1e-2, weightDecay: 0.1, maxGradNorm: 1 };
    const { engine: a } = await randomEngine(cfg, 4);
    await a.forwardBackward(batch, linearLoss(c, e).fn, { entropy: true });
    await a.optimStep(step);
    const dir = join(tmp, "roundtrip");
    await a.save(dir, { optimizer: true });
    const before = await a.score(batch, { model: "policy", entropy: true });

    const b = await EmbeddedEngine.fromPretrained(dir);
    const loaded = await b.score(batch, { model: "policy", entropy: true });
    assert.deepEqual(loaded.logprobs, before.logprobs, "log-probs after fromPretrained are bit-for-bit identical");
    assert.deepEqual(loaded.entropy, before.entropy);

    // Another engine loads into itself (load), replacing different weights.
    const { engine: c2 } = await randomEngine(cfg, 99);
    await c2.load(dir);
    assert.deepEqual((await c2.score(batch, { model: "policy" })).logprobs, before.logprobs);

    // One more step on each: AdamW moments and the step count came back too.
    for (const eng of [a, b, c2]) {
      await eng.forwardBackward(batch, linearLoss(e, c).fn, { entropy: true });
      await eng.optimStep(step);
    }
    const after = (await a.score(batch, { model: "policy" })).logprobs;
    assert.notDeepEqual(after, before.logprobs);
    assert.deepEqual((await b.score(batch, { model: "policy" })).logprobs, after, "a step after fromPretrained equals a step without save/load");
    assert.deepEqual((await c2.score(batch, { model: "policy" })).logprobs, after, "a step after load equals a step without save/load");
    for (const name of a.weightNames()) assert.deepEqual(await b.getWeight(name), await a.getWeight(name), name);
    for (const eng of [a, b, c2]) await eng.close();
  });

  test("a saved checkpoint has the Hugging Face layout and means the same model", async () => {
    for (const cfg of [tinyLlama(), tinyQwen2()]) {
      const { engine } = await randomEngine(cfg, 8);
      const engine2 = await EmbeddedEngine.create(cfg, { tokenizer: new LetterTokenizer() });
      const dir = join(tmp, `layout-${cfg.modelType}`);
      await engine.save(dir);
      const files = (await readdir(dir)).sort();
      assert.deepEqual(files, ["config.json", "model.safetensors"]);
      const dirTok = join(tmp, `layout-tok-${cfg.modelType}`);
      await engine2.save(dirTok);
      assert.deepEqual((await readdir(dirTok)).sort(), ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]);

      const json = JSON.parse(await readFile(join(dir, "config.json"), "utf8")) as Record<string, unknown>;
      assert.equal(json.model_type, cfg.modelType);
      assert.deepEqual(json.architectures, [cfg.modelType === "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM"]);
      assert.equal(json.tie_word_embeddings, cfg.tieWordEmbeddings);
      assert.deepEqual(parseHfConfig(json), cfg);

      const tensors = await readSafetensors(join(dir, "model.safetensors"));
      const specs = hfParamNames(cfg);
      assert.deepEqual([...tensors.keys()].sort(), specs.map((s) => s.name).sort());
      assert.equal(tensors.has("lm_head.weight"), !cfg.tieWordEmbeddings);
      for (const { name, shape } of specs) {
        const t = tensors.get(name)!;
        assert.deepEqual(t.shape, shape, `${name} is [out, in]`);
        assert.equal(t.dtype, "F32");
        assert.deepEqual(t.data, await engine.getWeight(name), name);
      }
      // The file means the same model: the reference forward over the file's tensors.
      const fileWeights: RefWeights = new Map([...tensors].map(([k, v]) => [k, v.data]));
      const batch = randomBatch(new Rng(2), cfg.vocabSize, [6, 3]);
      const got = (await engine.score(batch, { model: "policy" })).logprobs;
      assert.ok(maxAbsDiff(got, referenceBatchLogprobs(cfg, fileWeights, batch)) < 1e-4);
      await engine.close();
      await engine2.close();
    }
  });

  const handBuilt: [string, Record<string, unknown>][] = [
    [
      "Llama (GQA, untied, head_dim ≠ hidden/heads, rope_theta 500)",
      {
        architectures: ["LlamaForCausalLM"],
        model_type: "llama",
        vocab_size: 13,
        hidden_size: 16,
        intermediate_size: 20,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        head_dim: 6,
        hidden_act: "silu",
        max_position_embeddings: 32,
        rms_norm_eps: 1e-5,
        rope_theta: 500,
        rope_scaling: null,
        attention_bias: false,
        mlp_bias: false,
        tie_word_embeddings: false,
        torch_dtype: "float32",
      },
    ],
    [
      "Qwen2 (q/k/v biases, GQA 4:1, tied)",
      {
        architectures: ["Qwen2ForCausalLM"],
        model_type: "qwen2",
        vocab_size: 12,
        hidden_size: 16,
        intermediate_size: 24,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 1,
        hidden_act: "silu",
        max_position_embeddings: 32,
        rms_norm_eps: 1e-6,
        rope_theta: 1000000,
        use_sliding_window: false,
        sliding_window: null,
        tie_word_embeddings: true,
        torch_dtype: "float32",
      },
    ],
  ];
  for (const [label, json] of handBuilt) {
    test(`a hand-built ${label} checkpoint loads and matches a float64 reference forward`, async (t) => {
      const V = json.vocab_size as number;
      const D = json.hidden_size as number;
      const F = json.intermediate_size as number;
      const H = json.num_attention_heads as number;
      const KV = json.num_key_value_heads as number;
      const hd = (json.head_dim as number | undefined) ?? D / H;
      const bias = json.model_type === "qwen2";
      // Tensor names and shapes written from the transformers modules, not from hfParamNames.
      const shapes = new Map<string, number[]>([["model.embed_tokens.weight", [V, D]]]);
      for (let l = 0; l < (json.num_hidden_layers as number); l++) {
        const p = `model.layers.${l}`;
        shapes.set(`${p}.input_layernorm.weight`, [D]);
        shapes.set(`${p}.self_attn.q_proj.weight`, [H * hd, D]);
        shapes.set(`${p}.self_attn.k_proj.weight`, [KV * hd, D]);
        shapes.set(`${p}.self_attn.v_proj.weight`, [KV * hd, D]);
        shapes.set(`${p}.self_attn.o_proj.weight`, [D, H * hd]);
        if (bias) for (const n of ["q", "k", "v"]) shapes.set(`${p}.self_attn.${n}_proj.bias`, [(n === "q" ? H : KV) * hd]);
        shapes.set(`${p}.post_attention_layernorm.weight`, [D]);
        shapes.set(`${p}.mlp.gate_proj.weight`, [F, D]);
        shapes.set(`${p}.mlp.up_proj.weight`, [F, D]);
        shapes.set(`${p}.mlp.down_proj.weight`, [D, F]);
      }
      shapes.set("model.norm.weight", [D]);
      if (!json.tie_word_embeddings) shapes.set("lm_head.weight", [V, D]);
      const weights = randomHfWeights([...shapes].map(([name, shape]) => ({ name, shape })), new Rng(17), 0.3);
      const dir = join(tmp, `hand-${json.model_type}`);
      await writeHfCheckpoint(dir, json, weights, shapes);

      const engine = await EmbeddedEngine.fromPretrained(dir);
      assert.equal(engine.info().vocabSize, V);
      assert.equal(engine.info().numParams, [...shapes.values()].reduce((a, s) => a + s.reduce((x, y) => x * y, 1), 0));
      const rng = new Rng(3);
      const batch = randomBatch(rng, V, [9, 5, 1, 7], { extraPad: 2 });
      const got = await engine.score(batch, { model: "policy", entropy: true });
      const ref = {
        lp: new Float64Array(batch.tokens.length),
        ent: new Float64Array(batch.tokens.length),
      };
      const rc = {
        vocab_size: V,
        hidden_size: D,
        intermediate_size: F,
        num_hidden_layers: json.num_hidden_layers as number,
        num_attention_heads: H,
        num_key_value_heads: KV,
        head_dim: hd,
        rms_norm_eps: json.rms_norm_eps as number,
        rope_theta: json.rope_theta as number,
        tie_word_embeddings: json.tie_word_embeddings as boolean,
        qkv_bias: bias,
      };
      for (let b = 0; b < batch.batchSize; b++) {
        const T = batch.seqLen;
        const s = referenceScores(rc, weights, batch.tokens.subarray(b * T, b * T + batch.lengths[b]!));
        ref.lp.set(s.logprobs, b * T);
        ref.ent.set(s.entropy, b * T);
      }
      const errLp = maxAbsDiff(got.logprobs, ref.lp);
      const errH = maxAbsDiff(got.entropy!, ref.ent);
      assert.ok(errLp < 2e-4, `log-probs differ from the reference by ${errLp}`);
      assert.ok(errH < 2e-4, `entropies differ from the reference by ${errH}`);
      // Not vacuous: the model is far from uniform.
      assert.ok(Math.max(...ref.lp.map(Math.abs)) > 2 * Math.log(V) || Math.min(...ref.lp) < -Math.log(V) - 1);

      await engine.close();

      // Cross-check against transformers when Python has torch + transformers (not installed by default).
      const probe = spawnSync("python3", ["-c", "import torch, transformers"], { encoding: "utf8" });
      if (probe.status !== 0) {
        t.diagnostic("python3 cannot import torch + transformers: the transformers cross-check was skipped");
        return;
      }
      const script = join(import.meta.dirname, "helpers", "transformers-logprobs.py");
      const seqs = Array.from({ length: batch.batchSize }, (_, b) => Array.from(batch.tokens.subarray(b * batch.seqLen, b * batch.seqLen + batch.lengths[b]!)));
      const r = spawnSync("python3", [script, dir], { input: JSON.stringify(seqs), encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
      const hf = JSON.parse(r.stdout) as number[][];
      hf.forEach((row, b) => row.forEach((lp, i) => assert.ok(Math.abs(lp - got.logprobs[b * batch.seqLen + i]!) < 2e-4, `transformers lp[${b},${i}]`)));
    });
  }
});

// ---------------------------------------------------------------------------------- sampling

describe("embedded engine sampling", () => {
  const cfg = tinyLlama();
  let engine: EmbeddedEngine;
  const prompts = [Int32Array.from([1, 2, 3, 4, 5]), Int32Array.from([6]), Int32Array.from([7, 8, 9])];
  const req = (over: Partial<SampleRequest> = {}): SampleRequest => ({ prompts, n: 3, maxNewTokens: 6, temperature: 1, seed: 42, ...over });
  before(async () => {
    engine = (await randomEngine(cfg, 12, { std: 0.5 })).engine;
  });
  after(async () => {
    await engine.close();
  });

  test("a fixed seed reproduces samples; different seeds differ", async () => {
    const a = await engine.sample(req());
    const b = await engine.sample(req());
    assert.equal(a.length, prompts.length * 3);
    a.forEach((r, i) => assert.equal(r.promptIndex, Math.floor(i / 3)));
    assert.deepEqual(a, b);
    const c = await engine.sample(req({ seed: 43 }));
    assert.notDeepEqual(
      c.map((r) => [...r.tokens]),
      a.map((r) => [...r.tokens]),
    );
    // Samples within a group differ too (independent streams per sample).
    assert.ok(new Set(a.slice(0, 3).map((r) => r.tokens.join(","))).size > 1);
  });

  test("sampler log-probs equal score log-probs of the same tokens", async () => {
    const results = await engine.sample(req({ maxNewTokens: 8 }));
    const lengths = results.map((r) => prompts[r.promptIndex]!.length + r.tokens.length);
    const T = Math.max(...lengths);
    const batch: TokenBatch = {
      batchSize: results.length,
      seqLen: T,
      tokens: new Int32Array(results.length * T),
      lengths: Int32Array.from(lengths),
      lossMask: new Float32Array(results.length * T),
    };
    results.forEach((r, b) => {
      batch.tokens.set(prompts[r.promptIndex]!, b * T);
      batch.tokens.set(r.tokens, b * T + prompts[r.promptIndex]!.length);
    });
    const scored = (await engine.score(batch, { model: "policy" })).logprobs;
    let worst = 0;
    results.forEach((r, b) => {
      const P = prompts[r.promptIndex]!.length;
      assert.equal(r.logprobs.length, r.tokens.length);
      r.logprobs.forEach((lp, j) => (worst = Math.max(worst, Math.abs(lp - scored[b * T + P + j]!) / Math.max(1, Math.abs(lp)))));
    });
    // Float32 through two code paths (KV cache with left padding vs. one full-sequence pass).
    assert.ok(worst < 3e-5, `sampler vs score log-probs differ by ${worst} (relative to max(1, |lp|))`);
    // Both are close to the float64 reference.
    const w = await engineWeights(engine);
    results.slice(0, 4).forEach((r, b) => {
      const seq = [...prompts[r.promptIndex]!, ...r.tokens];
      const ref = referenceScores(refConfig(cfg), w, seq).logprobs;
      const P = prompts[r.promptIndex]!.length;
      r.logprobs.forEach((lp, j) => {
        assert.ok(Math.abs(lp - ref[P + j]!) < 1e-4 * Math.max(1, Math.abs(lp)), `sampler lp vs reference ${lp} ${ref[P + j]}`);
        assert.ok(Math.abs(scored[b * T + P + j]! - ref[P + j]!) < 1e-4 * Math.max(1, Math.abs(lp)));
      });
    });
  });

  test("stop tokens end samples with stopReason 'completed'; others run to maxNewTokens", async () => {
    const stopTokens = [0, 3, 5];
    const results = await engine.sample(req({ stopTokens, maxNewTokens: 6, n: 4 }));
    const stops = new Set(stopTokens);
    let completed = 0;
    let truncated = 0;
    for (const r of results) {
      const body = [...r.tokens];
      if (r.stopReason === "completed") {
        completed++;
        assert.ok(stops.has(body.at(-1)!), "a completed sample ends with its stop token");
        assert.ok(body.slice(0, -1).every((t) => !stops.has(t)), "no stop token before the end");
        assert.ok(body.length <= 6);
      } else {
        truncated++;
        assert.equal(r.stopReason, "max_tokens");
        assert.equal(body.length, 6);
        assert.ok(body.every((t) => !stops.has(t)));
      }
    }
    assert.ok(completed > 0 && truncated > 0, `both endings occur (completed ${completed}, max_tokens ${truncated})`);
  });

  test("greedy decoding (temperature 0) is deterministic and picks the reference argmax", async () => {
    const a = await engine.sample(req({ temperature: 0, seed: 1 }));
    const b = await engine.sample(req({ temperature: 0, seed: 2 }));
    assert.deepEqual(a, b);
    const w = await engineWeights(engine);
    for (const r of a.filter((_, i) => i % 3 === 0)) {
      const seq = [...prompts[r.promptIndex]!, ...r.tokens];
      const logits = referenceLogits(refConfig(cfg), w, seq);
      const P = prompts[r.promptIndex]!.length;
      r.tokens.forEach((tok, j) => {
        const lp = logSoftmaxRow(logits, P + j - 1, cfg.vocabSize);
        assert.ok(lp[tok]! >= Math.max(...lp) - 1e-4, `greedy token ${j} of prompt ${r.promptIndex} is the argmax`);
        assert.ok(Math.abs(r.logprobs[j]! - lp[tok]!) < 1e-4);
      });
    }
  });

  test("chunking (maxSampleBatch) does not change results, with top-k and top-p", async () => {
    const chunked = await EmbeddedEngine.create(cfg, { maxSampleBatch: 2 });
    for (const name of engine.weightNames()) chunked.setWeight(name, await engine.getWeight(name));
    for (const over of [{}, { topK: 4, temperature: 0.8 }, { topP: 0.7 }] as Partial<SampleRequest>[]) {
      const a = await engine.sample(req(over));
      const b = await chunked.sample(req(over));
      assert.deepEqual(
        b.map((r) => [r.promptIndex, [...r.tokens], r.stopReason]),
        a.map((r) => [r.promptIndex, [...r.tokens], r.stopReason]),
      );
      a.forEach((r, i) => assert.ok(maxAbsDiff(r.logprobs, b[i]!.logprobs) < 1e-5));
    }
    await chunked.close();
  });
});

// ---------------------------------------------------------------------------------- optimizer

describe("embedded engine optimizer", () => {
  test("two AdamW steps match a float64 AdamW (bias correction, decoupled decay on matrices, clipping)", async () => {
    const cfg = tinyQwen2({ numLayers: 1 });
    const rng = new Rng(31);
    const { engine } = await randomEngine(cfg, 6);
    const names = engine.weightNames();
    const w = new Map<string, Float64Array>();
    for (const n of names) w.set(n, Float64Array.from(await engine.getWeight(n)));
    const m = new Map(names.map((n) => [n, new Float64Array(w.get(n)!.length)]));
    const v = new Map(names.map((n) => [n, new Float64Array(w.get(n)!.length)]));
    const opt = { lr: 0.05, beta1: 0.8, beta2: 0.9, eps: 1e-2, weightDecay: 0.3, maxGradNorm: 0.5 };
    for (let t = 1; t <= 2; t++) {
      const batch = randomBatch(rng, cfg.vocabSize, [5, 3], { promptLen: 1 });
      const c = new Float32Array(batch.tokens.length).map(() => rng.normal());
      await engine.forwardBackward(batch, linearLoss(c, new Float32Array(c.length)).fn);
      const grads = new Map<string, Float32Array>();
      let sq = 0;
      for (const n of names) {
        const g = (await engine.getGrad(n))!;
        grads.set(n, g);
        for (const x of g) sq += x * x;
      }
      const norm = Math.sqrt(sq);
      const { gradNorm, skipped } = await engine.optimStep(opt);
      assert.equal(skipped, false);
      assert.ok(Math.abs(gradNorm - norm) < 1e-5 * norm, `gradNorm ${gradNorm} vs ${norm}`);
      assert.ok(norm > opt.maxGradNorm, "the clip is active");
      const scale = opt.maxGradNorm / (norm + 1e-6);
      for (const n of names) {
        const g = grads.get(n)!;
        const wn = w.get(n)!;
        const mn = m.get(n)!;
        const vn = v.get(n)!;
        const shape = hfParamNames(cfg).find((s) => s.name === n)!.shape;
        const decay = decays(n, shape);
        assert.equal(decay, shape.length === 2 && !n.includes("norm"), `${n}: decay only matrices`);
        for (let i = 0; i < wn.length; i++) {
          const gi = g[i]! * scale;
          mn[i] = opt.beta1 * mn[i]! + (1 - opt.beta1) * gi;
          vn[i] = opt.beta2 * vn[i]! + (1 - opt.beta2) * gi * gi;
          const mHat = mn[i]! / (1 - opt.beta1 ** t);
          const vHat = vn[i]! / (1 - opt.beta2 ** t);
          wn[i] = wn[i]! - opt.lr * mHat / (Math.sqrt(vHat) + opt.eps) - (decay ? opt.lr * opt.weightDecay * wn[i]! : 0);
        }
        const got = await engine.getWeight(n);
        const err = maxAbsDiff(got, wn);
        assert.ok(err < 2e-6, `${n} after step ${t}: differs from float64 AdamW by ${err}`);
      }
      assert.equal(await engine.getGrad(names[0]!), null, "optimStep clears the gradient");
    }
    assert.deepEqual(await engine.optimStep(opt), { gradNorm: 0, skipped: true }, "no gradient: nothing to do");
    await engine.close();
  });

  test("learningRate: linear warmup, then constant or cosine to minLrRatio", () => {
    const base = { lr: 1, warmupSteps: 4, totalSteps: 14 };
    const constant = { ...base, schedule: "constant" as const };
    const cosine = { ...base, schedule: "cosine" as const, minLrRatio: 0.1 };
    assert.deepEqual([0, 1, 2, 3].map((s) => learningRate(s, constant)), [0.25, 0.5, 0.75, 1]);
    assert.deepEqual([4, 10, 100].map((s) => learningRate(s, constant)), [1, 1, 1]);
    assert.deepEqual([0, 3].map((s) => learningRate(s, cosine)), [0.25, 1]);
    assert.equal(learningRate(4, cosine), 1);
    assert.ok(Math.abs(learningRate(9, cosine) - 0.55) < 1e-12, "half-way: min + (1 − min)/2");
    assert.ok(Math.abs(learningRate(14, cosine) - 0.1) < 1e-12);
    assert.ok(Math.abs(learningRate(50, cosine) - 0.1) < 1e-12, "stays at the floor after totalSteps");
    for (let s = 4; s < 14; s++) assert.ok(learningRate(s + 1, cosine) < learningRate(s, cosine));
    assert.equal(learningRate(0, { lr: 3e-4, schedule: "cosine", warmupSteps: 0, totalSteps: 10 }), 3e-4);
  });
});

// ---------------------------------------------------------------------------------- memory

describe("embedded engine memory", () => {
  test("the Wasm heap and RSS stay flat over 30 forwardBackward + optimStep + sample + score iterations", async () => {
    // ~0.4M parameters (1.6 MB per weight set): a leaked gradient, moment or weight set per step
    // would add ≥ 30 MB over the run.
    const cfg = tinyLlama({ vocabSize: 64, hiddenSize: 128, intermediateSize: 256, numHeads: 4, numKvHeads: 2, headDim: 32 });
    const engine = await EmbeddedEngine.create(cfg, { seed: 1 });
    const rng = new Rng(1);
    const batch = randomBatch(rng, cfg.vocabSize, [16, 12, 9, 16], { promptLen: 4 });
    const c = new Float32Array(batch.tokens.length).map(() => rng.normal());
    const loss = linearLoss(c, c);
    const prompts = [0, 1, 2, 3].map((b) => batch.tokens.slice(b * 16, b * 16 + 3 + b));
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    await engine.setReference("policy");
    const heap: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < 30; i++) {
      await engine.forwardBackward(batch, loss.fn, { entropy: true });
      await engine.optimStep({ lr: 1e-3, maxGradNorm: 1, weightDecay: 0.01 });
      await engine.sample({ prompts, n: 4, maxNewTokens: 12, temperature: 1, seed: i });
      await engine.score(batch, { model: "reference" });
      if (i === 14) await engine.setReference("policy");
      gc();
      heap.push(wasmHeapBytes());
      rss.push(process.memoryUsage().rss);
    }
    assert.ok(heap[29]! > 0, "the probe saw jax-js's Wasm memory");
    const heapGrowthMb = (heap[29]! - heap[9]!) / 2 ** 20;
    const rssGrowthMb = (rss[29]! - rss[9]!) / 2 ** 20;
    if (process.env.RLVR_DEBUG_MEMORY) console.log(heap.map((h) => (h / 2 ** 20).toFixed(2)).join(" "), rss.map((r) => (r / 2 ** 20).toFixed(0)).join(" "));
    assert.ok(heapGrowthMb <= 1, `jax-js's Wasm heap grew by ${heapGrowthMb.toFixed(1)} MB between iterations 10 and 30 (leaked arrays)`);
    assert.ok(rssGrowthMb < 20, `RSS grew by ${rssGrowthMb.toFixed(1)} MB between iterations 10 and 30`);
    await engine.close();
  });
});
