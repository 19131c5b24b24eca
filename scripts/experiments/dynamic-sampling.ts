/**
 * Experiment: DAPO dynamic sampling with resampling vs plain GRPO at equal sampled-token budget.
 *   npx tsx scripts/experiments/dynamic-sampling.ts [--seeds 1,2,3] [--budget N]
 * Task `maximum` (largest of 5 digits; one-token answers), no SFT, a 64-wide 2-layer model on
 * the embedded engine. Both arms: GRPO advantages, PPO-clip, no KL, 16 prompts × 8 responses per
 * train batch. The dynamic-sampling arm drops groups whose accuracy is identical and resamples
 * (up to 4 generation batches) to fill the batch. Results: docs/experiments.md.
 */
import { runExperiment, seedsFromArgs } from "./lib.ts";
import { maximumBase, withRl } from "./configs.ts";

const budgetArg = process.argv.indexOf("--budget");
const budget = budgetArg >= 0 ? Number(process.argv[budgetArg + 1]) : 10240;

await runExperiment(
  "dynamic-sampling",
  [
    { arm: "grpo", config: (s) => maximumBase(s) },
    { arm: "grpo+dynamic-sampling", config: (s) => withRl(maximumBase(s), { dynamicSampling: { metric: "accuracy", maxGenBatches: 4 } }) },
  ],
  { seeds: seedsFromArgs([1, 2, 3]), budget, extraKeys: ["rollout/gen_batches", "rollout/groups_kept", "accuracy"] },
);
