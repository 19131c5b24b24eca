/**
 * The training page (dashboard/train/, served by `rlvr play`) in headless Chromium on the Wasm backend: the
 * quickstart's run at a tiny size trains in the tab, the reward and SFT-loss curves are drawn (DOM
 * counts and a screenshot pixel check), held-out accuracy rises from before training to after
 * GRPO, and the downloaded zip is a Hugging Face checkpoint that Node's embedded engine loads and
 * scores exactly as the page does. WebGPU: train-page-webgpu.slow.test.ts. Skips when
 * /usr/bin/chromium is absent (fails instead with RLVR_REQUIRE_CHROMIUM=1).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unzipSync } from "fflate";
import { countColor, decodePng, distinctColors } from "../dashboard/png.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { chromiumOrSkip, PageHarness, settings, sftLosses } from "./page.ts";

const BLUE = "#2f6fde"; // the page's curve colour (dashboard/train/main.ts COLOR)
/** 1-digit addition: 20 SFT steps of 64 lift greedy held-out accuracy from 0 (measured: 0% → 12.5%, pass@1 0.8% → 7.8%). */
const RUN = settings({ digits: 1, sftSteps: 20, sftBatch: 64, stopAt: 0, rlSteps: 2, promptsPerStep: 16, groupSize: 4, evalPrompts: 64, evalSamples: 2, trainSize: 2000, seed: 1 });

const harness = new PageHarness();
after(() => harness.close());

test("training page on Wasm: trains, draws the curves, held-out accuracy rises, the download loads in Node", { timeout: 240_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  await harness.url(); // builds the page first when its sources changed
  const { page, errors } = await harness.open(["--headless", "--disable-gpu"]);
  const t0 = performance.now();
  const run = await harness.train(page, "wasm", RUN, 200_000);
  console.log(`# wasm run: ${((performance.now() - t0) / 1000).toFixed(1)} s on ${run.device}; held-out pass@1 ${run.evals.map((e) => e.meanAtN.toFixed(3)).join(" → ")}, greedy ${run.evals.map((e) => e.greedy?.toFixed(3)).join(" → ")}`);
  assert.equal(run.error, null);
  assert.equal(run.state, "done");
  assert.match(run.device, /jax-js wasm, \d+ threads?/);
  // rlvr play's headers isolate the page, so jax-js may start its worker threads.
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  assert.deepEqual(errors, []);

  // Held-out accuracy moves: before training, after the SFT warm-up, after GRPO.
  assert.deepEqual(run.evals.map((e) => e.label), ["init", "sft", "rl"]);
  const [init, , rl] = run.evals;
  assert.ok(rl!.greedy! > init!.greedy! + 0.05, `greedy accuracy ${init!.greedy} → ${rl!.greedy}`);
  assert.ok(rl!.meanAtN > init!.meanAtN + 0.03, `pass@1 ${init!.meanAtN} → ${rl!.meanAtN}`);
  assert.equal(await page.locator('#eval-table tr[data-label="rl"]').count(), 1);

  // Curves: 2 GRPO steps in the reward chart, 20 SFT steps (loss and nll) in the loss chart, drawn in the line colour.
  assert.equal(await page.locator('[data-chart="reward"] canvas').getAttribute("data-points"), "2");
  assert.equal(await page.locator('[data-chart="sft-loss"] canvas').getAttribute("data-points"), "40");
  for (const id of ["reward", "sft-loss"]) {
    const img = decodePng(await page.locator(`[data-chart="${id}"] canvas`).screenshot());
    assert.ok(countColor(img, BLUE) > 100, `${id}: blue pixels ${countColor(img, BLUE)}`);
    assert.ok(distinctColors(img) > 20, `${id}: the plot is not blank`);
  }
  const sft = sftLosses(run.metrics);
  assert.ok(sft.at(-1)! < sft[0]! * 0.6, `SFT loss ${sft[0]} → ${sft.at(-1)}`);
  assert.ok((await page.locator("#sample-table tbody tr").count()) > 0, "the latest step's samples are listed");

  // Download: a zip of one Hugging Face checkpoint folder, which Node's engine loads and scores as the page does.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
  assert.equal(download.suggestedFilename(), "rlvr-addition1-seed1.zip");
  const zip = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
  const names = Object.keys(zip).filter((n) => !n.endsWith("/")).sort();
  assert.deepEqual(names, ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"].map((f) => `rlvr-addition1-seed1/${f}`));
  const dir = mkdtempSync(join(tmpdir(), "rlvr-play-ckpt-"));
  try {
    for (const n of names) writeFileSync(join(dir, n.split("/")[1]!), zip[n]!);
    const probe = await page.evaluate(() => (window as unknown as { rlvrPlay: { probe: (p: string, a: string) => Promise<{ tokens: number[]; logprobs: number[] }> } }).rlvrPlay.probe("3+4=", "07"));
    const engine = await EmbeddedEngine.fromPretrained(dir, { inferenceOnly: true });
    try {
      const n = probe.tokens.length;
      const { logprobs } = await engine.score({ batchSize: 1, seqLen: n, tokens: Int32Array.from(probe.tokens), lengths: Int32Array.from([n]), lossMask: new Float32Array(n) }, { model: "policy" });
      for (let i = 1; i < n; i++) assert.ok(Math.abs(logprobs[i]! - probe.logprobs[i]!) < 1e-4, `token ${i}: Node ${logprobs[i]} vs page ${probe.logprobs[i]}`);
      assert.ok(probe.logprobs.slice(1).every((x) => x < 0), "the probe scored every token after the first");
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
