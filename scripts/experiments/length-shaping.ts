/**
 * Experiment: length shaping on `addition-scratchpad` — GRPO-λ (Dai et al. 2025, arXiv:2505.18086)
 * and DAPO's soft overlong punishment (Yu et al. 2025, arXiv:2503.14476) against plain GRPO, at an
 * equal sample budget (the same steps × prompts × group size for every arm).
 *
 * Claims tested: GRPO-λ gives shorter responses at (about) equal accuracy; the overlong punishment
 * removes responses near the length cap without costing accuracy.
 *
 * Arms (all: the recipe of scratchpad-lib.ts / examples/scratchpad-grpo.yaml, from the shared SFT base):
 *   grpo          plain GRPO (the baseline; also the grpo arm of dr-grpo-length.ts and clip-higher.ts)
 *   grpo-lambda   reward.shaping grpo_lambda, λ = 0.5 (top half of the batch's groups by correctness
 *                 ratio get Kimi's length reward: correct 1 + λ_i, wrong min(0, λ_i), λ_i ∈ [−0.5, 0.5])
 *   overlong      reward.shaping overlong: 0 up to 48 − 9.6 tokens, then a linear ramp to −1 at 48
 *   grpo-cap28, overlong-cap28   the same two at a 28-token cap (ramp 22.4 → 28), where the cap
 *                 truncates some responses; held-out still decoded with up to 48 tokens
 *
 *   nice -n 10 npx tsx scripts/experiments/length-shaping.ts [--seeds 1,2,3] [--arms ...] [--jobs 2] [--report]
 * Kept logs: experiments/runs/length-shaping/<arm>-seed<N>/; figures docs/figures/length-shaping-*.svg.
 */
import { cell, main, meanFigure, perSeedLine, scratchpadRecipe, series, standardTable, window, writeReport, type Arm } from "./scratchpad-lib.ts";

const NAME = "length-shaping";
const verifier = "addition-scratchpad";
const arms: Arm[] = [
  { arm: "grpo", config: (seed) => scratchpadRecipe(seed) },
  { arm: "grpo-lambda", config: (seed) => scratchpadRecipe(seed, { reward: { verifier, shaping: [{ type: "grpo_lambda", lambda: 0.5 }] } }) },
  { arm: "overlong", config: (seed) => scratchpadRecipe(seed, { reward: { verifier, shaping: [{ type: "overlong" }] } }) },
  // The same pair with a cap that binds (28 tokens: the overlong ramp runs from 22.4 to 28), evaluated uncapped (48).
  { arm: "grpo-cap28", config: (seed) => scratchpadRecipe(seed, { rl: { maxNewTokens: 28 } }) },
  { arm: "overlong-cap28", config: (seed) => scratchpadRecipe(seed, { rl: { maxNewTokens: 28 }, reward: { verifier, shaping: [{ type: "overlong" }] } }) },
];
const order = arms.map((a) => a.arm);

await main(NAME, arms, async (runs) => {
  const table = standardTable(runs, order, [
    ["train length max, last 5", (rs) => cell(rs.map((r) => window(series(r.dir, "response/length_max"), 5, "last")))],
    ["train truncated, first 5 → last 5 (%)", (rs) => `${cell(rs.map((r) => window(series(r.dir, "response/truncated_frac"), 5, "first")), 1, 100)} → ${cell(rs.map((r) => window(series(r.dir, "response/truncated_frac"), 5, "last")), 1, 100)}`],
    ["overlong reward, mean per response", (rs) => cell(rs.map((r) => window(series(r.dir, "reward/overlong"), 1e9, "first")), 4)],
    ["held-out truncated after (%)", (rs) => cell(rs.map((r) => r.evals.filter((e) => e.label === "rl").at(-1)?.truncated ?? NaN), 1, 100)],
  ]);
  writeReport(NAME, `${table}\n\nPer seed, after RL (greedy % / pass@1 % / held-out length): ${perSeedLine(runs, order)}`);
  await meanFigure(runs, order, "response/length_mean", `${NAME}-length.svg`, "Mean response length (addition-scratchpad, d = 2)", "mean length (chars)");
  await meanFigure(runs, order, "accuracy", `${NAME}-accuracy.svg`, "Training accuracy at T = 1 (addition-scratchpad, d = 2)", "accuracy (fraction of sampled responses)");
});
