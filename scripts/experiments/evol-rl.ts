/**
 * Experiment: EVOL-RL vs TTRL, label-free (METHODS.md §6: "expect TTRL's pass@16 to sink toward
 * its pass@1, and EVOL-RL to keep both higher").
 *
 * Task `maximum` at difficulty 6 (largest of six digits; EVOL_D overrides) — the level where TTRL
 * collapsed onto the answer `9` on one seed in experiment (a). Base per seed: a 64-wide char-level
 * model SFT-warmed for 20 steps on 64 labelled demonstrations (as experiment a). RL stage, 40
 * steps × 16 prompts × 16 samples, T = 1, lr 3e-4, no label in any reward:
 *   ttrl — majority vote over the 16 as the pseudo-label, reward = agreement, train on 8;
 *   evol — EVOL-RL: the same vote as the anchor, rewards in bands by novelty (labelfree.evol,
 *          char-3-gram Jaccard), with clip-higher (ε_high 0.28) and an entropy bonus (0.001),
 *          train on 8.
 * Held-out (256 test prompts): greedy accuracy, and 16 samples per prompt at T = 1: pass@1 (mean
 * accuracy of the samples), maj@16, pass@16. Before = the base model.
 *
 *   RLVR_THREADS=1 nice -n 10 npx tsx scripts/experiments/evol-rl.ts [--seeds 1,2,3] [--arms ttrl,evol]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { evaluate } from "../../src/eval/accuracy.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { baseModel, meanSd, runOne, seedsFromArgs } from "./methods-lib.ts";

const NAME = "evol-rl";
const K = 16;

const common = (seed: number): RunConfigInput => ({
  seed,
  model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 24 } },
  tokenizer: { type: "char", alphabet: "0123456789,>" },
  data: { task: "maximum", difficulty: Number(process.env["EVOL_D"] ?? 6), trainSize: 2000, testSize: 256 },
  sft: { steps: 20, batchSize: 64, examples: 64, lr: 3e-3, schedule: "constant" },
  eval: { maxNewTokens: 2 },
});

function arm(seed: number, base: string, name: string): RunConfigInput {
  const { sft: _sft, ...c } = common(seed);
  const evol = name === "evol";
  return {
    ...c,
    model: { path: base },
    rl: {
      steps: 40, promptsPerStep: 16, groupSize: 16, maxNewTokens: 2, temperature: 1, lr: 3e-4,
      algorithm: evol
        ? { preset: "grpo", kl: { coef: 0 }, loss: { name: "ppo_clip", clipHigh: 0.28 }, entropy: { coef: 0.001 } }
        : { preset: "grpo", kl: { coef: 0 } },
    },
    labelfree: evol ? { ttrl: { trainOn: 8 }, evol: {} } : { ttrl: { trainOn: 8 } },
  };
}

/** Held-out greedy accuracy and, at T = 1 with K samples per prompt, pass@1, maj@K, pass@K. */
async function heldOut(dir: string, cfgIn: RunConfigInput): Promise<{ greedy: number; pass1: number; majK: number; passK: number }> {
  const cfg = parseRunConfig({ ...cfgIn, model: { path: dir }, sft: undefined, rl: undefined, labelfree: undefined }, `${NAME}/eval`);
  const ctx = await buildContext(cfg);
  try {
    const g = await evaluate(ctx, ctx.test, { maxNewTokens: 2, temperature: 0, seed: cfg.seed, bootstrap: 0, breakdown: false });
    const s = await evaluate(ctx, ctx.test, { maxNewTokens: 2, temperature: 1, n: K, ks: [K], seed: cfg.seed, bootstrap: 0, breakdown: false });
    return { greedy: g.accuracy, pass1: s.meanAtN, majK: s.majAtK[`maj@${K}`] ?? NaN, passK: s.passAtK[`pass@${K}`] ?? NaN };
  } finally {
    await ctx.close();
  }
}

const armsArg = process.argv.indexOf("--arms");
const arms = armsArg >= 0 ? process.argv[armsArg + 1]!.split(",") : ["ttrl", "evol"];
const keys = ["ttrl/label_acc", "ttrl/vote_share", "entropy", "evol/reward_mean"];
type Row = { arm: string; seed: number; greedy: number; pass1: number; majK: number; passK: number; extra: Record<string, number> };
const rows: Row[] = [];
for (const seed of seedsFromArgs()) {
  const base = await baseModel(NAME, common(seed));
  const b = await heldOut(base, common(seed));
  rows.push({ arm: "base", seed, ...b, extra: {} });
  process.stderr.write(`${NAME} base seed ${seed}: ${JSON.stringify(b)}\n`);
  for (const a of arms) {
    const cfg = arm(seed, base, a);
    const r = await runOne(NAME, a, cfg, keys);
    const h = await heldOut(join("scratch", "experiments", NAME, `${a}-seed${seed}`, "checkpoints", "final"), cfg);
    rows.push({ arm: a, seed, ...h, extra: r.extra });
    process.stderr.write(`${NAME} ${a} seed ${seed}: ${JSON.stringify(h)}\n`);
  }
}

const pct = (xs: number[]) => {
  const v = meanSd(xs);
  return `${(v.mean * 100).toFixed(1)} ± ${(v.sd * 100).toFixed(1)}`;
};
const num = (xs: number[]) => {
  const v = meanSd(xs);
  return `${v.mean.toFixed(2)} ± ${v.sd.toFixed(2)}`;
};
const lines = [
  `| arm | seeds | greedy (%) | pass@1, T=1 (%) | maj@${K} (%) | pass@${K} (%) | pass@${K} − pass@1 (pts) | pseudo-label acc. first / last 10 steps | vote share first / last 10 | entropy last 10 |`,
  "|---|---|---|---|---|---|---|---|---|---|",
];
for (const a of ["base", ...arms]) {
  const rs = rows.filter((r) => r.arm === a);
  const ex = (k: string) => rs.map((r) => r.extra[k] ?? NaN);
  const trained = a !== "base";
  lines.push(
    `| ${a} | ${rs.map((r) => r.seed).join(",")} | ${pct(rs.map((r) => r.greedy))} | ${pct(rs.map((r) => r.pass1))} | ${pct(rs.map((r) => r.majK))} | ${pct(rs.map((r) => r.passK))} | ${pct(rs.map((r) => r.passK - r.pass1))} | ` +
      (trained ? `${num(ex("ttrl/label_acc@first10"))} / ${num(ex("ttrl/label_acc@last10"))} | ${num(ex("ttrl/vote_share@first10"))} / ${num(ex("ttrl/vote_share@last10"))} | ${num(ex("entropy@last10"))} |` : "– | – | – |"),
  );
}
const per = rows.map((r) => `${r.arm}/seed${r.seed}: greedy ${(r.greedy * 100).toFixed(1)}, pass@1 ${(r.pass1 * 100).toFixed(1)}, pass@${K} ${(r.passK * 100).toFixed(1)}`).join("; ");
const table = `${lines.join("\n")}\n\nPer seed: ${per}\n`;
const out = join("scratch", "experiments", NAME);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "results.json"), JSON.stringify(rows, null, 2) + "\n");
writeFileSync(join(out, "table.md"), table);
process.stdout.write(`\n${NAME}\n${table}`);
