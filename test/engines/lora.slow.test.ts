/**
 * LoRA on both engines (src/engines/lora.ts): `model.lora` in the run config, fail-closed target
 * names, peft-layout adapters that `model.path` opens (base + adapter), the merged checkpoint
 * (log-probs equal the unmerged adapter's), and parity of the embedded engine's LoRA with peft's
 * (same base, same adapter → same log-probs and the same update). Torch parts skip without a
 * Python with torch + transformers + peft.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, readFile, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { hfParamNames, toHfConfig } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { loraConfigSchema, readAdapterInfo } from "../../src/engines/lora.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { assertFits } from "../../src/engines/embedded/memory.ts";
import { adapterParamCount } from "../../src/engines/embedded/adapters.ts";
import { tinyLlama, randomBatch, randomHfWeights, linearLoss, writeHfCheckpoint, maxAbsDiff, Rng } from "./helpers/tiny.ts";

const probe = TorchEngine.probe();
const quiet = { onStderr: () => {}, device: "cpu", threads: 1 };
const CFG = tinyLlama({ vocabSize: 19, hiddenSize: 16, intermediateSize: 24, numHeads: 4, numKvHeads: 2, headDim: 4 });

let tmp: string;
let base: string;
let peft = false;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-lora-"));
  base = join(tmp, "base");
  const specs = hfParamNames(CFG);
  await writeHfCheckpoint(base, toHfConfig(CFG), randomHfWeights(specs, new Rng(3), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
  peft = probe.ok && spawnSync(probe.python, ["-c", "import peft"]).status === 0;
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const batch = () => randomBatch(new Rng(11), CFG.vocabSize, [9, 6, 8], { promptLen: 2, extraPad: 1 });
const ones = (n: number) => linearLoss(new Float32Array(n).fill(1), new Float32Array(n)).fn;

describe("model.lora in the run config", () => {
  const run = (lora: unknown) => parseRunConfig({ model: { path: "m", lora }, data: { task: "addition" } } as never);
  test("defaults: rank 16, alpha 32, dropout 0, every linear module of a block, no merged copy", () => {
    const m = run({}).model;
    assert.deepEqual(m.lora, { rank: 16, alpha: 32, dropout: 0, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], saveMerged: false, baseDtype: "auto" });
  });
  test("unknown fields and bad values are errors naming the field", () => {
    assert.throws(() => run({ rank: 0 }), /model\.lora\.rank/);
    assert.throws(() => run({ r: 8 }), /model\.lora/);
    assert.throws(() => run({ dropout: 1 }), /model\.lora\.dropout/);
    assert.throws(() => run({ targets: [] }), /model\.lora\.targets/);
  });
});

describe("embedded memory plan under LoRA", () => {
  // SmolLM2-135M's shape (config.json of the Instruct model).
  const smol = { ...CFG, vocabSize: 49152, hiddenSize: 576, intermediateSize: 1536, numLayers: 30, numHeads: 9, numKvHeads: 3, headDim: 64, maxPositionEmbeddings: 8192, tieWordEmbeddings: true };
  test("a 135M model refused for full fine-tuning loads under LoRA, counting the base at its storage size and only the adapters' training state", () => {
    assert.throws(() => assertFits(smol), /134\.5M parameters need 5\.01 GiB.*train LoRA adapters \(model\.lora\)/);
    const trainable = adapterParamCount(smol, loraConfigSchema.parse({ rank: 8 }));
    assert.equal(trainable, 2442240);
    assert.doesNotThrow(() => assertFits(smol, 16, undefined, { baseBytesPerParam: 2, trainable }));
    assert.throws(() => assertFits(smol, 64, undefined, { baseBytesPerParam: 4, trainable }), /even under LoRA.*baseDtype: bfloat16/);
  });
});

describe("torch engine: peft LoRA from the config, saved adapters and merged checkpoints", { skip: probe.ok ? false : `torch engine tests skipped: ${probe.ok ? "" : probe.reason}` }, () => {
  test("a target that is not one of the model's modules is refused at load, listing the modules", async (t) => {
    if (!peft) return t.skip("peft is not installed (rlvr setup torch --lora)");
    await assert.rejects(
      TorchEngine.fromPretrained(base, { ...quiet, lora: loraConfigSchema.parse({ targets: ["q_proj", "qkv"] }) }),
      /config error at model\.lora\.targets: 'qkv' not a module of this model; its linear modules: down_proj, gate_proj, k_proj, o_proj, q_proj, up_proj, v_proj/,
    );
  });

  test("adapter dir and merged/ both open through model.path; the merged log-probs equal the adapter's (≤ 1e-5)", async (t) => {
    if (!peft) return t.skip("peft is not installed (rlvr setup torch --lora)");
    const lora = loraConfigSchema.parse({ rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "down_proj"], saveMerged: true });
    const e = await TorchEngine.fromPretrained(base, { ...quiet, lora });
    const b = batch();
    const n = b.batchSize * b.seqLen;
    const dir = join(tmp, "torch-adapter");
    let trained: Float32Array;
    let untrained: Float32Array;
    try {
      untrained = (await e.score(b, { model: "policy" })).logprobs;
      for (let i = 0; i < 2; i++) {
        await e.forwardBackward(b, ones(n));
        await e.optimStep({ lr: 5e-2 });
      }
      trained = (await e.score(b, { model: "policy" })).logprobs;
      await e.save(dir);
      // A saved adapter as the reference (how a resumed run gets its reference back).
      await e.forwardBackward(b, ones(n));
      await e.optimStep({ lr: 5e-2 });
      await e.setReference({ dir });
      assert.ok(maxAbsDiff((await e.score(b, { model: "reference" })).logprobs, trained) <= 1e-6, "reference = the saved adapter");
      assert.ok(maxAbsDiff((await e.score(b, { model: "policy" })).logprobs, trained) > 1e-4, "the policy kept its own adapter");
    } finally {
      await e.close();
    }
    const files = await readdir(dir);
    for (const f of ["adapter_config.json", "adapter_model.safetensors", "merged"]) assert.ok(files.includes(f), `${f} written`);
    assert.ok(!files.includes("model.safetensors"), "no full copy of the base beside the adapter");
    const info = readAdapterInfo(dir)!;
    assert.equal(info.base, base);
    assert.deepEqual(info.lora.targets, ["down_proj", "q_proj", "v_proj"]);
    assert.equal(JSON.parse(await readFile(join(dir, "adapter_config.json"), "utf8")).r, 4);
    assert.ok(maxAbsDiff(trained, untrained) > 1e-3, "the adapter trained");
    for (const [what, path, opts] of [
      ["adapter dir (base + its adapter)", dir, {}],
      ["merged/", join(dir, "merged"), {}],
    ] as const) {
      const r = await TorchEngine.fromPretrained(path, { ...quiet, ...opts });
      try {
        const d = maxAbsDiff((await r.score(b, { model: "policy" })).logprobs, trained);
        assert.ok(d <= 1e-5, `${what}: log-probs differ by ${d}`);
      } finally {
        await r.close();
      }
    }
    await assert.rejects(TorchEngine.fromPretrained(dir, { ...quiet, lora: { ...lora, rank: 8 } }), /config error at model\.lora: the adapter at .* has rank 4, alpha 8 on down_proj, q_proj, v_proj; model\.lora asks for rank 8/);
  });

  test("lora.dropout applies in training forwards only (scoring and sampling run without it)", async (t) => {
    if (!peft) return t.skip("peft is not installed (rlvr setup torch --lora)");
    const e = await TorchEngine.fromPretrained(base, { ...quiet, lora: loraConfigSchema.parse({ rank: 4, dropout: 0.5 }) });
    try {
      const b = batch();
      const n = b.batchSize * b.seqLen;
      await e.forwardBackward(b, ones(n));
      await e.optimStep({ lr: 5e-2 }); // B ≠ 0: dropout on the adapters' input now shows
      const s1 = (await e.score(b, { model: "policy" })).logprobs;
      assert.deepEqual((await e.score(b, { model: "policy" })).logprobs, s1, "scoring is deterministic");
      let seen: Float32Array | null = null;
      await e.forwardBackward(b, (scores, bb) => {
        seen = scores.logprobs;
        return ones(n)(scores, bb);
      });
      assert.ok(maxAbsDiff(seen!, s1) > 1e-6, "the training forward ran with dropout");
    } finally {
      await e.close();
    }
  });
});

/** GRPO-shaped: two groups of two rows, each group sharing its first 5 tokens (the embedded engine's shared-prefix pass). */
function groupBatch(): TokenBatch {
  const T = 9;
  const rows = [
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 5, 10, 11, 12, 0],
    [13, 14, 15, 16, 17, 18, 2, 0, 0],
    [13, 14, 15, 16, 17, 3, 4, 5, 6],
  ];
  const lengths = Int32Array.from([9, 8, 7, 9]);
  const lossMask = new Float32Array(4 * T);
  rows.forEach((_, b) => {
    for (let t = 5; t < lengths[b]!; t++) lossMask[b * T + t] = 1;
  });
  return { batchSize: 4, seqLen: T, tokens: Int32Array.from(rows.flat()), lengths, lossMask };
}

describe("embedded engine: LoRA on a frozen base", () => {
  const lora = loraConfigSchema.parse({ rank: 4, alpha: 8, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], saveMerged: true, baseDtype: "float32" });

  test("starts at the base; only adapters train; one pass = row chunks = shared-prefix pass; adapter and merged/ reopen with the same log-probs", async () => {
    const plain = await EmbeddedEngine.fromPretrained(base, {});
    const e = await EmbeddedEngine.fromPretrained(base, { lora, seed: 5 });
    const chunked = await EmbeddedEngine.fromPretrained(base, { lora, seed: 5, maxPassRows: 1, sharedPrefix: false });
    const b = groupBatch();
    const n = b.batchSize * b.seqLen;
    try {
      assert.equal(maxAbsDiff((await e.score(b, { model: "policy" })).logprobs, (await plain.score(b, { model: "policy" })).logprobs), 0, "B = 0: the adapted model is the base");
      assert.equal(e.info().numParams, 2 * 4 * (32 + 24 + 24 + 32 + 40 + 40 + 40), "trainable = adapter parameters");
      await e.setReference("policy");
      const c = new Float32Array(n).map((_, i) => Math.sin(i));
      for (const x of [e, chunked]) {
        await x.forwardBackward(b, linearLoss(c, new Float32Array(n)).fn);
        await x.optimStep({ lr: 5e-2 });
        await x.forwardBackward(b, linearLoss(c, new Float32Array(n)).fn);
      }
      for (const name of ["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", "base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"]) {
        const g1 = (await e.getGrad(name))!;
        const g2 = (await chunked.getGrad(name))!;
        assert.ok(maxAbsDiff(g1, g2) < 1e-5 * (1 + Math.max(...g2.map(Math.abs))), `${name}: one shared-prefix pass vs row chunks`);
        assert.ok(Math.max(...g1.map(Math.abs)) > 1e-4, `${name} has a gradient`);
      }
      assert.equal(await e.getGrad("model.layers.0.self_attn.q_proj.weight").catch(() => null), null, "no gradient kept for the base");
      await e.optimStep({ lr: 5e-2 });
      const trained = (await e.score(b, { model: "policy" })).logprobs;
      assert.ok(maxAbsDiff(trained, (await plain.score(b, { model: "policy" })).logprobs) > 1e-3, "the adapters trained");
      assert.equal(maxAbsDiff((await e.score(b, { model: "reference" })).logprobs, (await plain.score(b, { model: "policy" })).logprobs), 0, "reference = base");
      assert.deepEqual(await e.getWeight("model.layers.1.mlp.up_proj.weight"), await plain.getWeight("model.layers.1.mlp.up_proj.weight"), "base frozen");
      const dir = join(tmp, "embedded-adapter");
      await e.save(dir, { optimizer: true });
      assert.deepEqual((await readdir(dir)).sort(), ["adapter_config.json", "adapter_model.safetensors", "merged", "optimizer.safetensors"]);
      for (const path of [dir, join(dir, "merged")]) {
        const r = await EmbeddedEngine.fromPretrained(path, {});
        const d = maxAbsDiff((await r.score(b, { model: "policy" })).logprobs, trained);
        await r.close();
        assert.ok(d <= 1e-5, `${path}: log-probs differ by ${d}`);
      }
    } finally {
      await Promise.all([plain.close(), e.close(), chunked.close()]);
    }
  });

  test("a packed-bfloat16 base scores within bfloat16 rounding of the float32 base; unknown targets and dropout are refused", async () => {
    const b = groupBatch();
    const f32 = await EmbeddedEngine.fromPretrained(base, { lora });
    const bf = await EmbeddedEngine.fromPretrained(base, { lora: { ...lora, baseDtype: "bfloat16" } });
    try {
      assert.match(bf.info().dtype, /bfloat16/);
      const d = maxAbsDiff((await bf.score(b, { model: "policy" })).logprobs, (await f32.score(b, { model: "policy" })).logprobs);
      assert.ok(d > 0 && d < 0.25, `bfloat16 vs float32 base: ${d}`);
      const w = await bf.getWeight("model.layers.0.mlp.gate_proj.weight");
      const w32 = await f32.getWeight("model.layers.0.mlp.gate_proj.weight");
      w.forEach((x, i) => assert.ok(Math.abs(x - w32[i]!) <= Math.abs(w32[i]!) * 2 ** -8, "round to nearest bfloat16"));
    } finally {
      await Promise.all([f32.close(), bf.close()]);
    }
    await assert.rejects(EmbeddedEngine.fromPretrained(base, { lora: { ...lora, targets: ["q_proj", "c_attn"] } }), /config error at model\.lora\.targets: "c_attn" is not a module of this model; its linear modules: q_proj, k_proj/);
    await assert.rejects(EmbeddedEngine.fromPretrained(base, { lora: { ...lora, dropout: 0.1 } }), /model\.lora\.dropout/);
  });

  test("parity with peft (torch engine): same base and adapter → log-probs within 1e-4, the same gradient and AdamW update; adapters move both ways", async (t) => {
    if (!probe.ok || !peft) return t.skip("needs the torch engine with peft (rlvr setup torch --lora)");
    const b = groupBatch();
    const n = b.batchSize * b.seqLen;
    const c = new Float32Array(n).map((_, i) => Math.cos(i));
    // A trained adapter (B ≠ 0) from peft, opened by both engines.
    const tdir = join(tmp, "peft-adapter");
    const seedEngine = await TorchEngine.fromPretrained(base, { ...quiet, lora });
    await seedEngine.forwardBackward(b, linearLoss(c, new Float32Array(n)).fn);
    await seedEngine.optimStep({ lr: 5e-2 });
    await seedEngine.save(tdir);
    await seedEngine.close();
    const tor = await TorchEngine.fromPretrained(tdir, quiet);
    const emb = await EmbeddedEngine.fromPretrained(tdir, { lora });
    try {
      const lt = (await tor.score(b, { model: "policy", entropy: true }));
      const le = (await emb.score(b, { model: "policy", entropy: true }));
      assert.ok(maxAbsDiff(le.logprobs, lt.logprobs) <= 1e-4, `log-probs ${maxAbsDiff(le.logprobs, lt.logprobs)}`);
      assert.ok(maxAbsDiff(le.entropy!, lt.entropy!) <= 1e-4, `entropies ${maxAbsDiff(le.entropy!, lt.entropy!)}`);
      for (const x of [tor, emb]) await x.forwardBackward(b, linearLoss(c, new Float32Array(n)).fn);
      for (const name of ["model.layers.0.self_attn.q_proj", "model.layers.1.self_attn.o_proj", "model.layers.0.mlp.down_proj"]) {
        for (const w of ["A", "B"]) {
          const ge = (await emb.getGrad(`base_model.model.${name}.lora_${w}.weight`))!;
          const gt = (await tor.getGrad(`base_model.model.${name}.lora_${w}.default.weight`))!;
          const scale = 1 + Math.max(...gt.map(Math.abs));
          assert.ok(maxAbsDiff(ge, gt) <= 1e-4 * scale, `${name} lora_${w} gradient differs by ${maxAbsDiff(ge, gt)}`);
        }
      }
      for (const x of [tor, emb]) await x.optimStep({ lr: 1e-2, weightDecay: 0.01 });
      const name = "model.layers.1.mlp.gate_proj";
      const we = await emb.getWeight(`base_model.model.${name}.lora_B.weight`);
      const wt = await tor.getWeight(`base_model.model.${name}.lora_B.default.weight`);
      assert.ok(maxAbsDiff(we, wt) <= 1e-5, `updated lora_B differs by ${maxAbsDiff(we, wt)}`);
      const after = (await emb.score(b, { model: "policy" })).logprobs;
      assert.ok(maxAbsDiff(after, (await tor.score(b, { model: "policy" })).logprobs) <= 1e-4, "log-probs after the update");
      // The embedded engine's adapter, opened by the torch engine.
      const edir = join(tmp, "embedded-to-torch");
      await emb.save(edir);
      const back = await TorchEngine.fromPretrained(edir, quiet);
      try {
        assert.ok(maxAbsDiff((await back.score(b, { model: "policy" })).logprobs, after) <= 1e-4, "torch opens the embedded adapter");
      } finally {
        await back.close();
      }
    } finally {
      await Promise.all([tor.close(), emb.close()]);
    }
  });
});
