/**
 * Experiment: GHPO guided hints (rl.hints) vs plain GRPO at an equal sampled-token budget,
 * 1-digit addition after a shared SFT warm-up, 3 seeds.
 *   npx tsx scripts/experiments/hints.ts [--seeds 1,2,3] [--budget 15000]
 */
import { additionBase, argNumbers, runStrategyExperiment } from "./strategies-lib.ts";

const seeds = argNumbers("--seeds", [1, 2, 3]);
const [budget] = argNumbers("--budget", [15000]);
await runStrategyExperiment(
  "hints",
  additionBase,
  [
    { arm: "grpo", rl: {} },
    { arm: "grpo + hints", rl: { hints: { fractions: [0.25, 0.5, 0.75] } } },
  ],
  { seeds, budget: budget!, extraKeys: ["accuracy", "groups/zero_std_frac", "hints/zero_acc_groups", "hints/hinted_groups", "hints/solved_groups", "hints/hint_tokens"] },
);
