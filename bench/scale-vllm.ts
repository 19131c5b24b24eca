/**
 * `npm run bench -- scale-vllm` (also part of `npm run bench -- scale`): the vLLM halves of the
 * scale-out benchmark, on one tiny Qwen2-architecture checkpoint (random weights, head_dim 64):
 *   - sampling tokens/s: the torch engine's Hugging Face `generate` vs vLLM (colocated, same
 *     process, same weights, same requests), steady state (each timed after one warm-up call);
 *   - weight-sync seconds per step: colocated (in memory) and server mode (checkpoint + in-place
 *     reload over HTTP), each the mean of 3 syncs after real optimizer steps.
 * Needs python/.venv-vllm (`rlvr setup vllm`). Prints one JSON object and a Markdown table.
 * Environment: BENCH_PROMPTS (32), BENCH_N (8), BENCH_NEW (64), BENCH_HIDDEN (256), BENCH_LAYERS (4),
 * BENCH_DEVICE (cpu | cuda; default cpu; on cuda vLLM takes 0.3 of the GPU's memory and sleeps
 * between rollouts, `bash bench/gpu.sh` runs it there).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { hfParamNames, toHfConfig } from "../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../src/engines/torch/engine.ts";
import type { Engine, SampleRequest } from "../src/core/engine.ts";
import { DEFAULT_DEADLINES, launchVllmServers, VllmColocatedSampler } from "../src/rollout/samplers/vllm.ts";
import { resolveVllmPython, VLLM_INSTALL_HINT } from "../src/rollout/samplers/vllm-server.ts";
import { tinyQwen2, randomHfWeights, writeHfCheckpoint, Rng } from "../test/engines/helpers/tiny.ts";

const env = (k: string, d: number) => Number(process.env[k] ?? d);
const P = env("BENCH_PROMPTS", 32);
const N = env("BENCH_N", 8);
const NEW = env("BENCH_NEW", 64);
const H = env("BENCH_HIDDEN", 256);
const L = env("BENCH_LAYERS", 4);
const DEVICE = process.env.BENCH_DEVICE ?? "cpu";
const GPU_SHARE = 0.3;

const python = resolveVllmPython();
if (!python) {
  console.error(`bench scale-vllm: ${VLLM_INSTALL_HINT}`);
  process.exit(1);
}

const cfg = tinyQwen2({ vocabSize: 512, hiddenSize: H, intermediateSize: 3 * H, numLayers: L, numHeads: H / 64, numKvHeads: Math.max(1, H / 128), headDim: 64, maxPositionEmbeddings: 256 });
const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-vllm-"));
const ckpt = join(dir, "tiny-qwen2");
const specs = hfParamNames(cfg);
await writeHfCheckpoint(ckpt, toHfConfig(cfg), randomHfWeights(specs, new Rng(3), 0.1), new Map(specs.map((s) => [s.name, s.shape])));

const rng = new Rng(9);
const req: SampleRequest = { prompts: Array.from({ length: P }, () => Int32Array.from({ length: 16 }, () => rng.int(1, 511))), n: N, maxNewTokens: NEW, temperature: 1, seed: 1 };

/** Steady-state tokens/s of `sample` (one warm-up call, then the mean of 2). */
async function tokensPerSecond(sample: (r: SampleRequest) => Promise<{ tokens: Int32Array }[]>): Promise<number> {
  await sample({ ...req, seed: 0 });
  let tokens = 0;
  const t = performance.now();
  for (let i = 1; i <= 2; i++) tokens += (await sample({ ...req, seed: i })).reduce((a, o) => a + o.tokens.length, 0);
  return tokens / ((performance.now() - t) / 1000);
}

/** One optimizer step on a batch of random rows, so the sync moves new weights. */
async function step(engine: Engine): Promise<void> {
  const B = 8;
  const T = 24;
  const tokens = Int32Array.from({ length: B * T }, () => rng.int(1, 511));
  const batch = { batchSize: B, seqLen: T, tokens, lengths: new Int32Array(B).fill(T), lossMask: new Float32Array(B * T).fill(1) };
  await engine.forwardBackward(batch, (sc, b) => ({ loss: 0, dLogprobs: b.lossMask.map((m) => -m / (B * T)), metrics: {} }));
  await engine.optimStep({ lr: 1e-3 });
}

const engine = await TorchEngine.fromPretrained(ckpt, { python, device: DEVICE, seed: 1, onStderr: () => undefined });
const out: Record<string, number | string> = { machine: DEVICE === "cpu" ? `${cpus().length}-core CPU` : engine.info().device, model: `qwen2 hidden ${H} x ${L} layers, vocab 512, ${engine.info().numParams} params`, request: `${P} prompts x ${N} samples x ${NEW} new tokens` };
try {
  out.hf_generate_tokens_per_s = await tokensPerSecond((r) => engine.sample(r));
  const colo = await VllmColocatedSampler.start(engine, { gpuMemoryUtilization: GPU_SHARE, kvCacheGiB: 1, dtype: "auto" }, 1);
  out.vllm_startup_s = colo.started.startupSeconds;
  out.vllm_tokens_per_s = await tokensPerSecond((r) => colo.sample(r));
  let s = 0;
  for (let v = 1; v <= 3; v++) {
    await step(engine);
    s += await colo.syncWeights(engine, v);
  }
  out.sync_colocated_s = s / 3;
  await colo.close();
  const srv = await launchVllmServers(engine, { ...DEFAULT_DEADLINES, servers: 1, python, kvCacheGiB: 1, gpuMemoryUtilization: GPU_SHARE, dtype: "auto", extraArgs: [] }, 1);
  try {
    s = 0;
    for (let v = 4; v <= 6; v++) {
      await step(engine);
      s += await srv.syncWeights(engine, v);
    }
    out.sync_server_checkpoint_s = s / 3;
    out.vllm_server_tokens_per_s = await tokensPerSecond((r) => srv.sample(r));
  } finally {
    await srv.close();
  }
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
const num = (k: string) => Number(out[k]);
out.vllm_over_hf = num("vllm_tokens_per_s") / num("hf_generate_tokens_per_s");
console.log(JSON.stringify(out));
console.log(`
| ${out.machine}; ${out.model}; ${out.request} | value |
|---|---|
| HF generate (torch engine), tokens/s | ${num("hf_generate_tokens_per_s").toFixed(0)} |
| vLLM colocated, tokens/s | ${num("vllm_tokens_per_s").toFixed(0)} (${num("vllm_over_hf").toFixed(2)}× HF) |
| vLLM server (1 local server, HTTP), tokens/s | ${num("vllm_server_tokens_per_s").toFixed(0)} |
| weight sync per step, colocated (in memory) | ${num("sync_colocated_s").toFixed(3)} s |
| weight sync per step, server (checkpoint + reload) | ${num("sync_server_checkpoint_s").toFixed(3)} s |
| vLLM start-up (colocated) | ${num("vllm_startup_s").toFixed(1)} s |`);
