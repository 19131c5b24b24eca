/**
 * Shared driver of the rollout experiments (scripts/experiments/*.ts): run one RL arm at a fixed
 * sampled-token budget on the embedded engine and report held-out accuracy.
 *
 * An arm is a run config; the driver builds its context, runs RL steps (src/pipeline/step.ts, the
 * same step `rlvr train` runs) until the response tokens sampled by the RL stage — every
 * generation batch, kept or dropped — reach the budget, then evaluates greedily on the held-out
 * set. The comparison is therefore at equal sampling cost, not equal optimizer steps: a method
 * that resamples gets fewer updates for the same tokens.
 *
 * Output: one line per run on stderr, a JSON summary and a Markdown table in scratch/experiments/<name>/.
 */
import { argNumbers, meanSd } from "./strategies-lib.ts";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { evalHeldOut } from "../../src/trainer/stages.ts";

export interface ArmResult {
  arm: string;
  seed: number;
  /** Held-out greedy accuracy before and after RL. */
  before: number;
  after: number;
  /** RL response tokens sampled (all generation batches). */
  tokens: number;
  steps: number;
  seconds: number;
  /** Mean over steps of selected metrics (gen batches, kept groups, difficulty…). */
  extra: Record<string, number>;
}

/**
 * Run one arm until `budget` sampled tokens (the last step may overshoot by less than one step).
 * @param extraKeys metrics averaged over steps into `extra` (plus the last value as `<key>@last`).
 */
export async function runArm(name: string, arm: string, cfgIn: RunConfigInput, budget: number, extraKeys: string[] = []): Promise<ArmResult> {
  const dir = join("scratch", "experiments", name, `${arm}-seed${cfgIn.seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cfg = parseRunConfig({ ...cfgIn, out: dir }, `${name}/${arm}`);
  const t0 = performance.now();
  const ctx = await buildContext(cfg);
  try {
    const log = new RunLogger(dir, true);
    const before = (await evalHeldOut(ctx, dir, "init", 0)).accuracy;
    const st = initRlState(ctx, cfg.algorithm!);
    const sums: Record<string, number> = {};
    const last: Record<string, number> = {};
    while (st.selection.sampledTokens < budget && st.step < cfg.rl!.steps) {
      const m = await rlStep(ctx, cfg.algorithm!, st, log);
      for (const k of extraKeys) {
        if (m[k] === undefined) continue;
        sums[k] = (sums[k] ?? 0) + m[k]!;
        last[k] = m[k]!;
      }
    }
    const after = (await evalHeldOut(ctx, dir, "rl", st.step)).accuracy;
    const extra: Record<string, number> = {};
    for (const k of Object.keys(sums)) {
      extra[k] = sums[k]! / Math.max(1, st.step);
      extra[`${k}@last`] = last[k]!;
    }
    const res: ArmResult = { arm, seed: cfg.seed, before, after, tokens: st.selection.sampledTokens, steps: st.step, seconds: (performance.now() - t0) / 1000, extra };
    process.stderr.write(
      `${name} ${arm} seed ${cfg.seed}: held-out ${(before * 100).toFixed(1)}% -> ${(after * 100).toFixed(1)}%, ${res.tokens} tokens, ${res.steps} steps, ${res.seconds.toFixed(0)} s` +
        (Object.keys(extra).length ? ` ${JSON.stringify(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, +v.toFixed(3)])))}` : "") +
        "\n",
    );
    return res;
  } finally {
    await ctx.close();
  }
}

/**
 * Run every arm on every seed (arms interleaved per seed) and write summary.json and table.md
 * under scratch/experiments/<name>/.
 * @returns the Markdown table (mean ± sample std over seeds, and min–max).
 */
export async function runExperiment(
  name: string,
  arms: { arm: string; config: (seed: number) => RunConfigInput }[],
  o: { seeds: number[]; budget: number; extraKeys?: string[]; notes?: string },
): Promise<string> {
  const results: ArmResult[] = [];
  for (const seed of o.seeds) for (const a of arms) results.push(await runArm(name, a.arm, a.config(seed), o.budget, o.extraKeys));
  const pct = (x: number) => (x * 100).toFixed(1);
  const rows = arms.map((a) => {
    const rs = results.filter((r) => r.arm === a.arm);
    const acc = meanSd(rs.map((r) => r.after));
    const b = meanSd(rs.map((r) => r.before));
    const tok = meanSd(rs.map((r) => r.tokens));
    const steps = meanSd(rs.map((r) => r.steps));
    const sec = meanSd(rs.map((r) => r.seconds));
    const extras = Object.keys(rs[0]?.extra ?? {})
      .filter((k) => !k.endsWith("@last"))
      .map((k) => `${k} ${meanSd(rs.map((r) => r.extra[k] ?? 0)).mean.toFixed(2)}`)
      .join(", ");
    return (
      `| ${a.arm} | ${pct(acc.mean)} ± ${pct(acc.sd)} (${pct(acc.min)}–${pct(acc.max)}) | ${pct(b.mean)} | ` +
      `${tok.mean.toFixed(0)} | ${steps.mean.toFixed(1)} | ${sec.mean.toFixed(0)} | ${rs.map((r) => pct(r.after)).join(" / ")} | ${extras} |`
    );
  });
  const table = [
    `| arm | held-out accuracy after RL, % (mean ± sd, min–max) | before RL, % | sampled tokens | RL steps | s/run | per seed (${o.seeds.join(", ")}) | step means |`,
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
  const root = join("scratch", "experiments", name);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "summary.json"), JSON.stringify({ name, budget: o.budget, seeds: o.seeds, cpus: cpus().length, cpu: cpus()[0]?.model, results }, null, 2) + "\n");
  writeFileSync(join(root, "table.md"), table + "\n");
  process.stdout.write(`\n## ${name} (budget ${o.budget} sampled tokens, seeds ${o.seeds.join(", ")}, ${cpus().length} CPUs: ${cpus()[0]?.model ?? "?"})\n${o.notes ? o.notes + "\n" : ""}\n${table}\n`);
  return table;
}

/** Seeds from argv (`--seeds 1,2,3`) or the default. */
export function seedsFromArgs(def: number[]): number[] {
  return argNumbers("--seeds", def);
}
