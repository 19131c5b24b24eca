/**
 * CHORD vs LUFFY (and RL alone as the control) on experiment (b)'s setup — where RL alone stalls.
 *
 * The setup of scripts/experiments/relift.ts: `addition-padded` at difficulty 2 (`07+45=` → `052`),
 * the quickstart's model (128 wide, 2 layers); base per seed = 100 SFT steps × 128 demonstrations,
 * cosine 3e-3 → 1e-3 (stopped before SFT's phase change: ~10% greedy, ~4% T = 1); RL 100 steps ×
 * 128 prompts × 4 samples, lr 1e-3 with 20 warm-up steps, PPO-clip, no KL. Every arm sees the same
 * 51,200 on-policy samples and (the guided arms) 128 dataset solutions per step:
 *   grpo:      RL alone;
 *   luffy:     one expert trajectory (the solution) joins each group before advantages, policy
 *              shaping f(p) = p/(p + 0.1) on its tokens (as in relift.ts);
 *   chord-mu:  CHORD-μ — L = (1 − μ)·L_GRPO + μ·L_SFT on 128 solutions per update, μ decaying
 *              linearly 0.9 → 0.05 over the 100 steps, plain SFT term (φ off);
 *   chord-phi: CHORD-φ — μ fixed at 0.1, SFT tokens weighted by φ = p(1 − p).
 * Claim tested (Zhang et al. 2025, arXiv:2508.11408): CHORD learns from the expert data more stably
 * and better than LUFFY-style mixing and than RL alone.
 * Engine: torch (OMP_NUM_THREADS=1), ≈ 2.5× faster than the embedded engine on this setup;
 * held-out evaluation (greedy; 4 samples at T = 1: pass@1, maj@4, pass@4) as in methods-lib.ts.
 *
 *   OMP_NUM_THREADS=1 nice -n 10 npx tsx scripts/experiments/chord-luffy.ts [--seeds 1,2,3] [--arms grpo,luffy,chord-mu,chord-phi]
 *   npx tsx scripts/experiments/chord-luffy.ts --report     (merge the per-process results, keep the runs'
 *   logs in experiments/runs/chord-luffy/, draw docs/figures/chord-luffy.svg)
 * Outputs in scratch/experiments/chord-luffy/ (run directories <arm>-seed<N>/, table.md).
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderLineChart } from "../../src/eval/plot.ts";
import { KEPT_ROOT, meanSeries, readRun, type RunRecord } from "./scratchpad-lib.ts";
import { baseModel, paddedAdditionSetup, report, reportMerged, runOne, saveSeedResults, seedsFromArgs, type RunResult } from "./methods-lib.ts";

const NAME = "chord-luffy";
const RL_STEPS = 100;
const KEYS = ["accuracy", "groups/zero_std_frac"];
const ARMS = ["grpo", "luffy", "chord-mu", "chord-phi"];
const COLS = ["accuracy@first10", "accuracy@last10", "groups/zero_std_frac@last10"];

const common = (seed: number): RunConfigInput => {
  const c = paddedAdditionSetup(seed);
  return { ...c, model: { ...c.model, engine: "torch" } };
};

function config(seed: number, base: string, arm: string): RunConfigInput {
  const guided =
    arm === "luffy"
      ? { expert: { mode: "luffy" as const, perGroup: 1, gamma: 0.1 } }
      : arm === "chord-mu"
        ? { expert: { mode: "chord" as const, batchSize: 128, mu: { start: 0.9, end: 0.05, shape: "linear" as const }, phi: false } }
        : arm === "chord-phi"
          ? { expert: { mode: "chord" as const, batchSize: 128, mu: { start: 0.1, end: 0.1, shape: "constant" as const }, phi: true } }
          : undefined;
  return {
    ...common(seed),
    model: { path: base, engine: "torch" },
    rl: { steps: RL_STEPS, promptsPerStep: 128, groupSize: 4, maxNewTokens: 4, temperature: 1, lr: 1e-3, warmupSteps: 20, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    ...(guided ? { guided } : {}),
  } as RunConfigInput;
}

if (process.argv.includes("--report")) {
  reportMerged(NAME, COLS);
  // Keep each run's logs (experiments/runs/chord-luffy/<arm>-seed<N>/) and draw the seed-mean
  // training accuracy per arm (docs/figures/chord-luffy.svg) with the module `rlvr plot` uses.
  const runs: RunRecord[] = [];
  for (const d of readdirSync(join("scratch", "experiments", NAME))) {
    const m = /^(.+)-seed(\d+)$/.exec(d);
    if (!m || !ARMS.includes(m[1]!) || !existsSync(join("scratch", "experiments", NAME, d, "eval.jsonl"))) continue;
    const kept = join(KEPT_ROOT, NAME, d);
    mkdirSync(kept, { recursive: true });
    for (const f of ["metrics.jsonl", "eval.jsonl"]) copyFileSync(join("scratch", "experiments", NAME, d, f), join(kept, f));
    runs.push(readRun(kept, m[1]!, Number(m[2])));
  }
  const series = meanSeries(runs, ARMS, "accuracy").map((x) => ({ ...x, name: x.name.replace(/ \(mean of (\d+) seeds\)/, "") }));
  const svg = await renderLineChart(series, { format: "svg", title: "Where RL alone stalls: training accuracy at T = 1, mean of 3 seeds", xTitle: "RL step", yTitle: "accuracy of sampled responses" });
  writeFileSync(join("docs", "figures", `${NAME}.svg`), svg);
  process.stdout.write(`wrote docs/figures/${NAME}.svg\n`);
} else {
  const armsArg = process.argv.indexOf("--arms");
  const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ARMS;
  const seeds = seedsFromArgs();
  const results: RunResult[] = [];
  for (const seed of seeds) {
    const base = await baseModel(`${NAME}/seed${seed}`, { ...common(seed), sft: { steps: 100, batchSize: 128, lr: 3e-3, schedule: "cosine", minLrRatio: 1 / 3, warmupSteps: 10, weightDecay: 0.01 } });
    for (const arm of arms) {
      results.push(await runOne(NAME, arm, config(seed, base, arm), KEYS));
      saveSeedResults(NAME, seeds, results);
    }
  }
  report(`${NAME}/seeds-${seeds.join("_")}`, results, COLS);
}
