/**
 * Experiment: Dr. GRPO vs GRPO — the length of wrong responses over training (Liu et al. 2025,
 * "Understanding R1-Zero-Like Training", arXiv:2503.20783). Their claim: GRPO's per-sequence
 * 1/|o| normalisation penalises a long wrong response less per token than a short one, so wrong
 * responses grow over training; Dr. GRPO (token sums over a constant, no std division) removes the
 * bias, and wrong responses stay short.
 *
 * Both arms: the stable recipe of scratchpad-lib.ts (examples/scratchpad-grpo.yaml) from the shared
 * SFT base, the same samples per step and steps, KL off:
 *   grpo     preset grpo (std-normalised advantages, per-sequence token mean) — the plain GRPO runs
 *            of length-shaping.ts, reused (experiments/runs/length-shaping/grpo-seed<N>/);
 *   dr_grpo  preset dr_grpo (no std division, token sum / 48 = the generation cap).
 * Logged per step (src/pipeline/metrics.ts): response/length_wrong_mean, response/length_correct_mean.
 *
 *   nice -n 10 npx tsx scripts/experiments/dr-grpo-length.ts [--seeds 1,2,3] [--arms grpo,dr_grpo] [--jobs 2] [--report]
 * Kept logs: experiments/runs/dr-grpo-length/dr_grpo-seed<N>/ (and the grpo runs of length-shaping);
 * figure docs/figures/dr-grpo-length.svg (seed-mean wrong-response length per step).
 */
import { cell, main, meanFigure, perSeedLine, scratchpadRecipe, series, standardTable, window, writeReport, type Arm, type RunRecord } from "./scratchpad-lib.ts";

const NAME = "dr-grpo-length";
const arms: Arm[] = [
  { arm: "grpo", config: (seed) => scratchpadRecipe(seed), from: "length-shaping" },
  { arm: "dr_grpo", config: (seed) => scratchpadRecipe(seed, { algorithm: { preset: "dr_grpo" } }) },
];
const order = arms.map((a) => a.arm);
const W = 5;

/** first → last W steps of a length series, and the per-run change, over an arm's runs. */
const drift = (key: string) => (rs: RunRecord[]) => {
  const f = rs.map((r) => window(series(r.dir, key), W, "first"));
  const l = rs.map((r) => window(series(r.dir, key), W, "last"));
  return `${cell(f)} → ${cell(l)} (${cell(l.map((x, i) => x - f[i]!), 2)})`;
};

await main(NAME, arms, async (runs) => {
  const table = standardTable(
    runs,
    order,
    [
      [`wrong length first ${W} → last ${W} (change)`, drift("response/length_wrong_mean")],
      [`correct length first ${W} → last ${W} (change)`, drift("response/length_correct_mean")],
    ],
    W,
  );
  const perRun = runs
    .map((r) => `${r.arm} s${r.seed} ${window(series(r.dir, "response/length_wrong_mean"), W, "first").toFixed(1)} → ${window(series(r.dir, "response/length_wrong_mean"), W, "last").toFixed(1)}`)
    .join("; ");
  writeReport(NAME, `${table}\n\nPer run, wrong length first → last ${W} steps: ${perRun}\n\nPer seed, after RL (greedy % / pass@1 % / held-out length): ${perSeedLine(runs, order)}`);
  await meanFigure(runs, order, "response/length_wrong_mean", `${NAME}.svg`, "Length of wrong responses (addition-scratchpad, d = 2)", "mean length of wrong responses (characters)");
});
