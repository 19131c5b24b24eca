/**
 * Diagnostic: A/B of the embedded engine's training step, two variants in one process.
 *
 *   RLVR_THREADS=2 npx tsx scripts/diagnostics/ab-train.ts [--hidden 512] [--layers 4] [--reps 3] [--shape sft|rl] [--b VARIANT] [--b-rows N]
 *
 * Builds two engines with the same weights (quickstart model config at hidden × layers); engine A
 * traces its jitted functions with `globalThis.__rlvrVariant = ""`, engine B with `--b`; then
 * alternates forwardBackward (SFT loss) on the same batch, best of `--reps` each, and prints the
 * kernel launches of one call, and the max |Δ| of the log-probs and of every gradient between the
 * two. The variant is set again before every call, so code may read it at trace or at call time.
 * The committed engine reads no variant: an experiment wires one in temporarily (e.g.
 * `if (variant("swiglu")) …` in model.ts, read at trace time), measures, and is kept or removed
 * (docs/benchmarks.md, "What changed in the embedded engine"). `--shape sft`: 256 distinct
 * quickstart sequences (bench compare's train column); `rl`: 128 prompts × 4 responses (groups).
 * `--b-rows N`: engine B runs passes of N rows instead of memory.ts's plan (e.g. one pass where
 * the planner splits the batch); the last line is the Wasm heap's size (both engines).
 */
import { wasmHeapBytes } from "../../test/engines/helpers/wasm-memory.ts"; // first: records jax-js's Wasm heap
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadavg } from "node:os";
import { parseRunConfig } from "../../src/config/schema.ts";
import { quickstartConfig } from "../../src/recipes/quickstart.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { packSequences } from "../../src/core/sequence.ts";
import { makeSftLoss, stepCounts } from "../../src/algorithms/index.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import type { ModelConfig } from "../../src/engines/embedded/hf-config.ts";

const { values } = parseArgs({
  options: {
    hidden: { type: "string", default: "512" },
    layers: { type: "string", default: "4" },
    reps: { type: "string", default: "3" },
    shape: { type: "string", default: "sft" },
    b: { type: "string", default: "" },
    "b-rows": { type: "string", default: "" },
  },
});
const g = globalThis as { __rlvrVariant?: string };
const hidden = Number(values.hidden);
const dir = mkdtempSync(join(tmpdir(), "rlvr-ab-"));
const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: 1, seed: 1 }, "", "");
const cfg = parseRunConfig({
  ...base,
  model: { engine: "embedded", init: { hiddenSize: hidden, numLayers: Number(values.layers), numHeads: Math.max(1, hidden / 32), maxPositionEmbeddings: 32 } },
  data: { task: "addition-padded", difficulty: 2, trainSize: 2000, testSize: 64 },
});
const ctx = await buildContext(cfg);
const mc = (ctx.engine as EmbeddedEngine).config as ModelConfig;
await ctx.engine.close();
const answer = (a: string) => [...ctx.tokenizer.encode(a, { addSpecialTokens: false }), ctx.tokenizer.eosId];
const seqs =
  values.shape === "rl"
    ? ctx.train.slice(0, 128).flatMap((ex, i) => [0, 1, 2, 3].map((j) => ({ prompt: ctx.encodePrompt(ex), response: answer(String((Number(ex.answer) + i * j) % 200)) })))
    : ctx.train.slice(0, 256).map((ex) => ({ prompt: ctx.encodePrompt(ex), response: answer(ex.answer) }));
const batch = packSequences(seqs, ctx.tokenizer.padId);
const loss = makeSftLoss(stepCounts([batch], 4));

// Kernel launches per call: jax-js's wasm backend `dispatch`, reached as profile-embedded.ts does.
let launches = 0;
{
  const { readdirSync } = await import("node:fs");
  const { createRequire } = await import("node:module");
  const { pathToFileURL } = await import("node:url");
  const distDir = join(createRequire(import.meta.url).resolve("@jax-js/jax"), "..");
  const chunk = readdirSync(distDir).find((f) => /^backend-.*\.js$/.test(f))!;
  const mod = (await import(pathToFileURL(join(distDir, chunk)).href)) as Record<string, unknown>;
  const getBackend = Object.values(mod).find((f) => typeof f === "function" && String(f).includes("backend not ready")) as (d: string) => { dispatch: (...a: unknown[]) => unknown };
  const backend = getBackend("wasm");
  const orig = backend.dispatch.bind(backend);
  backend.dispatch = (...a: unknown[]) => {
    launches++;
    return orig(...a);
  };
}
const engines: [string, EmbeddedEngine][] = [];
for (const v of ["", values.b]) {
  g.__rlvrVariant = v;
  const e = await EmbeddedEngine.create(mc, { seed: 1 });
  // --b-rows N: engine B plans passes of N rows instead of memory.ts's (e.g. one pass where it splits).
  if (v && values["b-rows"]) (e as unknown as { passRows: () => number }).passRows = () => Number(values["b-rows"]);
  await e.forwardBackward(batch, loss); // warm-up: traces under this variant
  engines.push([v || "A", e]);
}
const grads = await Promise.all(engines.map(async ([, e]) => Object.fromEntries(await Promise.all(e.weightNames().map(async (n) => [n, await e.getGrad(n)] as const)))));
const scores = await Promise.all(engines.map(([, e]) => e.score(batch, { model: "policy" })));
let dg = 0;
let gmax = 0;
for (const n of Object.keys(grads[0]!)) {
  const a = grads[0]![n]!;
  const b = grads[1]![n]!;
  for (let i = 0; i < a.length; i++) {
    dg = Math.max(dg, Math.abs(a[i]! - b[i]!));
    gmax = Math.max(gmax, Math.abs(a[i]!));
  }
}
let dl = 0;
for (let i = 0; i < scores[0]!.logprobs.length; i++) dl = Math.max(dl, Math.abs(scores[0]!.logprobs[i]! - scores[1]!.logprobs[i]!));
console.log(`max |Δ grad| ${dg.toExponential(2)} (max |grad| ${gmax.toExponential(2)}), max |Δ logprob| ${dl.toExponential(2)}`);
const best = new Map<string, number>();
const loads: number[] = [];
for (let r = 0; r < Number(values.reps); r++)
  for (const [name, e] of r % 2 ? [...engines].reverse() : engines) {
    g.__rlvrVariant = name === "A" ? "" : name; // read at call time too (engine.ts experiments)
    e.zeroGrad();
    const t = performance.now();
    launches = 0;
    await e.forwardBackward(batch, loss);
    const s = (performance.now() - t) / 1000;
    if (r === 0) console.log(`${name}: ${launches} kernel launches`);
    best.set(name, Math.min(best.get(name) ?? Infinity, s));
    loads.push(loadavg()[0]!);
    console.log(`rep ${r} ${name}: ${s.toFixed(3)} s (load ${loadavg()[0]!.toFixed(1)})`);
  }
const [a, b] = engines.map(([n]) => best.get(n)!);
console.log(`${values.shape} ${hidden}x${values.layers} B=${batch.batchSize} T=${batch.seqLen}: A ${a!.toFixed(3)} s, ${values.b} ${b!.toFixed(3)} s (${(b! / a!).toFixed(2)}×), load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
console.log(`Wasm heap ${(wasmHeapBytes() / 2 ** 30).toFixed(2)} GiB`);
for (const [, e] of engines) await e.close();
rmSync(dir, { recursive: true, force: true });
