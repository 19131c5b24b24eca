/**
 * Experiment (d): self-play without data raises held-out accuracy on the same task kind.
 *
 * Task kind `maximum` (a digit list → its largest digit; the runner computes the answer). A
 * 64-wide char-level model from random initialisation gets 12 format-only SFT steps on random
 * well-formed proposals ("?" → "3,8,5"; AZR's seed — no answers, no solutions), then 100 self-play
 * steps: 16 proposals per step, each valid proposal solved 8 times; proposer rewarded for
 * learnability 1 − 2|s − ½|, solver for correctness. No dataset example is ever trained on.
 * Held-out: 256 `maximum` lists of 4 digits (the test split). The solver answers with one token.
 * Arms: selfplay (both roles learn); fixed-proposer (only the solver learns; proposer frozen after the seed).
 *
 *   nice -n 10 npx tsx scripts/experiments/selfplay.ts [--seeds 1,2,3]
 */
import type { RunConfigInput } from "../../src/config/schema.ts";
import { report, runOne, seedsFromArgs, type RunResult } from "./methods-lib.ts";

function config(seed: number, arm: string): RunConfigInput {
  return {
    seed,
    model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 24 } },
    tokenizer: { type: "char", alphabet: "0123456789,>?" },
    data: { task: "maximum", difficulty: 4, trainSize: 16, testSize: 256 },
    // The solver answers with one token (as in the end-to-end GRPO test); the proposer with up to 12.
    rl: { steps: 100, promptsPerStep: 16, groupSize: 8, maxNewTokens: 1, lr: 2e-3, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 1 },
    labelfree: { selfPlay: { kind: "maximum", proposals: 16, solverGroup: 8, maxTasks: 16, seedSteps: 12, minItems: 2, maxItems: 6, proposeMaxTokens: 12, trainProposer: arm === "selfplay" } },
  };
}

const keys = ["selfplay/valid_frac", "selfplay/solve_rate", "selfplay/task_items", "selfplay/unique_tasks"];
const results: RunResult[] = [];
for (const seed of seedsFromArgs()) for (const arm of ["selfplay", "fixed-proposer"]) results.push(await runOne("selfplay", arm, config(seed, arm), keys));
report("selfplay", results, ["selfplay/valid_frac@last10", "selfplay/solve_rate@first10", "selfplay/solve_rate@last10", "selfplay/task_items@first10", "selfplay/task_items@last10"]);
