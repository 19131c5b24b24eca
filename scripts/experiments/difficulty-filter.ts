/**
 * Experiment: balanced online difficulty filtering (pass rate in [0.2, 0.8], arXiv:2504.03380)
 * vs plain GRPO at equal sampled-token budget.
 *   npx tsx scripts/experiments/difficulty-filter.ts [--seeds 1,2,3] [--budget N]
 * Same setup as dynamic-sampling.ts (task `maximum`, 5 digits, no SFT, 64-wide model); the
 * filtered arm keeps groups whose pass rate over 8 responses is in [0.2, 0.8] (2..6 correct) and
 * resamples up to 4 generation batches to fill 16 groups. Results: docs/experiments.md.
 */
import { runExperiment, seedsFromArgs } from "./lib.ts";
import { maximumBase, withRl } from "./configs.ts";

const budgetArg = process.argv.indexOf("--budget");
const budget = budgetArg >= 0 ? Number(process.argv[budgetArg + 1]) : 10240;

await runExperiment(
  "difficulty-filter",
  [
    { arm: "grpo", config: (s) => maximumBase(s) },
    { arm: "grpo+band[0.2,0.8]", config: (s) => withRl(maximumBase(s), { difficultyFilter: { low: 0.2, high: 0.8, maxGenBatches: 4 } }) },
  ],
  { seeds: seedsFromArgs([1, 2, 3]), budget, extraKeys: ["rollout/gen_batches", "rollout/groups_kept", "accuracy"] },
);
