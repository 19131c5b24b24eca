/**
 * Shared driver of the experiments on `addition-scratchpad` (issue 20): the SFT base every arm
 * starts from, the stable GRPO recipe as a config factory, a runner that writes one run directory
 * per (arm, seed) — metrics.jsonl and eval.jsonl, so `rlvr plot` draws it — and keeps a copy of
 * those two logs in experiments/runs/<experiment>/<arm>-seed<N>/ (committed, so figures can be
 * redrawn), a parallel launcher (one child process per run, at most `jobs` at once) and a
 * mean ± sd table printer. The recipe is the same as examples/scratchpad-grpo.yaml.
 *
 * Usage from an experiment script (see length-shaping.ts):
 *   const arms = [{ arm: "grpo", config: (seed) => scratchpadRecipe(seed) }, ...];
 *   await main("my-exp", arms, (runs) => { ...print a table... });
 * Command line of such a script: [--seeds 1,2,3] [--arms a,b] [--jobs 2] [--report] [--force]
 *   (internally: --run <arm>:<seed> runs one run in this process).
 *
 * Engine: the torch engine (python/.venv), 1 thread per run (OMP_NUM_THREADS=1): about 5× faster
 * per RL step than the embedded engine for this 0.4M-parameter model (docs/experiments.md,
 * "Scratchpad experiments: common setup").
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { SCRATCHPAD_ALPHABET } from "../../src/tasks/scratchpad.ts";
import { train } from "../../src/trainer/run.ts";
import { meanSd } from "./strategies-lib.ts";

/**
 * The SFT base: examples/scratchpad-sft.yaml (seed 1) run with `model.engine: torch`, its
 * checkpoints/final copied here. Held-out (128 test prompts of seed 1): greedy 31.3%, pass@1 at
 * T = 1 10.9% (2 samples), mean length 20.7 characters. Rebuild with {@link ensureBase}.
 */
export const SCRATCHPAD_BASE = join("scratch", "experiments", "scratchpad-base");

/** Where the runs' working directories go (git-ignored) and where their logs are kept (committed). */
export const SCRATCH_ROOT = join("scratch", "experiments");
export const KEPT_ROOT = join("experiments", "runs");

type RlInput = NonNullable<RunConfigInput["rl"]>;
type EvalInput = NonNullable<RunConfigInput["eval"]>;

/** What an arm changes in the recipe: rl fields, algorithm fields (merged into the grpo preset), reward, eval. */
export interface RecipeOverrides {
  rl?: Partial<RlInput>;
  /** Merged over `{preset: "grpo", kl: {coef: 0}}` (e.g. `{loss: {clipHigh: 0.28}}`, or `{preset: "dr_grpo"}`). */
  algorithm?: Record<string, unknown>;
  reward?: RunConfigInput["reward"];
  eval?: Partial<EvalInput>;
}

/**
 * The stable GRPO recipe on addition-scratchpad (d = 2) from the SFT base, as a run config.
 * 20 steps × 64 prompts × 8 responses (10,240 sampled responses), T = 1, up to 48 new tokens,
 * lr 3e-4 (cosine, 5 warm-up steps), GRPO advantages, PPO-clip 0.2, no KL, one optimizer update
 * per batch; the torch engine. Held-out: 256 test prompts of the seed, greedy and 4 samples at
 * T = 1, before and after RL (examples/scratchpad-grpo.yaml: 30 steps, evaluated every 10; 20 here
 * to fit the experiments on the shared machine).
 * @param seed model sampling, prompt order and the test sample all follow it
 * @param o overrides; `rl` fields replace the recipe's, `algorithm` is merged into its algorithm block
 */
export function scratchpadRecipe(seed: number, o: RecipeOverrides = {}): RunConfigInput {
  const rl: RlInput = {
    steps: 20,
    promptsPerStep: 64,
    groupSize: 8,
    maxNewTokens: 48,
    temperature: 1,
    lr: 3e-4,
    warmupSteps: 5,
    ...o.rl,
    algorithm: { preset: "grpo", kl: { coef: 0 }, ...o.algorithm },
  };
  return {
    seed,
    model: { path: SCRATCHPAD_BASE, engine: "torch" },
    tokenizer: { type: "char", alphabet: SCRATCHPAD_ALPHABET },
    data: { task: "addition-scratchpad", difficulty: 2, trainSize: 8000, testSize: 256 },
    rl,
    ...(o.reward ? { reward: o.reward } : {}),
    eval: { every: 0, temperature: 1, samples: 4, greedy: true, maxNewTokens: 48, ...o.eval },
  };
}

/** Train the SFT base (examples/scratchpad-sft.yaml on the torch engine) unless it is there. */
export async function ensureBase(): Promise<string> {
  if (existsSync(join(SCRATCHPAD_BASE, "model.safetensors"))) return SCRATCHPAD_BASE;
  const { loadRunConfig } = await import("../../src/config/schema.ts");
  const cfg = loadRunConfig("examples/scratchpad-sft.yaml");
  cfg.out = join(SCRATCH_ROOT, "scratchpad-base-sft");
  cfg.model = { ...cfg.model, engine: "torch" } as typeof cfg.model;
  const s = await train(cfg, { quiet: true });
  mkdirSync(SCRATCHPAD_BASE, { recursive: true });
  for (const f of readdirSync(s.checkpoint)) copyFileSync(join(s.checkpoint, f), join(SCRATCHPAD_BASE, f));
  return SCRATCHPAD_BASE;
}

/** One held-out evaluation line of eval.jsonl (the fields the tables use). */
export interface EvalRow {
  label: string;
  step: number;
  greedy?: number;
  passAtK: Record<string, number>;
  meanLength: number;
  truncated: number;
}

/** A finished (or partial) run read back from its directory. */
export interface RunRecord {
  arm: string;
  seed: number;
  dir: string;
  evals: EvalRow[];
  /** Held-out greedy accuracy and pass@1 at T = 1 before ("init") and after ("rl") RL; NaN if absent. */
  before: { greedy: number; pass1: number; length: number };
  after: { greedy: number; pass1: number; length: number };
  /** RL steps logged. */
  steps: number;
  /** Wall-clock seconds and the 1-minute load average at start and end (result.json), if the run finished. */
  seconds: number;
  load: [number, number];
}

/** Per-step values of one metrics.jsonl key (stage rl), in step order; missing steps are skipped. */
export function series(dir: string, key: string): number[] {
  const file = join(dir, "metrics.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.stage === "rl" && typeof r[key] === "number")
    .map((r) => r[key] as number);
}

/** Mean of the first / last `w` values of a series. */
export function window(xs: number[], w: number, where: "first" | "last"): number {
  const ys = where === "first" ? xs.slice(0, w) : xs.slice(-w);
  return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : NaN;
}

/** Read a run directory (kept copy or working directory) into a {@link RunRecord}. */
export function readRun(dir: string, arm: string, seed: number): RunRecord {
  const evalFile = join(dir, "eval.jsonl");
  const evals: EvalRow[] = existsSync(evalFile) ? readFileSync(evalFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as EvalRow) : [];
  const pick = (label: string) => {
    const e = [...evals].reverse().find((r) => r.label === label);
    return { greedy: e?.greedy ?? NaN, pass1: e?.passAtK["pass@1"] ?? NaN, length: e?.meanLength ?? NaN };
  };
  const resFile = join(dir, "result.json");
  const res = existsSync(resFile) ? (JSON.parse(readFileSync(resFile, "utf8")) as { seconds: number; load: [number, number] }) : { seconds: NaN, load: [NaN, NaN] as [number, number] };
  return { arm, seed, dir, evals, before: pick("init"), after: pick("rl"), steps: series(dir, "accuracy").length, seconds: res.seconds, load: res.load };
}

/**
 * Run one (arm, seed) in this process: train into scratch/experiments/<experiment>/<arm>-seed<seed>/,
 * write result.json there (seconds, load), copy metrics.jsonl, eval.jsonl, config.yaml and
 * result.json to experiments/runs/<experiment>/<arm>-seed<seed>/.
 */
export async function runOne(experiment: string, arm: string, cfgIn: RunConfigInput, prepare: () => Promise<unknown> = ensureBase): Promise<RunRecord> {
  const name = `${arm}-seed${cfgIn.seed}`;
  const dir = join(SCRATCH_ROOT, experiment, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await prepare();
  const cfg = parseRunConfig({ ...cfgIn, out: dir }, `${experiment}/${arm}`);
  const load0 = loadavg()[0]!;
  const s = await train(cfg, { quiet: true });
  writeFileSync(join(dir, "result.json"), JSON.stringify({ seconds: s.seconds, load: [load0, loadavg()[0]!], cpus: cpus().length, cpu: cpus()[0]?.model }) + "\n");
  const kept = join(KEPT_ROOT, experiment, name);
  mkdirSync(kept, { recursive: true });
  for (const f of ["metrics.jsonl", "eval.jsonl", "config.yaml", "result.json"]) if (existsSync(join(dir, f))) copyFileSync(join(dir, f), join(kept, f));
  const r = readRun(dir, arm, cfg.seed);
  process.stderr.write(
    `${experiment} ${name}: greedy ${pct(r.before.greedy)} -> ${pct(r.after.greedy)}%, pass@1 ${pct(r.before.pass1)} -> ${pct(r.after.pass1)}%, ` +
      `length ${r.before.length.toFixed(1)} -> ${r.after.length.toFixed(1)}, ${r.steps} steps, ${s.seconds.toFixed(0)} s\n`,
  );
  return r;
}

const pct = (x: number) => (100 * x).toFixed(1);

/** One arm of an experiment: its name and its config per seed. */
export interface Arm {
  arm: string;
  config: (seed: number) => RunConfigInput;
  /**
   * Another experiment whose runs of the same arm (same config) this one reuses, e.g. the plain
   * GRPO baseline: the runs are kept (and run, when missing) under that experiment's name.
   */
  from?: string;
}

/** Every kept run of an experiment (experiments/runs/<experiment>/<arm>-seed<N>/), optionally only these arms. */
export function keptRuns(experiment: string, arms?: readonly string[]): RunRecord[] {
  const root = join(KEPT_ROOT, experiment);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((d) => /^(.+)-seed(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null && (arms === undefined || arms.includes(m[1]!)))
    .map((m) => readRun(join(root, m[0]), m[1]!, Number(m[2])))
    .sort((a, b) => a.arm.localeCompare(b.arm) || a.seed - b.seed);
}

/**
 * Run `tasks` (arm, seed) as child processes of this script (`--run arm:seed`), at most `jobs` at
 * once, each with one thread (OMP_NUM_THREADS=1, RLVR_THREADS=1) and this process's niceness.
 * @throws Error naming the runs that failed (after all have ended)
 */
export async function launch(tasks: { arm: string; seed: number }[], jobs: number): Promise<void> {
  const queue = [...tasks];
  const failed: string[] = [];
  const worker = async () => {
    for (let t = queue.shift(); t; t = queue.shift()) {
      const id = `${t.arm}:${t.seed}`;
      const code = await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, "--run", id], {
          stdio: ["ignore", "inherit", "inherit"],
          env: { ...process.env, OMP_NUM_THREADS: "1", RLVR_THREADS: "1" },
        });
        child.on("exit", (c) => resolve(c ?? 1));
      });
      if (code !== 0) failed.push(`${id} (exit ${code})`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  if (failed.length) throw new Error(`runs failed: ${failed.join(", ")}`);
}

/**
 * The command line of an experiment script: `--run arm:seed` runs one run here; `--report` only
 * reports from the kept logs; otherwise every (seed, arm) whose kept run is missing (all of them
 * with `--force`) runs, `--jobs` at once, then the report. `prepare` runs first (default: the
 * shared scratchpad SFT base). `report` gets the kept runs of the chosen
 * arms (an arm with `from` is read from that experiment's kept runs).
 */
export async function main(experiment: string, arms: Arm[], report: (runs: RunRecord[]) => Promise<void> | void, prepare: () => Promise<unknown> = ensureBase): Promise<void> {
  const { values } = parseArgs({
    options: {
      seeds: { type: "string", default: "1,2,3" },
      arms: { type: "string" },
      jobs: { type: "string", default: "2" },
      run: { type: "string" },
      report: { type: "boolean", default: false },
      force: { type: "boolean", default: false },
    },
  });
  const names = arms.map((x) => x.arm).join(", ");
  const chosen = values.arms ? values.arms.split(",") : arms.map((a) => a.arm);
  for (const a of chosen) if (!arms.some((x) => x.arm === a)) throw new Error(`--arms: unknown arm "${a}"; the arms are ${names}`);
  const home = (a: Arm) => a.from ?? experiment;
  if (values.run) {
    const [arm, seed] = values.run.split(":");
    const a = arms.find((x) => x.arm === arm);
    if (!a || !Number.isInteger(Number(seed))) throw new Error(`--run ${values.run}: expected <arm>:<seed> with an arm of ${names}`);
    await runOne(home(a), a.arm, a.config(Number(seed)), prepare);
    return;
  }
  const seeds = values.seeds.split(",").map(Number);
  if (!values.report) {
    await prepare();
    const todo = seeds.flatMap((seed) =>
      chosen.map((arm) => ({ arm, seed })).filter((t) => values.force || !existsSync(join(KEPT_ROOT, home(arms.find((x) => x.arm === t.arm)!), `${t.arm}-seed${t.seed}`, "result.json"))),
    );
    process.stderr.write(`${experiment}: ${todo.length} run(s) to do, ${values.jobs} at a time: ${todo.map((t) => `${t.arm}:${t.seed}`).join(" ")}\n`);
    await launch(todo, Number(values.jobs));
  }
  const runs = chosen.flatMap((arm) => keptRuns(home(arms.find((x) => x.arm === arm)!), [arm]).filter((r) => seeds.includes(r.seed)));
  await report(runs);
}

/** "mean ± sd" of the finite values (sample sd), scaled and rounded; "–" when there are none. */
export function cell(xs: number[], digits = 1, scale = 1): string {
  const ys = xs.filter(Number.isFinite).map((x) => x * scale);
  if (ys.length === 0) return "–";
  const m = meanSd(ys);
  return `${m.mean.toFixed(digits)} ± ${m.sd.toFixed(digits)}`;
}

/** A Markdown table from a header row and rows of cells. */
export function markdownTable(header: string[], rows: string[][]): string {
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

/** Group runs by arm, keeping the arms' given order. */
export function byArm(runs: RunRecord[], order: readonly string[]): [string, RunRecord[]][] {
  return order.map((a) => [a, runs.filter((r) => r.arm === a)] as [string, RunRecord[]]).filter(([, rs]) => rs.length > 0);
}

/**
 * Seed-mean of a metric per step for each arm, as plot series named "<arm> (<seeds>)" (steps every run of the arm has).
 */
export function meanSeries(runs: RunRecord[], order: readonly string[], key: string): { name: string; points: { x: number; y: number }[] }[] {
  return byArm(runs, order).map(([arm, rs]) => {
    const per = rs.map((r) => series(r.dir, key));
    const n = Math.min(...per.map((p) => p.length));
    return { name: `${arm} (${rs.length})`, points: Array.from({ length: n }, (_, i) => ({ x: i + 1, y: per.reduce((a, p) => a + p[i]!, 0) / per.length })) };
  });
}

/** Write the report (table and notes) to scratch/experiments/<experiment>/table.md and stdout. */
export function writeReport(experiment: string, text: string): void {
  const root = join(SCRATCH_ROOT, experiment);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "table.md"), text + "\n");
  process.stdout.write(text + "\n");
}

/** Extra columns of {@link standardTable}: a header and a cell per arm's runs. */
export type Column = [string, (rs: RunRecord[]) => string];

/**
 * The common table of the scratchpad experiments, one row per arm: seeds, held-out greedy and
 * pass@1 (T = 1, 4 samples) before → after RL (%), held-out mean response length (T = 1 samples,
 * characters) before → after, training accuracy and response length over the first and last
 * `w` steps, seconds per run; then `extra` columns.
 */
export function standardTable(runs: RunRecord[], order: readonly string[], extra: Column[] = [], w = 5): string {
  const header = [
    "arm",
    "seeds",
    "held-out greedy before → after (%)",
    "held-out pass@1 before → after (%)",
    "held-out length before → after",
    `train accuracy first ${w} → last ${w} steps (%)`,
    `train length first ${w} → last ${w}`,
    ...extra.map((c) => c[0]),
    "s/run",
  ];
  const rows = byArm(runs, order).map(([arm, rs]) => {
    const s = (k: string, where: "first" | "last") => rs.map((r) => window(series(r.dir, k), w, where));
    return [
      arm,
      rs.map((r) => `${r.seed}${r.steps ? ` (${r.steps})` : ""}`).join(", "),
      `${cell(rs.map((r) => r.before.greedy), 1, 100)} → ${cell(rs.map((r) => r.after.greedy), 1, 100)}`,
      `${cell(rs.map((r) => r.before.pass1), 1, 100)} → ${cell(rs.map((r) => r.after.pass1), 1, 100)}`,
      `${cell(rs.map((r) => r.before.length))} → ${cell(rs.map((r) => r.after.length))}`,
      `${cell(s("accuracy", "first"), 1, 100)} → ${cell(s("accuracy", "last"), 1, 100)}`,
      `${cell(s("response/length_mean", "first"))} → ${cell(s("response/length_mean", "last"))}`,
      ...extra.map((c) => c[1](rs)),
      cell(rs.map((r) => r.seconds), 0),
    ];
  });
  return markdownTable(header, rows);
}

/** "arm sN: after greedy / pass@1 / length" per run, for the per-seed line under a table. */
export function perSeedLine(runs: RunRecord[], order: readonly string[]): string {
  return byArm(runs, order)
    .map(([arm, rs]) => `${arm}: ` + rs.map((r) => `s${r.seed} ${pct(r.after.greedy)} / ${pct(r.after.pass1)} / ${r.after.length.toFixed(1)}`).join(", "))
    .join("; ");
}

/**
 * Draw the seed-mean of one metric per RL step for each arm into docs/figures/<file> (.svg or
 * .png), with the plotting module `rlvr plot` uses (src/eval/plot.ts).
 */
export async function meanFigure(runs: RunRecord[], order: readonly string[], key: string, file: string, title: string, yTitle: string): Promise<string> {
  const { renderLineChart } = await import("../../src/eval/plot.ts");
  const out = join("docs", "figures", file);
  mkdirSync(join("docs", "figures"), { recursive: true });
  const s = meanSeries(runs, order, key);
  const o = { title: `${title}, mean over seeds`, xTitle: "RL step", yTitle, width: 720 };
  if (file.endsWith(".png")) writeFileSync(out, await renderLineChart(s, { ...o, format: "png" }));
  else writeFileSync(out, await renderLineChart(s, { ...o, format: "svg" }));
  process.stdout.write(`wrote ${out}\n`);
  return out;
}
