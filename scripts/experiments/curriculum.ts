/**
 * Experiment: prompt curriculum vs plain GRPO at equal sampled-token budget.
 *   npx tsx scripts/experiments/curriculum.ts [--seeds 1,2,3] [--budget N]
 * Task `maximum`, held out at 6 digits (data.difficulty 6). Plain GRPO trains on 6-digit lists
 * from the start; the curriculum arm starts at 2 digits, raises the difficulty by one when the
 * rolling training accuracy over 3 steps reaches 0.8 and lowers it at 0.2, up to 6 (prompts are
 * generated at the current difficulty). Same model and optimiser as the other experiments
 * (configs.ts). Results: docs/experiments.md.
 */
import { runExperiment, seedsFromArgs } from "./lib.ts";
import { maximumBase, withRl } from "./configs.ts";

const budgetArg = process.argv.indexOf("--budget");
const budget = budgetArg >= 0 ? Number(process.argv[budgetArg + 1]) : 10240;

await runExperiment(
  "curriculum",
  [
    { arm: "grpo@6", config: (s) => maximumBase(s, 6) },
    { arm: "grpo+curriculum 2→6", config: (s) => withRl(maximumBase(s, 6), { curriculum: { start: 2, min: 2, max: 6, window: 3, raiseAbove: 0.8, lowerBelow: 0.2 } }) },
  ],
  { seeds: seedsFromArgs([1, 2, 3]), budget, extraKeys: ["curriculum/difficulty", "accuracy"] },
);
