/**
 * The training page on jax-js's WebGPU backend, where headless Chromium offers an adapter. Here
 * (Debian's Chromium, no GPU) it offers SwiftShader, Chromium's CPU implementation of Vulkan, with
 * --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader; elsewhere it may offer a real GPU.
 * Without an adapter the test skips and says why. The run's SFT losses must match those of the
 * same run on Node's Wasm backend (same seed, same batches; float32, different kernels).
 * In `npm run test:slow`: SwiftShader runs the shaders on the CPU (≈ 45 s on the loaded 2-core machine).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { PlaySession } from "../../src/browser/session.ts";
import { chromiumOrSkip, PageHarness, settings, sftLosses } from "./page.ts";

const RUN = settings({ digits: 1, sftSteps: 4, sftBatch: 64, stopAt: 0, rlSteps: 1, promptsPerStep: 16, groupSize: 4, evalPrompts: 16, evalSamples: 1, trainSize: 2000, seed: 1 });

const harness = new PageHarness();
after(() => harness.close());

test("training page on WebGPU (where Chromium offers an adapter): trains, and its SFT losses match Node's Wasm run", { timeout: 300_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { page, errors } = await harness.open(["--headless=new", "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]);
  await page.goto(await harness.url());
  const adapter = await page.evaluate(async () => {
    const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<{ info?: { vendor: string; architecture: string } } | null> } }).gpu;
    if (!gpu) return "no navigator.gpu";
    const a = await gpu.requestAdapter();
    return a ? `adapter ${a.info?.vendor ?? "?"}/${a.info?.architecture ?? "?"}` : "navigator.gpu.requestAdapter() gave no adapter";
  });
  if (!adapter.startsWith("adapter")) {
    console.log(`# SKIP WebGPU training page test: Chromium offers no WebGPU here (${adapter})`);
    t.skip(`no WebGPU adapter: ${adapter}`);
    return;
  }
  const t0 = performance.now();
  const run = await harness.train(page, "webgpu", RUN, 240_000);
  console.log(`# webgpu run (${adapter}): ${((performance.now() - t0) / 1000).toFixed(1)} s on ${run.device}`);
  assert.equal(run.error, null);
  assert.equal(run.state, "done");
  assert.match(run.device, /webgpu/);
  assert.deepEqual(errors, []);
  assert.equal(await page.locator('[data-chart="reward"] canvas').getAttribute("data-points"), "1");
  assert.deepEqual(run.evals.map((e) => e.label), ["init", "sft", "rl"]);

  const gpu = sftLosses(run.metrics);
  const node: Record<string, unknown>[] = [];
  const s = await PlaySession.open(RUN, "wasm", { metrics: (r) => node.push(r) });
  try {
    await s.runSft();
  } finally {
    await s.close();
  }
  const wasm = sftLosses(node);
  console.log(`# SFT losses: webgpu ${gpu.map((x) => x.toFixed(5)).join(" ")}; Node wasm ${wasm.map((x) => x.toFixed(5)).join(" ")}`);
  assert.equal(gpu.length, 4);
  gpu.forEach((l, i) => assert.ok(Math.abs(l - wasm[i]!) < 1e-3 * Math.abs(l), `SFT step ${i + 1}: webgpu ${l} vs wasm ${wasm[i]}`));
});
