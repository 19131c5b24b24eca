/**
 * Experiment (a), second task: TTRL on `addition-padded` (`07+45=` → `052`), where answers have
 * three digits, so the majority of k samples can be right where the greedy answer is not.
 *
 * Model and warm-up are the quickstart's (128 wide, 2 layers; SFT cosine 3e-3 → 1e-3 stopped once
 * greedy accuracy on 256 held-back training prompts reaches 30%, at most 300 steps). RL stage on
 * the training prompts, 60 steps × 64 prompts × 16 samples at T = 1, lr 1e-3 (the rate SFT ended
 * on; warm-up 20 steps), no KL:
 *   ttrl: TTRL — the 16 samples vote, the majority answer is the pseudo-label, reward =
 *         agreement, the first 8 of each group are trained on. No reward reads a label (labels
 *         only feed the logged pseudo-label accuracy and the held-out evaluation);
 *   ttrl-conf: TTRL with the confidence filter `minShare: 0.5` — only groups whose majority holds at
 *         least half of the 16 votes are rewarded (run with --arms ttrl-conf);
 *   grpo: the same stage with the verifier's labelled reward (the ceiling; trains on all 16).
 * Result (docs/experiments.md, experiment a): TTRL lowers held-out accuracy here at every rate tried,
 * with or without the filter — the votes repeat the model's systematic errors. Kept as the probe.
 * Reported: held-out greedy accuracy, pass@1 at T = 1 (4 samples), maj@4, pass@4; pseudo-label
 * accuracy over the first and last 10 steps.
 *
 *   RLVR_THREADS=1 nice -n 10 npx tsx scripts/experiments/ttrl-addition.ts [--seeds 1,2,3] [--arms ttrl,grpo]
 * Env TTRL_STEPS (RL steps, default 60), TTRL_STOP (the warm-up's stopAt target, default 0.3),
 * TTRL_LR (RL learning rate, default 1e-3). A run per seed writes results-<seeds>.json in
 * scratch/experiments/ttrl-addition/, so seeds may run as separate processes; `--report` merges them.
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { baseModel, paddedAdditionSetup, report, reportMerged, runOne, saveSeedResults, seedsFromArgs, type RunResult } from "./methods-lib.ts";

const STEPS = Number(process.env["TTRL_STEPS"] ?? 60);
const STOP = Number(process.env["TTRL_STOP"] ?? 0.3);
const LR = Number(process.env["TTRL_LR"] ?? 1e-3);
const name = ["ttrl-addition", ...(process.env["TTRL_STEPS"] ? [`rl${STEPS}`] : []), ...(process.env["TTRL_STOP"] ? [`stop${STOP}`] : []), ...(process.env["TTRL_LR"] ? [`lr${LR}`] : [])].join("-");
const keys = ["ttrl/label_acc@first10", "ttrl/label_acc@last10", "accuracy@first10", "accuracy@last10"];

const common = paddedAdditionSetup;

function config(seed: number, base: string, arm: string): RunConfigInput {
  return {
    ...common(seed),
    model: { path: base },
    rl: { steps: STEPS, promptsPerStep: 64, groupSize: 16, maxNewTokens: 4, temperature: 1, lr: LR, warmupSteps: 20, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    ...(arm === "ttrl" ? { labelfree: { ttrl: { trainOn: 8 } } } : {}),
    ...(arm === "ttrl-conf" ? { labelfree: { ttrl: { trainOn: 8, minShare: 0.5 } } } : {}),
  };
}

if (process.argv.includes("--report")) {
  reportMerged(name, keys);
} else {
  const armsArg = process.argv.indexOf("--arms");
  const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["ttrl", "grpo"];
  const seeds = seedsFromArgs();
  const results: RunResult[] = [];
  for (const seed of seeds) {
    const base = await baseModel(`${name}/seed${seed}`, {
      ...common(seed),
      sft: { steps: 300, batchSize: 128, lr: 3e-3, schedule: "cosine", minLrRatio: 1 / 3, warmupSteps: 10, weightDecay: 0.01, stopAt: { accuracy: STOP, every: 5, prompts: 256 } },
    });
    for (const arm of arms) {
      results.push(await runOne(name, arm, config(seed, base, arm), ["ttrl/label_acc", "accuracy"]));
      saveSeedResults(name, seeds, results);
    }
  }
  report(`${name}/seeds-${seeds.join("_")}`, results, keys);
}
