/**
 * Experiment (a): TTRL raises held-out accuracy without using the training labels.
 *
 * Task `maximum` at difficulty 3 (largest of three digits; one-character answers; TTRL_D=6 for the
 * six-digit variant). Base model per
 * seed: a 64-wide char-level model SFT-warmed for 20 steps on 64 labelled demonstrations. RL stage
 * (40 steps × 16 prompts, T = 1, lr 3e-4): TTRL on the training prompts — 16 votes per prompt, the
 * majority answer as the pseudo-label, reward = agreement, train on 8 of the 16. The reward never
 * reads a label; labels are used only to log the pseudo-label accuracy and to evaluate on the
 * held-out split. Arms: ttrl; ttrl-kl (+ k3 KL to the starting model, β = 0.05); ttrl-slow (lr 1e-4,
 * run with --arms ttrl-slow); grpo (the same RL
 * stage with the verifier's labelled reward: the ceiling). Env TTRL_D/TTRL_SFT/TTRL_LR/TTRL_T
 * override difficulty, SFT steps, learning rate and rollout temperature (the variants tried).
 *
 *   nice -n 10 npx tsx scripts/experiments/ttrl.ts [--seeds 1,2,3] [--arms ttrl,grpo]
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { baseModel, report, runOne, seedsFromArgs, type RunResult } from "./methods-lib.ts";

const common = (seed: number): RunConfigInput => ({
  seed,
  model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 24 } },
  tokenizer: { type: "char", alphabet: "0123456789,>" },
  data: { task: "maximum", difficulty: Number(process.env["TTRL_D"] ?? 3), trainSize: 2000, testSize: 256 },
  sft: { steps: Number(process.env["TTRL_SFT"] ?? 20), batchSize: 64, examples: 64, lr: 3e-3, schedule: "constant" },
  eval: { maxNewTokens: 2 },
});

function arm(seed: number, base: string, name: string): RunConfigInput {
  const { sft: _sft, ...c } = common(seed);
  return {
    ...c,
    model: { path: base },
    rl: {
      steps: 40, promptsPerStep: 16, groupSize: 16, maxNewTokens: 2, temperature: Number(process.env["TTRL_T"] ?? 1), lr: name === "ttrl-slow" ? 1e-4 : Number(process.env["TTRL_LR"] ?? 3e-4),
      // ttrl-kl: a k3 KL penalty to the starting model in the loss (β = 0.05) against drift.
      algorithm: { preset: "grpo", kl: { coef: name === "ttrl-kl" ? 0.05 : 0 } },
    },
    ...(name.startsWith("ttrl") ? { labelfree: { ttrl: { trainOn: 8 } } } : {}),
  };
}

const armsArg = process.argv.indexOf("--arms");
const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["ttrl", "grpo"];
const keys = ["ttrl/label_acc", "accuracy"];
const results: RunResult[] = [];
const name = armsArg >= 0 ? `ttrl-${arms.join("+")}` : "ttrl";
for (const seed of seedsFromArgs()) {
  const base = await baseModel(name, common(seed));
  for (const a of arms) results.push(await runOne(name, a, arm(seed, base, a), keys));
}
report(name, results, ["ttrl/label_acc@first10", "ttrl/label_acc@last10", "accuracy@first10", "accuracy@last10"]);
