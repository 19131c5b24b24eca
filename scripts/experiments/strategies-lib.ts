/**
 * Driver of the sampling-strategy experiments (tree rollouts, hints): per seed, one SFT warm-up
 * checkpoint shared by every arm (so arms differ only in their RL stage), then each arm runs RL
 * steps (src/pipeline/step.ts, the step `rlvr train` runs) until the tokens the engine sampled in RL
 * reach the budget, and is evaluated greedily on the held-out set. Equal sampled-token budget, not
 * equal steps: a strategy that samples fewer tokens per step gets more steps.
 *
 * Output: a line per run on stderr; summary.json and table.md under scratch/experiments/<name>/.
 * Each run also writes result.json (with the key of what it ran: arm, config, checkpoint, budget;
 * a reused result keeps the step means its own run recorded),
 * and a later run of the same key reuses it — so experiments that share a control arm (`runsDir`)
 * run it once, and seeds run as separate processes can be merged by a run over all seeds.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { ArmResult } from "./lib.ts";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { buildMethodHooks } from "../../src/methods/index.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { train } from "../../src/trainer/run.ts";
import { evalHeldOut } from "../../src/trainer/stages.ts";

export interface StrategyArm {
  arm: string;
  /** Extra rl fields of this arm (tree, hints, …). */
  rl: Record<string, unknown>;
}

/**
 * One arm's result on one seed (the data-selection driver's record). With `eval.samples` > 1 at
 * T > 0 and `eval.greedy`, `before`/`after` are greedy accuracy and `beforeT1`/`afterT1` pass@1 at T.
 */
export type StrategyResult = ArmResult & { beforeT1?: number; afterT1?: number };

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
  const key = JSON.stringify({ arm: a, base, ckpt, budget });
  const cached = join(dir, "result.json");
  if (existsSync(cached)) {
    const prev = JSON.parse(readFileSync(cached, "utf8")) as { key: string; result: StrategyResult };
    if (prev.key === key) {
      process.stderr.write(`${name} ${a.arm} seed ${base.seed}: reused ${cached}\n`);
      return prev.result;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { sft: _sft, ...noSft } = base;
  const cfg = parseRunConfig({ ...noSft, out: dir, model: { path: ckpt, ...(base.model.engine ? { engine: base.model.engine } : {}) }, rl: { ...base.rl!, ...a.rl } as RunConfigInput["rl"] }, `${name}/${a.arm}`);
  const t0 = performance.now();
  const ctx = await buildContext(cfg);
  try {
    const log = new RunLogger(dir, true);
    const e0 = await evalHeldOut(ctx, dir, "sft", 0);
    // With a KL term the starting policy is the reference, as train() sets it (src/trainer/session.ts).
    if (cfg.algorithm!.kl.coef > 0) await ctx.engine.setReference("policy");
    // The methods' hooks (GHPO's hints are one, src/methods/ghpo.ts), as runRl passes them (src/trainer/stages.ts).
    const hooks = buildMethodHooks(ctx, cfg);
    await hooks.init?.(ctx);
    const st = initRlState(ctx, cfg.algorithm!);
    let tokens = 0;
    const sums: Record<string, number> = {};
    while (tokens < budget && st.step < cfg.rl!.steps) {
      const m = await rlStep(ctx, cfg.algorithm!, st, log, hooks);
      await hooks.afterStep?.(ctx, st, m, log);
      tokens += m["rollout/sampled_tokens"]!;
      for (const k of extraKeys) if (m[k] !== undefined) sums[k] = (sums[k] ?? 0) + m[k]!;
    }
    const e1 = await evalHeldOut(ctx, dir, "rl", st.step);
    await hooks.close?.();
    const [before, after] = [e0.greedy ?? e0.accuracy, e1.greedy ?? e1.accuracy];
    const t1 = e1.samples > 1 ? { beforeT1: e0.meanAtN, afterT1: e1.meanAtN } : {};
    const extra = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / Math.max(1, st.step)]));
    const res: StrategyResult = { arm: a.arm, seed: cfg.seed, before, after, ...t1, tokens, steps: st.step, seconds: (performance.now() - t0) / 1000, extra };
    process.stderr.write(
      `${name} ${a.arm} seed ${cfg.seed}: held-out ${(before * 100).toFixed(1)}% -> ${(after * 100).toFixed(1)}%, ${tokens} tokens, ${st.step} steps, ${res.seconds.toFixed(0)} s ` +
        JSON.stringify(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, +v.toFixed(3)]))) +
        "\n",
    );
    writeFileSync(cached, JSON.stringify({ key, result: res }, null, 2) + "\n");
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

/**
 * Every arm on every seed (same warm-up checkpoint per seed); writes summary.json and table.md under
 * scratch/experiments/<name>/. Runs and warm-ups go under scratch/experiments/<runsDir ?? name>/:
 * experiments with the same runsDir share the warm-up and reuse each other's identical arms.
 */
export async function runStrategyExperiment(name: string, base: (seed: number) => RunConfigInput, arms: StrategyArm[], o: { seeds: number[]; budget: number; extraKeys?: string[]; runsDir?: string }): Promise<string> {
  const results: StrategyResult[] = [];
  const runsDir = o.runsDir ?? name;
  for (const seed of o.seeds) {
    const b = base(seed);
    const ckpt = await warmup(runsDir, b);
    for (const a of arms) results.push(await runArm(runsDir, b, ckpt, a, o.budget, o.extraKeys ?? []));
  }
  const pct = (x: number) => (x * 100).toFixed(1);
  const withT1 = results.every((r) => r.afterT1 !== undefined);
  const rows = arms.map((a) => {
    const rs = results.filter((r) => r.arm === a.arm);
    const acc = meanSd(rs.map((r) => r.after));
    const tok = meanSd(rs.map((r) => r.tokens));
    const extras = Object.keys(rs[0]?.extra ?? {}).map((k) => `${k} ${meanSd(rs.map((r) => r.extra[k] ?? 0)).mean.toFixed(2)}`).join(", ");
    const t1 = withT1 ? (() => {
      const v = meanSd(rs.map((r) => r.afterT1!));
      return ` ${pct(v.mean)} ± ${pct(v.sd)} | ${pct(meanSd(rs.map((r) => r.beforeT1!)).mean)} | ${rs.map((r) => pct(r.afterT1!)).join(" / ")} |`;
    })() : "";
    return `| ${a.arm} | ${pct(acc.mean)} ± ${pct(acc.sd)} (${pct(acc.min)}–${pct(acc.max)}) | ${pct(meanSd(rs.map((r) => r.before)).mean)} |${t1} ${tok.mean.toFixed(0)} ± ${tok.sd.toFixed(0)} | ${meanSd(rs.map((r) => r.steps)).mean.toFixed(1)} | ${meanSd(rs.map((r) => r.seconds)).mean.toFixed(0)} | ${rs.map((r) => pct(r.after)).join(" / ")} | ${extras} |`;
  });
  const t1Head = withT1 ? ` pass@1 at T = 1 after RL, % | after SFT, % | per seed (${o.seeds.join(", ")}) |` : "";
  const table = [
    `| arm | held-out ${withT1 ? "greedy " : ""}accuracy after RL, % (mean ± sd, min–max) | after SFT, % |${t1Head} sampled tokens (mean ± sd) | RL steps | s/run | per seed (${o.seeds.join(", ")}) | step means |`,
    `|---|---|---|${withT1 ? "---|---|---|" : ""}---|---|---|---|---|`,
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
 * The stable recipe of docs/experiments.md ("The quickstart's recipe", examples/addition-grpo.yaml):
 * `addition-padded`, 2 digits (`07+45=` → `052`), the 128-wide 2-layer char model; SFT batch 128,
 * cosine 3e-3 → 1e-3 over at most 300 steps, stopped once greedy accuracy on 256 held-back training
 * prompts reaches 30% (before SFT's phase change); GRPO at the rate SFT ended on (1e-3, 20 warm-up
 * steps), 128 prompts × 4, k3 KL β = 0.001 in the loss, at most 4 new tokens; held-out greedy
 * accuracy and pass@1 at T = 1 (4 samples) on 256 test prompts. Engine: `engine` (torch is ≈ 2.5×
 * faster than the embedded engine on this model at one thread).
 */
export function additionStableBase(seed: number, engine: "embedded" | "torch" = "torch"): RunConfigInput {
  return {
    seed,
    model: { engine, init: { hiddenSize: 128, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 32 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition-padded", difficulty: 2, trainSize: 20000, testSize: 256 },
    sft: { steps: 300, batchSize: 128, lr: 3e-3, schedule: "cosine", minLrRatio: 1 / 3, warmupSteps: 10, weightDecay: 0.01, stopAt: { accuracy: 0.3, every: 5, prompts: 256 } },
    rl: { steps: 10000, promptsPerStep: 128, groupSize: 4, maxNewTokens: 4, temperature: 1, lr: 1e-3, warmupSteps: 20, algorithm: { preset: "grpo", kl: { coef: 0.001, estimator: "k3", placement: "loss" } } },
    eval: { temperature: 1, samples: 4, greedy: true, maxNewTokens: 4 },
  };
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
