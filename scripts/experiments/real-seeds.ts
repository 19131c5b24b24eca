/**
 * Experiment on the real model (SmolLM2-135M-Instruct, the real-model recipe: word problems at
 * difficulty 1 in the model's chat template, 8 prompts × 4 samples a step, ≤ 48 new tokens, lr
 * 1e-5, KL off, torch engine), 3 seeds an arm:
 *
 *   (a) GRPO vs the base model — pass@k for k = 1 … 64 on held-out prompts: does RL raise pass@1
 *       and keep pass@64 (Yue et al. 2025, arXiv:2504.13837)?
 *   (b) Dr. GRPO vs GRPO on response length (Liu et al. 2025, arXiv:2503.20783): GRPO's
 *       per-sequence 1/|o| lets wrong responses grow; Dr. GRPO's constant normaliser should not.
 *
 * Arms: grpo (the recipe as shipped, src/recipes/real.ts, with --steps), dr_grpo (the same with
 * preset dr_grpo); the base is the imported model itself (its three "seeds" are sampling seeds).
 *
 *   nice -n 10 npx tsx scripts/experiments/real-seeds.ts [--seeds 1,2,3] [--arms grpo,dr_grpo] [--jobs 1]
 *   npx tsx scripts/experiments/real-seeds.ts --passk      # pass@k of the base and every finished run
 *   npx tsx scripts/experiments/real-seeds.ts --report     # tables from the kept logs
 *
 * Kept logs: experiments/runs/real-seeds/<arm>-seed<N>/ (metrics.jsonl, eval.jsonl, config.yaml,
 * result.json, passk.json); base pass@k in experiments/runs/real-seeds/base-seed<N>/passk.json.
 * Environment: REAL_STEPS (default 30), REAL_PASSK_PROMPTS (32), REAL_PASSK_SAMPLES (64),
 * REAL_ROLLOUT (vllm: colocated vLLM rollouts, the default — the recipe's fastest CPU path; torch:
 * the trainer samples), REAL_PASSK_ENGINE (vllm by default; torch), REAL_PASSK_BASE_SEEDS (the
 * base's sampling seeds, default --seeds), REAL_PASSK_ARMS (arms whose checkpoints get pass@k,
 * default all).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runEval, type EvalCommandOptions } from "../../src/cli/commands/eval.ts";
import type { RunConfigInput } from "../../src/config/schema.ts";
import { defaultModelDir } from "../../src/engines/catalog.ts";
import { realRecipeConfig } from "../../src/recipes/real.ts";
import { generateExamples, wordProblemsTask, writeExamplesJsonl } from "../../src/tasks/index.ts";
import { KEPT_ROOT, SCRATCH_ROOT, cell, main, markdownTable, meanFigure, series, window, writeReport, type Arm, type RunRecord } from "./scratchpad-lib.ts";

const NAME = "real-seeds";
const STEPS = Number(process.env.REAL_STEPS ?? 30);
const PASSK_PROMPTS = Number(process.env.REAL_PASSK_PROMPTS ?? 32);
const PASSK_SAMPLES = Number(process.env.REAL_PASSK_SAMPLES ?? 64);
const MODEL = defaultModelDir("smollm2-135m-instruct");
const DATA = join(SCRATCH_ROOT, NAME, "data");
const TRAIN = join(DATA, "train.jsonl");
const TEST = join(DATA, "test.jsonl");
const W = 5;
const ROLLOUT = process.env.REAL_ROLLOUT ?? "vllm";
const PASSK_ENGINE = process.env.REAL_PASSK_ENGINE ?? "vllm";

/** The model is imported and the data written (the same prompts for every arm and seed). */
async function prepare(): Promise<void> {
  if (!existsSync(join(MODEL, "config.json"))) throw new Error(`no imported model at ${MODEL}: run \`rlvr setup model smollm2-135m-instruct\``);
  if (existsSync(TEST)) return;
  mkdirSync(DATA, { recursive: true });
  writeExamplesJsonl(TRAIN, generateExamples(wordProblemsTask, { n: 4000, seed: 1, difficulty: 1, split: "train" }));
  writeExamplesJsonl(TEST, generateExamples(wordProblemsTask, { n: 64, seed: 1, difficulty: 1, split: "test" }));
}

const recipe = (seed: number, algorithm?: NonNullable<RunConfigInput["rl"]>["algorithm"]): RunConfigInput => {
  const r = realRecipeConfig({ out: "", modelPath: MODEL, steps: STEPS, seed }, TRAIN, TEST);
  const c: RunConfigInput = ROLLOUT === "vllm" ? { ...r, rollout: { engine: "vllm", mode: "colocated" } } : r;
  return algorithm ? { ...c, rl: { ...c.rl!, algorithm } } : c;
};
const arms: Arm[] = [
  { arm: "grpo", config: (seed) => recipe(seed) },
  { arm: "dr_grpo", config: (seed) => recipe(seed, { preset: "dr_grpo", kl: { coef: 0 } }) },
];
const order = arms.map((a) => a.arm);

interface PassK {
  passAtK: Record<string, number>;
  greedy?: number;
  meanLength: number;
  seconds: number;
}

/** pass@k (k = 1, 2, 4 … PASSK_SAMPLES) of `model` on the first PASSK_PROMPTS held-out prompts, sampling seed `seed`. */
async function passK(model: string, seed: number, base: boolean): Promise<PassK> {
  const o: EvalCommandOptions = { data: TEST, n: PASSK_PROMPTS, samples: PASSK_SAMPLES, temperature: 1, topP: 1, maxNewTokens: 48, seed, bootstrap: 0, level: 0.95, engine: PASSK_ENGINE, greedy: true, ...(base ? { chat: true, verifier: "word-problems" } : {}) };
  const t0 = performance.now();
  const doc = (await runEval(model, o, () => {})) as { result: { passAtK: Record<string, number>; greedy?: number; meanLength: number } };
  return { ...doc.result, seconds: (performance.now() - t0) / 1000 };
}

/** pass@k of the base (3 sampling seeds) and of every finished run's final checkpoint that lacks it. */
async function passKAll(seeds: number[]): Promise<void> {
  await prepare();
  const baseSeeds = process.env.REAL_PASSK_BASE_SEEDS ? process.env.REAL_PASSK_BASE_SEEDS.split(",").map(Number) : seeds;
  const passArms = process.env.REAL_PASSK_ARMS ? process.env.REAL_PASSK_ARMS.split(",") : order;
  const jobs: [string, string, number, boolean][] = baseSeeds.map((s) => [join(KEPT_ROOT, NAME, `base-seed${s}`), MODEL, s, true]);
  for (const a of order.filter((x) => passArms.includes(x))) for (const s of seeds) jobs.push([join(KEPT_ROOT, NAME, `${a}-seed${s}`), join(SCRATCH_ROOT, NAME, `${a}-seed${s}`, "checkpoints", "final"), s, false]);
  for (const [kept, model, seed, base] of jobs) {
    if (existsSync(join(kept, "passk.json")) || !existsSync(join(model, "config.json"))) continue;
    const r = await passK(model, seed, base);
    mkdirSync(kept, { recursive: true });
    writeFileSync(join(kept, "passk.json"), JSON.stringify(r) + "\n");
    process.stderr.write(`${NAME} pass@k ${kept}: pass@1 ${(100 * r.passAtK["pass@1"]!).toFixed(1)}%, pass@${PASSK_SAMPLES} ${(100 * r.passAtK[`pass@${PASSK_SAMPLES}`]!).toFixed(1)}% (${r.seconds.toFixed(0)} s)\n`);
  }
}

const readPassK = (dir: string): PassK | null => (existsSync(join(dir, "passk.json")) ? (JSON.parse(readFileSync(join(dir, "passk.json"), "utf8")) as PassK) : null);

async function report(runs: RunRecord[]): Promise<void> {
  const seeds = [1, 2, 3];
  const ks = Array.from({ length: Math.log2(PASSK_SAMPLES) + 1 }, (_, i) => 2 ** i);
  const rows = [["base", seeds.map((s) => readPassK(join(KEPT_ROOT, NAME, `base-seed${s}`)))] as const, ...order.map((a) => [a, runs.filter((r) => r.arm === a).map((r) => readPassK(r.dir))] as const)];
  const passTable = markdownTable(
    ["arm", "runs", "greedy", ...ks.map((k) => `pass@${k}`), "mean length"],
    rows.map(([arm, ps]) => {
      const got = ps.filter((p): p is PassK => p !== null);
      return [arm, String(got.length), cell(got.map((p) => p.greedy ?? NaN), 1, 100), ...ks.map((k) => cell(got.map((p) => p.passAtK[`pass@${k}`] ?? NaN), 1, 100)), cell(got.map((p) => p.meanLength))];
    }),
  );
  const drift = (key: string, rs: RunRecord[]) => {
    const f = rs.map((r) => window(series(r.dir, key), W, "first"));
    const l = rs.map((r) => window(series(r.dir, key), W, "last"));
    return `${cell(f)} → ${cell(l)} (${cell(l.map((x, i) => x - f[i]!))})`;
  };
  const lengthTable = markdownTable(
    ["arm", "runs", `wrong length, first ${W} → last ${W} steps (change)`, `correct length, first ${W} → last ${W}`, "held-out pass@1 before → after (4 samples)", "minutes a run"],
    order.map((a) => {
      const rs = runs.filter((r) => r.arm === a);
      return [a, String(rs.length), drift("response/length_wrong_mean", rs), drift("response/length_correct_mean", rs), `${cell(rs.map((r) => r.before.pass1), 1, 100)} → ${cell(rs.map((r) => r.after.pass1), 1, 100)}`, cell(rs.map((r) => r.seconds / 60))];
    }),
  );
  writeReport(NAME, `${passTable}\n\n${lengthTable}`);
  await meanFigure(runs, order, "response/length_wrong_mean", `${NAME}-wrong-length.svg`, "Length of wrong responses (SmolLM2-135M, word problems)", "mean length of wrong responses (tokens)");
}

if (process.argv.includes("--passk")) {
  const i = process.argv.indexOf("--seeds");
  await passKAll(i >= 0 ? process.argv[i + 1]!.split(",").map(Number) : [1, 2, 3]);
} else await main(NAME, arms, report, prepare);
