/**
 * Experiment (a): TTRL raises held-out accuracy without using the training labels.
 *
 * Task `maximum` at difficulty 6 (largest of six digits; one-character answers). Base model per
 * seed: a 64-wide char-level model SFT-warmed for 12 steps on 64 labelled demonstrations. RL stage
 * (40 steps × 16 prompts): TTRL on the training prompts — 16 votes per prompt, the majority
 * answer as the pseudo-label, reward = agreement, train on 8 of the 16. The reward never reads a
 * label; labels are used only to log the pseudo-label accuracy and to evaluate on the held-out split.
 * Arms: ttrl; grpo (the same RL stage with the verifier's labelled reward: the ceiling).
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
  sft: { steps: Number(process.env["TTRL_SFT"] ?? 12), batchSize: 64, examples: 64, lr: 3e-3, schedule: "constant" },
  eval: { maxNewTokens: 2 },
});

function arm(seed: number, base: string, name: string): RunConfigInput {
  const { sft: _sft, ...c } = common(seed);
  return {
    ...c,
    model: { path: base },
    rl: { steps: 40, promptsPerStep: 16, groupSize: 16, maxNewTokens: 2, temperature: 1, lr: Number(process.env["TTRL_LR"] ?? 3e-4), algorithm: { preset: "grpo", kl: { coef: 0 } } },
    ...(name === "ttrl" ? { labelfree: { ttrl: { trainOn: 8 } } } : {}),
  };
}

const armsArg = process.argv.indexOf("--arms");
const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["ttrl", "grpo"];
const keys = ["ttrl/label_acc", "accuracy"];
const results: RunResult[] = [];
for (const seed of seedsFromArgs()) {
  const base = await baseModel("ttrl", common(seed));
  for (const a of arms) results.push(await runOne("ttrl", a, arm(seed, base, a), keys));
}
report("ttrl", results, ["ttrl/label_acc@first10", "ttrl/label_acc@last10", "accuracy@first10", "accuracy@last10"]);
