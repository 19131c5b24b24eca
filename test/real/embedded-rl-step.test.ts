/**
 * The embedded engine trains SmolLM2-135M-Instruct under LoRA on an RL step's batch within jax-js's
 * 4 GiB Wasm heap (issue 25): 4 word problems in the chat template × 4 responses × 32 tokens
 * (16 × 105 tokens), LoRA rank 16 on all seven block modules, `baseDtype: auto`. One pass of this
 * batch does not fit the heap (the plan for a single row was 3.8 GiB; it failed with "Allocation
 * exceeds the 4 GiB memory32 limit"), so the engine trains it layer by layer. Asserts the step
 * runs, its gradient is finite and non-zero, AdamW moves the log-probs the loss asks for, and the
 * heap's peak stays under 2.5 GiB (measured 1.64). Prints the time (`# real-rl-step` lines):
 *   node --import tsx --test test/real/embedded-rl-step.test.ts
 * (~2–3 minutes on a loaded 2-core machine; the torch engine's step on the same batch and the
 * ratio: scripts/diagnostics/embedded-lora-step.ts, docs/benchmarks.md.)
 */
import "../engines/helpers/wasm-memory.ts"; // before @jax-js/jax: records the Wasm heap
import { test } from "node:test";
import assert from "node:assert/strict";
import { wasmHeapBytes } from "../engines/helpers/wasm-memory.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { realModelDir, rlStepBatch, rlStepLoss } from "./helpers/real.ts";

const report = (line: string) => console.log(`# real-rl-step ${line}`);

test("embedded engine: one LoRA RL step of 16 × 105 tokens on SmolLM2-135M within the Wasm heap", async () => {
  const dir = realModelDir();
  const { batch } = await rlStepBatch(dir);
  const e = await EmbeddedEngine.fromPretrained(dir, { lora: loraConfigSchema.parse({ rank: 16 }) });
  try {
    const before = (await e.score(batch, { model: "policy" })).logprobs;
    const t0 = performance.now();
    const r = await e.forwardBackward(batch, rlStepLoss);
    const { gradNorm } = await e.optimStep({ lr: 1e-3 });
    const s = (performance.now() - t0) / 1000;
    const heap = wasmHeapBytes() / 2 ** 30;
    report(`forwardBackward+optimStep ${s.toFixed(1)} s (first, with jit compiles), loss ${r.loss.toFixed(4)}, grad norm ${gradNorm.toFixed(3)}, heap peak ${heap.toFixed(2)} GiB; ${e.info().dtype}`);
    assert.ok(Number.isFinite(r.loss) && Number.isFinite(gradNorm) && gradNorm > 0, `loss ${r.loss}, grad norm ${gradNorm}`);
    assert.ok(heap < 2.5, `Wasm heap peak ${heap.toFixed(2)} GiB`);
    // The loss is −0.01 · Σ lp of the responses: a step raises their log-probs.
    const after = (await e.score(batch, { model: "policy" })).logprobs;
    let gain = 0;
    for (let i = 0; i < after.length; i++) if (batch.lossMask[i]) gain += after[i]! - before[i]!;
    report(`Σ Δ log-prob of the responses after the step: ${gain.toFixed(3)}`);
    assert.ok(gain > 0, `the step lowered the responses' log-probs (Σ Δ = ${gain})`);
  } finally {
    await e.close();
  }
});
