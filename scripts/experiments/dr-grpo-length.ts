/**
 * Experiment: Dr. GRPO vs GRPO — the length of wrong responses over training (Liu et al. 2025,
 * "Understanding R1-Zero-Like Training", arXiv:2503.20783). Their claim: GRPO's per-sequence
 * 1/|o| normalisation penalises a long wrong response less per token than a short one, so wrong
 * responses grow; Dr. GRPO (token sums over a constant, no std division) removes that bias.
 *
 * Task `addition-scratchpad` at 2 digits (responses of 13..45 characters, src/tasks/scratchpad.ts).
 * Base: the SFT warm-up of examples/scratchpad-sft.yaml (seed 1, shared by every arm and seed;
 * trained once into scratch/experiments/dr-grpo-length/base, reused when it is there). RL: 20 steps
 * × 16 prompts × 8 samples at T = 1, up to 48 new tokens, lr 1e-3 (warm-up 5), no KL in either arm:
 *   grpo:    preset grpo (std-normalised advantages, per-sequence token mean), KL off;
 *   dr_grpo: preset dr_grpo (no std, token sum / 48).
 * Logged per step (src/pipeline/metrics.ts): response/length_wrong_mean, response/length_correct_mean.
 * Reported per arm, mean ± sd over seeds: wrong- and correct-response length and training accuracy
 * over the first and the last 5 steps, held-out greedy accuracy (64 test prompts) before and after
 * RL; the figure is the seed-mean wrong length per step. The report reads the run directories'
 * logs, so it also summarises runs cut short (their step counts are shown).
 *
 *   RLVR_THREADS=1 nice -n 10 npx tsx scripts/experiments/dr-grpo-length.ts [--seeds 1,2,3] [--arms grpo,dr_grpo] [--steps 20]
 *   npx tsx scripts/experiments/dr-grpo-length.ts --report     # table + figure from the runs' logs
 * Writes scratch/experiments/dr-grpo-length/<arm>-seed<s>/ (run directories: `rlvr plot` reads
 * them), results-<seeds>-<arms>.json, table.md and docs/figures/dr-grpo-length.svg.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadRunConfig, parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { readMetricSeries, renderLineChart } from "../../src/eval/plot.ts";
import { meanSd } from "./strategies-lib.ts";

const NAME = "dr-grpo-length";
const ROOT = join("scratch", "experiments", NAME);
const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1,2,3" },
    arms: { type: "string", default: "grpo,dr_grpo" },
    steps: { type: "string", default: "20" },
    report: { type: "boolean", default: false },
  },
});

interface Result {
  arm: string;
  seed: number;
  wrongFirst10: number;
  wrongLast10: number;
  correctLast10: number;
  accLast10: number;
  heldOutGreedy: number;
  heldOutGreedyBefore: number;
  seconds: number;
}

const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function base(): Promise<string> {
  const dir = join(ROOT, "base");
  const ckpt = join(dir, "checkpoints", "final");
  if (existsSync(join(ckpt, "config.json"))) return ckpt;
  rmSync(dir, { recursive: true, force: true });
  const cfg = loadRunConfig("examples/scratchpad-sft.yaml");
  cfg.out = dir;
  return (await train(cfg, { quiet: true })).checkpoint;
}

function config(seed: number, ckpt: string, arm: string, steps: number): RunConfigInput {
  return {
    seed,
    model: { path: ckpt },
    tokenizer: { type: "char", alphabet: "0123456789+=;#" },
    data: { task: "addition-scratchpad", difficulty: 2, trainSize: 8000, testSize: 64 },
    rl: {
      steps,
      promptsPerStep: 16,
      groupSize: 8,
      maxNewTokens: 48,
      temperature: 1,
      lr: 1e-3,
      warmupSteps: 5,
      algorithm: arm === "grpo" ? { preset: "grpo", kl: { coef: 0 } } : { preset: "dr_grpo" },
    },
    eval: { every: 0, temperature: 1, samples: 1, greedy: true, maxNewTokens: 48 },
  };
}

async function runArm(seed: number, ckpt: string, arm: string, steps: number): Promise<Result> {
  const dir = join(ROOT, `${arm}-seed${seed}`);
  rmSync(dir, { recursive: true, force: true });
  const cfg = parseRunConfig({ ...config(seed, ckpt, arm, steps), out: dir }, `${NAME}/${arm}`);
  const s = await train(cfg, { quiet: true });
  const wrong = readMetricSeries(dir, "response/length_wrong_mean").map((p) => p.y);
  const correct = readMetricSeries(dir, "response/length_correct_mean").map((p) => p.y);
  const acc = readMetricSeries(dir, "accuracy").map((p) => p.y);
  const r: Result = {
    arm,
    seed,
    wrongFirst10: avg(wrong.slice(0, 10)),
    wrongLast10: avg(wrong.slice(-10)),
    correctLast10: avg(correct.slice(-10)),
    accLast10: avg(acc.slice(-10)),
    heldOutGreedy: s.evals["rl"]?.greedy ?? NaN,
    heldOutGreedyBefore: (s.evals["init"] ?? s.evals["sft"])?.greedy ?? NaN,
    seconds: s.seconds,
  };
  process.stderr.write(`${NAME} ${arm} seed ${seed}: ${JSON.stringify(r)}\n`);
  return r;
}

/** Held-out greedy accuracy of the evaluation labelled `label` in a run's eval.jsonl (NaN if absent). */
function heldOut(dir: string, label: string): number {
  const file = join(dir, "eval.jsonl");
  if (!existsSync(file)) return NaN;
  const rows = readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { label: string; greedy?: number });
  return rows.reverse().find((r) => r.label === label)?.greedy ?? NaN;
}

/** Table and figure from the run directories' logs (finished or not: a run counts its steps so far). */
async function report(): Promise<void> {
  const W = 5; // window of steps averaged at the start and the end
  const runs = readdirSync(ROOT)
    .map((d) => /^(.+)-seed(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(join(ROOT, m[0], "metrics.jsonl")))
    .map((m) => {
      const dir = join(ROOT, m[0]);
      const series = (k: string) => {
        try {
          return readMetricSeries(dir, k).map((p) => p.y);
        } catch {
          return [];
        }
      };
      const wrong = series("response/length_wrong_mean");
      return {
        arm: m[1]!,
        seed: Number(m[2]),
        dir,
        steps: series("accuracy").length,
        wrongFirst: avg(wrong.slice(0, W)),
        wrongLast: avg(wrong.slice(-W)),
        correctFirst: avg(series("response/length_correct_mean").slice(0, W)),
        correctLast: avg(series("response/length_correct_mean").slice(-W)),
        accFirst: avg(series("accuracy").slice(0, W)),
        accLast: avg(series("accuracy").slice(-W)),
        before: heldOut(dir, "init"),
        after: heldOut(dir, "rl"),
      };
    })
    .filter((r) => r.steps >= 2 * W);
  const arms = [...new Set(runs.map((r) => r.arm))].sort().reverse();
  const f = (xs: number[], d = 1) => {
    const ys = xs.filter(Number.isFinite);
    if (ys.length === 0) return "–";
    const m = meanSd(ys);
    return `${m.mean.toFixed(d)} ± ${m.sd.toFixed(d)}`;
  };
  const lines = [
    `| arm | seeds (steps) | wrong length, first ${W} → last ${W} steps | change | correct length, first ${W} → last ${W} | train accuracy, first ${W} → last ${W} (%) | held-out greedy before → after (%) |`,
    "|---|---|---|---|---|---|---|",
  ];
  for (const arm of arms) {
    const rs = runs.filter((r) => r.arm === arm).sort((a, b) => a.seed - b.seed);
    lines.push(
      `| ${arm} | ${rs.map((r) => `${r.seed} (${r.steps})`).join(", ")} | ${f(rs.map((r) => r.wrongFirst))} → ${f(rs.map((r) => r.wrongLast))} | ` +
        `${f(rs.map((r) => r.wrongLast - r.wrongFirst), 2)} | ${f(rs.map((r) => r.correctFirst))} → ${f(rs.map((r) => r.correctLast))} | ` +
        `${f(rs.map((r) => 100 * r.accFirst))} → ${f(rs.map((r) => 100 * r.accLast))} | ${f(rs.map((r) => 100 * r.before))} → ${f(rs.map((r) => 100 * r.after))} |`,
    );
  }
  lines.push("", "Per run, wrong length first → last: " + runs.map((r) => `${r.arm} s${r.seed} ${r.wrongFirst.toFixed(1)} → ${r.wrongLast.toFixed(1)}`).join("; "));
  const table = lines.join("\n");
  writeFileSync(join(ROOT, "table.md"), table + "\n");
  console.log(table);
  // Figure: the seed-mean wrong-response length per step, one line per arm.
  const series = arms.map((arm) => {
    const per = runs.filter((r) => r.arm === arm).map((r) => readMetricSeries(r.dir, "response/length_wrong_mean"));
    const steps = Math.min(...per.map((p) => p.length));
    const points = Array.from({ length: steps }, (_, i) => ({ x: per[0]![i]!.x, y: avg(per.map((p) => p[i]!.y)) }));
    return { name: `${arm} (mean of ${per.length} seeds)`, points };
  });
  mkdirSync(join("docs", "figures"), { recursive: true });
  const svg = await renderLineChart(series, { format: "svg", title: "Length of wrong responses (addition-scratchpad, d = 2)", xTitle: "RL step", yTitle: "mean length of wrong responses (tokens)" });
  writeFileSync(join("docs", "figures", `${NAME}.svg`), svg);
  console.log(`wrote docs/figures/${NAME}.svg`);
}

if (values.report) {
  await report();
} else {
  const seeds = values.seeds.split(",").map(Number);
  const arms = values.arms.split(",");
  mkdirSync(ROOT, { recursive: true });
  const ckpt = await base();
  const results: Result[] = [];
  for (const seed of seeds) {
    for (const arm of arms) {
      results.push(await runArm(seed, ckpt, arm, Number(values.steps)));
      writeFileSync(join(ROOT, `results-${seeds.join("_")}-${arms.join("_")}.json`), JSON.stringify(results, null, 2));
    }
  }
}
