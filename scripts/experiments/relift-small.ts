/**
 * Experiment (b), first version (a 64-wide model; superseded by relift.ts): ReLIFT / LUFFY vs RL
 * alone on the hardest difficulty, where RL alone stalls.
 *
 * Task `addition`. Base model per seed: a 64-wide char-level model SFT-trained briefly on 2-digit
 * sums (difficulty 2, the hardest level here; 100 steps × 64 demonstrations), which leaves it at a
 * few percent: GRPO groups are nearly all wrong and RL alone has almost no signal. All arms sample
 * 16 prompts × 8 responses per step for 100 steps (12,800 samples) at the same RL learning rate:
 *   grpo:   RL alone;
 *   relift: + ReLIFT — the dataset's solution of every all-wrong question goes to a buffer; after
 *           each RL step, SFT steps (lr 3e-3, the SFT stage's) on full batches of 16 buffered
 *           demonstrations (about 15 all-wrong questions join per step, so ≈ 1 SFT step per RL step);
 *   luffy:  + LUFFY — one expert trajectory (the dataset's solution) joins each group before
 *           advantages, policy shaping f(p) = p/(p + 0.1) on its tokens (1,600 expert trajectories).
 * Reported: held-out (difficulty 2) greedy accuracy, sampled accuracy (T = 1) and maj@4.
 *
 *   nice -n 10 npx tsx scripts/experiments/relift-small.ts [--seeds 1,2,3] [--arms grpo,relift,luffy]
 * Env RELIFT_PROMPTS / RELIFT_STEPS change prompts per step and RL steps (the longer variant);
 * RELIFT_BASE_SFT (base SFT steps, default 100) and RELIFT_HARDNESS (ReLIFT's group-accuracy
 * threshold, default 0 = all wrong) give the stronger-base variant, where GRPO has some signal.
 * RELIFT_G (group size), RELIFT_RL_LR (RL learning rate, both arms) and RELIFT_SFT_BATCH (ReLIFT's
 * SFT batch) give the stable-RL variant, where GRPO at a stable lr stays flat instead of decaying.
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { baseModel, report, runOne, seedsFromArgs, type RunResult } from "./methods-lib.ts";

const common = (seed: number, difficulty: number): RunConfigInput => ({
  seed,
  model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789+=" },
  data: { task: "addition", difficulty, trainSize: 4000, testSize: 256 },
  eval: { maxNewTokens: 4 },
});

function config(seed: number, base: string, arm: string): RunConfigInput {
  return {
    ...common(seed, 2),
    model: { path: base },
    rl: { steps: Number(process.env["RELIFT_STEPS"] ?? 100), promptsPerStep: Number(process.env["RELIFT_PROMPTS"] ?? 16), groupSize: Number(process.env["RELIFT_G"] ?? 8), maxNewTokens: 4, lr: Number(process.env["RELIFT_RL_LR"] ?? 1e-3), algorithm: { preset: "grpo", kl: { coef: 0 } } },
    ...(arm === "relift" ? { guided: { relift: { hardness: Number(process.env["RELIFT_HARDNESS"] ?? 0), batchSize: Number(process.env["RELIFT_SFT_BATCH"] ?? 16), maxSftSteps: 2, lr: 3e-3 } } } : {}),
    ...(arm === "luffy" ? { guided: { expert: { mode: "luffy", perGroup: 1, gamma: 0.1 } } } : {}),
  };
}

const armsArg = process.argv.indexOf("--arms");
const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["grpo", "relift", "luffy"];
const baseSft = Number(process.env["RELIFT_BASE_SFT"] ?? 100);
const variant = [
  ...(process.env["RELIFT_STEPS"] || process.env["RELIFT_PROMPTS"] ? [`${process.env["RELIFT_PROMPTS"] ?? 16}x${process.env["RELIFT_STEPS"] ?? 100}`] : []),
  ...(process.env["RELIFT_BASE_SFT"] ? [`base${baseSft}`] : []),
  ...(process.env["RELIFT_HARDNESS"] ? [`hard${process.env["RELIFT_HARDNESS"]}`] : []),
  ...(process.env["RELIFT_G"] ? [`g${process.env["RELIFT_G"]}`] : []),
  ...(process.env["RELIFT_RL_LR"] ? [`lr${process.env["RELIFT_RL_LR"]}`] : []),
  ...(process.env["RELIFT_SFT_BATCH"] ? [`sb${process.env["RELIFT_SFT_BATCH"]}`] : []),
];
const name = ["relift-small", ...variant].join("-");
const results: RunResult[] = [];
for (const seed of seedsFromArgs()) {
  const base = await baseModel(name, { ...common(seed, 2), sft: { steps: baseSft, batchSize: 64, lr: 3e-3, schedule: "cosine" } });
  for (const arm of arms) results.push(await runOne(name, arm, config(seed, base, arm), ["accuracy", "groups/zero_std_frac", "relift/hard_frac"]));
}
report(name, results, ["accuracy@first10", "accuracy@last10", "groups/zero_std_frac@last10", "relift/hard_frac@last10"]);
