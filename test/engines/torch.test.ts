/**
 * The torch engine (src/engines/torch + python/rlvr_worker) against the embedded engine on one
 * tiny, randomly initialised Qwen2-architecture checkpoint written here: per-token log-probs and
 * entropy, gradients and one AdamW step, micro-batching and gradient checkpointing, seeded
 * sampling, save/load across engines, a dead worker, and a short GRPO run that must learn.
 *
 * Needs a Python with torch + transformers (`rlvr setup torch`, or $RLVR_PYTHON). Without one
 * every test that needs it is skipped with the reason printed; `npm run test:torch` runs only this file.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hfParamNames, toHfConfig, type ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { INSTALL_HINT } from "../../src/engines/torch/worker.ts";
import type { OptimStep, TokenBatch } from "../../src/core/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { contextWith, type RunContext } from "../../src/pipeline/context.ts";
import { tinyQwen2, randomBatch, sliceBatch, randomHfWeights, linearLoss, writeHfCheckpoint, maxAbsDiff, Rng } from "./helpers/tiny.ts";

const probe = TorchEngine.probe();
const SKIP = probe.ok ? false : `torch engine tests skipped: ${probe.reason}`;
if (SKIP) console.log(`# ${SKIP}`);

const quiet = { onStderr: () => {} };

/** Qwen2 shape: q/k/v biases, grouped-query attention (4 heads, 2 kv heads), tied embeddings. */
const CFG: ModelConfig = tinyQwen2({ vocabSize: 23, hiddenSize: 16, intermediateSize: 24, numHeads: 4, numKvHeads: 2, headDim: 4 });

let tmp: string;
let ckpt: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-torch-"));
  ckpt = join(tmp, "tiny-qwen2");
  const specs = hfParamNames(CFG);
  // Healthy weight scale so every gradient is far above float32 noise.
  await writeHfCheckpoint(ckpt, toHfConfig(CFG), randomHfWeights(specs, new Rng(7), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
  // The checkpoint's generation defaults: the torch engine samples without them but must save them back.
  await writeFile(join(ckpt, "generation_config.json"), JSON.stringify({ eos_token_id: 5, pad_token_id: 5, max_new_tokens: 7 }));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Max |a − b| / (1 + max |b|): relative where values are large, absolute where small. */
function relDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (const x of b) m = Math.max(m, Math.abs(x));
  return maxAbsDiff(a, b) / (1 + m);
}

function batchOf(seed: number, lengths: number[]): TokenBatch {
  return randomBatch(new Rng(seed), CFG.vocabSize, lengths, { promptLen: 2, extraPad: 2 });
}

describe("torch engine vs embedded engine (same checkpoint)", { skip: SKIP }, () => {
  let emb: EmbeddedEngine;
  let tor: TorchEngine;
  before(async () => {
    emb = await EmbeddedEngine.fromPretrained(ckpt);
    tor = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1 });
  });
  after(async () => {
    await tor?.close();
    await emb?.close();
  });

  test("info describes the model", () => {
    const i = tor.info();
    assert.equal(i.engine, "torch");
    assert.equal(i.vocabSize, CFG.vocabSize);
    assert.equal(i.maxSeqLen, CFG.maxPositionEmbeddings);
    assert.equal(i.numParams, emb.info().numParams);
    assert.equal(i.dtype, "float32");
    assert.match(i.device, /^cpu/);
  });

  test("(1) per-token log-probs and entropy agree within 1e-4 (policy and reference)", async () => {
    const batch = batchOf(11, [9, 4, 12, 2]);
    const a = await emb.score(batch, { model: "policy", entropy: true });
    const b = await tor.score(batch, { model: "policy", entropy: true });
    assert.ok(maxAbsDiff(a.logprobs, b.logprobs) < 1e-4, `log-prob diff ${maxAbsDiff(a.logprobs, b.logprobs)}`);
    assert.ok(maxAbsDiff(a.entropy!, b.entropy!) < 1e-4, `entropy diff ${maxAbsDiff(a.entropy!, b.entropy!)}`);
    // Layout: position 0 and padding hold 0; real positions are negative log-probs.
    for (let r = 0; r < batch.batchSize; r++) {
      for (let t = 0; t < batch.seqLen; t++) {
        const v = b.logprobs[r * batch.seqLen + t]!;
        if (t === 0 || t >= batch.lengths[r]!) assert.equal(v, 0, `lp[${r},${t}] should be 0`);
        else assert.ok(v < 0, `lp[${r},${t}] = ${v}`);
      }
    }
    assert.equal((await tor.score(batch, { model: "policy" })).entropy, undefined);
    await assert.rejects(tor.score(batch, { model: "reference" }), /before setReference/);
    await tor.setReference("policy");
    await emb.setReference("policy");
    const ra = await emb.score(batch, { model: "reference" });
    const rb = await tor.score(batch, { model: "reference" });
    assert.ok(maxAbsDiff(ra.logprobs, rb.logprobs) < 1e-4);
  });

  test("(2) one forwardBackward + optimStep gives the same gradients, grad norm and updated weights within 1e-4", async () => {
    const batch = batchOf(12, [10, 7, 12]);
    const rng = new Rng(5);
    const n = batch.batchSize * batch.seqLen;
    const c = Float32Array.from({ length: n }, () => rng.normal());
    const e = Float32Array.from({ length: n }, () => 0.5 * rng.normal());
    const { fn } = linearLoss(c, e);
    const ra = await emb.forwardBackward(batch, fn, { entropy: true });
    const rb = await tor.forwardBackward(batch, fn, { entropy: true });
    assert.ok(Math.abs(ra.loss - rb.loss) < 1e-4 * (1 + Math.abs(ra.loss)), `loss ${ra.loss} vs ${rb.loss}`);
    assert.equal(rb.tokens, ra.tokens);
    const names = hfParamNames(CFG).map((s) => s.name);
    for (const name of names) {
      const ga = (await emb.getGrad(name))!;
      const gb = (await tor.getGrad(name))!;
      assert.ok(gb, `torch has no gradient for ${name}`);
      assert.ok(relDiff(gb, ga) < 1e-4, `gradient of ${name}: rel diff ${relDiff(gb, ga)}`);
    }
    // Weight decay on matrices only, and clipping engaged (the norm is far above 0.5).
    const opt: OptimStep = { lr: 1e-3, maxGradNorm: 0.5, weightDecay: 0.1 };
    const sa = await emb.optimStep(opt);
    const sb = await tor.optimStep(opt);
    assert.equal(sb.skipped, false);
    assert.ok(sa.gradNorm > 0.5);
    assert.ok(Math.abs(sa.gradNorm - sb.gradNorm) < 1e-4 * sa.gradNorm, `grad norm ${sa.gradNorm} vs ${sb.gradNorm}`);
    let worst = 0;
    for (const name of names) {
      const d = maxAbsDiff(await tor.getWeight(name), await emb.getWeight(name));
      worst = Math.max(worst, d);
      assert.ok(d < 1e-4, `updated ${name} differs by ${d}`);
    }
    assert.deepEqual(await tor.optimStep(opt), { gradNorm: 0, skipped: true }, "gradients are cleared by the step");
    // And the models still agree after the update.
    const after1 = batchOf(13, [8, 11]);
    const la = await emb.score(after1, { model: "policy" });
    const lb = await tor.score(after1, { model: "policy" });
    assert.ok(maxAbsDiff(la.logprobs, lb.logprobs) < 1e-4, `after the step: ${maxAbsDiff(la.logprobs, lb.logprobs)} (weights ${worst})`);
  });

  test("save → load: the embedded engine reads the torch engine's checkpoint and optimizer state", async () => {
    const dir = join(tmp, "from-torch");
    await tor.save(dir, { optimizer: true });
    const files = await readdir(dir);
    assert.ok(files.includes("config.json") && files.includes("model.safetensors") && files.includes("optimizer.safetensors"), files.join(","));
    const gen = JSON.parse(await readFile(join(dir, "generation_config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual([gen.eos_token_id, gen.pad_token_id, gen.max_new_tokens], [5, 5, 7], "the checkpoint keeps the generation config it was loaded with");
    const back = await EmbeddedEngine.fromPretrained(dir);
    const batch = batchOf(14, [6, 12]);
    const a = await back.score(batch, { model: "policy" });
    const b = await tor.score(batch, { model: "policy" });
    assert.ok(maxAbsDiff(a.logprobs, b.logprobs) < 1e-4);
    // The same next step in both (the moments and step count travelled with the checkpoint).
    const { fn } = linearLoss(new Float32Array(batch.batchSize * batch.seqLen).fill(1), new Float32Array(batch.batchSize * batch.seqLen));
    await back.forwardBackward(batch, fn);
    await tor.forwardBackward(batch, fn);
    await back.optimStep({ lr: 1e-3 });
    await tor.optimStep({ lr: 1e-3 });
    for (const name of ["model.embed_tokens.weight", "model.layers.1.mlp.down_proj.weight", "model.layers.0.self_attn.q_proj.bias"]) {
      const d = maxAbsDiff(await tor.getWeight(name), await back.getWeight(name));
      assert.ok(d < 1e-4, `${name} after resuming: ${d}`);
    }
    await back.close();
    // torch reloads its own checkpoint exactly.
    const w0 = await tor.getWeight("model.norm.weight");
    await tor.load(dir);
    assert.ok(maxAbsDiff(await tor.getWeight("model.norm.weight"), w0) > 0, "load replaced the stepped weights");
  });
});

describe("torch engine alone", { skip: SKIP }, () => {
  let tor: TorchEngine;
  before(async () => {
    tor = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1, tokenBudget: 20, gradientCheckpointing: true });
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
    const plain = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1 });
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
    const e = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1, lora: loraConfigSchema.parse({ rank: 4, alpha: 8 }) });
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
      const dir = join(tmp, "lora-out");
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
    const bf = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1, dtype: "bfloat16" });
    const st = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1, kvCache: "static" });
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
    const e = await TorchEngine.fromPretrained(ckpt, { ...quiet, device: "cpu", threads: 1 });
    e.killWorker();
    await assert.rejects(e.score(batchOf(1, [3]), { model: "policy" }), /torch worker .* (exited|signal)/);
    assert.equal(e.alive, false);
    await assert.rejects(e.optimStep({ lr: 1 }), /create a new engine/);
    await e.close();
  });
});

test("a Python without torch: probe and engine creation name the install command", async (t) => {
  const sys = spawnSync("python3", ["-c", "import torch"], { encoding: "utf8" });
  if (sys.error || sys.status === 0) {
    t.skip("python3 on PATH is missing or has torch");
    return;
  }
  const r = TorchEngine.probe("python3");
  assert.ok(!r.ok && r.reason.includes(INSTALL_HINT) && /has no module/.test(r.reason), JSON.stringify(r));
  await assert.rejects(TorchEngine.fromPretrained(ckpt, { python: "python3", ...quiet }), (e: Error) => {
    assert.match(e.message, /no module .*rlvr setup torch/is);
    return true;
  });
});

test("a missing Python fails engine creation with the install command", async () => {
  assert.ok(!TorchEngine.probe("/nonexistent/python3").ok);
  await assert.rejects(TorchEngine.fromPretrained(ckpt, { python: "/nonexistent/python3", ...quiet }), (e: Error) => {
    assert.match(e.message, /rlvr setup torch/);
    return true;
  });
});

describe("GRPO through the torch engine", { skip: SKIP }, () => {
  test("(3) learns a procedural reward (first response token 'a') in 30 steps", async () => {
    const tokenizer = new CharTokenizer({ alphabet: "abc" });
    const cfg = parseRunConfig({
      seed: 3,
      out: join(tmp, "grpo"),
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
