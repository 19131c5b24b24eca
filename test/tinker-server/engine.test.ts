// TinkerEngine (rlvr's engine contract on a model held by a Tinker server) against the embedded
// engine on the same checkpoint with the LoRA adapters the server builds for rank 4 (engineLora:
// attention, MLP and head, alpha 32, the server's seed 0): scores, a linear loss's update, greedy
// samples, the reference model and save/load agree.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import { serveTinker, type TinkerServer } from "../../src/tinker/server.ts";
import { TinkerEngine } from "../../src/tinker/engine.ts";
import { engineLora } from "../../src/tinker/state.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { openEngine } from "../../src/engines/open.ts";
import { Rng } from "../../src/util/rng.ts";
import { writeTinyModel } from "../tinker/fixture.ts";
import { linearLoss, randomBatch } from "../engines/helpers/tiny.ts";

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

describe("TinkerEngine vs EmbeddedEngine (same checkpoint)", () => {
  let dir: string;
  let server: TinkerServer;
  let local: EmbeddedEngine;
  let remote: TinkerEngine;
  const batch = randomBatch(new Rng(3), 20, [6, 4, 5], { promptLen: 2 });
  const step = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
  const loss = linearLoss(Float32Array.from({ length: batch.tokens.length }, (_, i) => ((i * 7) % 5) - 2), new Float32Array(batch.tokens.length));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-engine-"));
    await writeTinyModel(join(dir, "tiny"));
    const tokenizer = await loadTokenizer(join(dir, "tiny"));
    local = await EmbeddedEngine.fromPretrained(join(dir, "tiny"), { tokenizer, seed: 0, lora: engineLora({ rank: 4 }) });
    server = await serveTinker({ port: 0, models: { tiny: join(dir, "tiny") }, dataDir: join(dir, "data"), log: () => {} });
    remote = await TinkerEngine.open({ baseUrl: server.url, baseModel: "tiny", rank: 4, vocabSize: tokenizer.vocabSize, maxSeqLen: 64 });
  });
  after(async () => {
    await remote?.close();
    await local?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("score, then a linear loss's forwardBackward + optimStep, then score again agree", async () => {
    const opts = { model: "policy" as const };
    assert.ok(maxDiff((await remote.score(batch, opts)).logprobs, (await local.score(batch, opts)).logprobs) < 1e-5);
    const [a, b] = [await remote.forwardBackward(batch, loss.fn), await local.forwardBackward(batch, loss.fn)];
    assert.ok(Math.abs(a.loss - b.loss) < 1e-4 && a.tokens === b.tokens);
    const [ga, gb] = [await remote.optimStep(step), await local.optimStep(step)];
    assert.ok(Math.abs(ga.gradNorm - gb.gradNorm) < 1e-3 * gb.gradNorm, `grad norm ${ga.gradNorm} vs ${gb.gradNorm}`);
    assert.ok(maxDiff((await remote.score(batch, opts)).logprobs, (await local.score(batch, opts)).logprobs) < 1e-4);
  });

  it("greedy samples after the update are the same tokens", async () => {
    const req = { prompts: [Int32Array.from([5, 6]), Int32Array.from([7])], n: 2, maxNewTokens: 4, temperature: 0, seed: 1 };
    const [a, b] = [await remote.sample(req), await local.sample(req)];
    assert.deepEqual(a.map((r) => [r.promptIndex, Array.from(r.tokens)]), b.map((r) => [r.promptIndex, Array.from(r.tokens)]));
  });

  it("setReference keeps the weights of that moment; save/load restores them", async () => {
    const before = (await remote.score(batch, { model: "policy" })).logprobs;
    await remote.setReference("policy");
    await remote.save(join(dir, "ckpt"), { optimizer: true });
    await remote.forwardBackward(batch, loss.fn);
    await remote.optimStep(step);
    assert.ok(maxDiff((await remote.score(batch, { model: "policy" })).logprobs, before) > 1e-3);
    assert.ok(maxDiff((await remote.score(batch, { model: "reference" })).logprobs, before) < 1e-6);
    await remote.load(join(dir, "ckpt"));
    assert.ok(maxDiff((await remote.score(batch, { model: "policy" })).logprobs, before) < 1e-6);
  });

  it("model.engine: tinker in a run config opens a TinkerEngine on the server (a fresh adapter scores as the base model)", async () => {
    const run = (model: Record<string, unknown>) => parseRunConfig({ model: { path: join(dir, "tiny"), ...model }, data: { task: "addition" } } as never);
    assert.throws(() => run({ engine: "tinker" }), /model\.tinker.*set both or neither/);
    assert.throws(() => run({ tinker: { baseUrl: server.url } }), /set both or neither/);
    assert.throws(() => run({ engine: "tinker", tinker: { baseUrl: server.url }, lora: {} }), /model\.tinker\.rank and drop model\.lora/);
    const cfg = run({ engine: "tinker", tinker: { baseUrl: server.url, baseModel: "tiny", rank: 2 } });
    const tokenizer = await loadTokenizer(join(dir, "tiny"));
    const [e, base] = [await openEngine(cfg.model, { tokenizer }), await EmbeddedEngine.fromPretrained(join(dir, "tiny"), { tokenizer })];
    try {
      assert.equal(e.info().engine, "tinker");
      assert.equal(e.info().maxSeqLen, 64);
      assert.ok(maxDiff((await e.score(batch, { model: "policy" })).logprobs, (await base.score(batch, { model: "policy" })).logprobs) < 1e-5);
    } finally {
      await e.close();
      await base.close();
    }
  });

  it("entropy is never returned (the protocol has none), even when asked", async () => {
    assert.equal((await remote.score(batch, { model: "policy", entropy: true })).entropy, undefined);
  });
});
