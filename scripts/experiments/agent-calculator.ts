/**
 * Experiment: the multi-turn agent loop (rl.agent) trains a tiny char-level model to use the
 * calculator on 2-digit × 2-digit multiplication ("47*85=" → "3995", operands in [10, 99]), which
 * the same model cannot learn unaided at this budget but can learn to delegate: copy the
 * expression into a call and copy the observation back.
 *
 * Per seed, two arms with the same model (128 wide, 2 layers) and the same SFT budget (steps ×
 * batch, learning-rate schedule):
 *  - unaided: SFT on direct answers ("3995"), evaluated greedily without tools; then plain GRPO on
 *    the same sampled-token budget as the tool arm's RL, evaluated again (a fair control for RL).
 *  - tool: SFT on demonstrations that call the tool ("<calc>47*85</calc>" + observation
 *    "<out>3995</out>" (loss mask 0) + "3995" + EOS; with TOOL_FRAC < 1 the rest answer directly);
 *    every demonstration is built by toolDemonstration (src/rollout/agent.ts), so
 *    its token ids and loss mask are exactly what the agent loop produces at RL/eval time. Then GRPO
 *    through the agent loop (tool outputs appended as observation tokens with loss mask 0, at most one
 *    call). Evaluated greedily through the agent loop before and after RL, with the tool-call rate.
 *
 * Held-out: greedy exact match on the task's 256 test prompts (never trained on).
 *
 *   RLVR_THREADS=1 nice -n 10 npx tsx scripts/experiments/agent-calculator.ts [--seeds 1,2,3] [--budget 15000]
 *   env: SFT_STEPS (default 100), SFT_LR (2e-3; 1e-2 never learns to copy), TOOL_FRAC (1), RL_LR (5e-4)
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { combineMetrics, makeSftLoss, stepCounts } from "../../src/algorithms/index.ts";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { learningRate } from "../../src/core/schedule.ts";
import { agentRollouts, toolDemonstration } from "../../src/rollout/agent.ts";
import { defaultTools } from "../../src/rollout/tools/registry.ts";
import { verifyLeadingInteger } from "../../src/tasks/arithmetic.ts";
import { hasTask, registerTask } from "../../src/tasks/registry.ts";
import { generateInSplit } from "../../src/tasks/split.ts";
import type { Example } from "../../src/core/example.ts";
import { chunkBySize, packSequences, type Sequence } from "../../src/core/sequence.ts";
import { buildContext } from "../../src/trainer/context.ts";
import type { RunContext } from "../../src/pipeline/context.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { Rng, hash32 } from "../../src/util/rng.ts";
import { argNumbers, meanSd } from "./strategies-lib.ts";

/** 2-digit × 2-digit multiplication, both operands in [10, 99] ("47*85=" → "3995"). */
const TASK = "multiply-2x2";
if (!hasTask(TASK)) {
  registerTask({
    name: TASK,
    difficulties: { min: 2, max: 2, default: 2, description: "operands uniform in [10, 99]" },
    generate: (g) =>
      generateInSplit(TASK, g, (rng) => {
        const a = rng.int(10, 99);
        const b = rng.int(10, 99);
        return { prompt: `${a}*${b}=`, answer: String(a * b), solution: String(a * b) };
      }),
    verify: (response, ex) => verifyLeadingInteger(response, ex.answer),
  });
}

const seeds = argNumbers("--seeds", [1, 2, 3]);
const [budget] = argNumbers("--budget", [15000]);
const SFT_STEPS = Number(process.env.SFT_STEPS ?? 100);
const SFT_BATCH = 64;
const SFT_LR = Number(process.env.SFT_LR ?? 2e-3);
const TOOL_FRAC = Number(process.env.TOOL_FRAC ?? 1);
const RL_LR = Number(process.env.RL_LR ?? 5e-4);
const EVAL_N = 256;
const MAX_TOKENS = 40;
const tools = defaultTools.pick(["calc"]);
const OUT = join("scratch", "experiments", "agent-calculator");

function config(seed: number, out: string, tool: boolean): RunConfigInput {
  return {
    seed,
    out,
    model: { init: { hiddenSize: 128, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 64 } },
    tokenizer: { type: "char", alphabet: "0123456789*=<>/calout" },
    data: { task: TASK, difficulty: 2, trainSize: 8000, testSize: EVAL_N },
    rl: {
      steps: 10000,
      promptsPerStep: 8,
      groupSize: 8,
      maxNewTokens: tool ? MAX_TOKENS : 6,
      temperature: 1,
      lr: RL_LR,
      algorithm: { preset: "grpo", kl: { coef: 0 } },
      ...(tool ? { agent: { tools: ["calc"], maxTurns: 1, maxTokens: MAX_TOKENS } } : {}),
    },
    eval: { maxNewTokens: 6 },
  };
}

/** A demonstration (response ids and loss mask) in the agent loop's token layout. */
function demo(ctx: RunContext, ex: Example, useTool: boolean): Promise<{ response: number[]; mask: number[] }> {
  const expr = ex.prompt.replace(/=$/, "");
  return toolDemonstration(ctx.tokenizer, tools, useTool ? [`<calc>${expr}</calc>`, ex.answer] : [ex.answer]);
}

async function sft(ctx: RunContext, seed: number, toolFrac: number): Promise<number> {
  const rng = new Rng(hash32(seed, 0x5f7));
  const order = rng.shuffle(ctx.train.map((_, i) => i));
  let cursor = 0;
  let loss = 0;
  for (let step = 0; step < SFT_STEPS; step++) {
    const seqs: Sequence[] = [];
    for (let i = 0; i < SFT_BATCH; i++) {
      const ex = ctx.train[order[cursor++ % order.length]!]!;
      const d = await demo(ctx, ex, rng.next() < toolFrac);
      seqs.push({ prompt: ctx.encodePrompt(ex), response: d.response, mask: d.mask });
    }
    const micro = chunkBySize(seqs, SFT_BATCH).map((m) => packSequences(m, ctx.tokenizer.padId));
    const lossFn = makeSftLoss(stepCounts(micro, Math.max(...seqs.map((q) => q.response.length))));
    const parts = [];
    for (const mb of micro) parts.push((await ctx.engine.forwardBackward(mb, lossFn)).metrics);
    loss = combineMetrics(parts)["loss"] ?? NaN;
    const lr = learningRate(step, { lr: SFT_LR, schedule: "cosine", warmupSteps: 10, totalSteps: SFT_STEPS, minLrRatio: 0.1 });
    await ctx.engine.optimStep({ lr, maxGradNorm: 1, weightDecay: 0.01 });
  }
  return loss;
}

interface Eval {
  accuracy: number;
  /** Fraction of prompts where the model called the tool. */
  toolUse: number;
  /** Of the calls: the call's input is exactly the prompt's expression. */
  callExact: number;
  /** Of the trajectories with a call that returned the right result: the final answer is correct. */
  copyExact: number;
}

/** Greedy held-out accuracy: through the agent loop (tool arm) or plain sampling (unaided arm). */
async function evaluate(ctx: RunContext, seed: number, tool: boolean): Promise<Eval> {
  const exs = ctx.test.slice(0, EVAL_N);
  const prompts = exs.map(ctx.encodePrompt);
  if (!tool) {
    const plain = await ctx.engine.sample({ prompts, n: 1, maxNewTokens: 6, temperature: 0, seed, stopTokens: [ctx.tokenizer.eosId] });
    const ok = plain.filter((r, i) => ctx.verify(ctx.tokenizer.decode(r.tokens), exs[i]!).correct).length;
    return { accuracy: ok / exs.length, toolUse: 0, callExact: NaN, copyExact: NaN };
  }
  const a = await agentRollouts(ctx.engine, ctx.tokenizer, prompts, { tools, groupSize: 1, maxTurns: 1, maxTokens: MAX_TOKENS, temperature: 0, seed });
  let ok = 0;
  let calls = 0;
  let exact = 0;
  let rightObs = 0;
  let copied = 0;
  a.trajectories.forEach((t, i) => {
    const ex = exs[i]!;
    const correct = ctx.verify(t.answerText!, ex).correct;
    if (correct) ok++;
    if (!t.toolCalls) return;
    calls++;
    const text = ctx.tokenizer.decode(t.tokens);
    if (text.startsWith(`<calc>${ex.prompt.replace(/=$/, "")}</calc>`)) exact++;
    if (text.includes(`<out>${ex.answer}</out>`)) {
      rightObs++;
      if (correct) copied++;
    }
  });
  return { accuracy: ok / exs.length, toolUse: calls / exs.length, callExact: calls ? exact / calls : NaN, copyExact: rightObs ? copied / rightObs : NaN };
}

interface Row {
  arm: "unaided" | "tool";
  seed: number;
  sftLoss: number;
  sft: Eval;
  rl: Eval;
  tokens: number;
  steps: number;
  sftSeconds: number;
  rlSeconds: number;
}

const rows: Row[] = [];
const started = performance.now();
for (const seed of seeds) {
  for (const arm of ["unaided", "tool"] as const) {
    const tool = arm === "tool";
    const dir = join(OUT, `${arm}-seed${seed}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const cfg = parseRunConfig(config(seed, dir, tool), `agent-calculator/${arm}`);
    const ctx = await buildContext(cfg);
    try {
      const t0 = performance.now();
      const sftLoss = await sft(ctx, seed, tool ? TOOL_FRAC : 0);
      const before = await evaluate(ctx, seed, tool);
      const t1 = performance.now();
      const st = initRlState(ctx, cfg.algorithm!);
      const log = new RunLogger(dir, true);
      let tokens = 0;
      while (tokens < budget!) tokens += (await rlStep(ctx, cfg.algorithm!, st, log))["rollout/sampled_tokens"]!;
      const after = await evaluate(ctx, seed, tool);
      const row: Row = { arm, seed, sftLoss, sft: before, rl: after, tokens, steps: st.step, sftSeconds: (t1 - t0) / 1000, rlSeconds: (performance.now() - t1) / 1000 };
      rows.push(row);
      const f = (x: Eval) => `acc ${(x.accuracy * 100).toFixed(1)}%` + (tool ? `, tool use ${(x.toolUse * 100).toFixed(0)}%, call exact ${(x.callExact * 100).toFixed(0)}%, copy exact ${(x.copyExact * 100).toFixed(0)}%` : "");
      process.stderr.write(
        `agent-calculator ${arm} seed ${seed}: SFT loss ${sftLoss.toFixed(3)} [${f(before)}] (${row.sftSeconds.toFixed(0)} s) -> RL [${f(after)}], ${tokens} tokens, ${st.step} steps (${row.rlSeconds.toFixed(0)} s)\n`,
      );
    } finally {
      await ctx.close();
    }
  }
}
const pct = (xs: number[]) => {
  const m = meanSd(xs.map((x) => x * 100));
  return `${m.mean.toFixed(1)} ± ${m.sd.toFixed(1)} (${m.min.toFixed(1)}–${m.max.toFixed(1)})`;
};
const per = (xs: number[]) => xs.map((x) => (x * 100).toFixed(1)).join(" / ");
const lines = [
  `| model | held-out accuracy after SFT, % | after RL, % | per seed after SFT → after RL | tool-call rate after SFT → RL, % | RL steps | sampled RL tokens | s/run (SFT + RL) |`,
  "|---|---|---|---|---|---|---|---|",
];
for (const arm of ["unaided", "tool"] as const) {
  const rs = rows.filter((r) => r.arm === arm);
  if (!rs.length) continue;
  const name = arm === "tool" ? "tool (agent loop, calculator available)" : "unaided (no tool; RL = plain GRPO)";
  const use = arm === "tool" ? `${pct(rs.map((r) => r.sft.toolUse))} → ${pct(rs.map((r) => r.rl.toolUse))}` : "–";
  lines.push(
    `| ${name} | ${pct(rs.map((r) => r.sft.accuracy))} | ${pct(rs.map((r) => r.rl.accuracy))} | ${per(rs.map((r) => r.sft.accuracy))} → ${per(rs.map((r) => r.rl.accuracy))} | ${use} | ${meanSd(rs.map((r) => r.steps)).mean.toFixed(1)} | ${meanSd(rs.map((r) => r.tokens)).mean.toFixed(0)} | ${meanSd(rs.map((r) => r.sftSeconds)).mean.toFixed(0)} + ${meanSd(rs.map((r) => r.rlSeconds)).mean.toFixed(0)} |`,
  );
}
const table = lines.join("\n");
mkdirSync(OUT, { recursive: true });
const summary = { task: TASK, budget, seeds, sftSteps: SFT_STEPS, sftBatch: SFT_BATCH, sftLr: SFT_LR, toolFrac: TOOL_FRAC, rlLr: RL_LR, seconds: (performance.now() - started) / 1000, rows };
writeFileSync(join(OUT, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
writeFileSync(join(OUT, "table.md"), table + "\n");
process.stdout.write(`\n## agent-calculator (2-digit × 2-digit multiplication, ${SFT_STEPS} SFT steps, RL budget ${budget} sampled tokens, seeds ${seeds.join(", ")}; ${summary.seconds.toFixed(0)} s)\n\n${table}\n`);
