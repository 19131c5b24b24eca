/**
 * Diagnostic: where the time of embedded-engine sampling on a real checkpoint goes.
 *
 *   RLVR_THREADS=1 npx tsx scripts/diagnostics/profile-decode.ts [dir] [--reps 2] [--top 20] [--dump 0] [--against path/to/engine.ts] [--inline] [--ab] [--lora 16] [--prompt-len 20]
 *
 * Opens `dir` (default ~/.cache/rlvr/models/smollm2-135m-instruct) inference-only (or with LoRA
 * adapters of rank `--lora`), samples 4 prompts of `--prompt-len` + 0…9 tokens × 4 samples × 32 new tokens (T = 1) `--reps` times after a warm-up, and prints tokens/s,
 * the time inside the engine's jitted prefill/decode calls and awaiting their results; with one
 * thread also the kernels of the last rep (as scripts/diagnostics/profile-embedded.ts does).
 * `--against` loads a second EmbeddedEngine module (e.g. the engine of an earlier commit, extracted
 * with `git archive <commit> src | tar -x -C .old`) and alternates the two in this process, rep by
 * rep, so both see the same load: the A/B of a decode change (tokens and log-probs compared too).
 * `--inline` wraps each sample call in `withInlineKernels` (jax-js patch: kernels on the calling
 * thread); RLVR_JAX_PATCH=off runs the plain jax-js 0.1.25 paths (docs/jax-js-patch.md).
 * `--ab` alternates, rep by rep in this process, the engine with the patch's paths ("this") and
 * with the plain jax-js 0.1.25 paths ("plain", runtime.ts `useJaxPatch(false)`): the honest A/B
 * of the patch on a loaded machine (each variant compiles its own kernels in its warm-up).
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { homedir, loadavg } from "node:os";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { jaxThreads, useJaxPatch, wasmDispatch, withInlineKernels } from "../../src/engines/embedded/runtime.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { reps: { type: "string", default: "2" }, top: { type: "string", default: "20" }, dump: { type: "string", default: "0" }, against: { type: "string" }, inline: { type: "boolean", default: false }, ab: { type: "boolean", default: false }, lora: { type: "string" }, "prompt-len": { type: "string", default: "20" } } });
const dir = positionals[0] ?? join(homedir(), ".cache/rlvr/models/smollm2-135m-instruct");
const loraRank = values.lora ? Number(values.lora) : 0;
const openOpts = loraRank ? { lora: loraConfigSchema.parse({ rank: loraRank }) } : { inferenceOnly: true };
const engine = await EmbeddedEngine.fromPretrained(dir, openOpts);
const Other = values.against ? ((await import(pathToFileURL(resolve(values.against)).href)) as { EmbeddedEngine: typeof EmbeddedEngine }).EmbeddedEngine : null;
const other = Other ? await Other.fromPretrained(dir, openOpts) : null;
const prompts = [0, 1, 2, 3].map((i) => Int32Array.from({ length: Number(values["prompt-len"]) + 3 * i }, (_, j) => 100 + ((j * 7 + i * 13) % 900)));
const req = { prompts, n: 4, maxNewTokens: 32, temperature: 1, seed: 1, stopTokens: [] as number[] };

type Agg = { calls: number; ms: number; size: number; red: string; exp: string; flops: number };
const agg = new Map<string, Agg>();
let recording = false;
if (jaxThreads().threads === 1) {
  const distDir = join(createRequire(import.meta.url).resolve("@jax-js/jax"), "..");
  const chunk = readdirSync(distDir).find((f) => /^backend-.*\.js$/.test(f))!;
  const mod = (await import(pathToFileURL(join(distDir, chunk)).href)) as Record<string, unknown>;
  const getBackend = Object.values(mod).find((f) => typeof f === "function" && String(f).includes("backend not ready")) as (d: string) => { dispatch: (e: unknown, i: unknown, o: unknown) => void };
  const backend = getBackend("wasm");
  const orig = backend.dispatch.bind(backend);
  backend.dispatch = (exe, inputs, outputs) => {
    if (!recording) return orig(exe, inputs, outputs);
    const t0 = performance.now();
    orig(exe, inputs, outputs);
    const ms = performance.now() - t0;
    const e = exe as { source: { size?: number; exp?: unknown; reduction?: { op: string; size: number }; name?: string; type?: { inputShapes: number[][] } }; data: { program?: { kernelHash: string } } };
    const src = e.source;
    const key = e.data.program?.kernelHash ?? `${src.name}|${JSON.stringify(src.type?.inputShapes)}`;
    let a = agg.get(key);
    if (!a) {
      const red = src.reduction;
      a = { calls: 0, ms: 0, size: src.size ?? 0, red: red ? `${red.op}:${red.size}` : "", exp: src.exp !== undefined ? String(src.exp) : `${src.name} ${JSON.stringify(src.type?.inputShapes)}`, flops: red && red.op === "Add" ? 2 * (src.size ?? 0) * red.size : 0 };
      agg.set(key, a);
    }
    a.calls++;
    a.ms += ms;
  };
}
const reps = Number(values.reps);
console.log(`threads ${jaxThreads().threads}, jax-js patch ${JSON.stringify(wasmDispatch())}${values.inline ? ", sampling inline" : ""}`);
const variants: [string, EmbeddedEngine, boolean?][] = other ? [["this", engine], ["against", other]] : values.ab ? [["this", engine, true], ["plain", engine, false]] : [["this", engine]];
const best = new Map<string, number>();
let first: Map<string, { tokens: number[][]; logprobs: Float32Array[] }> = new Map();
for (let rep = 0; rep <= reps; rep++) {
  for (const [name, e, patch] of variants) {
    if (patch !== undefined) useJaxPatch(patch);
    recording = rep === reps && name === "this";
    const t = performance.now();
    const out = values.inline ? await withInlineKernels(() => e.sample(req)) : await e.sample(req);
    const s = (performance.now() - t) / 1000;
    const toks = out.reduce((a, r) => a + r.tokens.length, 0);
    if (rep > 0) best.set(name, Math.max(best.get(name) ?? 0, toks / s));
    if (rep === 0) first.set(name, { tokens: out.map((r) => [...r.tokens]), logprobs: out.map((r) => r.logprobs) });
    console.log(`${name} ${rep === 0 ? "warm-up" : `rep ${rep}`}: ${s.toFixed(2)} s, ${(toks / s).toFixed(1)} tokens/s, load ${loadavg()[0]!.toFixed(1)}`);
  }
}
console.log(`best tokens/s: ${[...best].map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")}${variants.slice(1).map(([k]) => `; ratio this/${k} ${(best.get("this")! / best.get(k)!).toFixed(2)}`).join("")}`);
for (const [k] of variants.slice(1)) {
  const a = first.get("this")!;
  const b = first.get(k)!;
  const same = a.tokens.every((t, i) => t.join() === b.tokens[i]!.join());
  let worst = 0;
  a.logprobs.forEach((lp, i) => lp.forEach((x, j) => (worst = Math.max(worst, Math.abs(x - (b.logprobs[i]![j] ?? NaN))))));
  console.log(`${k}: same tokens: ${same}; max |Δ log-prob| ${worst.toExponential(2)}`);
}
const rows = [...agg.values()].sort((a, b) => b.ms - a.ms);
if (rows.length) {
  const kms = rows.reduce((s, r) => s + r.ms, 0);
  console.log(`\nkernels of the last rep: ${kms.toFixed(0)} ms in ${rows.length} distinct kernels\n| ms | calls | size | reduction | GFLOP/s | exp |\n|---|---|---|---|---|---|`);
  for (const r of rows.slice(0, Number(values.top))) {
    const ex = r.exp.replace(/\s+/g, " ");
    console.log(`| ${r.ms.toFixed(0)} | ${r.calls} | ${r.size} | ${r.red} | ${r.flops ? ((r.flops * r.calls) / r.ms / 1e6).toFixed(1) : ""} | ${ex.length > 110 ? ex.slice(0, 110) + "…" : ex} |`);
  }
  for (const r of rows.slice(0, Number(values.dump))) console.log(`\n${r.ms.toFixed(0)} ms, ${r.red}: ${r.exp}`);
}
await engine.close();
process.exit(0);
