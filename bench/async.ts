/**
 * `npm run bench -- async`: the RL step of the quickstart's model, synchronous vs rl.async
 * (maxStaleness 1: the next batch is sampled by a copy of the policy in a worker thread while the
 * trainer trains). Prints mean seconds per step (first step excluded: jit warm-up) of the fastest
 * of RLVR_BENCH_ROUNDS (default 2) interleaved rounds per mode, and the ratio async/sync, measured in
 * the same run on this machine, with where each mode's step time went (src/pipeline/step.ts):
 * `wait_rollouts` (the trainer idle waiting for its batch), `wait_weights` (the sampler idle
 * waiting for new weights), `overlap` (both at work at once) and `sync` (pushing weights), and
 * which side bounds the async speedup: the sampler when the trainer waits, the trainer when the
 * sampler waits. With sampling S and training T seconds a step, sync takes S + T and async at
 * best max(S, T).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../src/config/schema.ts";
import { quickstartConfig } from "../src/recipes/quickstart.ts";
import { train } from "../src/trainer/run.ts";

const steps = Number(process.env["RLVR_BENCH_STEPS"] ?? 6);

/** Mean seconds per step of each part (first step excluded). */
interface Breakdown {
  mean: number;
  sample: number;
  train: number;
  waitRollouts: number;
  waitWeights: number;
  overlap: number;
  sync: number;
}

async function stepSeconds(async: boolean): Promise<Breakdown> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-async-"));
  try {
    const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: steps, seed: 1 }, "", "");
    const rl = { ...(base["rl"] as Record<string, unknown>), steps, ...(async ? { async: { maxStaleness: 1 } } : {}) };
    const cfg = parseRunConfig({ ...base, rl, data: { task: "addition-padded", difficulty: 2, trainSize: 2000, testSize: 16 }, eval: { n: 16 } });
    await train(cfg, { quiet: true });
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((r) => (r["stage"] as unknown) === "rl").slice(1);
    const mean = (k: string) => rows.reduce((a, r) => a + (r[k] ?? 0), 0) / rows.length;
    return {
      mean: mean("time/step"),
      sample: mean("time/sample"),
      train: mean("time/train") + mean("time/reward") + mean("time/rescore"),
      waitRollouts: mean("time/wait_rollouts"),
      waitWeights: mean("time/wait_weights"),
      overlap: mean("time/overlap"),
      sync: mean("time/sync"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Interleaved rounds (sync, async, sync, async, …); each mode's fastest round counts, so a burst of
// load on a shared machine hits both modes alike.
const rounds = Number(process.env["RLVR_BENCH_ROUNDS"] ?? 2);
let sync: Breakdown = { mean: Infinity, sample: 0, train: 0, waitRollouts: 0, waitWeights: 0, overlap: 0, sync: 0 };
let asyn: Breakdown = { ...sync };
for (let i = 0; i < rounds; i++) {
  const s = await stepSeconds(false);
  if (s.mean < sync.mean) sync = s;
  const a = await stepSeconds(true);
  if (a.mean < asyn.mean) asyn = a;
}
const f = (x: number) => x.toFixed(2);
const line = (name: string, b: Breakdown) =>
  `  ${name}: ${f(b.mean)} s/step = trainer waits for rollouts ${f(b.waitRollouts)} + sampler waits for weights ${f(b.waitWeights)} + both at work ${f(b.overlap)}  (sampling ${f(b.sample)}, training ${f(b.train)}, sync ${f(b.sync)})`;
console.log(`RL step, quickstart model (128 prompts x 4, ${steps - 1} steps after warm-up, best of ${rounds} rounds):`);
console.log(line("sync ", sync));
console.log(line("async", asyn));
const bound = asyn.waitRollouts > asyn.waitWeights ? "sampling (the trainer waits for rollouts)" : "training (the sampler waits for weights)";
const ideal = (sync.sample + sync.train) / Math.max(sync.sample, sync.train);
console.log(`async/sync step-time ratio: ${f(asyn.mean / sync.mean)} (speedup ${f(sync.mean / asyn.mean)}x; at best ${f(ideal)}x = (sampling + training) / max of the two); bound by ${bound}`);
