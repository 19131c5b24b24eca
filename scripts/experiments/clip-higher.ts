/**
 * Experiment: clip-higher vs symmetric clipping (DAPO, Yu et al. 2025, arXiv:2503.14476, §3.1), and
 * entropy collapse under plain GRPO at a higher learning rate.
 *
 * DAPO's claim: with a symmetric PPO clip (ε = 0.2) the policy's entropy collapses quickly, since the
 * upper bound caps how far a low-probability token's probability can rise; a larger ε_high (0.28)
 * keeps entropy up and gives better accuracy. The clip only acts when an update trains on a batch
 * with a policy that already moved away from the sampler's, so the clip arms make 4 optimizer updates
 * per batch (`rl.miniBatches: 4`, 128 sequences each); with one update per batch (the recipe) the
 * ratio is 1 and no clip ever binds.
 *
 * Arms (the recipe of scratchpad-lib.ts from the shared SFT base, KL off, same samples per step and steps):
 *   clip-sym      miniBatches 4, clip 0.2 / 0.2
 *   clip-higher   miniBatches 4, clip 0.2 / 0.28
 *   grpo          the recipe (1 update per batch, lr 3e-4): the plain GRPO runs of length-shaping.ts
 *   grpo-lr1e-3   the recipe at lr 1e-3 (entropy collapse at a higher learning rate)
 * Logged per step: entropy (mean per-token entropy of the trained responses under the policy being
 * trained, nats), clipfrac_low / clipfrac_high, ratio_max.
 *
 *   nice -n 10 npx tsx scripts/experiments/clip-higher.ts [--seeds 1,2,3] [--arms ...] [--jobs 2] [--report]
 * Kept logs: experiments/runs/clip-higher/<arm>-seed<N>/; figures docs/figures/clip-higher-entropy.svg,
 * clip-higher-accuracy.svg.
 */
import { cell, main, meanFigure, perSeedLine, scratchpadRecipe, series, standardTable, window, writeReport, type Arm, type RunRecord } from "./scratchpad-lib.ts";

const NAME = "clip-higher";
const arms: Arm[] = [
  { arm: "clip-sym", config: (seed) => scratchpadRecipe(seed, { rl: { miniBatches: 4 } }) },
  { arm: "clip-higher", config: (seed) => scratchpadRecipe(seed, { rl: { miniBatches: 4 }, algorithm: { loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.28 } } }) },
  { arm: "grpo", config: (seed) => scratchpadRecipe(seed), from: "length-shaping" },
  { arm: "grpo-lr1e-3", config: (seed) => scratchpadRecipe(seed, { rl: { lr: 1e-3 } }) },
];
const order = arms.map((a) => a.arm);
const W = 5;

const firstLast = (key: string, digits = 2, scale = 1) => (rs: RunRecord[]) =>
  `${cell(rs.map((r) => window(series(r.dir, key), W, "first")), digits, scale)} → ${cell(rs.map((r) => window(series(r.dir, key), W, "last")), digits, scale)}`;
const meanOf = (key: string, digits = 2, scale = 1) => (rs: RunRecord[]) => cell(rs.map((r) => window(series(r.dir, key), 1e9, "first")), digits, scale);

await main(NAME, arms, async (runs) => {
  const table = standardTable(
    runs,
    order,
    [
      [`entropy first ${W} → last ${W} (nats/token)`, firstLast("entropy", 3)],
      ["clipfrac low / high, mean over steps (%)", (rs) => `${meanOf("clipfrac_low", 2, 100)(rs)} / ${meanOf("clipfrac_high", 2, 100)(rs)}`],
      ["ratio max, mean over steps", meanOf("ratio_max", 2)],
    ],
    W,
  );
  writeReport(NAME, `${table}\n\nPer seed, after RL (greedy % / pass@1 % / held-out length): ${perSeedLine(runs, order)}`);
  await meanFigure(runs, order, "entropy", `${NAME}-entropy.svg`, "Policy entropy on the trained responses (addition-scratchpad, d = 2)", "mean entropy per token (nats)");
  await meanFigure(runs, order, "accuracy", `${NAME}-accuracy.svg`, "Training accuracy at T = 1 (addition-scratchpad, d = 2)", "accuracy (fraction of sampled responses)");
});
