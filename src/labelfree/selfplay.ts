/**
 * Self-play without data, in the style of Absolute Zero (Zhao et al. 2025, "Absolute Zero:
 * Reinforced Self-play Reasoning with Zero Data", arXiv:2505.03335). One model plays two roles:
 *   - proposer: from a fixed prompt it writes a task of a checkable kind;
 *   - a runner validates the task and computes its answer (no labels, no dataset):
 *       "maximum":    a digit list "3,8,5" → its maximum (solver prompt "3,8,5>");
 *       "arithmetic": an expression "3*7-2" over + − × → its exact value by src/tasks/expr.ts (solver prompt "3*7-2=");
 *   - solver: answers each valid task `solverGroup` times; reward 1 when right (the task's verifier).
 * Proposer reward: invalid → `invalidReward`; valid → learnability 1 − 2·|s − ½| with s the
 * solver's success rate on it (the stand-in METHODS.md gives for AZR's "neither trivial nor
 * impossible"; AZR's own reward is 1 − s for 0 < s < 1, else 0).
 * Advantages are GRPO per role and per task: the proposals form one group, each task's solver
 * samples another; one policy-loss update on both roles.
 */
import { computeAdvantages, makePolicyLoss, combineMetrics, type AlgorithmConfig } from "../algorithms/index.ts";
import { learningRate } from "../core/schedule.ts";
import { evaluateExpression } from "../tasks/expr.ts";
import { getTask } from "../tasks/index.ts";
import type { SampleResult } from "../core/engine.ts";
import type { Example } from "../core/example.ts";
import type { Sequence } from "../core/sequence.ts";
import { optimize } from "../pipeline/optimize.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { RlStageHooks } from "../pipeline/hooks.ts";
import type { RunLogger } from "../pipeline/logger.ts";
import type { RlState } from "../pipeline/state.ts";
import { Rng, hash32 } from "../util/rng.ts";
import { supervisedStep } from "../guided/sft.ts";
import type { SelfPlayConfig } from "./selfplay-config.ts";

/** A validated proposal: the solver's example (answer computed by the runner) and its size. */
export interface ProposedTask {
  example: Example;
  /** Items in the task (digits, or operands): a difficulty proxy. */
  items: number;
}

/**
 * The runner: parse and validate a proposal of `kind`, compute its answer.
 * @returns the task, or null when the proposal is malformed or outside [minItems, maxItems].
 */
export function runProposal(kind: SelfPlayConfig["kind"], text: string, minItems: number, maxItems: number): ProposedTask | null {
  const t = text.trim();
  if (kind === "maximum") {
    if (!/^\d(,\d)*$/.test(t)) return null;
    const digits = t.split(",").map(Number);
    if (digits.length < minItems || digits.length > maxItems) return null;
    const answer = String(Math.max(...digits));
    return { example: { id: `sp-max-${t}`, prompt: `${t}>`, answer, task: "maximum", meta: { digits } }, items: digits.length };
  }
  if (!/^\d{1,2}([+\-*]\d{1,2})+$/.test(t)) return null;
  const items = t.split(/[+\-*]/).length;
  if (items < minItems || items > maxItems) return null;
  try {
    const v = evaluateExpression(t);
    if (!v.value.isInteger()) return null;
    return { example: { id: `sp-ar-${t}`, prompt: `${t}=`, answer: v.value.toString(), task: "arithmetic" }, items };
  } catch {
    return null;
  }
}

/** A random well-formed proposal (AZR-style seed; format only, no answer attached). */
export function seedProposal(kind: SelfPlayConfig["kind"], rng: Rng, minItems: number, maxItems: number): string {
  const k = rng.int(minItems, maxItems);
  if (kind === "maximum") return Array.from({ length: k }, () => rng.int(0, 9)).join(",");
  let s = String(rng.int(0, 9));
  for (let i = 1; i < k; i++) s += rng.pick(["+", "-", "*"]) + String(rng.int(0, 9));
  return s;
}

/** Learnability reward of a valid proposal with solver success rate s ∈ [0, 1]: 1 − 2|s − ½|. */
export function learnability(s: number): number {
  return 1 - 2 * Math.abs(s - 0.5);
}

/**
 * The step's sequences and rewards with advantages set: the proposer group (id 0, when
 * `sp.trainProposer`), then one group per task (id k + 1, by the solver outputs' promptIndex).
 */
function roleSequences(
  alg: AlgorithmConfig,
  sp: SelfPlayConfig,
  proposer: { prompt: Int32Array; outs: readonly SampleResult[]; rewards: readonly number[] },
  solver: { prompts: readonly Int32Array[]; outs: readonly SampleResult[]; rewards: readonly number[] },
): { seqs: Sequence[]; rewards: number[] } {
  const seqs: Sequence[] = [];
  const rewards: number[] = [];
  const groupIds: number[] = [];
  if (sp.trainProposer) {
    proposer.outs.forEach((o, i) => {
      seqs.push({ prompt: proposer.prompt, response: o.tokens, oldLogprobs: o.logprobs, groupId: 0 });
      rewards.push(proposer.rewards[i]!);
      groupIds.push(0);
    });
  }
  solver.outs.forEach((o, i) => {
    seqs.push({ prompt: solver.prompts[o.promptIndex]!, response: o.tokens, oldLogprobs: o.logprobs, groupId: o.promptIndex + 1 });
    rewards.push(solver.rewards[i]!);
    groupIds.push(o.promptIndex + 1);
  });
  const { name: advName, ...advOpts } = alg.advantage;
  const adv = computeAdvantages(advName, { rewards: Float32Array.from(rewards), groupIds: Int32Array.from(groupIds), lengths: Int32Array.from(seqs.map((q) => q.response.length)) }, advOpts);
  seqs.forEach((q, i) => (q.advantage = adv[i]!));
  return { seqs, rewards };
}

/** One self-play step (proposer + runner + solver + one update). Advances st.step; logs stage "rl". */
export async function selfPlayStep(ctx: RunContext, alg: AlgorithmConfig, st: RlState, log: RunLogger, sp: SelfPlayConfig): Promise<Record<string, number>> {
  const r = ctx.cfg.rl!;
  const t0 = performance.now();
  const stop = [ctx.tokenizer.eosId];
  const proposerPrompt = ctx.encodePrompt({ id: "sp-proposer", prompt: sp.proposePrompt, answer: "", task: "selfplay" });
  const props = await ctx.engine.sample({ prompts: [proposerPrompt], n: sp.proposals, maxNewTokens: sp.proposeMaxTokens, temperature: r.temperature, seed: hash32(ctx.cfg.seed, 0x50, st.step), stopTokens: stop });
  const propTexts = props.map((o) => ctx.tokenizer.decode(o.tokens));
  const parsed = propTexts.map((t) => runProposal(sp.kind, t, sp.minItems, sp.maxItems));
  const tasks: { at: number; task: ProposedTask }[] = [];
  parsed.forEach((p, i) => p && tasks.length < sp.maxTasks && tasks.push({ at: i, task: p }));

  const task = getTask(sp.kind);
  const solverPrompts = tasks.map((t) => ctx.encodePrompt(t.task.example));
  const sols = tasks.length
    ? await ctx.engine.sample({ prompts: solverPrompts, n: sp.solverGroup, maxNewTokens: r.maxNewTokens, temperature: r.temperature, seed: hash32(ctx.cfg.seed, 0x5a, st.step), stopTokens: stop })
    : [];
  const solRewards = sols.map((o) => task.verify(ctx.tokenizer.decode(o.tokens), tasks[o.promptIndex]!.task.example).reward);
  const rate = tasks.map((_, k) => {
    let s = 0;
    for (let j = 0; j < sp.solverGroup; j++) s += solRewards[k * sp.solverGroup + j]! > 0 ? 1 : 0;
    return s / sp.solverGroup;
  });
  const propRewards = parsed.map((p, i) => {
    if (!p) return sp.invalidReward;
    const k = tasks.findIndex((t) => t.at === i);
    return k >= 0 ? learnability(rate[k]!) : 0; // valid but over maxTasks: neutral
  });

  const { seqs, rewards } = roleSequences(alg, sp, { prompt: proposerPrompt, outs: props, rewards: propRewards }, { prompts: solverPrompts, outs: sols, rewards: solRewards });

  const lr = learningRate(st.step, { lr: r.lr, schedule: r.schedule, warmupSteps: r.warmupSteps, totalSteps: r.steps, minLrRatio: r.minLrRatio });
  const trainable = seqs.filter((q) => q.response.length > 0);
  const rep = await optimize(ctx.engine, trainable, {
    padId: ctx.tokenizer.padId,
    microBatchSize: r.microBatchSize,
    maxLength: Math.max(r.maxNewTokens, sp.proposeMaxTokens),
    loss: (counts) => makePolicyLoss(alg, counts, { klCoef: 0, entropyCoef: st.entropy.coef }),
    optim: { lr, maxGradNorm: r.maxGradNorm, weightDecay: r.weightDecay },
    entropy: true,
  });
  const parts = rep.lossParts;
  const gradNorm = rep.gradNorm;
  const skipped = rep.skippedUpdates > 0 ? 1 : 0;
  const lm = combineMetrics(parts);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const solveAcc = mean(solRewards.map((x) => (x > 0 ? 1 : 0)));
  const metrics: Record<string, number> = {
    "reward/mean": mean(rewards),
    accuracy: solveAcc,
    "selfplay/valid_frac": parsed.filter(Boolean).length / Math.max(1, parsed.length),
    "selfplay/tasks": tasks.length,
    "selfplay/solve_rate": mean(rate),
    "selfplay/learnability": mean(rate.map(learnability)),
    "selfplay/task_items": mean(tasks.map((t) => t.task.items)),
    "selfplay/unique_tasks": new Set(tasks.map((t) => t.task.example.prompt)).size,
    "groups/zero_std_frac": 0,
    entropy: lm["entropy"] ?? 0,
    kl: 0,
    "response/length_mean": mean(sols.map((o) => o.tokens.length)),
    "loss/policy": lm["loss"] ?? 0,
    grad_norm: gradNorm,
    skipped,
    "time/step": (performance.now() - t0) / 1000,
  };
  st.step++;
  log.metrics({ stage: "rl", step: st.step, ...metrics });
  log.samples(tasks.slice(0, ctx.cfg.logging.samplesPerStep).map((t, k) => ({ step: st.step, prompt: sp.proposePrompt, response: propTexts[t.at], answer: t.task.example.answer, reward: propRewards[t.at], solve_rate: rate[k] })));
  return metrics;
}

/** Self-play as RL-stage hooks: `seedSteps` format-only SFT steps at init, then selfPlayStep as the RL step. */
export function selfPlayHooks(_ctx: RunContext, sp: SelfPlayConfig): RlStageHooks {
  return {
    async init(c) {
      const rng = new Rng(hash32(c.cfg.seed, 0x5eed));
      const prompt = c.encodePrompt({ id: "sp-proposer", prompt: sp.proposePrompt, answer: "", task: "selfplay" });
      for (let k = 0; k < sp.seedSteps; k++) {
        const seqs = Array.from({ length: 32 }, () => ({ prompt, response: Int32Array.from([...c.tokenizer.encode(seedProposal(sp.kind, rng, sp.minItems, sp.maxItems), { addSpecialTokens: false }), c.tokenizer.eosId]) }));
        await supervisedStep(c.engine, seqs, { lr: 3e-3, padId: c.tokenizer.padId });
      }
    },
    step: (c, alg, st, log) => selfPlayStep(c, alg, st, log, sp),
  };
}
