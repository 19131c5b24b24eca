/**
 * The torch engine's worker on its own (test:slow; the cross-engine checks are in torch.test.ts):
 * micro-batching by token budget with gradient checkpointing, a throwing loss, seeded sampling,
 * LoRA through peft, bfloat16 autocast and the static KV cache, a dead worker, and a short GRPO
 * run that must learn — on the tiny Qwen2 checkpoint of helpers/torch-fixture.ts.
 * Needs a Python with torch + transformers; skipped with the reason printed otherwise.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { contextWith, type RunContext } from "../../src/pipeline/context.ts";
import { sliceBatch, linearLoss, maxAbsDiff, Rng } from "./helpers/tiny.ts";
import { SKIP, quiet, useTinyCheckpoint, relDiff, batchOf } from "./helpers/torch-fixture.ts";

const fx = useTinyCheckpoint();

describe("torch engine alone", { skip: SKIP }, () => {
  let tor: TorchEngine;
  before(async () => {
    tor = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1, tokenBudget: 20, gradientCheckpointing: true });
  });
  after(async () => {
    await tor?.close();
  });

  test("micro-batching by token budget + gradient checkpointing: same gradient as one big batch, and as two calls", async () => {
    const batch = batchOf(21, [9, 5, 12, 7]);
    const n = batch.batchSize * batch.seqLen;
    const rng = new Rng(9);
    const c = Float32Array.from({ length: n }, () => rng.normal());
    const e = Float32Array.from({ length: n }, () => rng.normal());
    const { fn } = linearLoss(c, e);
    // Reference gradient from a separate engine without budget or checkpointing.
    const plain = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1 });
    try {
      await plain.forwardBackward(batch, fn, { entropy: true });
      await tor.forwardBackward(batch, fn, { entropy: true }); // 4 rows × 12 > 20 tokens: micro-batched
      for (const name of ["model.embed_tokens.weight", "model.layers.0.self_attn.k_proj.weight", "model.layers.1.input_layernorm.weight"]) {
        const g1 = (await plain.getGrad(name))!;
        const g2 = (await tor.getGrad(name))!;
        assert.ok(relDiff(g2, g1) < 1e-5, `${name}: ${relDiff(g2, g1)}`);
      }
      // Accumulation: two half-batch calls add up to the whole.
      await tor.zeroGrad();
      const cut = (x: Float32Array, from: number, to: number) => x.slice(from * batch.seqLen, to * batch.seqLen);
      await tor.forwardBackward(sliceBatch(batch, 0, 2), linearLoss(cut(c, 0, 2), cut(e, 0, 2)).fn, { entropy: true });
      await tor.forwardBackward(sliceBatch(batch, 2, 4), linearLoss(cut(c, 2, 4), cut(e, 2, 4)).fn, { entropy: true });
      const g1 = (await plain.getGrad("model.layers.1.mlp.up_proj.weight"))!;
      const g2 = (await tor.getGrad("model.layers.1.mlp.up_proj.weight"))!;
      assert.ok(relDiff(g2, g1) < 1e-5);
      await tor.zeroGrad();
    } finally {
      await plain.close();
    }
  });

  test("a throwing or non-finite loss leaves no gradient and the worker usable", async () => {
    const batch = batchOf(22, [6, 8]);
    await assert.rejects(
      tor.forwardBackward(batch, () => {
        throw new Error("boom");
      }),
      /boom/,
    );
    const nan = await tor.forwardBackward(batch, (s) => ({ loss: NaN, dLogprobs: new Float32Array(s.logprobs.length), metrics: {} }));
    assert.ok(Number.isNaN(nan.loss));
    assert.equal(await tor.getGrad("model.norm.weight"), null);
    assert.deepEqual(await tor.optimStep({ lr: 1e-3 }), { gradNorm: 0, skipped: true });
    await assert.rejects(tor.score({ ...batch, tokens: batch.tokens.map(() => 99) }, { model: "policy" }), /outside the vocabulary/);
  });

  test("sampling: prompt-major, seeded, stop tokens, sampler log-probs = score log-probs at temperature 1", async () => {
    const prompts = [Int32Array.from([1, 2, 3, 4]), Int32Array.from([5]), Int32Array.from([6, 7])];
    const req = { prompts, n: 3, maxNewTokens: 8, temperature: 1, stopTokens: [0, 1], seed: 42 };
    const out = await tor.sample(req);
    assert.equal(out.length, 9);
    out.forEach((o, i) => assert.equal(o.promptIndex, Math.floor(i / 3)));
    const again = await tor.sample(req);
    assert.deepEqual(again.map((o) => Array.from(o.tokens)), out.map((o) => Array.from(o.tokens)), "same seed, same samples");
    for (const o of out) {
      assert.equal(o.tokens.length, o.logprobs.length);
      const hit = o.tokens.findIndex((t) => t === 0 || t === 1);
      if (o.stopReason === "completed") assert.equal(hit, o.tokens.length - 1, "ends at its first stop token");
      else assert.ok(hit === -1 && o.tokens.length === 8);
    }
    // Score prompt + response: the sampler's log-probs are the model's (left padding handled).
    const T = Math.max(...out.map((o) => prompts[o.promptIndex]!.length + o.tokens.length));
    const tokens = new Int32Array(out.length * T);
    const lengths = new Int32Array(out.length);
    out.forEach((o, r) => {
      const p = prompts[o.promptIndex]!;
      tokens.set(p, r * T);
      tokens.set(o.tokens, r * T + p.length);
      lengths[r] = p.length + o.tokens.length;
    });
    const s = await tor.score({ batchSize: out.length, seqLen: T, tokens, lengths, lossMask: new Float32Array(out.length * T) }, { model: "policy" });
    out.forEach((o, r) => {
      const p = prompts[o.promptIndex]!.length;
      for (let t = 0; t < o.tokens.length; t++) {
        const d = Math.abs(o.logprobs[t]! - s.logprobs[r * T + p + t]!);
        assert.ok(d < 1e-4, `row ${r} token ${t}: sampler ${o.logprobs[t]} vs score ${s.logprobs[r * T + p + t]}`);
      }
    });
    // Temperature scales the reported log-probs; top-k 1 is greedy.
    const greedy = await tor.sample({ ...req, temperature: 0, n: 1 });
    const top1 = await tor.sample({ ...req, topK: 1, n: 1, temperature: 0.7, seed: 3 });
    assert.deepEqual(top1.map((o) => Array.from(o.tokens)), greedy.map((o) => Array.from(o.tokens)));
    const tp = await tor.sample({ ...req, topP: 1e-6, n: 1, temperature: 2, seed: 4 });
    assert.deepEqual(tp.map((o) => Array.from(o.tokens)), greedy.map((o) => Array.from(o.tokens)), "a tiny top-p keeps only the argmax");
  });

  test("LoRA (when peft is installed): base model as reference, adapter snapshots on reset, adapter save/load", async (t) => {
    if (!tor.versions.peft) {
      t.skip("peft is not installed in the worker's Python (rlvr setup torch --lora)");
      return;
    }
    const e = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1, lora: loraConfigSchema.parse({ rank: 4, alpha: 8 }) });
    try {
      assert.ok(e.info().numParams < tor.info().numParams, "only adapters train");
      const batch = batchOf(31, [7, 5, 9]);
      const n = batch.batchSize * batch.seqLen;
      const step = async () => {
        await e.forwardBackward(batch, linearLoss(new Float32Array(n).fill(1), new Float32Array(n)).fn);
        return e.optimStep({ lr: 1e-2 });
      };
      const s0 = await e.score(batch, { model: "policy" });
      await e.setReference("policy");
      for (let i = 0; i < 2; i++) assert.equal((await step()).skipped, false);
      const s1 = await e.score(batch, { model: "policy" });
      assert.ok(maxAbsDiff(s0.logprobs, s1.logprobs) > 1e-3, "the adapters trained");
      assert.equal(maxAbsDiff(s0.logprobs, (await e.score(batch, { model: "reference" })).logprobs), 0, "reference = base model");
      await e.setReference("policy"); // ProRL-style reset: snapshot of the trained adapters
      await step();
      assert.equal(maxAbsDiff(s1.logprobs, (await e.score(batch, { model: "reference" })).logprobs), 0);
      const s2 = await e.score(batch, { model: "policy" });
      assert.ok(maxAbsDiff(s1.logprobs, s2.logprobs) > 0, "scoring the reference left the policy's adapters in place");
      const dir = join(fx.tmp, "lora-out");
      await e.save(dir, { optimizer: true });
      assert.ok((await readdir(dir)).includes("adapter_model.safetensors"));
      await step();
      await e.load(dir);
      assert.ok(maxAbsDiff(s2.logprobs, (await e.score(batch, { model: "policy" })).logprobs) < 1e-6, "adapters reloaded");
    } finally {
      await e.close();
    }
  });

  test("bfloat16 autocast (the GPU mode, here on CPU) and the static KV cache (float32) run and agree with float32", async () => {
    const batch = batchOf(41, [8, 5]);
    const ref = await tor.score(batch, { model: "policy" });
    const bf = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1, dtype: "bfloat16" });
    const st = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1, kvCache: "static" });
    try {
      assert.match(bf.info().dtype, /bfloat16/);
      const lp = await bf.score(batch, { model: "policy" });
      const d = maxAbsDiff(lp.logprobs, ref.logprobs);
      assert.ok(d > 0 && d < 0.25, `bfloat16 vs float32 log-probs differ by ${d}`);
      const req = { prompts: [Int32Array.from([1, 2, 3]), Int32Array.from([4])], n: 2, maxNewTokens: 5, temperature: 0, seed: 1 };
      assert.equal((await bf.sample(req)).length, 4);
      const a = await st.sample(req);
      const b = await tor.sample(req);
      assert.deepEqual(a.map((o) => Array.from(o.tokens)), b.map((o) => Array.from(o.tokens)), "static and dynamic caches decode the same greedy tokens");
      a.forEach((o, i) => assert.ok(maxAbsDiff(o.logprobs, b[i]!.logprobs) < 1e-4));
      const n = batch.batchSize * batch.seqLen;
      await bf.forwardBackward(batch, linearLoss(new Float32Array(n).fill(1), new Float32Array(n)).fn, { entropy: true });
      assert.equal((await bf.optimStep({ lr: 1e-3 })).skipped, false);
    } finally {
      await bf.close();
      await st.close();
    }
  });

  test("a dead worker fails every call cleanly", async () => {
    const e = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1 });
    e.killWorker();
    await assert.rejects(e.score(batchOf(1, [3]), { model: "policy" }), /torch worker .* (exited|signal)/);
    assert.equal(e.alive, false);
    await assert.rejects(e.optimStep({ lr: 1 }), /create a new engine/);
    await e.close();
  });
});

describe("GRPO through the torch engine", { skip: SKIP }, () => {
  test("(3) learns a procedural reward (first response token 'a') in 30 steps", async () => {
    const tokenizer = new CharTokenizer({ alphabet: "abc" });
    const cfg = parseRunConfig({
      seed: 3,
      out: join(fx.tmp, "grpo"),
      model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 }, engine: "torch", device: "cpu" },
      tokenizer: { type: "char", alphabet: "abc" },
      data: { task: "addition" },
      rl: { steps: 30, promptsPerStep: 4, groupSize: 8, maxNewTokens: 3, lr: 3e-3, temperature: 1 },
    });
    const { buildEngine } = await import("../../src/trainer/context.ts");
    const engine = await buildEngine(cfg, tokenizer);
    assert.equal(engine.info().engine, "torch");
    const examples = ["ab", "ba", "cab", "bc"].map((p, i) => ({ id: `first-a-${i}`, prompt: p, answer: "a", task: "first-a" }));
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
      encodePrompt: (ex) => Int32Array.from(tokenizer.encode(ex.prompt)),
    });
    try {
      const st = initRlState(ctx, cfg.algorithm!);
      if (st.kl.coef > 0 || cfg.algorithm!.kl.adaptive) await engine.setReference("policy"); // as runRl does
      const log = new RunLogger(cfg.out, true);
      const acc: number[] = [];
      for (let i = 0; i < 30; i++) acc.push((await rlStep(ctx, cfg.algorithm!, st, log))["accuracy"]!);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const first = mean(acc.slice(0, 5));
      const last = mean(acc.slice(-5));
      console.log(`# GRPO on the torch engine: accuracy ${first.toFixed(2)} (steps 1-5) → ${last.toFixed(2)} (steps 26-30)`);
      assert.ok(last >= 0.8 && last >= first + 0.3, `accuracy ${first} → ${last}: ${acc.map((a) => a.toFixed(2)).join(" ")}`);
    } finally {
      await engine.close();
    }
  });
});
