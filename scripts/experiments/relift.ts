/**
 * Experiment (b): ReLIFT / LUFFY vs RL alone where RL alone stalls.
 *
 * Task `addition-padded` at difficulty 2 (`07+45=` → `052`), the quickstart's model (128 wide,
 * 2 layers) and the quickstart's recipe, whose rules come from docs/experiments.md ("Third round"):
 * RL at the rate SFT ended on (1e-3), 128 prompts a step. The base per seed is SFT stopped *before*
 * its phase change (100 steps × 128 demonstrations, cosine 3e-3 → 1e-3), where the model is right
 * greedily on about 10% of prompts and samples a right answer about 4 times in 100: most
 * GRPO groups (86% at first) are all wrong, so RL alone has little signal. All RL arms sample 128 prompts × 4
 * responses per step for the same number of steps (the same rollouts budget):
 *   grpo:   RL alone;
 *   grpo-slow: RL alone at 3e-4 (run with --arms grpo-slow): is RL alone's decay at 1e-3 only its step size?
 *   relift: + ReLIFT — the dataset's solution of every all-wrong question goes to the buffer
 *           (capacity 1024); after each RL step, one SFT step on the 128 oldest buffered
 *           demonstrations at 1e-3 (the SFT stage's final rate);
 *   luffy:  + LUFFY — one expert trajectory (the dataset's solution) joins each group before
 *           advantages, policy shaping f(p) = p/(p + 0.1) on its tokens;
 *   sft:    no RL — the base's SFT continued for as many steps (same batch, same rate) as ReLIFT
 *           took on the same seed: the demonstrations ReLIFT used, without the RL steps. It needs
 *           the relift arm's run directory (this process or an earlier one).
 * Reported: held-out greedy accuracy, pass@1 at T = 1 (4 samples), maj@4, pass@4.
 *
 *   RLVR_THREADS=1 nice -n 10 npx tsx scripts/experiments/relift.ts [--seeds 1,2,3] [--arms grpo,relift,luffy,sft]
 * Env RELIFT_STEPS (RL steps, default 100), RELIFT_BASE_SFT (base SFT steps, default 100).
 * Outputs in scratch/experiments/relift/ (a run per seed writes its own results-<seeds>.json, so
 * seeds may run as separate processes; `--report` merges them into table.md).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunConfigInput } from "../../src/config/schema.ts";
import { baseModel, paddedAdditionSetup, report, reportMerged, runOne, saveSeedResults, seedsFromArgs, type RunResult } from "./methods-lib.ts";

const RL_STEPS = Number(process.env["RELIFT_STEPS"] ?? 100);
const BASE_SFT = Number(process.env["RELIFT_BASE_SFT"] ?? 100);
const PROMPTS = 128;
const BATCH = 128;
const name = ["relift", ...(process.env["RELIFT_STEPS"] ? [`rl${RL_STEPS}`] : []), ...(process.env["RELIFT_BASE_SFT"] ? [`base${BASE_SFT}`] : [])].join("-");

/** SFT steps ReLIFT took on `seed`: its `stage: "relift-sft"` rows (the arm sft needs the relift arm's run, from this or an earlier process). */
function reliftSftSteps(seed: number): number {
  const file = join("scratch", "experiments", name, `relift-seed${seed}`, "metrics.jsonl");
  if (!existsSync(file)) throw new Error(`${file} is missing: arm sft takes as many SFT steps as the relift arm did on the same seed; run --arms relift first`);
  return readFileSync(file, "utf8").split("\n").filter((l) => l.includes('"stage":"relift-sft"')).length;
}

const common = paddedAdditionSetup;

function config(seed: number, base: string, arm: string, sftSteps = 0): RunConfigInput {
  if (arm === "sft") return { ...common(seed), model: { path: base }, sft: { steps: sftSteps, batchSize: BATCH, lr: 1e-3, schedule: "constant", weightDecay: 0.01 } };
  return {
    ...common(seed),
    model: { path: base },
    rl: { steps: RL_STEPS, promptsPerStep: PROMPTS, groupSize: 4, maxNewTokens: 4, temperature: 1, lr: arm === "grpo-slow" ? 3e-4 : 1e-3, warmupSteps: 20, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    ...(arm === "relift" ? { guided: { relift: { hardness: 0, bufferSize: 1024, batchSize: BATCH, maxSftSteps: 1, lr: 1e-3 } } } : {}),
    ...(arm === "luffy" ? { guided: { expert: { mode: "luffy", perGroup: 1, gamma: 0.1 } } } : {}),
  };
}

if (process.argv.includes("--report")) {
  reportMerged(name, ["accuracy@first10", "accuracy@last10", "groups/zero_std_frac@last10", "sft_steps"]);
} else {
  const armsArg = process.argv.indexOf("--arms");
  const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["grpo", "relift", "luffy", "sft"];
  const seeds = seedsFromArgs();
  const results: RunResult[] = [];
  for (const seed of seeds) {
    const base = await baseModel(`${name}/seed${seed}`, { ...common(seed), sft: { steps: BASE_SFT, batchSize: BATCH, lr: 3e-3, schedule: "cosine", minLrRatio: 1 / 3, warmupSteps: 10, weightDecay: 0.01 } });
    for (const arm of arms) {
      const steps = arm === "sft" ? reliftSftSteps(seed) : 0;
      const r = await runOne(name, arm, config(seed, base, arm, steps), ["accuracy", "groups/zero_std_frac"]);
      r.extra["sft_steps"] = arm === "relift" ? reliftSftSteps(seed) : arm === "sft" ? steps : 0;
      results.push(r);
      saveSeedResults(name, seeds, results);
    }
  }
  report(`${name}/seeds-${seeds.join("_")}`, results, ["accuracy@first10", "accuracy@last10", "groups/zero_std_frac@last10", "sft_steps"]);
}
