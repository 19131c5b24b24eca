/**
 * Experiment: entropy-guided tree rollouts (rl.tree) vs plain GRPO at an equal sampled-token
 * budget, 3 seeds, each seed's arms from one shared SFT warm-up.
 *
 * Default: the stable recipe of docs/experiments.md (strategies-lib.ts `additionStableBase`: the
 * quickstart's task, model, SFT stopped at 30% and GRPO 128 prompts × 4 at lr 1e-3, torch engine),
 * budget 122,880 sampled tokens (60 plain GRPO steps); arm `tree` = 2 roots + 2 forks per group of 4.
 * The control arm is shared with hints.ts (same runs directory, reused when identical).
 * `--recipe first`: the first version (1-digit addition, 64-wide model, 50 SFT steps, GRPO 16 × 8
 * at lr 2e-4, 2 roots + 6 forks, budget 15,000), as it ran before the stable recipe existed.
 *   OMP_NUM_THREADS=1 nice -n 10 npx tsx scripts/experiments/tree-rollouts.ts [--seeds 1,2,3] [--budget N] [--recipe first]
 */
import { additionBase, additionStableBase, argNumbers, runStrategyExperiment } from "./strategies-lib.ts";

const first = process.argv.includes("--recipe") && process.argv[process.argv.indexOf("--recipe") + 1] === "first";
const seeds = argNumbers("--seeds", [1, 2, 3]);
const [budget] = argNumbers("--budget", [first ? 15000 : 122880]);
await runStrategyExperiment(
  first ? "tree-rollouts" : "tree-rollouts-stable",
  first ? additionBase : (s) => additionStableBase(s),
  [
    { arm: "grpo", rl: {} },
    { arm: first ? "tree (2 roots + 6 forks)" : "tree", rl: { tree: { roots: 2 } } },
  ],
  {
    seeds,
    budget: budget!,
    extraKeys: ["accuracy", "groups/zero_std_frac", "tree/shared_prefix_tokens", "tree/fork_entropy", "tree/root_entropy", "tree/same_token_frac"],
    ...(first ? {} : { runsDir: "strategies-stable" }),
  },
);
