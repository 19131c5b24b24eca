/**
 * Experiment: EVOL-RL vs TTRL, label-free, on `addition-scratchpad` — responses that carry a
 * reasoning text (the per-column notes) whose wording can differ while the answer after `#` is the
 * same, so EVOL-RL's novelty term has something to measure (on `maximum`, evol-rl.ts, it reduced to
 * TTRL because every response was one character).
 *
 * Claim tested (METHODS.md §6; Zhou et al. 2025, arXiv:2509.15194): under TTRL's majority reward
 * pass@k sinks toward pass@1 (diversity collapses); EVOL-RL — the same vote as the anchor plus a
 * novelty reward in bands — keeps pass@k (and pass@1) higher.
 *
 * Arms (the scratchpad recipe of scratchpad-lib.ts from the shared SFT base, torch engine, except:
 * 32 prompts × 16 votes a step, the first 8 of each group trained — 512 sampled and 256 trained
 * responses a step, as the recipe's 64 × 8 samples — 20 steps, lr 3e-4; no label in any reward):
 *   ttrl  reward = agreement with the group's majority answer (the integer after `#`);
 *   evol  EVOL-RL: the same vote as the anchor, banded novelty rewards (labelfree.evol defaults:
 *         char-3-gram Jaccard over the whole response, ½ mean + ½ max, bands [0.5, 1] / [−1, −0.5]),
 *         clip-higher ε_high = 0.28 and an entropy bonus 0.001 (as evol-rl.ts).
 * Held-out (256 test prompts of the seed): greedy, and 8 samples at T = 1 (pass@1, maj@8, pass@8).
 *
 *   nice -n 10 npx tsx scripts/experiments/evol-ttrl-scratchpad.ts [--seeds 1,2,3] [--arms ttrl,evol] [--jobs 2] [--report]
 * Kept logs: experiments/runs/evol-ttrl-scratchpad/<arm>-seed<N>/; figure docs/figures/evol-ttrl-scratchpad.svg
 * (drawn with `rlvr plot`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunConfigInput } from "../../src/config/schema.ts";
import { cell, main, perSeedLine, scratchpadRecipe, series, standardTable, window, writeReport, type Arm, type RunRecord } from "./scratchpad-lib.ts";

const NAME = "evol-ttrl-scratchpad";
const K = 8;

function config(seed: number, evol: boolean): RunConfigInput {
  const c = scratchpadRecipe(seed, {
    rl: { promptsPerStep: 32, groupSize: 16 },
    algorithm: evol ? { loss: { name: "ppo_clip", clipHigh: 0.28 }, entropy: { coef: 0.001 } } : {},
    eval: { samples: K },
  });
  return { ...c, labelfree: evol ? { ttrl: { trainOn: 8 }, evol: {} } : { ttrl: { trainOn: 8 } } };
}

const arms: Arm[] = [
  { arm: "ttrl", config: (seed) => config(seed, false) },
  { arm: "evol", config: (seed) => config(seed, true) },
];
const order = arms.map((a) => a.arm);

/** maj@K and pass@K of a run's last evaluation with `label` ("init" or "rl") from its eval.jsonl. */
function atK(r: RunRecord, label: string): { maj: number; pass: number; pass1: number } {
  const file = join(r.dir, "eval.jsonl");
  if (!existsSync(file)) return { maj: NaN, pass: NaN, pass1: NaN };
  const rows = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { label: string; majAtK: Record<string, number>; passAtK: Record<string, number> });
  const e = rows.filter((x) => x.label === label).at(-1);
  return { maj: e?.majAtK[`maj@${K}`] ?? NaN, pass: e?.passAtK[`pass@${K}`] ?? NaN, pass1: e?.passAtK["pass@1"] ?? NaN };
}

await main(NAME, arms, async (runs) => {
  const gap = (rs: RunRecord[], label: string) => cell(rs.map((r) => atK(r, label).pass - atK(r, label).pass1), 1, 100);
  const w = (k: string, where: "first" | "last") => (rs: RunRecord[]) => cell(rs.map((r) => window(series(r.dir, k), 5, where)), 2);
  const table = standardTable(runs, order, [
    [`held-out pass@${K} before → after (%)`, (rs) => `${cell(rs.map((r) => atK(r, "init").pass), 1, 100)} → ${cell(rs.map((r) => atK(r, "rl").pass), 1, 100)}`],
    [`held-out maj@${K} after (%)`, (rs) => cell(rs.map((r) => atK(r, "rl").maj), 1, 100)],
    [`pass@${K} − pass@1 before → after (pts)`, (rs) => `${gap(rs, "init")} → ${gap(rs, "rl")}`],
    ["pseudo-label acc. first / last 5", (rs) => `${w("ttrl/label_acc", "first")(rs)} / ${w("ttrl/label_acc", "last")(rs)}`],
    ["vote share first / last 5", (rs) => `${w("ttrl/vote_share", "first")(rs)} / ${w("ttrl/vote_share", "last")(rs)}`],
    ["entropy first / last 5", (rs) => `${w("entropy", "first")(rs)} / ${w("entropy", "last")(rs)}`],
  ]);
  const passK = runs.map((r) => `${r.arm} s${r.seed} ${(100 * atK(r, "init").pass).toFixed(1)} → ${(100 * atK(r, "rl").pass).toFixed(1)}`).join(", ");
  writeReport(NAME, `${table}\n\nPer seed, after RL (greedy % / pass@1 % / held-out length): ${perSeedLine(runs, order)}\n\nPer seed, pass@${K} before → after: ${passK}`);
});
