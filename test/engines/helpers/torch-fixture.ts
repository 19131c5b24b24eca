/**
 * The torch engine tests' shared fixture (test/engines/torch.test.ts in npm test; the worker-only
 * cases in torch-worker.slow.test.ts): whether a Python with torch is there (SKIP, with the reason
 * printed), a tiny randomly initialised Qwen2-architecture checkpoint written per test file
 * (`useTinyCheckpoint`), and the comparison helpers.
 */
import { before, after } from "node:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hfParamNames, toHfConfig, type ModelConfig } from "../../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../../src/engines/torch/engine.ts";
import type { TokenBatch } from "../../../src/core/engine.ts";
import { tinyQwen2, randomBatch, randomHfWeights, writeHfCheckpoint, maxAbsDiff, Rng } from "./tiny.ts";

const probe = TorchEngine.probe();
/** node:test's `skip` option for tests that need the torch worker. */
export const SKIP: false | string = probe.ok ? false : `torch engine tests skipped: ${probe.reason}`;
if (SKIP) console.log(`# ${SKIP}`);

/** Engine options that keep the worker's stderr out of the test output. */
export const quiet = { onStderr: () => {} };

/** Qwen2 shape: q/k/v biases, grouped-query attention (4 heads, 2 kv heads), tied embeddings. */
export const CFG: ModelConfig = tinyQwen2({ vocabSize: 23, hiddenSize: 16, intermediateSize: 24, numHeads: 4, numKvHeads: 2, headDim: 4 });

/**
 * Registers this file's before/after hooks: a temporary directory (`fx.tmp`) holding the tiny
 * checkpoint (`fx.ckpt`, with a generation_config.json the engine must save back).
 */
export function useTinyCheckpoint(): { tmp: string; ckpt: string } {
  const fx = { tmp: "", ckpt: "" };
  before(async () => {
    fx.tmp = await mkdtemp(join(tmpdir(), "rlvr-torch-"));
    fx.ckpt = join(fx.tmp, "tiny-qwen2");
    const specs = hfParamNames(CFG);
    // Healthy weight scale so every gradient is far above float32 noise.
    await writeHfCheckpoint(fx.ckpt, toHfConfig(CFG), randomHfWeights(specs, new Rng(7), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
    // The checkpoint's generation defaults: the torch engine samples without them but must save them back.
    await writeFile(join(fx.ckpt, "generation_config.json"), JSON.stringify({ eos_token_id: 5, pad_token_id: 5, max_new_tokens: 7 }));
  });
  after(async () => {
    await rm(fx.tmp, { recursive: true, force: true });
  });
  return fx;
}

/** Max |a − b| / (1 + max |b|): relative where values are large, absolute where small. */
export function relDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (const x of b) m = Math.max(m, Math.abs(x));
  return maxAbsDiff(a, b) / (1 + m);
}

/** A random batch of CFG's vocabulary: prompts of 2 tokens, 2 extra padding positions. */
export function batchOf(seed: number, lengths: number[]): TokenBatch {
  return randomBatch(new Rng(seed), CFG.vocabSize, lengths, { promptLen: 2, extraPad: 2 });
}
