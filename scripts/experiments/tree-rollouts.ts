/**
 * Experiment: entropy-guided tree rollouts (rl.tree) vs plain GRPO at an equal sampled-token
 * budget, 1-digit addition after a shared SFT warm-up, 3 seeds.
 *   npx tsx scripts/experiments/tree-rollouts.ts [--seeds 1,2,3] [--budget 15000]
 */
import { additionBase, argNumbers, runStrategyExperiment } from "./strategies-lib.ts";

const seeds = argNumbers("--seeds", [1, 2, 3]);
const [budget] = argNumbers("--budget", [15000]);
await runStrategyExperiment(
  "tree-rollouts",
  additionBase,
  [
    { arm: "grpo", rl: {} },
    { arm: "tree (2 roots + 6 forks)", rl: { tree: { roots: 2 } } },
  ],
  { seeds, budget: budget!, extraKeys: ["accuracy", "groups/zero_std_frac", "tree/shared_prefix_tokens", "tree/fork_entropy", "tree/root_entropy", "tree/same_token_frac"] },
);
