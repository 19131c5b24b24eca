/**
 * Experiment: the multi-turn agent loop (rl.agent) trains a tiny model to use the calculator on
 * 2-digit addition ("47+85=" → "132"), which the same model learns poorly unaided at this budget.
 *
 * Per seed, two arms with the same model size, SFT steps and RL sampled-token budget:
 *  - unaided: SFT on direct answers ("132"), then plain GRPO; evaluated greedily without tools.
 *  - tool: SFT on a mix of demonstrations — half call the tool ("<calc>47+85</calc><out>132</out>132",
 *    the observation masked from the SFT loss), half answer directly — then GRPO through the agent
 *    loop (tool outputs appended as observation tokens with loss mask 0, at most 1 call); evaluated
 *    greedily through the agent loop (with the tool) and as plain sampling (tool unavailable: a call
 *    gets no observation). RL should raise both accuracy and the tool-call rate.
 *
 *   npx tsx scripts/experiments/agent-calculator.ts [--seeds 1,2,3] [--budget 20000]
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { combineMetrics, makeSftLoss, stepCounts } from "../../src/algorithms/index.ts";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { learningRate } from "../../src/engines/embedded/optimizer.ts";
import { agentRollouts } from "../../src/rollout/agent.ts";
import { defaultTools } from "../../src/rollout/tools/registry.ts";
import type { Example } from "../../src/tasks/types.ts";
import { chunkBySize, packSequences, type Sequence } from "../../src/trainer/batch.ts";
import { buildContext, type RunContext } from "../../src/trainer/context.ts";
import { RunLogger } from "../../src/trainer/logger.ts";
import { initRlState, rlStep } from "../../src/trainer/rl.ts";
import { Rng, hash32 } from "../../src/util/rng.ts";
import { argNumbers, meanSd } from "./strategies-lib.ts";

const seeds = argNumbers("--seeds", [1, 2, 3]);
const [budget] = argNumbers("--budget", [20000]);
const SFT_STEPS = Number(process.env.SFT_STEPS ?? 150);
const EVAL_N = 256;

function config(seed: number, out: string, tool: boolean): RunConfigInput {
  return {
    seed,
    out,
    model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 64 } },
    tokenizer: { type: "char", alphabet: "0123456789+=<>/calout" },
    data: { task: "addition", difficulty: 2, trainSize: 4000, testSize: EVAL_N },
    rl: {
      steps: 10000,
      promptsPerStep: 8,
      groupSize: 8,
      maxNewTokens: tool ? 40 : 4,
      temperature: 1,
      lr: Number(process.env.RL_LR ?? 2e-4),
      algorithm: { preset: "grpo", kl: { coef: 0 } },
      ...(tool ? { agent: { tools: ["calc"], maxTurns: 1 } } : {}),
    },
    eval: { maxNewTokens: 4 },
  };
}

/** Demonstration: response ids and loss mask (observation 0). */
function demo(ctx: RunContext, ex: Example, useTool: boolean): { response: number[]; mask: number[] } {
  const enc = (s: string) => ctx.tokenizer.encode(s);
  if (!useTool) {
    const r = [...enc(ex.answer), ctx.tokenizer.eosId];
    return { response: r, mask: r.map(() => 1) };
  }
  const call = enc(`<calc>${ex.prompt.replace(/=$/, "")}</calc>`);
  const obs = enc(`<out>${ex.answer}</out>`);
  const ans = [...enc(ex.answer), ctx.tokenizer.eosId];
  return { response: [...call, ...obs, ...ans], mask: [...call.map(() => 1), ...obs.map(() => 0), ...ans.map(() => 1)] };
}

async function sft(ctx: RunContext, seed: number, toolFrac: number): Promise<void> {
  const rng = new Rng(hash32(seed, 0x5f7));
  const order = rng.shuffle(ctx.train.map((_, i) => i));
  let cursor = 0;
  for (let step = 0; step < SFT_STEPS; step++) {
    const seqs: Sequence[] = [];
    for (let i = 0; i < 64; i++) {
      const ex = ctx.train[order[cursor++ % order.length]!]!;
      const d = demo(ctx, ex, rng.next() < toolFrac);
      seqs.push({ prompt: ctx.encodePrompt(ex), response: d.response, mask: d.mask });
    }
    const micro = chunkBySize(seqs, 64).map((m) => packSequences(m, ctx.tokenizer.padId));
    const lossFn = makeSftLoss(stepCounts(micro, Math.max(...seqs.map((q) => q.response.length))));
    const parts = [];
    for (const mb of micro) parts.push((await ctx.engine.forwardBackward(mb, lossFn)).metrics);
    combineMetrics(parts);
    const lr = learningRate(step, { lr: 1e-2, schedule: "cosine", warmupSteps: 10, totalSteps: SFT_STEPS, minLrRatio: 0.1 });
    await ctx.engine.optimStep({ lr, maxGradNorm: 1, weightDecay: 0.01 });
  }
}

/** Greedy held-out accuracy with the agent loop (tool available) and without (plain sampling). */
async function evaluate(ctx: RunContext, seed: number): Promise<{ withTool: number; withoutTool: number; toolUse: number }> {
  const exs = ctx.test.slice(0, EVAL_N);
  const prompts = exs.map(ctx.encodePrompt);
  const a = await agentRollouts(ctx.engine, ctx.tokenizer, prompts, { tools: defaultTools.pick(["calc"]), groupSize: 1, maxTurns: 1, maxTokens: 40, temperature: 0, seed });
  const withTool = a.trajectories.filter((t, i) => ctx.verify(t.answerText!, exs[i]!).correct).length / exs.length;
  const plain = await ctx.engine.sample({ prompts, n: 1, maxNewTokens: 40, temperature: 0, seed, stopTokens: [ctx.tokenizer.eosId] });
  const withoutTool = plain.filter((r, i) => ctx.verify(ctx.tokenizer.decode(r.tokens), exs[i]!).correct).length / exs.length;
  return { withTool, withoutTool, toolUse: a.metrics["agent/tool_use_frac"] };
}

interface Row {
  arm: string;
  seed: number;
  sft: { withTool: number; withoutTool: number; toolUse: number };
  rl: { withTool: number; withoutTool: number; toolUse: number };
  tokens: number;
  steps: number;
  seconds: number;
}

const rows: Row[] = [];
for (const seed of seeds) {
  for (const arm of ["unaided", "tool"] as const) {
    const t0 = performance.now();
    const dir = join("scratch", "experiments", "agent-calculator", `${arm}-seed${seed}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const cfg = parseRunConfig(config(seed, dir, arm === "tool"), `agent-calculator/${arm}`);
    const ctx = await buildContext(cfg);
    try {
      await sft(ctx, seed, arm === "tool" ? 0.5 : 0);
      const before = await evaluate(ctx, seed);
      const st = initRlState(ctx, cfg.algorithm!);
      const log = new RunLogger(dir, true);
      let tokens = 0;
      while (tokens < budget!) tokens += (await rlStep(ctx, cfg.algorithm!, st, log))["rollout/sampled_tokens"]!;
      const after = await evaluate(ctx, seed);
      const row: Row = { arm, seed, sft: before, rl: after, tokens, steps: st.step, seconds: (performance.now() - t0) / 1000 };
      rows.push(row);
      const f = (x: { withTool: number; withoutTool: number; toolUse: number }) => `with tool ${(x.withTool * 100).toFixed(1)}%, without ${(x.withoutTool * 100).toFixed(1)}%, tool use ${(x.toolUse * 100).toFixed(0)}%`;
      process.stderr.write(`agent-calculator ${arm} seed ${seed}: after SFT [${f(before)}] -> after RL [${f(after)}], ${tokens} tokens, ${st.step} steps, ${row.seconds.toFixed(0)} s\n`);
    } finally {
      await ctx.close();
    }
  }
}
const pct = (xs: number[]) => {
  const m = meanSd(xs);
  return `${(m.mean * 100).toFixed(1)} ± ${(m.sd * 100).toFixed(1)}`;
};
const lines = [
  "| arm | eval | after SFT, % | after RL, % | tool-call rate after SFT → RL | sampled RL tokens | RL steps | s/run |",
  "|---|---|---|---|---|---|---|---|",
];
for (const arm of ["unaided", "tool"]) {
  const rs = rows.filter((r) => r.arm === arm);
  const meta = `${meanSd(rs.map((r) => r.tokens)).mean.toFixed(0)} | ${meanSd(rs.map((r) => r.steps)).mean.toFixed(1)} | ${meanSd(rs.map((r) => r.seconds)).mean.toFixed(0)}`;
  if (arm === "tool") lines.push(`| tool | with the tool (agent loop) | ${pct(rs.map((r) => r.sft.withTool))} | ${pct(rs.map((r) => r.rl.withTool))} | ${pct(rs.map((r) => r.sft.toolUse))} → ${pct(rs.map((r) => r.rl.toolUse))} | ${meta} |`);
  lines.push(`| ${arm} | without a tool (plain sampling) | ${pct(rs.map((r) => r.sft.withoutTool))} | ${pct(rs.map((r) => r.rl.withoutTool))} | – | ${meta} |`);
}
const table = lines.join("\n");
mkdirSync(join("scratch", "experiments", "agent-calculator"), { recursive: true });
writeFileSync(join("scratch", "experiments", "agent-calculator", "summary.json"), JSON.stringify({ budget, seeds, sftSteps: SFT_STEPS, rows }, null, 2) + "\n");
writeFileSync(join("scratch", "experiments", "agent-calculator", "table.md"), table + "\n");
process.stdout.write(`\n## agent-calculator (2-digit addition, budget ${budget} sampled RL tokens, seeds ${seeds.join(", ")})\n\n${table}\n`);
