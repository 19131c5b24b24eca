/**
 * The torch engine's GPU path on a randomly initialised model of Qwen2.5-0.5B's shape: sampling
 * tokens/s, training tokens/s (forwardBackward + AdamW step) and peak GPU memory. Run by
 * bench/gpu.sh; prints a Markdown table for docs/benchmarks.md.
 *
 *   node --import tsx bench/torch-gpu.ts [--device cuda] [--dtype bfloat16] [--prompts 16] [--n 8]
 *        [--prompt-len 128] [--new 512] [--token-budget 16384] [--checkpointing] [--shape qwen2.5-0.5b|tiny]
 *
 * `--shape tiny --device cpu` runs the same code path on a small model (a smoke test without a GPU).
 */
import type { ModelConfig } from "../src/engines/embedded/hf-config.ts";
import type { TokenBatch } from "../src/core/engine.ts";
import { TorchEngine } from "../src/engines/torch/engine.ts";
import { Rng } from "../src/util/rng.ts";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : dflt;
};
const num = (name: string, dflt: number) => Number(opt(name, String(dflt)));

const SHAPES: Record<string, ModelConfig> = {
  // Qwen/Qwen2.5-0.5B config.json: 494M parameters.
  "qwen2.5-0.5b": {
    modelType: "qwen2",
    vocabSize: 151936,
    hiddenSize: 896,
    intermediateSize: 4864,
    numLayers: 24,
    numHeads: 14,
    numKvHeads: 2,
    headDim: 64,
    rmsNormEps: 1e-6,
    ropeTheta: 1000000,
    maxPositionEmbeddings: 32768,
    tieWordEmbeddings: true,
    attentionBias: true,
  },
  tiny: {
    modelType: "qwen2",
    vocabSize: 512,
    hiddenSize: 64,
    intermediateSize: 192,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 16,
    rmsNormEps: 1e-6,
    ropeTheta: 10000,
    maxPositionEmbeddings: 1024,
    tieWordEmbeddings: true,
    attentionBias: true,
  },
};

const shape = opt("shape", "qwen2.5-0.5b");
const cfg = SHAPES[shape];
if (!cfg) throw new Error(`--shape: expected one of ${Object.keys(SHAPES).join(", ")}, got ${shape}`);
const device = opt("device", "cuda");
const dtype = opt("dtype", device === "cpu" ? "float32" : "bfloat16") as "float32" | "bfloat16";
const P = num("prompts", 16);
const N = num("n", 8);
const PL = num("prompt-len", 128);
const NEW = num("new", 512);
const budget = num("token-budget", 16384);
const ckpt = args.includes("--checkpointing");

const engine = await TorchEngine.create(cfg, { device, dtype, tokenBudget: budget, gradientCheckpointing: ckpt, seed: 1 });
const info = engine.info();
console.error(`model ${shape}: ${(info.numParams / 1e6).toFixed(1)}M params on ${info.device}, ${info.dtype}`);
const rng = new Rng(1);
// Token ids avoid 0..9 so that no stop token ends a sample early (every sample runs NEW tokens).
const prompts = Array.from({ length: P }, () => Int32Array.from({ length: PL }, () => rng.int(10, cfg.vocabSize - 1)));

// Warm-up (CUDA context, kernels, allocator), then timed runs.
await engine.sample({ prompts: prompts.slice(0, 2), n: 2, maxNewTokens: 8, temperature: 1, seed: 0 });
await engine.memory(true);
let t = performance.now();
const samples = await engine.sample({ prompts, n: N, maxNewTokens: NEW, temperature: 1, seed: 1 });
const sampleS = (performance.now() - t) / 1000;
const sampled = samples.reduce((a, s) => a + s.tokens.length, 0);
const sampleMem = (await engine.memory(true)).peakBytes;

// Training: the sampled sequences as one mini-batch, a GRPO-shaped linear loss (random ±1 advantages).
const B = samples.length;
const T = PL + NEW;
const tokens = new Int32Array(B * T);
const lengths = new Int32Array(B);
const lossMask = new Float32Array(B * T);
samples.forEach((s, b) => {
  tokens.set(prompts[s.promptIndex]!, b * T);
  tokens.set(s.tokens, b * T + PL);
  lengths[b] = PL + s.tokens.length;
  for (let i = 0; i < s.tokens.length; i++) lossMask[b * T + PL + i] = 1;
});
const batch: TokenBatch = { batchSize: B, seqLen: T, tokens, lengths, lossMask };
const adv = Float32Array.from({ length: B }, () => (rng.next() < 0.5 ? -1 : 1));
const lossFn = (scores: { logprobs: Float32Array }, bt: TokenBatch) => {
  const d = new Float32Array(bt.batchSize * bt.seqLen);
  let loss = 0;
  let n = 0;
  for (let i = 0; i < d.length; i++) if (bt.lossMask[i]) n++;
  for (let i = 0; i < d.length; i++) {
    if (!bt.lossMask[i]) continue;
    d[i] = -adv[Math.floor(i / bt.seqLen)]! / n;
    loss += d[i]! * scores.logprobs[i]!;
  }
  return { loss, dLogprobs: d, metrics: {} };
};
const trainRuns: number[] = [];
for (let r = 0; r < 3; r++) {
  t = performance.now();
  await engine.forwardBackward(batch, lossFn);
  await engine.optimStep({ lr: 1e-6, maxGradNorm: 1 });
  trainRuns.push((performance.now() - t) / 1000);
}
const trainS = Math.min(...trainRuns.slice(1));
const trainTokens = lengths.reduce((a, b) => a + b, 0);
const trainMem = (await engine.memory()).peakBytes;
await engine.close();

const gib = (b: number) => (b / 2 ** 30).toFixed(2);
console.log(`| model | device | dtype | batch | sampling tok/s | training tok/s | peak GPU memory sample / train (GiB) |`);
console.log(`|---|---|---|---|---|---|---|`);
console.log(
  `| ${shape} (${(info.numParams / 1e6).toFixed(0)}M) | ${info.device} | ${info.dtype} | ${P}×${N}, ${PL}+${NEW} tok${ckpt ? ", grad ckpt" : ""} | ` +
    `${(sampled / sampleS).toFixed(0)} | ${(trainTokens / trainS).toFixed(0)} | ${gib(sampleMem)} / ${gib(trainMem)} |`,
);
