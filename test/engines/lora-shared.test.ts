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
