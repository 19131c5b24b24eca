/**
 * Experiment: the pass@k boundary of RL. Yue et al. 2025 ("Does Reinforcement Learning Really
 * Incentivize Reasoning Capacity in LLMs Beyond the Base Model?", arXiv:2504.13837) report that RL
 * raises pass@1 but the base model has the higher pass@k at large k: RL narrows the set of
 * problems the model can solve to the ones it already sampled. ProRL (Liu et al. 2025,
 * arXiv:2505.24864) reports that prolonged RL with a KL penalty whose reference is reset
 * periodically moves that boundary out.
 *
 * Task `addition-scratchpad` (2 digits). Arms:
 *   base:  the shared SFT base (scripts/experiments/scratchpad-lib.ts), evaluated with each seed's
 *          sampling seed (one checkpoint: its spread is sampling noise only);
 *   grpo:  the stable RL recipe from the base (its 20 steps; length-shaping.ts's identical grpo runs
 *          are reused: their checkpoints are evaluated, their logs copied; a run still in progress
 *          there is waited for);
 *   prorl: prolonged RL — each grpo run continued for as many steps again (`--prorl-steps`) with a k3 KL
 *          penalty (coef `--kl`, 0.01) to a reference reset to the current policy every 10 steps
 *          (rl.referenceResetEvery) and a fresh optimizer state (ProRL resets both).
 * Each checkpoint: pass@k (unbiased estimator) for k = 1, 2, 4, …, 256 from 256 samples at T = 1 on
 * the same 64 test prompts (scripts/experiments/passk-eval.ts), recorded in its run directory's
 * eval.jsonl as label "passk".
 *
 *   OMP_NUM_THREADS=1 nice -n 10 npx tsx scripts/experiments/passk-boundary.ts [--seeds 1,2,3] [--arms base,grpo,prorl]
 *   npx tsx scripts/experiments/passk-boundary.ts --report   # table.md + docs/figures/passk-boundary.svg
 * Run directories: scratch/experiments/passk-boundary/<arm>-seed<s>/; metrics.jsonl and eval.jsonl
 * of each are copied to experiments/runs/passk-boundary/<arm>-seed<s>/ (so
 * `rlvr plot experiments/runs/passk-boundary/* --passk --eval-label passk` draws every run).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { renderLineChart } from "../../src/eval/plot.ts";
import { train } from "../../src/trainer/run.ts";
import { keepRun, passAtKOf, type PassKOptions } from "./passk-eval.ts";
import { meanSd } from "./strategies-lib.ts";
import { SCRATCH_ROOT, ensureBase, scratchpadRecipe } from "./scratchpad-lib.ts";

const NAME = "passk-boundary";
const ROOT = join("scratch", "experiments", NAME);
const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1,2,3" },
    arms: { type: "string", default: "base,grpo,prorl" },
    steps: { type: "string" },
    "prorl-steps": { type: "string" },
    "reset-every": { type: "string", default: "10" },
    kl: { type: "string", default: "0.01" },
    prompts: { type: "string", default: "64" },
    samples: { type: "string", default: "256" },
    report: { type: "boolean", default: false },
  },
});

const EVAL: Omit<PassKOptions, "seed"> = { engine: "torch", prompts: Number(values.prompts), samples: Number(values.samples), difficulty: 2, maxNewTokens: 48, promptSeed: 1234 };
const pct = (x: number) => (100 * x).toFixed(1);

/** The recipe's RL steps (scratchpadRecipe), or --steps. */
const STEPS = values.steps === undefined ? Number(scratchpadRecipe(1).rl!.steps) : Number(values.steps);

/**
 * The run config of an RL arm. grpo: the recipe from the base. prorl: prolonged RL as in ProRL —
 * the grpo run of the same seed continued for `--prorl-steps` more steps (fresh optimizer state, the
 * recipe's warm-up and cosine again), with a KL penalty (`--kl`, the preset's k3 estimator) to a
 * reference reset to the current policy every `--reset-every` steps.
 */
function armConfig(arm: string, seed: number): RunConfigInput {
  if (arm === "grpo") return scratchpadRecipe(seed, { rl: { steps: STEPS } });
  if (arm === "prorl") {
    const from = grpoCheckpoint(seed);
    if (!from) throw new Error(`${NAME}: prorl seed ${seed} continues the grpo run of that seed; run --arms grpo --seeds ${seed} first`);
    const cfg = scratchpadRecipe(seed, { rl: { steps: values["prorl-steps"] === undefined ? STEPS : Number(values["prorl-steps"]), referenceResetEvery: Number(values["reset-every"]) }, algorithm: { kl: { coef: Number(values.kl) } } });
    return { ...cfg, model: { ...cfg.model, path: from } };
  }
  throw new Error(`${NAME}: unknown arm "${arm}" (base, grpo, prorl)`);
}

/**
 * The plain-GRPO run of `seed` that length-shaping.ts already made with the same recipe
 * (scratchpad-lib: `from: "length-shaping"`), if it finished: its final checkpoint is evaluated
 * instead of training the same config again.
 */
function reusedGrpo(seed: number): string | undefined {
  const dir = join(SCRATCH_ROOT, "length-shaping", `grpo-seed${seed}`);
  return values.steps === undefined && existsSync(join(dir, "result.json")) && existsSync(join(dir, "checkpoints", "final", "config.json")) ? dir : undefined;
}

/** While length-shaping.ts's grpo run of `seed` is in progress (its directory without result.json), wait for it. */
async function awaitLengthShaping(seed: number): Promise<void> {
  const dir = join(SCRATCH_ROOT, "length-shaping", `grpo-seed${seed}`);
  while (existsSync(join(dir, "metrics.jsonl")) && !existsSync(join(dir, "result.json"))) await new Promise((r) => setTimeout(r, 30_000));
}

/** The final checkpoint of the grpo arm of `seed` (reused or trained here), if there is one. */
function grpoCheckpoint(seed: number): string | undefined {
  const own = join(ROOT, `grpo-seed${seed}`, "checkpoints", "final");
  const reused = reusedGrpo(seed);
  if (reused) return join(reused, "checkpoints", "final");
  return existsSync(join(own, "config.json")) ? own : undefined;
}

async function runArm(arm: string, seed: number, base: string): Promise<void> {
  const dir = join(ROOT, `${arm}-seed${seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  let ckpt = base;
  if (arm === "grpo" && values.steps === undefined) await awaitLengthShaping(seed);
  const reused = arm === "grpo" ? reusedGrpo(seed) : undefined;
  if (reused) {
    // The same run as length-shaping's grpo arm: take its logs and checkpoint.
    for (const f of ["metrics.jsonl", "eval.jsonl", "config.yaml", "result.json"]) if (existsSync(join(reused, f))) copyFileSync(join(reused, f), join(dir, f));
    ckpt = join(reused, "checkpoints", "final");
  } else if (arm !== "base") {
    const cfg = parseRunConfig({ ...armConfig(arm, seed), out: dir }, `${NAME}/${arm}`);
    const load0 = loadavg()[0]!;
    const s = await train(cfg, { quiet: true });
    writeFileSync(join(dir, "result.json"), JSON.stringify({ seconds: s.seconds, load: [load0, loadavg()[0]!], cpus: cpus().length, cpu: cpus()[0]?.model, from: cfg.model.path }) + "\n");
    ckpt = s.checkpoint;
  }
  const trainS = (performance.now() - t0) / 1000;
  const pk = await passAtKOf(ckpt, { ...EVAL, seed }, { dir, label: "passk" });
  keepRun(dir, NAME, `${arm}-seed${seed}`);
  process.stderr.write(
    `${NAME} ${arm} seed ${seed}${reused ? ` (run reused from ${reused})` : ""}: train ${trainS.toFixed(0)} s, eval ${((performance.now() - t0) / 1000 - trainS).toFixed(0)} s, greedy ${pct(pk.greedy ?? NaN)}%, ` +
      Object.entries(pk.passAtK).map(([k, v]) => `${k} ${pct(v)}`).join(" ") + "\n",
  );
}

interface PassRecord {
  label: string;
  greedy?: number;
  passAtK: Record<string, number>;
  meanLength?: number;
  seconds?: number;
}
function passRecord(dir: string): PassRecord | undefined {
  const file = join(dir, "eval.jsonl");
  if (!existsSync(file)) return undefined;
  return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as PassRecord).reverse().find((r) => r.label === "passk");
}

/** Table of pass@k (mean ± sd over seeds) and the seed-mean pass@k curves, from the kept logs (experiments/runs/passk-boundary/). */
async function report(): Promise<void> {
  const kept = join("experiments", "runs", NAME);
  const runs = readdirSync(kept)
    .map((d) => /^(base|grpo|prorl)-seed(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null && passRecord(join(kept, m[0])) !== undefined)
    .map((m) => ({ arm: m[1]!, seed: Number(m[2]), rec: passRecord(join(kept, m[0]))! }));
  const arms = ["base", "grpo", "prorl"].filter((a) => runs.some((r) => r.arm === a));
  const ks = Object.keys(runs[0]?.rec.passAtK ?? {}).map((k) => Number(k.replace("pass@", ""))).sort((a, b) => a - b);
  const ms = (xs: number[]) => {
    const m = meanSd(xs.map((x) => 100 * x));
    return `${m.mean.toFixed(1)} ± ${m.sd.toFixed(1)}`;
  };
  const lines = [`| arm | seeds | greedy | ${ks.map((k) => `pass@${k}`).join(" | ")} | mean length |`, `|---|---|---|${ks.map(() => "---|").join("")}---|`];
  const mean: Record<string, number[]> = {};
  for (const arm of arms) {
    const rs = runs.filter((r) => r.arm === arm).sort((a, b) => a.seed - b.seed);
    mean[arm] = ks.map((k) => meanSd(rs.map((r) => r.rec.passAtK[`pass@${k}`]!)).mean);
    lines.push(
      `| ${arm} | ${rs.map((r) => r.seed).join(", ")} | ${ms(rs.map((r) => r.rec.greedy ?? NaN))} | ${ks.map((k) => ms(rs.map((r) => r.rec.passAtK[`pass@${k}`]!))).join(" | ")} | ` +
        `${meanSd(rs.map((r) => r.rec.meanLength ?? NaN)).mean.toFixed(1)} |`,
    );
  }
  // Where the base's mean curve meets each RL arm's: the smallest k at which base ≥ arm.
  for (const arm of arms.filter((a) => a !== "base" && mean["base"])) {
    const i = ks.findIndex((_, j) => mean["base"]![j]! > mean[arm]![j]! + 1e-9);
    lines.push("", `Crossover base vs ${arm} (seed means): ${i < 0 ? `none up to k = ${ks.at(-1)}` : `base > ${arm} from k = ${ks[i]}`}.`);
  }
  // Per run: where the base (seed-mean curve) passes it, and its pass@k at the largest k below the base's.
  const perRun = runs
    .filter((r) => r.arm !== "base" && mean["base"])
    .sort((a, b) => a.arm.localeCompare(b.arm) || a.seed - b.seed)
    .map((r) => {
      const i = ks.findIndex((k, j) => mean["base"]![j]! > r.rec.passAtK[`pass@${k}`]! + 1e-9);
      return `${r.arm} s${r.seed}: ${i < 0 ? "never" : `k = ${ks[i]}`}`;
    });
  if (perRun.length) lines.push("", `Per run, smallest k with base > run: ${perRun.join("; ")}.`);
  const table = lines.join("\n");
  mkdirSync(ROOT, { recursive: true });
  writeFileSync(join(ROOT, "table.md"), table + "\n");
  console.log(table);
  const series = arms.map((arm) => ({ name: `${arm} (mean of ${runs.filter((r) => r.arm === arm).length})`, points: ks.map((k, j) => ({ x: k, y: mean[arm]![j]! })) }));
  mkdirSync(join("docs", "figures"), { recursive: true });
  writeFileSync(
    join("docs", "figures", `${NAME}.svg`),
    await renderLineChart(series, { format: "svg", title: "pass@k on 64 held-out prompts (addition-scratchpad, d = 2)", xTitle: "k (samples per prompt, log scale)", yTitle: "pass@k (unbiased estimate)", logX: true }),
  );
  console.log(`wrote docs/figures/${NAME}.svg`);
}

if (values.report) {
  await report();
} else {
  mkdirSync(ROOT, { recursive: true });
  const base = await ensureBase();
  for (const seed of values.seeds.split(",").map(Number)) for (const arm of values.arms.split(",")) await runArm(arm, seed, base);
}
