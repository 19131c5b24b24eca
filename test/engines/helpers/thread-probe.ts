/**
 * Child process for test/engines/embedded-threads.test.ts and the thread benchmark: runs a fixed
 * workload on the embedded engine and prints one JSON line with its results and jax-js's thread
 * setup. The number of threads comes from RLVR_THREADS (read when the engine module loads).
 * Usage: node --import tsx thread-probe.ts [results|bench]
 */
import { EmbeddedEngine } from "../../../src/engines/embedded/engine.ts";
import { jaxThreads, wasmDispatch } from "../../../src/engines/embedded/runtime.ts";
import { hfParamNames } from "../../../src/engines/embedded/hf-config.ts";
import { tinyLlama, randomBatch, randomHfWeights, linearLoss, Rng } from "./tiny.ts";

const mode = process.argv[2] ?? "results";

if (mode === "results") {
  // Wide enough that kernels exceed jax-js's 512-elements-per-thread minimum and really split.
  const cfg = tinyLlama({ vocabSize: 40, hiddenSize: 64, intermediateSize: 96, headDim: 16 });
  const engine = await EmbeddedEngine.create(cfg);
  for (const [name, data] of randomHfWeights(hfParamNames(cfg), new Rng(1), 0.2)) engine.setWeight(name, Float32Array.from(data));
  const rng = new Rng(2);
  const batch = randomBatch(rng, cfg.vocabSize, [12, 7, 16, 3], { promptLen: 2 });
  const c = new Float32Array(batch.tokens.length).map(() => rng.normal());
  const scores = await engine.score(batch, { model: "policy", entropy: true });
  await engine.forwardBackward(batch, linearLoss(c, c).fn, { entropy: true });
  const grads: Record<string, number[]> = {};
  for (const name of engine.weightNames()) grads[name] = Array.from((await engine.getGrad(name))!);
  const { gradNorm } = await engine.optimStep({ lr: 1e-2, maxGradNorm: 1 });
  const samples = await engine.sample({ prompts: [Int32Array.from([1, 2, 3]), Int32Array.from([4])], n: 3, maxNewTokens: 8, temperature: 1, seed: 5 });
  const after = await engine.score(batch, { model: "policy" });
  console.log(
    JSON.stringify({
      threads: jaxThreads(),
      dispatch: wasmDispatch(),
      logprobs: Array.from(scores.logprobs),
      entropy: Array.from(scores.entropy!),
      grads,
      gradNorm,
      samples: samples.map((s) => ({ tokens: Array.from(s.tokens), logprobs: Array.from(s.logprobs) })),
      after: Array.from(after.logprobs),
    }),
  );
} else {
  // ~1M parameters: vocab 64, hidden 128, 4 layers, MLP 512; batch 16 × 64 tokens.
  const cfg = tinyLlama({ vocabSize: 64, hiddenSize: 128, intermediateSize: 512, numLayers: 4, numHeads: 4, numKvHeads: 4, headDim: 32, maxPositionEmbeddings: 128 });
  const engine = await EmbeddedEngine.create(cfg, { seed: 1 });
  const rng = new Rng(3);
  const batch = randomBatch(rng, cfg.vocabSize, Array.from({ length: 16 }, () => 64), { promptLen: 8 });
  const c = new Float32Array(batch.tokens.length).map(() => rng.normal() * 0.01);
  const loss = linearLoss(c, c).fn;
  await engine.forwardBackward(batch, loss, { entropy: true }); // compile
  await engine.optimStep({ lr: 1e-4 });
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await engine.forwardBackward(batch, loss, { entropy: true });
    times.push(performance.now() - t);
    engine.zeroGrad();
  }
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - wall0;
  times.sort((a, b) => a - b);
  // Sampling: 32 prompts × 32 new tokens with the KV cache (small kernels: dispatch overhead).
  const prompts = Array.from({ length: 32 }, (_, i) => batch.tokens.slice((i % 16) * 64, (i % 16) * 64 + 8));
  await engine.sample({ prompts, n: 1, maxNewTokens: 32, temperature: 1, seed: 0 }); // compile
  const s0 = performance.now();
  await engine.sample({ prompts, n: 1, maxNewTokens: 32, temperature: 1, seed: 1 });
  const sampleMs = performance.now() - s0;
  console.log(
    JSON.stringify({
      threads: jaxThreads(),
      params: engine.info().numParams,
      medianMs: times[2],
      minMs: times[0],
      cpuPerWall: (cpu.user + cpu.system) / 1000 / wall,
      sampleMs,
    }),
  );
}
