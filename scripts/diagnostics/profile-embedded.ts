/**
 * Diagnostic: where the time of one RL step of the embedded engine goes.
 *
 *   RLVR_THREADS=1 npx tsx scripts/diagnostics/profile-embedded.ts [--hidden 128] [--layers 2] [--steps 2] [--top 25] [--dump 0] [--no-kernels] [--full-passes]
 *
 * Builds the quickstart's GRPO step (128 prompts × 4 samples on addition-padded) at hidden ×
 * layers (default: the quickstart's 128 × 2), runs one warm-up step (jit compilation), then times
 * `--steps` steps and prints
 *   - phases: seconds in each engine call (sample, score policy/reference, forwardBackward,
 *     optimStep) and the rest of the step (reward, advantages, TypeScript loss, bookkeeping);
 *   - kernels (with one thread only): each jax-js kernel timed around its Wasm backend's dispatch,
 *     grouped by compiled kernel, with calls, total ms, the share of kernel time, and GFLOP/s for matmul-like
 *     reductions (2 · output size · reduction size per call), and `path` = `tiled/N` when jax-js
 *     compiled it with a tiled SIMD plan. With worker threads a dispatch only hands the kernel to a
 *     worker, so the kernel table needs RLVR_THREADS=1.
 * A kernel's `epilogue` column shows what jax-js fused after the reduction (empty = nothing);
 * `--dump N` prints the full expression and epilogue of the N slowest kernels; `--full-passes`
 * turns off the engine's shared-prefix passes (EmbeddedEngineOptions.sharedPrefix) for an A/B.
 */
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../../src/config/schema.ts";
import { quickstartConfig } from "../../src/recipes/quickstart.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { jaxThreads } from "../../src/engines/embedded/runtime.ts";
import type { Engine } from "../../src/core/engine.ts";

const { values } = parseArgs({
  options: {
    hidden: { type: "string", default: "128" },
    layers: { type: "string", default: "2" },
    steps: { type: "string", default: "2" },
    top: { type: "string", default: "25" },
    "no-kernels": { type: "boolean", default: false },
    dump: { type: "string", default: "0" },
    "full-passes": { type: "boolean", default: false },
  },
});
const hidden = Number(values.hidden);
const layers = Number(values.layers);
const steps = Number(values.steps);
const kernels = !values["no-kernels"] && jaxThreads().threads === 1;

const dir = mkdtempSync(join(tmpdir(), "rlvr-profile-"));
const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: steps + 1, seed: 1 }, "", "");
const cfg = parseRunConfig({
  ...base,
  model: { engine: "embedded", init: { hiddenSize: hidden, numLayers: layers, numHeads: Math.max(1, hidden / 32), maxPositionEmbeddings: 32 } },
  data: { task: "addition-padded", difficulty: 2, trainSize: 2000, testSize: 64 },
});
const ctx = await buildContext(cfg);

// Phase timers: wrap the engine's calls.
const phase = new Map<string, number>();
const add = (k: string, s: number) => phase.set(k, (phase.get(k) ?? 0) + s);
const engine = ctx.engine as Engine;
// The engine was opened by buildContext; its options object is set here for the A/B only.
if (values["full-passes"]) (engine as unknown as { opts: { sharedPrefix?: boolean } }).opts.sharedPrefix = false;
let current = "other";
const wrap = <K extends "sample" | "score" | "forwardBackward" | "optimStep">(name: K, label: (args: unknown[]) => string) => {
  const orig = (engine[name] as (...a: unknown[]) => Promise<unknown>).bind(engine);
  (engine as unknown as Record<string, unknown>)[name] = async (...a: unknown[]) => {
    const t = performance.now();
    current = label(a);
    try {
      return await orig(...a);
    } finally {
      add(label(a), (performance.now() - t) / 1000);
      current = "other";
    }
  };
};
wrap("sample", () => "sample");
wrap("score", (a) => `score ${(a[1] as { model: string }).model}`);
wrap("forwardBackward", () => "forwardBackward");
wrap("optimStep", () => "optimStep");

// Kernel timings: with one thread jax-js runs every kernel synchronously inside its Wasm backend's
// `dispatch`, so wrapping that method times each kernel and sees the kernel itself (its fused
// expression, reduction, epilogue and the compiled program's tiling metadata). The backend is
// not exported, so it is reached through jax-js's own backend chunk (the same module instance).
type Agg = { phase: string; calls: number; ms: number; size: number; red: string; epilogue: string; exp: string; flops: number; tiled: string };
const agg = new Map<string, Agg>();
let recording = false;
if (kernels) {
  const { readdirSync } = await import("node:fs");
  const { createRequire } = await import("node:module");
  const { pathToFileURL } = await import("node:url");
  const distDir = join(createRequire(import.meta.url).resolve("@jax-js/jax"), "..");
  const chunk = readdirSync(distDir).find((f) => /^backend-.*\.js$/.test(f));
  if (!chunk) throw new Error(`profile-embedded: no backend-*.js chunk in ${distDir} (jax-js layout changed)`);
  const mod = (await import(pathToFileURL(join(distDir, chunk)).href)) as Record<string, unknown>;
  // getBackend is exported from the chunk under a minified name: find it by its error message.
  const getBackend = Object.values(mod).find((f) => typeof f === "function" && String(f).includes("backend not ready")) as
    | ((device: string) => { dispatch: (exe: unknown, i: unknown, o: unknown) => void })
    | undefined;
  const backend = getBackend?.("wasm");
  if (!backend) throw new Error("profile-embedded: could not reach jax-js's wasm backend");
  const orig = backend.dispatch.bind(backend);
  backend.dispatch = (exe, inputs, outputs) => {
    if (!recording) return orig(exe, inputs, outputs);
    const t0 = performance.now();
    orig(exe, inputs, outputs);
    const ms = performance.now() - t0;
    const e = exe as { source: { size?: number; exp?: unknown; reduction?: { op: string; size: number; epilogue: unknown }; name?: string; type?: { inputShapes: number[][] } }; data: { program?: { kernelHash: string; chunkAlignment: number; minWorkPerWorker?: number } } };
    const src = e.source;
    const key = `${current}|${e.data.program?.kernelHash ?? `${src.name}|${JSON.stringify(src.type?.inputShapes)}`}`;
    let a = agg.get(key);
    if (!a) {
      const red = src.reduction;
      a = {
        phase: current,
        calls: 0,
        ms: 0,
        size: src.size ?? 0,
        red: red ? `${red.op}:${red.size}` : "",
        epilogue: red ? String(red.epilogue) : "",
        exp: src.exp !== undefined ? String(src.exp) : `${src.name} ${JSON.stringify(src.type?.inputShapes)}`,
        flops: red && red.op === "Add" ? 2 * (src.size ?? 0) * red.size : 0,
        tiled: e.data.program ? (e.data.program.chunkAlignment !== 16 ? `tiled/${e.data.program.chunkAlignment}` : "") : "routine",
      };
      agg.set(key, a);
    }
    a.calls++;
    a.ms += ms;
  };
}

const st = initRlState(ctx, cfg.algorithm!);
await ctx.engine.setReference("policy");
const log = new RunLogger(dir, true);
let t = performance.now();
await rlStep(ctx, cfg.algorithm!, st, log);
const warm = (performance.now() - t) / 1000;
phase.clear();
recording = kernels;
t = performance.now();
for (let i = 0; i < steps; i++) await rlStep(ctx, cfg.algorithm!, st, log);
const total = (performance.now() - t) / 1000;
recording = false;

const threads = jaxThreads().threads;
console.log(`# embedded engine profile: hidden ${hidden} × ${layers} layers, ${ctx.engine.info().numParams} parameters, ${threads} thread(s); warm-up step ${warm.toFixed(2)} s`);
console.log(`\n## phases (mean of ${steps} steps; step ${(total / steps).toFixed(3)} s)\n`);
console.log("| phase | s/step | share |\n|---|---|---|");
let inEngine = 0;
for (const [k, s] of [...phase].sort((a, b) => b[1] - a[1])) {
  inEngine += s;
  console.log(`| ${k} | ${(s / steps).toFixed(3)} | ${((100 * s) / total).toFixed(1)}% |`);
}
console.log(`| rest (reward, advantages, loss bookkeeping) | ${((total - inEngine) / steps).toFixed(3)} | ${((100 * (total - inEngine)) / total).toFixed(1)}% |`);

if (kernels) {
  const rows = [...agg.values()].sort((a, b) => b.ms - a.ms);
  const kms = rows.reduce((s, r) => s + r.ms, 0);
  const flops = rows.reduce((s, r) => s + r.flops * r.calls, 0);
  console.log(`\n## kernels (per step): ${(kms / steps).toFixed(0)} ms in ${rows.length} distinct kernels = ${((100 * kms) / 1000 / total).toFixed(1)}% of the step; matmul-like ${(flops / steps / 1e9).toFixed(2)} GFLOP at ${(flops / (kms / 1000) / 1e9).toFixed(1)} GFLOP/s over all kernel time\n`);
  console.log("| ms/step | share | phase | calls/step | size | reduction | GFLOP/s | path | epilogue | exp (truncated) |\n|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows.slice(0, Number(values.top))) {
    const gf = r.flops ? ((r.flops * r.calls) / (r.ms / 1000) / 1e9).toFixed(1) : "";
    const ep = r.epilogue === "acc" ? "" : r.epilogue.length > 60 ? r.epilogue.slice(0, 60) + "…" : r.epilogue;
    const ex = r.exp.replace(/\s+/g, " ");
    console.log(`| ${(r.ms / steps).toFixed(1)} | ${((100 * r.ms) / kms).toFixed(1)}% | ${r.phase} | ${r.calls / steps} | ${r.size} | ${r.red} | ${gf} | ${r.tiled} | ${ep} | ${ex.length > 90 ? ex.slice(0, 90) + "…" : ex} |`);
  }
  for (const [i, r] of rows.slice(0, Number(values.dump)).entries()) {
    console.log(`\n### kernel ${i + 1}: ${(r.ms / steps).toFixed(1)} ms/step in ${r.phase}, size ${r.size}, ${r.red}, ${r.tiled || "untiled"}\nexp: ${r.exp}\nepilogue: ${r.epilogue}`);
  }
}
await ctx.engine.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
