/**
 * Several LoRA engines on one torch worker (TorchEngine.shareBase, the multi-tenant LoRA of
 * `rlvr tinker --engine torch`): one process holds the base once and a named peft adapter per
 * engine. Mirrors test/engines/lora-shared.test.ts (the embedded engine's shareBase) on a tiny
 * random Llama checkpoint written here. Needs the torch worker with peft; skipped without it.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hfParamNames, toHfConfig } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { tinyLlama, randomBatch, randomHfWeights, linearLoss, writeHfCheckpoint, maxAbsDiff, Rng } from "./helpers/tiny.ts";

const probe = TorchEngine.probe();
const SKIP = probe.ok ? false : `torch engine tests skipped: ${probe.reason}`;

const CFG = tinyLlama({ vocabSize: 19, hiddenSize: 16, intermediateSize: 24, numHeads: 4, numKvHeads: 2, headDim: 4 });
const lora = (targets: string[], rank = 4) => loraConfigSchema.parse({ rank, alpha: 8, targets });
const OPTS = { device: "cpu", threads: 1, onStderr: () => {} };
const batch = () => randomBatch(new Rng(11), CFG.vocabSize, [9, 6, 8], { promptLen: 2, extraPad: 1 });
const loss = (n: number) => linearLoss(Float32Array.from({ length: n }, (_, i) => ((i * 7) % 5) - 2), new Float32Array(n)).fn;
const lp = async (e: TorchEngine) => (await e.score(batch(), { model: "policy" })).logprobs;
const fb = (e: TorchEngine) => e.forwardBackward(batch(), loss(batch().tokens.length));
const step = (e: TorchEngine) => e.optimStep({ lr: 1e-2 });
async function train(e: TorchEngine, steps: number): Promise<void> {
  for (let s = 0; s < steps; s++) {
    await fb(e);
    await step(e);
  }
}
const greedy = async (e: TorchEngine) => (await e.sample({ prompts: [Int32Array.from([1, 2, 3]), Int32Array.from([4, 5])], n: 2, maxNewTokens: 5, temperature: 0, seed: 1 })).map((o) => Array.from(o.tokens));

let tmp: string;
let base: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-torch-shared-"));
  base = join(tmp, "base");
  const specs = hfParamNames(CFG);
  await writeHfCheckpoint(base, toHfConfig(CFG), randomHfWeights(specs, new Rng(3), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("TorchEngine.shareBase: several LoRA engines on one worker", { skip: SKIP }, () => {
  test("adapters kept apart (bit-identical), interleaved = alone, base view = base model, adapters saved and loaded on demand, close releases", async () => {
    const first = await TorchEngine.fromPretrained(base, { ...OPTS, lora: lora(["q_proj", "v_proj", "down_proj", "lm_head"]), seed: 1 });
    const a = await first.shareBase({ lora: lora(["q_proj", "gate_proj"], 2), seed: 2 });
    const b = await first.shareBase({ lora: lora(["q_proj", "gate_proj"], 2), seed: 2 });
    assert.equal(first.workerPid, b.workerPid, "one worker process");
    assert.equal(first.workerTenants, 3);
    assert.equal(b.info().numParams, a.info().numParams);
    assert.ok(b.info().numParams < first.info().numParams, "each engine counts its own adapter");
    const b0 = await lp(b);
    assert.equal(maxAbsDiff(b0, await lp(a)), 0, "same seed, same initial adapter");
    await train(a, 3);
    assert.ok(maxAbsDiff(b0, await lp(a)) > 1e-3, "a trained");
    assert.equal(maxAbsDiff(b0, await lp(b)), 0, "b bit-identical after a's steps");

    // Interleaved at the call level: each engine's gradients accumulate while the others run forwards, backwards and steps.
    for (let s = 0; s < 2; s++) {
      await fb(b);
      await fb(a);
      await fb(first);
      await step(b);
      await step(a);
      await step(first);
    }
    await a.close();
    await first.close();
    assert.equal(b.workerTenants, 1);
    assert.ok(b.alive, "the worker stays while an engine is open on it");
    await assert.rejects(lp(a), /closed/);

    // b against a plain engine (its own worker) with b's adapter settings and seed, trained alone.
    const alone = await TorchEngine.fromPretrained(base, { ...OPTS, lora: lora(["q_proj", "gate_proj"], 2), seed: 2 });
    await train(alone, 2);
    const d = maxAbsDiff(await lp(b), await lp(alone));
    console.log(`# b (shared, interleaved) vs alone: max |Δ logprob| = ${d}`);
    assert.ok(d < 1e-6, `b (shared base, interleaved) equals b trained alone; differ by ${d}`);
    assert.deepEqual(await greedy(b), await greedy(alone), "sampling with b's adapter (merged while sampling, the other adapters untouched)");

    // A base-model view (a KL reference): the base's log-probs and samples; it does not train.
    const ref = await b.shareBase();
    const plain = await TorchEngine.fromPretrained(base, OPTS);
    const baseLp = await lp(plain);
    assert.ok(maxAbsDiff(await lp(ref), baseLp) < 1e-6);
    assert.deepEqual(await greedy(ref), await greedy(plain));
    assert.equal(ref.info().numParams, 0);
    await assert.rejects(fb(ref), /shared with other engines/);
    await assert.rejects(plain.shareBase({ lora: lora(["q_proj"]) }), /trains every weight/);
    await plain.close();

    // A saved adapter (with AdamW state) loaded as another adapter on demand: same log-probs, same next step.
    const saved = join(tmp, "b-saved");
    await b.save(saved, { optimizer: true });
    const c = await ref.shareBase({ lora: lora(["q_proj", "gate_proj"], 2), seed: 9 });
    await c.load(saved);
    assert.equal(maxAbsDiff(await lp(c), await lp(b)), 0, "c holds b's adapter");
    await train(c, 1);
    await train(b, 1);
    assert.equal(maxAbsDiff(await lp(c), await lp(b)), 0, "c resumed b's AdamW state");
    await assert.rejects(ref.shareBase({ lora: lora(["nope"]) }), /model\.lora\.targets/);

    await Promise.all([b.close(), c.close(), alone.close()]);
    assert.ok(ref.alive);
    // Every adapter deleted: the base view still scores the base, and a new adapter starts from B = 0.
    assert.ok(maxAbsDiff(await lp(ref), baseLp) < 1e-6);
    const d2 = await ref.shareBase({ lora: lora(["q_proj"]), seed: 3 });
    assert.ok(maxAbsDiff(await lp(d2), baseLp) < 1e-6);
    await d2.close();
    await ref.close();
    assert.ok(!ref.alive, "the last engine closed the worker");
  });
});
