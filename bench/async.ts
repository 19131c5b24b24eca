/**
 * `npm run bench -- async`: the RL step of the quickstart's model, synchronous vs rl.async
 * (maxStaleness 1: the next batch is sampled by a copy of the policy in a worker thread while the
 * trainer trains). Prints mean seconds per step (first step excluded: jit warm-up) of the fastest
 * of RLVR_BENCH_ROUNDS (default 2) interleaved rounds per mode, and the ratio async/sync, measured in
 * the same run on this machine.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig } from "../src/config/schema.ts";
import { quickstartConfig } from "../src/recipes/quickstart.ts";
import { train } from "../src/trainer/run.ts";

const steps = Number(process.env["RLVR_BENCH_STEPS"] ?? 6);

async function stepSeconds(async: boolean): Promise<{ mean: number; sample: number; train: number }> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-async-"));
  try {
    const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: steps, seed: 1 }, "", "");
    const rl = { ...(base["rl"] as Record<string, unknown>), steps, ...(async ? { async: { maxStaleness: 1 } } : {}) };
    const cfg = parseRunConfig({ ...base, rl, data: { task: "addition-padded", difficulty: 2, trainSize: 2000, testSize: 16 }, eval: { n: 16 } });
    await train(cfg, { quiet: true });
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>).filter((r) => (r["stage"] as unknown) === "rl").slice(1);
    const mean = (k: string) => rows.reduce((a, r) => a + (r[k] ?? 0), 0) / rows.length;
    return { mean: mean("time/step"), sample: mean("time/collect"), train: mean("time/optimize") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Interleaved rounds (sync, async, sync, async, …); each mode's fastest round counts, so a burst of
// load on a shared machine hits both modes alike.
const rounds = Number(process.env["RLVR_BENCH_ROUNDS"] ?? 2);
let sync = { mean: Infinity, sample: 0, train: 0 };
let asyn = { mean: Infinity, sample: 0, train: 0 };
for (let i = 0; i < rounds; i++) {
  const s = await stepSeconds(false);
  if (s.mean < sync.mean) sync = s;
  const a = await stepSeconds(true);
  if (a.mean < asyn.mean) asyn = a;
}
console.log(`RL step, quickstart model (128 prompts x 4, ${steps - 1} steps after warm-up, best of ${rounds} rounds):`);
console.log(`  sync : ${sync.mean.toFixed(2)} s/step (collect ${sync.sample.toFixed(2)} s, optimize ${sync.train.toFixed(2)} s)`);
console.log(`  async: ${asyn.mean.toFixed(2)} s/step (waiting for the prefetched batch ${asyn.sample.toFixed(2)} s, optimize ${asyn.train.toFixed(2)} s)`);
console.log(`async/sync step-time ratio: ${(asyn.mean / sync.mean).toFixed(2)}`);
