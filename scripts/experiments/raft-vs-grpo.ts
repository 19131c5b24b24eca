/**
 * Experiment (c): RAFT vs GRPO at equal samples.
 *
 * Task `maximum` at difficulty 5, a 64-wide char-level model from random initialisation (no SFT,
 * no demonstrations: both arms learn from verifier-scored samples only). Both arms sample the same
 * 16 prompts × 8 responses per step for 40 steps (5,120 samples) at the same learning rate:
 *   grpo: group-normalised advantages, PPO-clip, one update per step;
 *   raft: keep the best correct response per prompt, one SFT update on the kept ones.
 * Reported: held-out greedy accuracy, sampled accuracy (T = 1) and maj@4.
 *
 *   nice -n 10 npx tsx scripts/experiments/raft-vs-grpo.ts [--seeds 1,2,3]
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { report, runOne, seedsFromArgs, type RunResult } from "./methods-lib.ts";

function config(seed: number, arm: string): RunConfigInput {
  return {
    seed,
    model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789,>" },
    data: { task: "maximum", difficulty: 5, trainSize: 2000, testSize: 256 },
    rl: { steps: 40, promptsPerStep: 16, groupSize: 8, maxNewTokens: 2, lr: 2e-3, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 2 },
    ...(arm === "raft" ? { guided: { raft: { keep: "best", threshold: 1, perPrompt: 1 } } } : {}),
  };
}

const results: RunResult[] = [];
for (const seed of seedsFromArgs()) for (const arm of ["grpo", "raft"]) results.push(await runOne("raft-vs-grpo", arm, config(seed, arm), ["accuracy", "raft/kept_frac"]));
report("raft-vs-grpo", results, ["accuracy@first10", "accuracy@last10"]);
