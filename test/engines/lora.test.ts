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
import { hfParamNames, toHfConfig } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { loraConfigSchema, readAdapterInfo } from "../../src/engines/lora.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
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
  if (probe.ok) {
    const e = await TorchEngine.fromPretrained(base, quiet);
    peft = e.versions.peft;
    await e.close();
  }
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
    assert.deepEqual(m.lora, { rank: 16, alpha: 32, dropout: 0, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], saveMerged: false });
  });
  test("unknown fields and bad values are errors naming the field", () => {
    assert.throws(() => run({ rank: 0 }), /model\.lora\.rank/);
    assert.throws(() => run({ r: 8 }), /model\.lora/);
    assert.throws(() => run({ dropout: 1 }), /model\.lora\.dropout/);
    assert.throws(() => run({ targets: [] }), /model\.lora\.targets/);
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
    try {
      for (let i = 0; i < 2; i++) {
        await e.forwardBackward(b, ones(n));
        await e.optimStep({ lr: 5e-2 });
      }
      trained = (await e.score(b, { model: "policy" })).logprobs;
      await e.save(dir);
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
    const untrained = (await (async () => {
      const b0 = await TorchEngine.fromPretrained(base, quiet);
      try {
        return (await b0.score(b, { model: "policy" })).logprobs;
      } finally {
        await b0.close();
      }
    })());
    assert.ok(maxAbsDiff(trained, untrained) > 1e-3, "the adapter trained");
    for (const [what, path, opts] of [
      ["adapter dir (base + adapter, merged on load)", dir, {}],
      ["adapter dir under model.lora (trainable adapter)", dir, { lora }],
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
    await assert.rejects(TorchEngine.fromPretrained(dir, { ...quiet, lora: { ...lora, rank: 8 } }), /the adapter at .* has rank 4/);
  });
});
