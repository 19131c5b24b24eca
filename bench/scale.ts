/**
 * `npm run bench -- scale`: the scale-out benchmark. This file measures the training half —
 * the step time of one GRPO update (score for old log-probs, forwardBackward with the TypeScript
 * policy loss, optimStep) on the torch engine in one process vs 2 ranks under torchrun (FSDP2
 * and DDP, gloo on CPU / nccl on GPU) — then the async half (bench/async.ts) and the vLLM half (bench/scale-vllm.ts: sampling
 * tokens/s with HF generate vs vLLM, weight-sync seconds) in a child process when it exists.
 *
 * Same tiny Qwen2-architecture checkpoint as scale-vllm (random weights, head_dim 64). Each
 * configuration is a fresh worker: one warm-up step, then BENCH_STEPS timed steps (median).
 * On CPU the one-process baseline gets as many torch threads as the 2 ranks together.
 * Environment: BENCH_SEQS (32), BENCH_LEN (64 tokens), BENCH_STEPS (3), BENCH_HIDDEN (256),
 * BENCH_LAYERS (4), BENCH_DEVICE (cpu | cuda; default cpu), BENCH_RANKS (2).
 * Prints one JSON object and a Markdown table.
 */
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { hfParamNames, toHfConfig } from "../src/engines/embedded/hf-config.ts";
import { TorchEngine, type TorchEngineOptions } from "../src/engines/torch/engine.ts";
import type { TokenBatch } from "../src/core/engine.ts";
import { grpoAdvantages, makePolicyLoss, resolveAlgorithm, stepCounts } from "../src/algorithms/index.ts";
import { tinyQwen2, randomBatch, randomHfWeights, writeHfCheckpoint, Rng } from "../test/engines/helpers/tiny.ts";

const env = (k: string, d: number) => Number(process.env[k] ?? d);
const SEQS = env("BENCH_SEQS", 32);
const LEN = env("BENCH_LEN", 64);
const STEPS = env("BENCH_STEPS", 3);
const H = env("BENCH_HIDDEN", 256);
const L = env("BENCH_LAYERS", 4);
const RANKS = env("BENCH_RANKS", 2);
const DEVICE = process.env.BENCH_DEVICE ?? "cpu";
const PROMPT = 16;

const probe = TorchEngine.probe();
if (!probe.ok) {
  console.error(`bench scale: ${probe.reason}`);
  process.exit(1);
}

const cfg = tinyQwen2({ vocabSize: 512, hiddenSize: H, intermediateSize: 3 * H, numLayers: L, numHeads: H / 64, numKvHeads: Math.max(1, H / 128), headDim: 64, maxPositionEmbeddings: 256 });
const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-scale-"));
const ckpt = join(dir, "tiny-qwen2");
const specs = hfParamNames(cfg);
await writeHfCheckpoint(ckpt, toHfConfig(cfg), randomHfWeights(specs, new Rng(3), 0.1), new Map(specs.map((s) => [s.name, s.shape])));

/** One step's batch: SEQS responses (groups of 8), lengths between LEN/2 and LEN, GRPO advantages. */
function stepBatch(seed: number): TokenBatch {
  const rng = new Rng(seed);
  const lens = Array.from({ length: SEQS }, () => rng.int(Math.max(PROMPT + 2, LEN >> 1), LEN));
  const b = randomBatch(rng, cfg.vocabSize, lens, { promptLen: PROMPT });
  const groupIds = Int32Array.from({ length: SEQS }, (_, i) => Math.floor(i / 8));
  const rewards = Float32Array.from({ length: SEQS }, () => (rng.int(0, 1) ? 1 : 0));
  const adv = grpoAdvantages({ rewards, groupIds });
  b.groupIds = groupIds;
  b.advantages = new Float32Array(b.batchSize * b.seqLen);
  for (let i = 0; i < b.advantages.length; i++) b.advantages[i] = b.lossMask[i]! * adv[Math.floor(i / b.seqLen)]!;
  return b;
}

const ALG = resolveAlgorithm({ preset: "grpo", kl: { coef: 0 } });

async function step(e: TorchEngine, seed: number): Promise<number> {
  const b = stepBatch(seed);
  const t = performance.now();
  b.oldLogprobs = (await e.score(b, { model: "policy" })).logprobs;
  await e.forwardBackward(b, makePolicyLoss(ALG, stepCounts([b], LEN - PROMPT), { klCoef: 0, entropyCoef: 0 }), { entropy: true });
  await e.optimStep({ lr: 1e-4, maxGradNorm: 1 });
  return (performance.now() - t) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(name: string, opts: TorchEngineOptions): Promise<{ name: string; stepS: number; startS: number; device: string }> {
  const t0 = performance.now();
  const e = await TorchEngine.fromPretrained(ckpt, { device: DEVICE, onStderr: () => {}, ...opts });
  const startS = (performance.now() - t0) / 1000;
  try {
    await step(e, 0); // warm-up
    const times: number[] = [];
    for (let i = 1; i <= STEPS; i++) times.push(await step(e, i));
    console.error(`# ${name}: ${times.map((x) => x.toFixed(2)).join(", ")} s`);
    return { name, stepS: median(times), startS, device: e.info().device };
  } finally {
    await e.close();
  }
}

const cores = cpus().length;
const perRank = DEVICE === "cpu" ? Math.max(1, Math.floor(cores / RANKS)) : 0;
const rows = [];
rows.push(await measure(`1 process${DEVICE === "cpu" ? `, ${perRank * RANKS} threads` : ""}`, { threads: perRank * RANKS }));
if (DEVICE === "cpu" && perRank * RANKS !== 1) rows.push(await measure("1 process, 1 thread", { threads: 1 }));
rows.push(await measure(`${RANKS} ranks FSDP2`, { threads: perRank, distributed: { nprocPerNode: RANKS, strategy: "fsdp2" } }));
rows.push(await measure(`${RANKS} ranks DDP`, { threads: perRank, distributed: { nprocPerNode: RANKS, strategy: "ddp" } }));
rmSync(dir, { recursive: true, force: true });

const baseS = rows[0]!.stepS;
const result = {
  machine: `${cores} CPU cores${DEVICE === "cpu" ? "" : `, ${DEVICE}`}`,
  model: `qwen2 ${H}x${L} (head_dim 64, vocab 512)`,
  batch: `${SEQS} sequences of <= ${LEN} tokens, GRPO loss (score + forwardBackward + optimStep)`,
  steps: STEPS,
  rows: rows.map((r) => ({ ...r, vsOneProcess: baseS / r.stepS })),
};
console.log(JSON.stringify(result));
console.log(`\n| configuration | step (s, median of ${STEPS}) | speed vs 1 process | worker start (s) |\n|---|---|---|---|`);
for (const r of result.rows) console.log(`| ${r.name} | ${r.stepS.toFixed(2)} | ${r.vsOneProcess.toFixed(2)}x | ${r.startS.toFixed(1)} |`);

// The vLLM half (its own process: it needs the vLLM environment and exits on its own terms).
const vllm = join(import.meta.dirname, "scale-vllm.ts");
if (existsSync(vllm) && process.env.BENCH_SKIP_VLLM !== "1") {
  console.log("\n# vLLM half (bench/scale-vllm.ts)");
  const r = spawnSync(process.execPath, ["--import", "tsx", vllm], { stdio: "inherit" });
  if (r.status !== 0) console.log(`# bench/scale-vllm.ts exited with ${r.status} (see its message above)`);
}

// The async half: rl.async vs the synchronous RL step on the embedded engine (bench/async.ts).
if (process.env.BENCH_SKIP_ASYNC !== "1") {
  console.log("\n# async half (bench/async.ts)");
  const r = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "async.ts")], { stdio: "inherit" });
  if (r.status !== 0) console.log(`# bench/async.ts exited with ${r.status} (see its message above)`);
}
