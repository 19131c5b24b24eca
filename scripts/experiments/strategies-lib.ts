/**
 * Driver of the sampling-strategy experiments (tree rollouts, hints): per seed, one SFT warm-up
 * checkpoint shared by every arm (so arms differ only in their RL stage), then each arm runs RL
 * steps (src/trainer/rl.ts, the step `rlvr train` runs) until the tokens the engine sampled in RL
 * reach the budget, and is evaluated greedily on the held-out set. Equal sampled-token budget, not
 * equal steps: a strategy that samples fewer tokens per step gets more steps.
 *
 * Output: a line per run on stderr; summary.json and table.md under scratch/experiments/<name>/.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { ArmResult } from "./lib.ts";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { RunLogger } from "../../src/trainer/logger.ts";
import { initRlState, rlStep } from "../../src/trainer/rl.ts";
import { evalHeldOut, train } from "../../src/trainer/run.ts";

export interface StrategyArm {
  arm: string;
  /** Extra rl fields of this arm (tree, hints, …). */
  rl: Record<string, unknown>;
}

/** One arm's result on one seed (the same record as the data-selection driver's). */
export type StrategyResult = ArmResult;

/** SFT warm-up checkpoint for a seed (cached under scratch/experiments/<name>/sft-seed<seed>). */
export async function warmup(name: string, base: RunConfigInput): Promise<string> {
  const dir = join("scratch", "experiments", name, `sft${base.sft?.steps ?? 0}-seed${base.seed}`);
  const ckpt = join(dir, "checkpoints", "final");
  if (existsSync(join(ckpt, "model.safetensors"))) return ckpt;
  rmSync(dir, { recursive: true, force: true });
  const { rl: _rl, ...noRl } = base;
  await train(parseRunConfig({ ...noRl, out: dir }, `${name}/sft`), { quiet: true });
  return ckpt;
}

async function runArm(name: string, base: RunConfigInput, ckpt: string, a: StrategyArm, budget: number, extraKeys: string[]): Promise<StrategyResult> {
  const dir = join("scratch", "experiments", name, `${a.arm}-seed${base.seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { sft: _sft, ...noSft } = base;
  const cfg = parseRunConfig({ ...noSft, out: dir, model: { path: ckpt }, rl: { ...base.rl!, ...a.rl } as RunConfigInput["rl"] }, `${name}/${a.arm}`);
  const t0 = performance.now();
  const ctx = await buildContext(cfg);
  try {
    const log = new RunLogger(dir, true);
    const before = (await evalHeldOut(ctx, dir, "sft", 0)).accuracy;
    const st = initRlState(ctx, cfg.algorithm!);
    let tokens = 0;
    const sums: Record<string, number> = {};
    while (tokens < budget && st.step < cfg.rl!.steps) {
      const m = await rlStep(ctx, cfg.algorithm!, st, log);
      tokens += m["rollout/sampled_tokens"]!;
      for (const k of extraKeys) if (m[k] !== undefined) sums[k] = (sums[k] ?? 0) + m[k]!;
    }
    const after = (await evalHeldOut(ctx, dir, "rl", st.step)).accuracy;
    const extra = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / Math.max(1, st.step)]));
    const res = { arm: a.arm, seed: cfg.seed, before, after, tokens, steps: st.step, seconds: (performance.now() - t0) / 1000, extra };
    process.stderr.write(
      `${name} ${a.arm} seed ${cfg.seed}: held-out ${(before * 100).toFixed(1)}% -> ${(after * 100).toFixed(1)}%, ${tokens} tokens, ${st.step} steps, ${res.seconds.toFixed(0)} s ` +
        JSON.stringify(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, +v.toFixed(3)]))) +
        "\n",
    );
    return res;
  } finally {
    await ctx.close();
  }
}

export function meanSd(xs: number[]): { mean: number; sd: number; min: number; max: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, sd, min: Math.min(...xs), max: Math.max(...xs) };
}

/** Every arm on every seed (same warm-up checkpoint per seed); writes summary.json and table.md. */
export async function runStrategyExperiment(name: string, base: (seed: number) => RunConfigInput, arms: StrategyArm[], o: { seeds: number[]; budget: number; extraKeys?: string[] }): Promise<string> {
  const results: StrategyResult[] = [];
  for (const seed of o.seeds) {
    const b = base(seed);
    const ckpt = await warmup(name, b);
    for (const a of arms) results.push(await runArm(name, b, ckpt, a, o.budget, o.extraKeys ?? []));
  }
  const pct = (x: number) => (x * 100).toFixed(1);
  const rows = arms.map((a) => {
    const rs = results.filter((r) => r.arm === a.arm);
    const acc = meanSd(rs.map((r) => r.after));
    const tok = meanSd(rs.map((r) => r.tokens));
    const extras = Object.keys(rs[0]?.extra ?? {}).map((k) => `${k} ${meanSd(rs.map((r) => r.extra[k] ?? 0)).mean.toFixed(2)}`).join(", ");
    return `| ${a.arm} | ${pct(acc.mean)} ± ${pct(acc.sd)} (${pct(acc.min)}–${pct(acc.max)}) | ${pct(meanSd(rs.map((r) => r.before)).mean)} | ${tok.mean.toFixed(0)} ± ${tok.sd.toFixed(0)} | ${meanSd(rs.map((r) => r.steps)).mean.toFixed(1)} | ${meanSd(rs.map((r) => r.seconds)).mean.toFixed(0)} | ${rs.map((r) => pct(r.after)).join(" / ")} | ${extras} |`;
  });
  const table = [
    `| arm | held-out accuracy after RL, % (mean ± sd, min–max) | after SFT, % | sampled tokens (mean ± sd) | RL steps | s/run | per seed (${o.seeds.join(", ")}) | step means |`,
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
  const root = join("scratch", "experiments", name);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "summary.json"), JSON.stringify({ name, budget: o.budget, seeds: o.seeds, cpus: cpus().length, results }, null, 2) + "\n");
  writeFileSync(join(root, "table.md"), table + "\n");
  process.stdout.write(`\n## ${name} (budget ${o.budget} sampled RL tokens, seeds ${o.seeds.join(", ")})\n\n${table}\n`);
  return table;
}

/** Seeds from argv (`--seeds 1,2,3`) or the default; `--budget N` likewise. */
export function argNumbers(flag: string, def: number[]): number[] {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1]!.split(",").map(Number) : def;
}

/**
 * The base config: 1-digit addition ("3+4=" → "7"; sums ≥ 10 have two digits), a 64-wide 2-layer
 * char model, 50 SFT steps (a weak start, ~15–30% greedy held-out), then GRPO (PPO-clip, no KL,
 * lr 2e-4), 16 prompts × 8, at most 3 new tokens. SFT_STEPS and RL_LR override from the environment.
 */
export function additionBase(seed: number): RunConfigInput {
  return {
    seed,
    model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 24 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition", difficulty: 1, trainSize: 4000, testSize: 256 },
    sft: { steps: Number(process.env.SFT_STEPS ?? 50), batchSize: 64, lr: 1e-2, schedule: "cosine", warmupSteps: 10, weightDecay: 0.01 },
    rl: { steps: 10000, promptsPerStep: 16, groupSize: 8, maxNewTokens: 3, temperature: 1, lr: Number(process.env.RL_LR ?? 2e-4), algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 3 },
  };
}
