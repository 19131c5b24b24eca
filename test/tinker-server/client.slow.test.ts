// The TypeScript Tinker client (rlvr/tinker) against serveTinker on a tiny local model: the
// supervised loop's loss falls, the RL loop's reward rises (the loops of the SDK test, in
// TypeScript), forward agrees with computeLogprobs, save/load state round-trips, and a bad
// request comes back as a TinkerRequestError with category "user".
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveTinker, ServiceClient, TinkerRequestError, type Datum, type TinkerServer } from "../../src/api/tinker.ts";
import { writeTinyModel } from "../tinker/fixture.ts";

const ALPHABET = "0123456789+= abc";
const EOS = 2;
const enc = (s: string) => Array.from(s, (c) => 4 + ALPHABET.indexOf(c));

function sftDatum(prompt: string, completion: string): Datum {
  const tokens = [...enc(prompt), ...enc(completion), EOS];
  const weights = [...enc(prompt).map(() => 0), ...enc(completion).map(() => 1), 1];
  return { modelInput: tokens.slice(0, -1), lossFnInputs: { target_tokens: tokens.slice(1), weights: weights.slice(1) } };
}

describe("TypeScript Tinker client against rlvr tinker", () => {
  let dir: string;
  let server: TinkerServer;
  let service: ServiceClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-client-"));
    await writeTinyModel(join(dir, "tiny"));
    server = await serveTinker({ port: 0, models: { tiny: join(dir, "tiny") }, dataDir: join(dir, "data"), log: () => {} });
    service = new ServiceClient({ baseUrl: server.url });
  });
  after(async () => {
    await service?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists the model", async () => assert.deepEqual(await service.getServerCapabilities(), [{ modelName: "tiny" }]));

  it("supervised loop: loss falls; forward = computeLogprobs; save/load state round trip", async () => {
    const tc = await service.createLoraTrainingClient({ baseModel: "tiny", rank: 8 });
    const data: Datum[] = [];
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) data.push(sftDatum(`${a}+${b}=`, String((a + b) % 10)));
    const losses: number[] = [];
    for (let step = 0; step < 10; step++) {
      const [fb] = await Promise.all([tc.forwardBackward(data, "cross_entropy"), tc.optimStep({ learningRate: 5e-3, eps: 1e-8 })]);
      losses.push(fb.metrics["loss:sum"]!);
    }
    assert.ok(losses.at(-1)! < losses[0]! * 0.75, `loss ${losses[0]} → ${losses.at(-1)}`);

    const fwd = await tc.forward(data.slice(0, 1), "cross_entropy");
    const sampler = await tc.saveWeightsAndGetSamplingClient();
    const d0 = data[0]!;
    const full = [...d0.modelInput, (d0.lossFnInputs["target_tokens"] as number[]).at(-1)!];
    const lp = await sampler.computeLogprobs(full);
    assert.equal(lp[0], null);
    Array.from(fwd.lossFnOutputs[0]!["logprobs"]!).forEach((v, i) => assert.ok(Math.abs(v - lp[i + 1]!) < 1e-5, `position ${i}: ${v} vs ${lp[i + 1]}`));

    const path = await tc.saveState("ts-state");
    const before = (await tc.forward(data, "cross_entropy")).metrics["loss:sum"]!;
    await tc.forwardBackward(data, "cross_entropy");
    await tc.optimStep({ learningRate: 5e-2 });
    assert.ok(Math.abs((await tc.forward(data, "cross_entropy")).metrics["loss:sum"]! - before) > 1e-3);
    await tc.loadState(path);
    assert.ok(Math.abs((await tc.forward(data, "cross_entropy")).metrics["loss:sum"]! - before) < 1e-5);
    const copy = await service.createTrainingClientFromState(path, { optimizer: true });
    assert.ok(Math.abs((await copy.forward(data, "cross_entropy")).metrics["loss:sum"]! - before) < 1e-5);
  });

  it("RL loop (importance_sampling): reward rises", async () => {
    const rl = await service.createLoraTrainingClient({ baseModel: "tiny", rank: 8 });
    const prompts = ["1+2=", "3+4=", "5+6=", "7+8="].map(enc);
    const target = enc("a")[0]!;
    const rewards: number[] = [];
    for (let step = 0; step < 10; step++) {
      const sampler = await rl.saveWeightsAndGetSamplingClient();
      const results = await Promise.all(prompts.map((p, i) => sampler.sample(p, 8, { maxTokens: 3, temperature: 1, seed: step * 10 + i })));
      const datums: Datum[] = [];
      let sum = 0;
      results.forEach((res, i) => {
        const prompt = prompts[i]!;
        const rs = res.sequences.map((s) => (s.tokens[0] === target ? 1 : 0));
        sum += rs.reduce((a: number, b) => a + b, 0);
        const mean = rs.reduce((a: number, b) => a + b, 0) / rs.length;
        res.sequences.forEach((s, k) => {
          const adv = rs[k]! - mean;
          if (adv === 0) return;
          const ob = prompt.length - 1;
          const input = [...prompt, ...s.tokens.slice(0, -1)];
          datums.push({ modelInput: input, lossFnInputs: { target_tokens: [...Array(ob).fill(0), ...s.tokens], logprobs: [...Array(ob).fill(0), ...s.logprobs!], advantages: [...Array(ob).fill(0), ...Array(input.length - ob).fill(adv)] } });
        });
      });
      rewards.push(sum / 32);
      if (datums.length) await Promise.all([rl.forwardBackward(datums, "importance_sampling"), rl.optimStep({ learningRate: 2e-2 })]);
    }
    const first = (rewards[0]! + rewards[1]!) / 2;
    const last = (rewards.at(-1)! + rewards.at(-2)!) / 2;
    assert.ok(last > first + 0.3, `reward ${rewards.join(", ")}`);
  });

  it("a bad request fails with TinkerRequestError, category user, naming the problem", async () => {
    const tc = await service.createLoraTrainingClient({ baseModel: "tiny", rank: 4 });
    await assert.rejects(tc.forwardBackward([{ modelInput: [5, 6], lossFnInputs: { target_tokens: [6, 7] } }], "ppo"), (e: unknown) => e instanceof TinkerRequestError && e.category === "user" && /loss_fn_inputs\.logprobs is required/.test(e.message));
    await assert.rejects(service.createLoraTrainingClient({ baseModel: "nope" }), (e: unknown) => e instanceof TinkerRequestError && /base_model: "nope"/.test(e.message));
  });
});
