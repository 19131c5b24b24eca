/**
 * Embedded engine LoRA on the output head (target "lm_head") and several LoRA engines on one
 * shared frozen base (EmbeddedEngine.shareBase, the multi-tenant LoRA of `rlvr tinker`).
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hfParamNames, toHfConfig } from "../../src/engines/embedded/hf-config.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { adapterTensorName, loraConfigSchema } from "../../src/engines/lora.ts";
import { tinyLlama, tinyQwen2, randomBatch, randomHfWeights, linearLoss, writeHfCheckpoint, maxAbsDiff, Rng } from "./helpers/tiny.ts";

const CFG = tinyLlama({ vocabSize: 19, hiddenSize: 16, intermediateSize: 24, numHeads: 4, numKvHeads: 2, headDim: 4 });
const lora = (targets: string[], rank = 4) => loraConfigSchema.parse({ rank, targets, baseDtype: "float32" });
const batch = () => randomBatch(new Rng(11), CFG.vocabSize, [9, 6, 8], { promptLen: 2, extraPad: 1 });
const loss = (n: number) => linearLoss(Float32Array.from({ length: n }, (_, i) => ((i * 7) % 5) - 2), new Float32Array(n)).fn;
const lp = async (e: EmbeddedEngine) => (await e.score(batch(), { model: "policy" })).logprobs;
async function train(e: EmbeddedEngine, steps: number): Promise<void> {
  for (let s = 0; s < steps; s++) {
    await e.forwardBackward(batch(), loss(batch().tokens.length));
    await e.optimStep({ lr: 1e-2 });
  }
}

let tmp: string;
let base: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-lora-shared-"));
  base = join(tmp, "base");
  const specs = hfParamNames(CFG);
  await writeHfCheckpoint(base, toHfConfig(CFG), randomHfWeights(specs, new Rng(3), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("LoRA on the output head (lm_head)", () => {
  test("the adapter's logits equal the merged checkpoint's (≤ 1e-5), and training moves the head's B", async () => {
    const e = await EmbeddedEngine.fromPretrained(base, { lora: { ...lora(["q_proj", "lm_head"]), saveMerged: true } });
    const B = adapterTensorName(-1, "lm_head", "B");
    assert.equal(B, "base_model.model.lm_head.lora_B.weight");
    const rng = new Rng(5);
    e.setWeight(B, Float32Array.from({ length: CFG.vocabSize * 4 }, () => 0.3 * rng.normal()));
    const dir = join(tmp, "head");
    await e.save(dir);
    const merged = await EmbeddedEngine.fromPretrained(join(dir, "merged"));
    assert.ok(maxAbsDiff(await lp(e), await lp(merged)) < 1e-5);
    const plain = await EmbeddedEngine.fromPretrained(base);
    assert.ok(maxAbsDiff(await lp(e), await lp(plain)) > 1e-3, "the head adapter changes the logits");
    const before = await e.getWeight(B);
    await train(e, 1);
    assert.ok(maxAbsDiff(before, await e.getWeight(B)) > 1e-6);
    await Promise.all([e.close(), merged.close(), plain.close()]);
  });
});

test("a head adapter on tied embeddings (Qwen2-style) trains; merging it is refused by name", async () => {
  const e = await EmbeddedEngine.create(tinyQwen2({ vocabSize: 19 }), { seed: 3, lora: { ...lora(["q_proj", "lm_head"]), saveMerged: true } });
  const B = adapterTensorName(-1, "lm_head", "B");
  const before = await lp(e);
  await train(e, 2);
  assert.ok(maxAbsDiff(new Float32Array(19 * 4), await e.getWeight(B)) > 1e-6, "the head's B moved");
  assert.ok(maxAbsDiff(before, await lp(e)) > 1e-4);
  await assert.rejects(e.save(join(tmp, "tied")), /lm_head adapter on a model with tied embeddings cannot be merged/);
  await e.close();
});

describe("shareBase: several LoRA engines on one frozen base", () => {
  test("training one leaves the other's log-probs unchanged; each trains as if alone; closing one keeps the other", async () => {
    const first = await EmbeddedEngine.fromPretrained(base, { lora: lora(["q_proj", "v_proj", "down_proj", "lm_head"]), seed: 1 });
    const a = first.shareBase({ lora: lora(["q_proj", "gate_proj"], 2), seed: 2 });
    const b = first.shareBase({ lora: lora(["q_proj", "gate_proj"], 2), seed: 2 });
    const b0 = await lp(b);
    await train(a, 3);
    assert.ok(maxAbsDiff(b0, await lp(a)) > 1e-3, "a trained");
    assert.equal(maxAbsDiff(b0, await lp(b)), 0, "b untouched by a's steps");
    // b interleaved with a and first, against a fresh engine with b's seed trained alone.
    for (let s = 0; s < 2; s++) {
      await train(b, 1);
      await train(a, 1);
      await train(first, 1);
    }
    await a.close();
    await first.close();
    const alone = (await EmbeddedEngine.fromPretrained(base, { lora: lora(["q_proj", "gate_proj"], 2), seed: 2 }));
    await train(alone, 2);
    assert.ok(maxAbsDiff(await lp(b), await lp(alone)) < 1e-6, "b (shared base, interleaved) equals b trained alone");
    // A base-only view for scoring (a KL reference): the base's log-probs; it does not train.
    const ref = alone.shareBase();
    const plain = await EmbeddedEngine.fromPretrained(base);
    assert.ok(maxAbsDiff(await lp(ref), await lp(plain)) < 1e-6);
    await assert.rejects(ref.forwardBackward(batch(), loss(batch().tokens.length)), /shared with other engines/);
    await Promise.all([b.close(), alone.close(), ref.close(), plain.close()]);
  });

  test("an engine that trains every weight has no base to share", async () => {
    const full = await EmbeddedEngine.fromPretrained(base);
    assert.throws(() => full.shareBase({ lora: lora(["q_proj"]) }), /trains every weight/);
    await full.close();
  });
});

describe("LoRA sampling on merged weights (engine.ts samplingParams)", () => {
  const all = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"];
  for (const baseDtype of ["float32", "bfloat16"] as const) {
    test(`${baseDtype} base: the same tokens for a seed and log-probs within 1e-5 of sampling through the adapters`, async () => {
      const cfg = { lora: loraConfigSchema.parse({ rank: 4, alpha: 8, targets: all, baseDtype }) };
      const fast = await EmbeddedEngine.fromPretrained(base, cfg);
      const plain = await EmbeddedEngine.fromPretrained(base, { ...cfg, mergedSampling: false });
      try {
        // Non-zero adapters (B starts at 0, where merging is exact): the same random B's in both engines.
        const rng = new Rng(17);
        for (const name of fast.weightNames().filter((n) => n.endsWith("lora_B.weight"))) {
          const data = Float32Array.from({ length: (await fast.getWeight(name)).length }, () => 0.2 * rng.normal());
          fast.setWeight(name, data);
          plain.setWeight(name, data);
        }
        const req = { prompts: [Int32Array.from([1, 5, 7]), Int32Array.from([2, 3, 4, 9, 11])], n: 3, maxNewTokens: 10, temperature: 1, seed: 9, stopTokens: [] };
        const a = await fast.sample(req);
        const b = await plain.sample(req);
        assert.deepEqual(a.map((r) => [...r.tokens]), b.map((r) => [...r.tokens]));
        let worst = 0;
        a.forEach((r, i) => r.logprobs.forEach((x, j) => (worst = Math.max(worst, Math.abs(x - b[i]!.logprobs[j]!)))));
        assert.ok(worst > 0 || baseDtype === "float32", "bfloat16: merging in float32 changes the rounding (the test compares two different paths)");
        assert.ok(worst < 1e-5, `max |Δ log-prob| ${worst}`);
        const base0 = await EmbeddedEngine.fromPretrained(base, {});
        const c = await base0.sample(req);
        await base0.close();
        assert.notDeepEqual(a.map((r) => [...r.logprobs]), c.map((r) => [...r.logprobs]), "the adapters change what is sampled");
      } finally {
        await Promise.all([fast.close(), plain.close()]);
      }
    });
  }
});
