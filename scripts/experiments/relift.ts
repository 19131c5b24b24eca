/**
 * Experiment (b): ReLIFT / LUFFY vs RL alone on a difficulty where RL alone stalls.
 *
 * Task `addition` at difficulty 2 (two-digit operands, answers up to 198), a 64-wide char-level
 * model from random initialisation: it never samples a correct sum, so every GRPO group is
 * all-wrong and RL alone has no signal. All arms sample 16 prompts × 8 responses per step for 40
 * steps (5,120 samples) at the same RL learning rate:
 *   grpo:   RL alone;
 *   relift: + ReLIFT — the dataset's solution of every all-wrong question goes to a buffer and one
 *           SFT step on 16 of them follows each RL step (at most 640 demonstrations in all);
 *   luffy:  + LUFFY — one expert trajectory (the dataset's solution) joins each group before
 *           advantages, with policy shaping f(p) = p/(p + 0.1) on its tokens (640 expert trajectories).
 * Reported: held-out greedy accuracy, sampled accuracy (T = 1) and maj@4.
 *
 *   nice -n 10 npx tsx scripts/experiments/relift.ts [--seeds 1,2,3] [--arms grpo,relift,luffy]
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { report, runOne, seedsFromArgs, type RunResult } from "./methods-lib.ts";

function config(seed: number, arm: string): RunConfigInput {
  return {
    seed,
    model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition", difficulty: 2, trainSize: 4000, testSize: 256 },
    rl: { steps: 40, promptsPerStep: 16, groupSize: 8, maxNewTokens: 4, lr: 2e-3, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 4 },
    ...(arm === "relift" ? { guided: { relift: { hardness: 0, batchSize: 16, maxSftSteps: 1, lr: 2e-3 } } } : {}),
    ...(arm === "luffy" ? { guided: { expert: { mode: "luffy", perGroup: 1, gamma: 0.1 } } } : {}),
  };
}

const armsArg = process.argv.indexOf("--arms");
const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["grpo", "relift", "luffy"];
const results: RunResult[] = [];
for (const seed of seedsFromArgs()) for (const arm of arms) results.push(await runOne("relift", arm, config(seed, arm), ["accuracy", "groups/zero_std_frac", "relift/hard_frac"]));
report("relift", results, ["accuracy@last10", "groups/zero_std_frac@last10", "relift/hard_frac@last10"]);
