/**
 * Experiment: KDRL — knowledge distillation and RL in one objective (Xu et al. 2025, "KDRL:
 * Post-Training Reasoning LLMs via Unified Knowledge Distillation and Reinforcement Learning",
 * arXiv:2506.02208). Claim: adding a reverse-KL term to a stronger teacher on the student's own
 * samples to the GRPO loss beats both GRPO alone and distillation alone.
 *
 * Task `addition-scratchpad` (2 digits). Student: the shared SFT base (scripts/experiments/
 * scratchpad-lib.ts). Teacher: the same architecture SFT'd much longer from scratch (no early stop),
 * trained once into scratch/experiments/kdrl-teacher/ and reused. Arms, each from the base with
 * the stable RL recipe and the same sampling budget (KL to a reference off in all three: KDRL puts
 * the teacher in the reference slot):
 *   rl:   the recipe (GRPO);
 *   kd:   the teacher term alone — reward weight 0, so every advantage is 0 and only
 *         coef · k2(student ‖ teacher) on the student's samples trains (on-policy reverse-KL KD);
 *   kdrl: the recipe + the same KD term (`guided.kd`).
 * Measured: held-out greedy accuracy and pass@1 / pass@16 at T = 1 (16 samples on 64 fixed
 * test prompts, scripts/experiments/passk-eval.ts) after RL, mean ± sd over seeds.
 *
 *   OMP_NUM_THREADS=1 nice -n 10 npx tsx scripts/experiments/kdrl.ts [--seeds 1,2,3] [--arms rl,kd,kdrl]
 *   npx tsx scripts/experiments/kdrl.ts --report    # table.md + docs/figures/kdrl.svg from the logs
 * Run directories: scratch/experiments/kdrl/<arm>-seed<s>/; metrics.jsonl and eval.jsonl of each
 * are copied to experiments/runs/kdrl/<arm>-seed<s>/.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadRunConfig, parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { readMetricSeries, renderLineChart } from "../../src/eval/plot.ts";
import { train } from "../../src/trainer/run.ts";
import { keepRun, passAtKOf, type PassKOptions } from "./passk-eval.ts";
import { meanSd } from "./strategies-lib.ts";
import { SCRATCH_ROOT, ensureBase, scratchpadRecipe } from "./scratchpad-lib.ts";

const NAME = "kdrl";
const ROOT = join("scratch", "experiments", NAME);
const TEACHER_DIR = join("scratch", "experiments", "kdrl-teacher");
const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1,2,3" },
    arms: { type: "string", default: "rl,kd,kdrl" },
    steps: { type: "string" },
    coef: { type: "string", default: "0.05" },
    "teacher-steps": { type: "string", default: "1000" },
    teacher: { type: "boolean", default: false },
    report: { type: "boolean", default: false },
  },
});

const ENGINE = "torch" as const;
const EVAL: Omit<PassKOptions, "seed"> = { engine: ENGINE, prompts: 64, samples: 16, difficulty: 2, maxNewTokens: 48, promptSeed: 1234 };

/**
 * The teacher: examples/scratchpad-sft.yaml's model and data, SFT'd for `steps` steps without the
 * early stop (cosine 3e-3 → 3e-4), trained once.
 * @returns its final checkpoint directory
 */
async function teacher(steps: number): Promise<string> {
  const ckpt = join(TEACHER_DIR, "checkpoints", "final");
  if (existsSync(join(ckpt, "config.json"))) return ckpt;
  rmSync(TEACHER_DIR, { recursive: true, force: true });
  const cfg = loadRunConfig("examples/scratchpad-sft.yaml");
  cfg.out = TEACHER_DIR;
  cfg.model = { ...cfg.model, engine: ENGINE } as typeof cfg.model;
  cfg.sft = { ...cfg.sft!, steps, minLrRatio: 0.1, stopAt: undefined };
  const s = await train(cfg, { quiet: true });
  const pk = await passAtKOf(s.checkpoint, { ...EVAL, seed: 1 }, { dir: TEACHER_DIR, label: "passk" });
  keepRun(TEACHER_DIR, NAME, "teacher");
  process.stderr.write(`${NAME} teacher: ${steps} SFT steps, ${s.seconds.toFixed(0)} s, held-out greedy ${pct(pk.greedy ?? NaN)}%, pass@1 ${pct(pk.passAtK["pass@1"]!)}%\n`);
  return s.checkpoint;
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The run config of an arm: the recipe (KL off), plus the KD term, minus the reward (kd). */
function armConfig(arm: string, seed: number, teacherCkpt: string, steps: number | undefined, coef: number): RunConfigInput {
  const rl = steps === undefined ? {} : { rl: { steps } };
  const kd = { teacher: teacherCkpt, coef, estimator: "k2" as const };
  if (arm === "rl") return scratchpadRecipe(seed, rl);
  if (arm === "kdrl") return { ...scratchpadRecipe(seed, rl), guided: { kd } };
  if (arm === "kd") return { ...scratchpadRecipe(seed, { ...rl, reward: { components: [{ verifier: "addition-scratchpad", weight: 0 }] } }), guided: { kd } };
  throw new Error(`kdrl: unknown arm "${arm}" (rl, kd, kdrl)`);
}

/** length-shaping.ts's finished plain-GRPO run of `seed` (the same config as the rl arm), if any. */
function reusedRl(seed: number, steps: number | undefined): string | undefined {
  const dir = join(SCRATCH_ROOT, "length-shaping", `grpo-seed${seed}`);
  return steps === undefined && existsSync(join(dir, "result.json")) && existsSync(join(dir, "checkpoints", "final", "config.json")) ? dir : undefined;
}

async function runArm(arm: string, seed: number, teacherCkpt: string, steps: number | undefined, coef: number): Promise<void> {
  const dir = join(ROOT, `${arm}-seed${seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const reused = arm === "rl" ? reusedRl(seed, steps) : undefined;
  let ckpt: string;
  if (reused) {
    for (const f of ["metrics.jsonl", "eval.jsonl", "config.yaml", "result.json"]) if (existsSync(join(reused, f))) copyFileSync(join(reused, f), join(dir, f));
    ckpt = join(reused, "checkpoints", "final");
  } else {
    const cfg = parseRunConfig({ ...armConfig(arm, seed, teacherCkpt, steps, coef), out: dir }, `${NAME}/${arm}`);
    const load0 = loadavg()[0]!;
    const s = await train(cfg, { quiet: true });
    writeFileSync(join(dir, "result.json"), JSON.stringify({ seconds: s.seconds, load: [load0, loadavg()[0]!], cpus: cpus().length, cpu: cpus()[0]?.model }) + "\n");
    ckpt = s.checkpoint;
  }
  const pk = await passAtKOf(ckpt, { ...EVAL, seed }, { dir, label: "passk" });
  keepRun(dir, NAME, `${arm}-seed${seed}`);
  process.stderr.write(`${NAME} ${arm} seed ${seed}${reused ? ` (reused ${reused})` : ""}: ${((performance.now() - t0) / 1000).toFixed(0)} s, held-out greedy ${pct(pk.greedy ?? NaN)}%, pass@1 ${pct(pk.passAtK["pass@1"]!)}%, pass@16 ${pct(pk.passAtK["pass@16"]!)}%\n`);
}

interface EvalRow {
  label: string;
  greedy?: number;
  passAtK: Record<string, number>;
  seconds?: number;
}
function lastEval(dir: string, label: string): EvalRow | undefined {
  const file = join(dir, "eval.jsonl");
  if (!existsSync(file)) return undefined;
  return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as EvalRow).reverse().find((r) => r.label === label);
}

/** Where the kept logs of the runs are (committed): the report reads these. */
const KEPT = join("experiments", "runs", NAME);

/**
 * Table (mean ± sd over seeds) and figure (seed-mean training accuracy per step) from the kept
 * logs in experiments/runs/kdrl/ (the base row from experiments/runs/passk-boundary/base-seed1:
 * the same 64 prompts, 256 samples).
 */
async function report(): Promise<void> {
  const f = (xs: number[]) => {
    const ys = xs.filter(Number.isFinite);
    if (ys.length === 0) return "–";
    const m = meanSd(ys.map((y) => 100 * y));
    return `${m.mean.toFixed(1)} ± ${m.sd.toFixed(1)}`;
  };
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const series = (dir: string, key: string) => {
    try {
      return readMetricSeries(dir, key).map((p) => p.y);
    } catch {
      return [];
    }
  };
  const runs = readdirSync(KEPT)
    .map((d) => /^(rl|kd|kdrl)-seed(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null && lastEval(join(KEPT, m[0]), "passk") !== undefined)
    .map((m) => {
      const dir = join(KEPT, m[0]);
      const res = existsSync(join(dir, "result.json")) ? (JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as { seconds: number }) : { seconds: NaN };
      return { arm: m[1]!, seed: Number(m[2]), dir, pk: lastEval(dir, "passk")!, after: lastEval(dir, "rl"), before: lastEval(dir, "init"), acc: series(dir, "accuracy"), kl: series(dir, "kd/kl"), seconds: res.seconds };
    });
  const t = lastEval(join(KEPT, "teacher"), "passk");
  const b = lastEval(join("experiments", "runs", "passk-boundary", "base-seed1"), "passk");
  const lines = [
    "| model | seeds | greedy, 64 prompts (%) | pass@1, T = 1 (%) | pass@16 (%) | in-run held-out greedy / pass@1, 256 prompts (%) | train accuracy, first → last 5 steps (%) | kd/kl, first → last 5 steps | s/run |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  const inRunBefore = runs.map((r) => r.before).filter((e): e is EvalRow => e !== undefined);
  if (b) lines.push(`| SFT base (student) | – | ${pct(b.greedy ?? NaN)} | ${pct(b.passAtK["pass@1"]!)} | ${pct(b.passAtK["pass@16"]!)} | ${f(inRunBefore.map((e) => e.greedy ?? NaN))} / ${f(inRunBefore.map((e) => e.passAtK["pass@1"]!))} | – | – | – |`);
  if (t) lines.push(`| teacher | – | ${pct(t.greedy ?? NaN)} | ${pct(t.passAtK["pass@1"]!)} | ${pct(t.passAtK["pass@16"]!)} | – | – | – | – |`);
  for (const arm of ["rl", "kd", "kdrl"]) {
    const rs = runs.filter((r) => r.arm === arm).sort((x, y) => x.seed - y.seed);
    if (rs.length === 0) continue;
    const kl = rs[0]!.kl.length ? `${meanSd(rs.map((r) => avg(r.kl.slice(0, 5)))).mean.toFixed(2)} → ${meanSd(rs.map((r) => avg(r.kl.slice(-5)))).mean.toFixed(2)}` : "–";
    lines.push(
      `| ${arm} | ${rs.map((r) => r.seed).join(", ")} | ${f(rs.map((r) => r.pk.greedy ?? NaN))} | ${f(rs.map((r) => r.pk.passAtK["pass@1"]!))} | ${f(rs.map((r) => r.pk.passAtK["pass@16"]!))} | ` +
        `${f(rs.map((r) => r.after?.greedy ?? NaN))} / ${f(rs.map((r) => r.after?.passAtK["pass@1"] ?? NaN))} | ` +
        `${f(rs.map((r) => avg(r.acc.slice(0, 5))))} → ${f(rs.map((r) => avg(r.acc.slice(-5))))} | ${kl} | ${meanSd(rs.map((r) => r.seconds)).mean.toFixed(0)} |`,
    );
  }
  lines.push("", "Per run (greedy / pass@1 on the 64 prompts, %): " + runs.map((r) => `${r.arm} s${r.seed} ${pct(r.pk.greedy ?? NaN)} / ${pct(r.pk.passAtK["pass@1"]!)}`).join("; "));
  const table = lines.join("\n");
  mkdirSync(ROOT, { recursive: true });
  writeFileSync(join(ROOT, "table.md"), table + "\n");
  console.log(table);
  const curves = ["rl", "kd", "kdrl"].flatMap((arm) => {
    const per = runs.filter((r) => r.arm === arm).map((r) => r.acc);
    if (per.length === 0) return [];
    const steps = Math.min(...per.map((p) => p.length));
    return [{ name: `${arm} (mean of ${per.length} seeds)`, points: Array.from({ length: steps }, (_, i) => ({ x: i + 1, y: avg(per.map((p) => p[i]!)) })) }];
  });
  mkdirSync(join("docs", "figures"), { recursive: true });
  writeFileSync(join("docs", "figures", `${NAME}.svg`), await renderLineChart(curves, { format: "svg", title: "KDRL: training accuracy (addition-scratchpad, d = 2)", xTitle: "RL step", yTitle: "accuracy of the step's samples" }));
  console.log(`wrote docs/figures/${NAME}.svg`);
}

if (values.report) {
  await report();
} else {
  mkdirSync(ROOT, { recursive: true });
  const teacherCkpt = await teacher(Number(values["teacher-steps"]));
  if (!values.teacher) {
    await ensureBase();
    const steps = values.steps === undefined ? undefined : Number(values.steps);
    for (const seed of values.seeds.split(",").map(Number)) for (const arm of values.arms.split(",")) await runArm(arm, seed, teacherCkpt, steps, Number(values.coef));
  }
}
