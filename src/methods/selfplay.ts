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
 *
 * Options: `methods.selfPlay`. Self-play is the collect stage's source (RlStepHooks.source): each
 * generation batch is the proposer's group (group 0, when `trainProposer`) and one solver group per
 * valid task, at most rl.promptsPerStep groups in all (and at most `maxTasks` tasks). Everything
 * after is the normal step: the solver samples through the run's sampler (vLLM, tree and agent
 * rollouts included; the proposer through the run's plain sampler), group filters apply, the
 * estimator's advantages per group (one group per role and task), the reference and its KL, the
 * configured policy loss with its entropy. `seedSteps` format-only SFT steps run at init.
 */
import type { RunConfig } from "../config/schema.ts";
import type { Example } from "../core/example.ts";
import { supervisedStep } from "./sft.ts";
import type { SelfPlayConfig } from "./selfplay-options.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { CollectStage, RlStageHooks, SourcedBatch } from "../pipeline/hooks.ts";
import { collectRollouts, type CollectedRollouts } from "../rollout/collect.ts";
import { asTrajectory } from "../rollout/types.ts";
import { evaluateExpression } from "../tasks/expr.ts";
import { getTask } from "../tasks/index.ts";
import type { Verdict } from "../tasks/types.ts";
import { Rng, hash32 } from "../util/rng.ts";
import { defineMethod } from "./define.ts";

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

/** The proposer's example (its prompt is sp.proposePrompt; it has no answer: the runner judges it). */
function proposerExample(sp: SelfPlayConfig): Example {
  return { id: "sp-proposer", prompt: sp.proposePrompt, answer: "", task: "selfplay" };
}

/** The proposals of one generation batch, sampled by the run's sampler, and the tasks the runner accepted. */
async function propose(ctx: RunContext, sp: SelfPlayConfig, seed: number, cap: number) {
  const r = ctx.cfg.rl!;
  const prompt = ctx.encodePrompt(proposerExample(sp));
  const outs = await (ctx.sampler ?? ctx.engine).sample({ prompts: [prompt], n: sp.proposals, maxNewTokens: sp.proposeMaxTokens, temperature: r.temperature, topP: r.topP, topK: r.topK, seed: hash32(seed, 0x50), stopTokens: [ctx.tokenizer.eosId] });
  const texts = outs.map((o) => ctx.tokenizer.decode(o.tokens));
  const parsed = texts.map((t) => runProposal(sp.kind, t, sp.minItems, sp.maxItems));
  const tasks: { at: number; task: ProposedTask }[] = [];
  parsed.forEach((p, i) => p && tasks.length < cap && tasks.push({ at: i, task: p }));
  return { prompt, outs, texts, parsed, tasks };
}

/** Solver success rate per task (groups of `solverGroup`, prompt-major). */
function solveRates(ro: CollectedRollouts, tasks: number): number[] {
  const right = new Array<number>(tasks).fill(0);
  const all = new Array<number>(tasks).fill(0);
  ro.rollouts.forEach((o, i) => {
    all[o.promptIndex]!++;
    if (ro.verdicts[i]!.reward > 0) right[o.promptIndex]!++;
  });
  return right.map((x, k) => x / Math.max(1, all[k]!));
}

/** One self-play generation batch (see the file comment); adds the batch's selfplay/* metrics to `acc`. */
async function selfPlayBatch(ctx: RunContext, sp: SelfPlayConfig, s: CollectStage, acc: SelfPlayMetrics): Promise<SourcedBatch> {
  const r = ctx.cfg.rl!;
  const cap = Math.min(sp.maxTasks, r.promptsPerStep - (sp.trainProposer ? 1 : 0));
  const p = await propose(ctx, sp, s.seed, cap);
  const task = getTask(sp.kind);
  const examples = p.tasks.map((t) => t.task.example);
  const solverPrompts = examples.map(ctx.encodePrompt);
  // The solver: the run's rollout strategy and sampler; the task's own verifier judges it.
  const verifyBatch = async (texts: readonly string[], ex: readonly Example[]) => ({ verdicts: texts.map((t, i) => task.verify(t, ex[i]!)), events: {} });
  const sol = examples.length ? await collectRollouts({ engine: ctx.engine, sampler: ctx.sampler, tokenizer: ctx.tokenizer, verifyBatch }, { ...r, groupSize: sp.solverGroup }, examples, solverPrompts, s.seed, s.step) : null;
  const rate = sol ? solveRates(sol, examples.length) : [];
  acc.add(p.parsed.filter(Boolean).length / Math.max(1, p.parsed.length), p.tasks.map((t, k) => ({ rate: rate[k]!, items: t.task.items, prompt: t.task.example.prompt })), sol?.verdicts ?? []);
  const propVerdicts: Verdict[] = p.parsed.map((q, i) => {
    const k = p.tasks.findIndex((t) => t.at === i);
    const reward = !q ? sp.invalidReward : k >= 0 ? learnability(rate[k]!) : 0; // valid but over the cap: neutral
    return { correct: q !== null, reward, extracted: p.texts[i]!, reason: !q ? "invalid proposal" : k >= 0 ? `valid; solve rate ${rate[k]}` : "valid; not solved this step (over the task cap)" };
  });
  const lead = sp.trainProposer ? 1 : 0;
  const ro: CollectedRollouts = {
    rollouts: [...(sp.trainProposer ? p.outs.map(asTrajectory) : []), ...(sol?.rollouts ?? []).map((o) => ({ ...o, promptIndex: o.promptIndex + lead }))],
    texts: [...(sp.trainProposer ? p.texts : []), ...(sol?.texts ?? [])],
    verdicts: [...(sp.trainProposer ? propVerdicts : []), ...(sol?.verdicts ?? [])],
    events: sol?.events ?? {},
    sampledTokens: p.outs.reduce((a, o) => a + o.tokens.length, 0) + (sol?.sampledTokens ?? 0),
    metrics: sol?.metrics ?? {},
    sampleSeconds: sol?.sampleSeconds ?? 0,
    rewardSeconds: sol?.rewardSeconds ?? 0,
  };
  const prompts = [...(sp.trainProposer ? [p.prompt] : []), ...solverPrompts];
  return { examples: [...(sp.trainProposer ? [proposerExample(sp)] : []), ...examples], ro: { ...ro, prompts } };
}

/** The step's selfplay/* metrics and the solver's accuracy, over its generation batches. */
class SelfPlayMetrics {
  private valid: number[] = [];
  private tasks: { rate: number; items: number; prompt: string }[] = [];
  private solved = 0;
  private solutions = 0;

  add(validFrac: number, tasks: { rate: number; items: number; prompt: string }[], solver: readonly Verdict[]): void {
    this.valid.push(validFrac);
    this.tasks.push(...tasks);
    this.solved += solver.filter((v) => v.reward > 0).length;
    this.solutions += solver.length;
  }

  /** The step's metrics, then start over. */
  take(): Record<string, number> {
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const t = this.tasks;
    const m = {
      "selfplay/valid_frac": mean(this.valid),
      "selfplay/tasks": t.length,
      "selfplay/solve_rate": mean(t.map((x) => x.rate)),
      "selfplay/learnability": mean(t.map((x) => learnability(x.rate))),
      "selfplay/task_items": mean(t.map((x) => x.items)),
      "selfplay/unique_tasks": new Set(t.map((x) => x.prompt)).size,
      // The solver's (the step's own accuracy would count the proposals too).
      accuracy: this.solved / Math.max(1, this.solutions),
    };
    this.valid = [];
    this.tasks = [];
    this.solved = this.solutions = 0;
    return m;
  }
}

/** Self-play as RL-stage hooks: `seedSteps` format-only SFT steps at init, then the collect source. */
export function selfPlayHooks(ctx: RunContext, sp: SelfPlayConfig): RlStageHooks {
  // Per step: with rl.async a later step's batches are collected before this step's metrics.
  const acc = new Map<number, SelfPlayMetrics>();
  const at = (step: number) => acc.get(step) ?? (acc.set(step, new SelfPlayMetrics()), acc.get(step)!);
  return {
    async init(c) {
      const rng = new Rng(hash32(c.cfg.seed, 0x5eed));
      const prompt = c.encodePrompt(proposerExample(sp));
      for (let k = 0; k < sp.seedSteps; k++) {
        const seqs = Array.from({ length: 32 }, () => ({ prompt, response: Int32Array.from([...c.tokenizer.encode(seedProposal(sp.kind, rng, sp.minItems, sp.maxItems), { addSpecialTokens: false }), c.tokenizer.eosId]) }));
        await supervisedStep(c.engine, seqs, { lr: 3e-3, padId: c.tokenizer.padId });
      }
    },
    source: (s) => selfPlayBatch(ctx, sp, s, at(s.step)),
    stepMetrics: (step) => {
      const m = at(step).take();
      acc.delete(step);
      return m;
    },
  };
}

export const selfPlay = defineMethod<SelfPlayConfig>({
  name: "selfplay",
  configPath: "methods.selfPlay",
  options: (cfg: RunConfig) => (cfg.methods?.selfPlay?.enabled ? cfg.methods.selfPlay : undefined),
  needs: { groups: true, sequenceAdvantages: true },
  stages: ["init", "collect", "metrics"],
  order: 20,
  validate(cfg, sp) {
    if (cfg.rl && sp.trainProposer && cfg.rl.promptsPerStep < 2) throw new Error(`config error at rl.promptsPerStep: self-play (methods.selfPlay) trains the proposer's group and at least one task group per step; set rl.promptsPerStep >= 2`);
    if (cfg.env) throw new Error("config error at methods.selfPlay: self-play proposes its own tasks, so it cannot be combined with env:; remove one of them");
  },
  build: (ctx, sp) => selfPlayHooks(ctx, sp),
});
