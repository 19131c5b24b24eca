/**
 * No 4 GiB wall: the 13.6M-parameter model (hidden 512 × 4 layers) runs the quickstart's
 * GRPO step — 128 prompts × 4 samples, no rl.microBatchSize — on the embedded engine. Before the
 * engine planned its passes (src/engines/embedded/memory.ts) this failed with "Allocation exceeds
 * the 4 GiB memory32 limit". Minutes on the shared 2-core machine.
 */
import { wasmHeapBytes } from "./helpers/wasm-memory.ts"; // first: records jax-js's Wasm heap
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { quickstartConfig } from "../../src/recipes/quickstart.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";

test("a 13.6M-parameter model trains an RL step on the embedded engine with default settings", { timeout: 30 * 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-13m-"));
  try {
    const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: 1, seed: 1 }, "", "");
    const cfg = parseRunConfig({
      ...base,
      model: { init: { hiddenSize: 512, numLayers: 4, numHeads: 8, maxPositionEmbeddings: 32 } },
      data: { task: "addition-padded", difficulty: 2, trainSize: 1000, testSize: 16 },
    });
    assert.equal(cfg.rl!.microBatchSize, undefined, "default settings: no micro-batch size");
    const ctx = await buildContext(cfg);
    const params = ctx.engine.info().numParams;
    assert.ok(params > 13.5e6 && params < 13.8e6, `13.6M parameters, got ${params}`);
    const st = initRlState(ctx, cfg.algorithm!);
    await ctx.engine.setReference("policy");
    const t = performance.now();
    const r = await rlStep(ctx, cfg.algorithm!, st, new RunLogger(dir, true));
    const s = (performance.now() - t) / 1000;
    const heap = wasmHeapBytes();
    console.log(`13.6M RL step: ${s.toFixed(1)} s, Wasm heap ${(heap / 2 ** 30).toFixed(2)} GiB`);
    assert.ok(heap < 2 ** 32);
    assert.ok(Number.isFinite(r["grad_norm"]) && r["grad_norm"]! > 0, `a real update: grad_norm ${r["grad_norm"]}`);
    await ctx.engine.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
