/**
 * Shared driver of the guided / label-free experiments (scripts/experiments/{ttrl,raft-vs-grpo,
 * relift,selfplay}.ts): each arm is one `train()` run (the path `rlvr train` takes) on the embedded
 * engine; results are held-out greedy accuracy after the warm-up ("before") and after the RL stage
 * ("after"), over seeds, written to scratch/experiments/<name>/ as JSON and a Markdown table.
 */
import { argNumbers, meanSd } from "./strategies-lib.ts";
export { meanSd };
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { evaluate } from "../../src/eval/accuracy.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { train } from "../../src/trainer/run.ts";

export interface RunResult {
  arm: string;
  seed: number;
  /** Held-out greedy accuracy of the starting and the trained model. */
  before: number;
  after: number;
  /** Held-out sampled accuracy (temperature 1, mean over 4 samples per prompt; pass@1 at T = 1). */
  beforeT1: number;
  afterT1: number;
  /** Held-out maj@4 and pass@4 at T = 1. */
  afterMaj: number;
  afterPass: number;
  seconds: number;
  /** Mean over the RL steps of selected metrics, and their last value (`key@last`). */
  extra: Record<string, number>;
}

/**
 * Held-out accuracy of a checkpoint under `cfgIn`'s data and tokenizer: greedy, and at T = 1
 * (mean over 4 samples per prompt) with maj@4.
 */
export async function evalCheckpoint(dir: string | null, cfgIn: RunConfigInput): Promise<{ greedy: number; t1: number; maj: number; pass: number }> {
  // dir null: the run's initial model (model.init with the run's seed gives the same weights).
  const cfg = parseRunConfig({ ...cfgIn, ...(dir ? { model: { path: dir } } : {}), sft: undefined, rl: undefined, methods: undefined, guided: undefined, labelfree: undefined }, "eval");
  const ctx = await buildContext(cfg);
  try {
    const mx = cfgIn.eval?.maxNewTokens ?? cfgIn.rl?.maxNewTokens ?? 16;
    const g = await evaluate(ctx, ctx.test, { maxNewTokens: mx, temperature: 0, seed: cfg.seed, bootstrap: 0, breakdown: false });
    const s = await evaluate(ctx, ctx.test, { maxNewTokens: mx, temperature: 1, n: 4, ks: [4], seed: cfg.seed, bootstrap: 0, breakdown: false });
    return { greedy: g.accuracy, t1: s.meanAtN, maj: s.majAtK["maj@4"] ?? NaN, pass: s.passAtK["pass@4"] ?? NaN };
  } finally {
    await ctx.close();
  }
}

/**
 * The starting model of an experiment: an SFT-only run (cfgIn's sft block, no RL), cached in
 * scratch/experiments/<name>/base-seed<seed>/ for every arm of that seed.
 */
export async function baseModel(name: string, cfgIn: RunConfigInput): Promise<string> {
  const dir = join("scratch", "experiments", name, `base-seed${cfgIn.seed}`);
  rmSync(dir, { recursive: true, force: true });
  const cfg = parseRunConfig({ ...cfgIn, out: dir, rl: undefined, methods: undefined, guided: undefined, labelfree: undefined }, `${name}/base`);
  const s = await train(cfg, { quiet: true });
  return s.checkpoint;
}

/** Run one arm; `keys` are RL metrics to average over steps. */
export async function runOne(name: string, arm: string, cfgIn: RunConfigInput, keys: string[] = []): Promise<RunResult> {
  const dir = join("scratch", "experiments", name, `${arm}-seed${cfgIn.seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cfg = parseRunConfig({ ...cfgIn, out: dir }, `${name}/${arm}`);
  const s = await train(cfg, { quiet: true });
  const b = cfgIn.model.path || !cfgIn.sft ? await evalCheckpoint(cfgIn.model.path ?? null, cfgIn) : null;
  const a = await evalCheckpoint(s.checkpoint, cfgIn);
  const before = b?.greedy ?? (s.evals["sft"] ?? s.evals["init"])!.accuracy;
  const after = a.greedy;
  const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r["stage"] === "rl");
  const extra: Record<string, number> = {};
  for (const k of keys) {
    const xs = rows.map((r) => r[k]).filter((x): x is number => typeof x === "number");
    if (xs.length) {
      extra[k] = xs.reduce((a, b) => a + b, 0) / xs.length;
      extra[`${k}@first10`] = xs.slice(0, 10).reduce((a, b) => a + b, 0) / Math.min(10, xs.length);
      extra[`${k}@last10`] = xs.slice(-10).reduce((a, b) => a + b, 0) / Math.min(10, xs.length);
    }
  }
  const r: RunResult = { arm, seed: cfgIn.seed!, before, after, beforeT1: b?.t1 ?? NaN, afterT1: a.t1, afterMaj: a.maj, afterPass: a.pass, seconds: s.seconds, extra };
  process.stderr.write(`${name} ${arm} seed ${r.seed}: greedy ${(before * 100).toFixed(1)}% -> ${(after * 100).toFixed(1)}%, T=1 ${(r.beforeT1 * 100).toFixed(1)}% -> ${(r.afterT1 * 100).toFixed(1)}% (${r.seconds.toFixed(0)} s) ${JSON.stringify(extra)}\n`);
  return r;
}

const pct = (x: { mean: number; sd: number }) => `${(x.mean * 100).toFixed(1)} ± ${(x.sd * 100).toFixed(1)}`;

/** Write results.json and table.md; print the table. Columns: before, after, gain (per-seed differences), extra keys. */
export function report(name: string, results: RunResult[], extraKeys: string[] = []): string {
  const arms = [...new Set(results.map((r) => r.arm))];
  const lines = [
    `| arm | seeds | greedy before (%) | greedy after (%) | greedy gain (pts) | T=1 before (%) | T=1 after (%) | T=1 gain (pts) | maj@4 after (%) | pass@4 after (%) | s/run | ${extraKeys.join(" | ")} |`,
    `|---|---|---|---|---|---|---|---|---|---|---|${extraKeys.map(() => "---|").join("")}`,
  ];
  for (const a of arms) {
    const rs = results.filter((r) => r.arm === a);
    const ex = extraKeys.map((k) => {
      const v = meanSd(rs.map((r) => r.extra[k] ?? NaN));
      return `${v.mean.toFixed(3)} ± ${v.sd.toFixed(3)}`;
    });
    lines.push(`| ${a} | ${rs.map((r) => r.seed).join(",")} | ${pct(meanSd(rs.map((r) => r.before)))} | ${pct(meanSd(rs.map((r) => r.after)))} | ${pct(meanSd(rs.map((r) => r.after - r.before)))} | ${pct(meanSd(rs.map((r) => r.beforeT1)))} | ${pct(meanSd(rs.map((r) => r.afterT1)))} | ${pct(meanSd(rs.map((r) => r.afterT1 - r.beforeT1)))} | ${pct(meanSd(rs.map((r) => r.afterMaj)))} | ${pct(meanSd(rs.map((r) => r.afterPass)))} | ${meanSd(rs.map((r) => r.seconds)).mean.toFixed(0)} | ${ex.join(" | ")} |`);
  }
  const per = results.map((r) => `${r.arm}/seed${r.seed}: greedy ${(r.before * 100).toFixed(1)} → ${(r.after * 100).toFixed(1)}, T=1 ${(r.beforeT1 * 100).toFixed(1)} → ${(r.afterT1 * 100).toFixed(1)}`).join("; ");
  const table = lines.join("\n") + `\n\nPer seed: ${per}\n`;
  const out = join("scratch", "experiments", name);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "results.json"), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(join(out, "table.md"), table);
  process.stdout.write(`\n${name}\n${table}`);
  return table;
}

/** Seeds from argv (`--seeds 1,2,3`), default [1, 2, 3]. */
export function seedsFromArgs(): number[] {
  return argNumbers("--seeds", [1, 2, 3]);
}

/**
 * Keep a per-process result file (scratch/experiments/<name>/results-<seeds>.json), so that seeds
 * can run as separate processes (e.g. two at once on two cores) and be merged by `reportMerged`.
 */
export function saveSeedResults(name: string, seeds: number[], results: RunResult[]): void {
  const out = join("scratch", "experiments", name);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `results-${seeds.join("_")}.json`), JSON.stringify(results, null, 2) + "\n");
}

/** Merge every results-*.json of an experiment (written by `saveSeedResults`) into one `report`. */
export function reportMerged(name: string, extraKeys: string[] = []): string {
  const out = join("scratch", "experiments", name);
  const results = readdirSync(out)
    .filter((f) => /^results-.*\.json$/.test(f))
    .flatMap((f) => JSON.parse(readFileSync(join(out, f), "utf8")) as RunResult[])
    .sort((a, b) => a.arm.localeCompare(b.arm) || a.seed - b.seed);
  if (!results.length) throw new Error(`${out}: no results-*.json to merge; run the experiment first (without --report)`);
  return report(name, results, extraKeys);
}

/**
 * The quickstart's task and model for a seed: `addition-padded` at difficulty 2 (`07+45=` → `052`),
 * a 128-wide 2-layer char model, 20,000 training and 256 test prompts, answers of ≤ 4 tokens.
 */
export function paddedAdditionSetup(seed: number): RunConfigInput {
  return {
    seed,
    model: { init: { hiddenSize: 128, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 32 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition-padded", difficulty: 2, trainSize: 20000, testSize: 256 },
    eval: { maxNewTokens: 4 },
  };
}
