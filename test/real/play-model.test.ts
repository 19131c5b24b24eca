/**
 * `rlvr play --model smollm2-135m-instruct` in headless Chromium (issue 25 item 4, issue 31 item 5):
 * the page fetches the imported SmolLM2-135M-Instruct's files from the server, builds the embedded
 * engine from those bytes (EmbeddedEngine.fromFiles) with a bfloat16 frozen base and rank-8 LoRA,
 * and runs GRPO on word problems in the model's chat template through the pipeline's rlStep — at a
 * tiny size set in the page's URL (2 steps of 2 prompts × 2 samples × 16 tokens, 2 held-out prompts;
 * a 1e-3 entropy bonus, so each step has a gradient even when every response scores 0, as most do
 * at 16 tokens).
 * Asserts: the model is SmolLM2 (vocab 49,152, 30 layers); the page's held-out rows and their
 * prompt ids equal what Node's rlvr generates and encodes for the same config (HfTokenizer.load on
 * the directory; test/real/chat-parity.test.ts ties those ids to transformers'); the metrics are
 * finite; the LoRA weights changed at each step and the base weights did not. Prints seconds per
 * step, whether WebGPU was offered, and memory (`# play-model` lines). A few minutes on a loaded
 * 2-core machine:
 *   node --import tsx --test test/real/play-model.test.ts
 * Skips when the model is not imported (fails instead with RLVR_REQUIRE_REAL=1) or Chromium is
 * absent (fails with RLVR_REQUIRE_CHROMIUM=1).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromiumOrSkip, PageHarness } from "../browser/page.ts";
import { MODEL_PLAY, modelPlayConfig, type ModelPlaySettings } from "../../src/browser/session.ts";
import { defaultModelDir } from "../../src/engines/catalog.ts";
import { buildData, promptFormatOf } from "../../src/trainer/context.ts";
import { HfTokenizer, promptEncoder } from "../../src/tokenizers/index.ts";

const NAME = "smollm2-135m-instruct";
const DIR = process.env.RLVR_REAL_MODEL ?? defaultModelDir(NAME);
const RUN: ModelPlaySettings = { ...MODEL_PLAY, rlSteps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 16, evalPrompts: 2, trainSize: 16, loraRank: 8, lr: 1e-3, seed: 1, entropyCoef: 1e-3 };
const report = (line: string) => console.log(`# play-model ${line}`);

/** Resident memory (bytes) of this process's descendants (the Chromium processes), from ps. */
function childrenRss(): number {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,rss="], { encoding: "utf8" }).trim().split("\n").map((l) => l.trim().split(/\s+/).map(Number) as [number, number, number]);
  const mine = new Set([process.pid]);
  let total = 0;
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid, rss] of rows) if (mine.has(ppid) && !mine.has(pid)) (mine.add(pid), (total += rss * 1024), (grew = true));
  }
  return total;
}

interface ModelRun {
  state: string;
  error: string | null;
  device: string;
  backend: string;
  model: { label: string; vocabSize: number; numLayers: number; hiddenSize: number; trainableParams: number; mbytes: number } | null;
  loadSeconds: { fetch: number; build: number } | null;
  stepSeconds: number[];
  weights: Record<string, Record<string, [number, number, number]>>;
  metrics: Record<string, unknown>[];
  evals: { label: string; meanAtN: number; prompts: number }[];
  prompts: { row: Record<string, unknown>; ids: number[] }[];
  jsHeap: number;
}

const harness = new PageHarness({ model: NAME });
after(() => harness.close());

test("rlvr play --model: the page trains SmolLM2-135M-Instruct's LoRA with GRPO on word problems in Chromium (Wasm)", { timeout: 1_500_000 }, async (t) => {
  if (!existsSync(join(DIR, "model.safetensors"))) {
    const why = `no imported ${NAME} at ${DIR}; run \`rlvr setup model ${NAME}\` (or set RLVR_REAL_MODEL)`;
    if (process.env.RLVR_REQUIRE_REAL === "1") assert.fail(`RLVR_REQUIRE_REAL=1 but ${why}`);
    return t.skip(why);
  }
  if (!chromiumOrSkip(t)) return;
  const url = await harness.url(); // builds the page first when its sources changed
  const { page, errors } = await harness.open(["--headless", "--disable-gpu"]);
  await page.goto(url);
  const adapter = await page.evaluate(async () => {
    const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
    return gpu ? (await gpu.requestAdapter().catch(() => null)) !== null : false;
  });
  report(`WebGPU adapter offered: ${adapter} (the run uses Wasm)`);

  const query = new URLSearchParams({ backend: "wasm", autostart: "1", ...Object.fromEntries(Object.entries(RUN).map(([k, v]) => [k, String(v)])) });
  const t0 = performance.now();
  await page.goto(`${url}?${query}`);
  let peakRss = 0;
  let last = "";
  for (;;) {
    const { state, status } = await page.evaluate(() => ({ state: (window as unknown as { rlvrPlay: { state: string } }).rlvrPlay.state, status: document.querySelector("#status")!.textContent ?? "" }));
    peakRss = Math.max(peakRss, childrenRss());
    if (status !== last) report(`${((performance.now() - t0) / 1000).toFixed(0)} s: ${(last = status)}`);
    if (state === "done" || state === "error") break;
    assert.ok(performance.now() - t0 < 1_400_000, "the run did not finish in time");
    await new Promise((ok) => setTimeout(ok, 2000));
  }
  const run = await page.evaluate((n) => {
    const p = (window as unknown as { rlvrPlay: Omit<ModelRun, "prompts" | "jsHeap"> & { promptIds: (i: number) => ModelRun["prompts"][number] } }).rlvrPlay;
    return {
      state: p.state, error: p.error, device: p.device, backend: p.backend, model: p.model, loadSeconds: p.loadSeconds, stepSeconds: p.stepSeconds, weights: p.weights, metrics: p.metrics,
      evals: p.evals.map((e) => ({ label: e.label, meanAtN: e.meanAtN, prompts: e.prompts })),
      prompts: Array.from({ length: n }, (_, i) => p.promptIds(i)),
      jsHeap: (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
    };
  }, RUN.evalPrompts) as ModelRun;
  report(`total ${((performance.now() - t0) / 1000).toFixed(0)} s on ${run.device}; fetch ${run.loadSeconds?.fetch.toFixed(1)} s, build ${run.loadSeconds?.build.toFixed(1)} s; GRPO steps ${run.stepSeconds.map((s) => s.toFixed(0)).join(", ")} s`);
  report(`memory: Chromium processes' peak RSS ${(peakRss / 2 ** 30).toFixed(2)} GiB, JS heap ${(run.jsHeap / 2 ** 30).toFixed(2)} GiB at the end`);
  report(`rewards ${run.metrics.filter((m) => m["stage"] === "rl").map((m) => m["reward/mean"]).join(", ")}; loss/policy ${run.metrics.filter((m) => m["stage"] === "rl").map((m) => m["loss/policy"]).join(", ")}`);
  report(`held-out greedy accuracy ${run.evals.map((e) => `${e.label} ${e.meanAtN}`).join(" → ")}`);
  assert.equal(run.error, null);
  assert.equal(run.state, "done");
  assert.deepEqual(errors, []);
  assert.equal(run.backend, "wasm");
  assert.match(run.device, /jax-js wasm/);

  // The model loaded from the served bytes is SmolLM2-135M.
  assert.deepEqual([run.model?.label, run.model?.vocabSize, run.model?.numLayers, run.model?.hiddenSize], [NAME, 49152, 30, 576]);
  // Only the adapters train: rank 8 × (in + out) of the 7 block modules × 30 layers.
  assert.equal(run.model?.trainableParams, 8 * (2 * 1152 + 2 * 768 + 3 * 2112) * 30);

  // The page's held-out rows and prompt ids are Node's for the same config.
  const cfg = modelPlayConfig(RUN, DIR);
  const { test: rows } = await buildData(cfg);
  const encode = promptEncoder(await HfTokenizer.load(DIR), promptFormatOf(cfg), DIR);
  assert.equal(run.prompts.length, 2);
  for (const [i, p] of run.prompts.entries()) {
    assert.deepEqual(p.row, JSON.parse(JSON.stringify(rows[i])), `held-out row ${i}`);
    assert.deepEqual(p.ids, [...encode(rows[i]!)], `prompt ids of held-out row ${i}`);
    assert.equal(p.ids[0], 1, "the chat template starts with <|im_start|>");
  }

  // Two GRPO steps with finite metrics; evaluations before and after.
  const rl = run.metrics.filter((m) => m["stage"] === "rl");
  assert.equal(rl.length, 2);
  for (const m of rl) {
    assert.ok(Number.isFinite(m["loss/policy"]), `loss/policy ${m["loss/policy"]}`);
    for (const [k, v] of Object.entries(m)) if (typeof v === "number") assert.ok(!Number.isNaN(v) || k.includes("ratio") || k.includes("std"), `metric ${k} is NaN`);
  }
  assert.deepEqual(run.evals.map((e) => [e.label, e.prompts]), [["init", 2], ["rl", 2]]);
  assert.equal(run.stepSeconds.length, 2);

  // LoRA weights move at every step (B starts at zero); the frozen base does not.
  const names = Object.keys(run.weights["loaded"]!);
  const lora = names.filter((n) => n.includes("lora_"));
  const base = names.filter((n) => !n.includes("lora_"));
  assert.equal(lora.length, 4, `LoRA A and B of two modules: ${names}`);
  assert.equal(base.length, 2, `two base weights: ${names}`);
  const same = (a: number[], b: number[]) => a.every((x, i) => x === b[i]);
  for (const n of base) for (const s of ["step1", "step2"]) assert.ok(same(run.weights[s]![n]!, run.weights["loaded"]![n]!), `base ${n} changed by ${s}`);
  for (const n of lora.filter((x) => x.includes("lora_B"))) {
    assert.equal(run.weights["loaded"]![n]![0], 0, `${n} starts at zero`);
    assert.ok(run.weights["step1"]![n]![0] > 0, `${n} moved in step 1`);
  }
  for (const n of lora) assert.ok(!same(run.weights["step2"]![n]!, run.weights["step1"]![n]!), `${n} moved in step 2`);
});
