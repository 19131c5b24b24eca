/**
 * `npm run bench -- compare`: the embedded engine (jax-js, Wasm) and the torch engine (PyTorch,
 * CPU) side by side on the quickstart's task, at model sizes hidden × layers 128×2 (the
 * quickstart's model), 256×4, 512×2 and 512×4, on 1 and 2 threads. For each it measures
 *   - train:  forwardBackward + optimStep on 256 quickstart sequences (prompt + answer), also as
 *             model GFLOP/s = 6 · parameters · tokens (the sequences' unpadded tokens) / seconds,
 *   - sample: 32 prompts × 8 samples × 4 new tokens,
 *   - step:   the quickstart's full GRPO step (128 prompts × 4 samples: sample, reward,
 *             reference scoring, forward-backward, AdamW),
 * as the best of `--reps` timed repetitions after one warm-up (jit compilation), each engine ×
 * size × thread count in its own process (jax-js fixes its thread count when it loads:
 * RLVR_THREADS; torch gets OMP_NUM_THREADS). Prints each embedded/torch ratio and, last,
 * `quickstart embedded/torch ratio: R` — the RL step on the quickstart's model, each engine at
 * its best thread count.
 *
 *   npm run bench -- compare [--sizes 128x2,256x4|none] [--threads 1,2] [--reps 2] [--real DIR|off] [--real-reps 1]
 *
 * Then the real-model row (`--real DIR`, default ~/.cache/rlvr/models/smollm2-135m-instruct when it
 * exists; `--real off` skips it), both engines on 2 threads, LoRA (rank 16 on every linear module):
 *   - sample: 4 word problems (chat template) × 4 samples × 32 new tokens (no stop), as tokens/s,
 *   - score:  the policy's log-probs of those 16 sequences,
 *   - step:   one GRPO step of the same shape (sample, reward, forward-backward, AdamW on the adapters),
 * each the best of `--real-reps` (default 1) after a warm-up, and the embedded/torch ratios. A phase
 * that fails (the embedded engine's RL step runs out of jax-js's 4 GiB heap on SmolLM2 today) is
 * reported in its cell; the phases before it keep their numbers.
 *
 * Where onnxruntime-node is installed, a third variant, `embedded-native`, is the embedded engine
 * with native kernels (model.nativeKernels: sampling, scoring and LoRA training's forward on
 * onnxruntime's CPU kernels, gradients on jax-js), with its own ratios.
 *
 * Torch rows need python/.venv (rlvr setup torch); without it they are skipped with the reason.
 * Timings on a shared machine are noisy: compare ratios from one run, not across runs.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

type Phase = "train" | "sample" | "step";
/** The engines compared: embedded-native is the embedded engine with native kernels (onnxruntime-node, when installed). */
type Variant = "embedded" | "embedded-native" | "torch";
type Row = Record<Phase, number> & { params: number; tokens: number };

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : dflt;
};

/** One engine × size × thread count, in this process (the child). Prints one JSON line. */
async function child(variant: Variant, hidden: number, layers: number, reps: number): Promise<void> {
  const engine = variant === "torch" ? "torch" : "embedded";
  const { parseRunConfig } = await import("../src/config/schema.ts");
  const { quickstartConfig } = await import("../src/recipes/quickstart.ts");
  const { buildContext } = await import("../src/trainer/context.ts");
  const { initRlState } = await import("../src/pipeline/state.ts");
  const { rlStep } = await import("../src/pipeline/step.ts");
  const { RunLogger } = await import("../src/pipeline/logger.ts");
  const { packSequences } = await import("../src/core/sequence.ts");
  const { makeSftLoss, stepCounts } = await import("../src/algorithms/index.ts");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "rlvr-compare-"));
  try {
    const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: reps + 1, seed: 1 }, "", "");
    const cfg = parseRunConfig({
      ...base,
      model: { engine, device: engine === "torch" ? "cpu" : undefined, nativeKernels: variant === "embedded-native" ? true : undefined, init: { hiddenSize: hidden, numLayers: layers, numHeads: Math.max(1, hidden / 32), maxPositionEmbeddings: 32 } },
      data: { task: "addition-padded", difficulty: 2, trainSize: 2000, testSize: 64 },
    });
    const ctx = await buildContext(cfg);
    const best = async (f: () => Promise<unknown>) => {
      await f(); // warm-up: jit compilation (embedded), allocator and thread pools (torch)
      let b = Infinity;
      for (let i = 0; i < reps; i++) {
        const t = performance.now();
        await f();
        b = Math.min(b, (performance.now() - t) / 1000);
      }
      return b;
    };
    const seqs = ctx.train.slice(0, 256).map((ex) => ({ prompt: ctx.encodePrompt(ex), response: [...ctx.tokenizer.encode(ex.answer, { addSpecialTokens: false }), ctx.tokenizer.eosId] }));
    const batch = packSequences(seqs, ctx.tokenizer.padId);
    const counts = stepCounts([batch], 4);
    const train = await best(async () => {
      await ctx.engine.forwardBackward(batch, makeSftLoss(counts));
      await ctx.engine.optimStep({ lr: 1e-4 });
    });
    const prompts = ctx.train.slice(0, 32).map(ctx.encodePrompt);
    const sample = await best(() => ctx.engine.sample({ prompts, n: 8, maxNewTokens: 4, temperature: 1, seed: 1, stopTokens: [] }));
    const st = initRlState(ctx, cfg.algorithm!);
    await ctx.engine.setReference("policy");
    const log = new RunLogger(dir, true);
    const step = await best(() => rlStep(ctx, cfg.algorithm!, st, log));
    let tokens = 0;
    for (const n of batch.lengths) tokens += n;
    const row: Row = { train, sample, step, params: ctx.engine.info().numParams, tokens };
    await ctx.engine.close();
    console.log(JSON.stringify(row));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Real-model phases of one engine, in this process (the child). Prints one JSON line. */
/** `phases`: the last timed RL step's seconds by phase (rlStep's time/* metrics). */
type RealRow = { sampleTokensPerS: number; score: number; step: number | string; load: number; phases?: Record<string, number> };
async function realChild(variant: Variant, modelDir: string, reps: number): Promise<void> {
  const engine = variant === "torch" ? "torch" : "embedded";
  const { parseRunConfig } = await import("../src/config/schema.ts");
  const { realRecipeConfig } = await import("../src/recipes/real.ts");
  const { generateExamples, wordProblemsTask, writeExamplesJsonl } = await import("../src/tasks/index.ts");
  const { buildContext } = await import("../src/trainer/context.ts");
  const { initRlState } = await import("../src/pipeline/state.ts");
  const { rlStep } = await import("../src/pipeline/step.ts");
  const { RunLogger } = await import("../src/pipeline/logger.ts");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir, loadavg } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "rlvr-compare-real-"));
  try {
    const trainFile = join(dir, "train.jsonl");
    const testFile = join(dir, "test.jsonl");
    writeExamplesJsonl(trainFile, generateExamples(wordProblemsTask, { n: 64, seed: 1, difficulty: 1, split: "train" }));
    writeExamplesJsonl(testFile, generateExamples(wordProblemsTask, { n: 8, seed: 1, difficulty: 1, split: "test" }));
    const base = realRecipeConfig({ out: dir, modelPath: modelDir, engine, steps: reps + 1, seed: 1 }, trainFile, testFile);
    const cfg = parseRunConfig({
      ...base,
      model: { ...base.model, device: engine === "torch" ? "cpu" : undefined, nativeKernels: variant === "embedded-native" ? true : undefined, lora: { rank: 16 } },
      rl: { ...base.rl, promptsPerStep: 4, groupSize: 4, maxNewTokens: 32 },
    });
    const ctx = await buildContext(cfg);
    const best = async (f: () => Promise<unknown>) => {
      await f(); // warm-up
      let b = Infinity;
      for (let i = 0; i < reps; i++) {
        const t = performance.now();
        await f();
        b = Math.min(b, (performance.now() - t) / 1000);
      }
      return b;
    };
    const prompts = ctx.train.slice(0, 4).map(ctx.encodePrompt);
    const req = { prompts, n: 4, maxNewTokens: 32, temperature: 1, seed: 1, stopTokens: [] };
    const sample = await best(() => ctx.engine.sample(req));
    const samples = await ctx.engine.sample(req);
    const { packSequences } = await import("../src/core/sequence.ts");
    const batch = packSequences(samples.map((r) => ({ prompt: prompts[r.promptIndex]!, response: [...r.tokens] })), ctx.tokenizer.padId);
    const score = await best(() => ctx.engine.score(batch, { model: "policy" }));
    const st = initRlState(ctx, cfg.algorithm!);
    const log = new RunLogger(dir, true);
    let step: number | string;
    let phases: Record<string, number> | undefined;
    try {
      step = await best(async () => {
        const m = (await rlStep(ctx, cfg.algorithm!, st, log)) as Record<string, unknown>;
        phases = Object.fromEntries(Object.entries(m).filter(([k, v]) => k.startsWith("time/") && typeof v === "number" && v >= 0.05).map(([k, v]) => [k.slice(5), Math.round((v as number) * 100) / 100]));
      });
    } catch (e) {
      step = `failed: ${(e as Error).message}`;
    }
    await ctx.engine.close();
    const row: RealRow = { sampleTokensPerS: (16 * 32) / sample, score, step, load: loadavg()[0]!, phases };
    console.log(JSON.stringify(row));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args[0] === "--child-real") {
  await realChild(args[1] as Variant, args[2]!, Number(args[3]));
  process.exit(0);
}

if (args[0] === "--child") {
  await child(args[1] as Variant, Number(args[2]), Number(args[3]), Number(args[4]));
  process.exit(0);
}

const sizesArg = opt("sizes", "128x2,256x4,512x2,512x4");
const sizes = (sizesArg === "none" ? [] : sizesArg.split(",")).map((s) => s.split("x").map(Number) as [number, number]);
const threads = opt("threads", "1,2").split(",").map(Number);
const reps = Number(opt("reps", "2"));
const self = fileURLToPath(import.meta.url);

const { TorchEngine } = await import("../src/engines/torch/engine.ts");
const probe = TorchEngine.probe();
if (!probe.ok) console.log(`torch engine rows skipped: ${probe.reason} (set it up with: rlvr setup torch)`);
const { loadOrt } = await import("../src/engines/embedded/ort-runtime.ts");
const native = (await loadOrt()) !== null;
if (!native) console.log("embedded-native rows skipped: onnxruntime-node is not installed (ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node)");
const engines: Variant[] = ["embedded", ...(native ? (["embedded-native"] as const) : []), ...(probe.ok ? (["torch"] as const) : [])];

function run(engine: string, hidden: number, layers: number, n: number): Row | string {
  const env = { ...process.env, RLVR_BENCH_CHILD: "1", RLVR_THREADS: String(n), OMP_NUM_THREADS: String(n), MKL_NUM_THREADS: String(n) };
  const r = spawnSync(process.execPath, ["--import", "tsx", self, "--child", engine, String(hidden), String(layers), String(reps)], { encoding: "utf8", env, maxBuffer: 64 << 20 });
  const line = r.stdout.trim().split("\n").filter((l) => l.startsWith("{")).pop();
  if (r.status === 0 && line) return JSON.parse(line) as Row;
  return `failed (exit ${r.status}): ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`;
}

console.log(`# embedded vs torch engine, quickstart task; best of ${reps} after a warm-up; seconds`);
console.log("| model | params | threads | engine | train 256 seqs | train GFLOP/s | sample 256×4 | RL step 512 seqs |");
console.log("|---|---|---|---|---|---|---|---|");
const results = new Map<string, Row>();
const f = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
for (const [h, l] of sizes) {
  for (const n of threads) {
    for (const e of engines) {
      const r = run(e, h, l, n);
      if (typeof r === "string") {
        console.log(`| ${h}×${l} | | ${n} | ${e} | ${r} | | | |`);
        continue;
      }
      results.set(`${e} ${h}x${l} ${n}`, r);
      console.log(`| ${h}×${l} | ${(r.params / 1e6).toFixed(2)}M | ${n} | ${e} | ${f(r.train)} | ${((6 * r.params * r.tokens) / r.train / 1e9).toFixed(1)} | ${f(r.sample)} | ${f(r.step)} |`);
    }
    const b = results.get(`torch ${h}x${l} ${n}`);
    for (const v of ["embedded", "embedded-native"]) {
      const a = results.get(`${v} ${h}x${l} ${n}`);
      if (a && b) console.log(`| ${h}×${l} | | ${n} | **${v}/torch** | ${(a.train / b.train).toFixed(2)}× | | ${(a.sample / b.sample).toFixed(2)}× | ${(a.step / b.step).toFixed(2)}× |`);
    }
  }
}
const bestStep = (e: string) => Math.min(...threads.map((n) => results.get(`${e} 128x2 ${n}`)?.step ?? Infinity));
const emb = bestStep("embedded");
const tor = bestStep("torch");
console.log("");
if (!sizes.length) {
  // no quickstart-sized rows asked for (--sizes none)
} else if (Number.isFinite(emb) && Number.isFinite(tor)) console.log(`quickstart embedded/torch ratio: ${(emb / tor).toFixed(2)}`);
else console.log(`quickstart embedded/torch ratio: n/a (${Number.isFinite(emb) ? "no torch engine row" : "no embedded row"} for 128x2)`);
const embNative = bestStep("embedded-native");
if (sizes.length && Number.isFinite(embNative) && Number.isFinite(tor)) console.log(`quickstart embedded-native/torch ratio: ${(embNative / tor).toFixed(2)}`);

// The real model, LoRA, both engines on 2 threads.
const { existsSync } = await import("node:fs");
const { homedir } = await import("node:os");
const { join } = await import("node:path");
const realArg = opt("real", join(homedir(), ".cache/rlvr/models/smollm2-135m-instruct"));
if (realArg !== "off" && existsSync(join(realArg, "config.json"))) {
  const realReps = opt("real-reps", "1");
  const realRows = new Map<string, RealRow>();
  const phaseLines: string[] = [];
  console.log(`\n# real model ${realArg}, LoRA rank 16, 2 threads; best of ${realReps} after a warm-up`);
  console.log("| engine | sample 4×4×32 tokens/s | score 16 seqs (s) | RL step 4×4 (s) | load |\n|---|---|---|---|---|");
  for (const e of engines) {
    const env = { ...process.env, RLVR_BENCH_CHILD: "1", RLVR_THREADS: "2", OMP_NUM_THREADS: "2", MKL_NUM_THREADS: "2" };
    const r = spawnSync(process.execPath, ["--import", "tsx", self, "--child-real", e, realArg, realReps], { encoding: "utf8", env, maxBuffer: 64 << 20 });
    const line = r.stdout.trim().split("\n").filter((l) => l.startsWith("{")).pop();
    if (r.status !== 0 || !line) {
      console.log(`| ${e} | failed (exit ${r.status}): ${r.stderr.trim().split("\n").slice(-3).join(" | ")} | | | |`);
      continue;
    }
    const row = JSON.parse(line) as RealRow;
    realRows.set(e, row);
    console.log(`| ${e} | ${row.sampleTokensPerS.toFixed(1)} | ${f(row.score)} | ${typeof row.step === "number" ? f(row.step) : row.step} | ${row.load.toFixed(1)} |`);
    if (row.phases) phaseLines.push(`${e}: ${Object.entries(row.phases).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  }
  const b = realRows.get("torch");
  for (const v of ["embedded", "embedded-native"]) {
    const a = realRows.get(v);
    if (a && b) console.log(`| **${v}/torch** | ${(b.sampleTokensPerS / a.sampleTokensPerS).toFixed(2)}× the time | ${(a.score / b.score).toFixed(2)}× | ${typeof a.step === "number" && typeof b.step === "number" ? `${(a.step / b.step).toFixed(2)}×` : "n/a"} | |`);
  }
  if (phaseLines.length) console.log(`\nRL step phases (s, last timed step):\n${phaseLines.join("\n")}`);
} else if (realArg !== "off") console.log(`\nreal-model row skipped: no config.json in ${realArg} (set it up with: rlvr setup model smollm2-135m-instruct)`);
