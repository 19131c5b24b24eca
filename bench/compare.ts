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
 *   npm run bench -- compare [--sizes 128x2,256x4] [--threads 1,2] [--reps 2]
 *
 * Torch rows need python/.venv (rlvr setup torch); without it they are skipped with the reason.
 * Timings on a shared machine are noisy: compare ratios from one run, not across runs.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

type Phase = "train" | "sample" | "step";
type Row = Record<Phase, number> & { params: number; tokens: number };

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : dflt;
};

/** One engine × size × thread count, in this process (the child). Prints one JSON line. */
async function child(engine: "embedded" | "torch", hidden: number, layers: number, reps: number): Promise<void> {
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
      model: { engine, device: engine === "torch" ? "cpu" : undefined, init: { hiddenSize: hidden, numLayers: layers, numHeads: Math.max(1, hidden / 32), maxPositionEmbeddings: 32 } },
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

if (args[0] === "--child") {
  await child(args[1] as "embedded" | "torch", Number(args[2]), Number(args[3]), Number(args[4]));
  process.exit(0);
}

const sizes = opt("sizes", "128x2,256x4,512x2,512x4").split(",").map((s) => s.split("x").map(Number) as [number, number]);
const threads = opt("threads", "1,2").split(",").map(Number);
const reps = Number(opt("reps", "2"));
const self = fileURLToPath(import.meta.url);

const { TorchEngine } = await import("../src/engines/torch/engine.ts");
const probe = TorchEngine.probe();
if (!probe.ok) console.log(`torch engine rows skipped: ${probe.reason} (set it up with: rlvr setup torch)`);
const engines = probe.ok ? (["embedded", "torch"] as const) : (["embedded"] as const);

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
    const a = results.get(`embedded ${h}x${l} ${n}`);
    const b = results.get(`torch ${h}x${l} ${n}`);
    if (a && b) console.log(`| ${h}×${l} | | ${n} | **embedded/torch** | ${(a.train / b.train).toFixed(2)}× | | ${(a.sample / b.sample).toFixed(2)}× | ${(a.step / b.step).toFixed(2)}× |`);
  }
}
const bestStep = (e: string) => Math.min(...threads.map((n) => results.get(`${e} 128x2 ${n}`)?.step ?? Infinity));
const emb = bestStep("embedded");
const tor = bestStep("torch");
console.log("");
if (Number.isFinite(emb) && Number.isFinite(tor)) console.log(`quickstart embedded/torch ratio: ${(emb / tor).toFixed(2)}`);
else console.log(`quickstart embedded/torch ratio: n/a (${Number.isFinite(emb) ? "no torch engine row" : "no embedded row"} for 128x2)`);
