/**
 * One generation batch of the RL step: sample a group per prompt with the configured strategy —
 * plain sampling, entropy-guided tree rollouts (rl.tree) or the multi-turn agent loop (rl.agent) —
 * and verify it. The RL step's collect stage (src/pipeline/collect.ts) calls this once per
 * generation batch; everything strategy-specific lives here. (GHPO's hints, rl.hints, repair
 * zero-accuracy groups afterwards: src/methods/ghpo.ts.)
 */
import type { Engine, SampleResult, Sampler } from "../core/engine.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { agentRollouts } from "./agent.ts";
import { envRollouts } from "./env.ts";
import { slotSpec } from "../envs/task.ts";
import type { EnvDefinition } from "../envs/types.ts";
import type { BatchVerifier } from "./hints.ts";
import type { AgentConfig, HintsConfig, TreeConfig } from "./strategy-config.ts";
import { defaultTools } from "./tools/registry.ts";
import { treeRollouts } from "./tree.ts";
import { asTrajectory, type Trajectory } from "./types.ts";

/** The rl config fields this module reads. */
export interface RolloutSettings {
  groupSize: number;
  maxNewTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  tree?: TreeConfig;
  hints?: HintsConfig;
  agent?: AgentConfig;
}

export interface CollectContext {
  engine: Engine;
  /** Samples plain rollouts when set (vLLM, an OpenAI-compatible server); else the engine does. */
  sampler?: Sampler | undefined;
  tokenizer: Tokenizer;
  verifyBatch: BatchVerifier;
  /** The run's env (config `env:`): groups are env episodes, scored by the env, not by verifyBatch. */
  env?: EnvSource | undefined;
}

/** The env a run plays (src/envs/, docs/envs.md) and its budgets. */
export interface EnvSource {
  def: EnvDefinition;
  /** The run seed (each group is built from it and its slot's index). */
  seed: number;
  maxTurns: number;
  /** Most response ids per episode (default rl.maxNewTokens). */
  maxTokens?: number | undefined;
}

export interface CollectedRollouts {
  /** prompts.length × groupSize trajectories, prompt-major (promptIndex = position in `prompts`). */
  rollouts: Trajectory[];
  /** The text each trajectory's verdict scored. */
  texts: string[];
  verdicts: Verdict[];
  /** Each group's prompt when the strategy made it (env episodes: the initial observation), else absent (the caller's prompts). */
  prompts?: Int32Array[];
  events: Record<string, number>;
  /** Every token the engine sampled for this batch (including hinted re-samples and the groups they replaced). */
  sampledTokens: number;
  /** Strategy metrics (tree/*, hints/*, agent/*), summed over the step's generation batches by the caller. */
  metrics: Record<string, number>;
  sampleSeconds: number;
  rewardSeconds: number;
}

/**
 * Check the strategy blocks against each other and the rest of rl.
 * @throws Error naming the field and the fix, e.g. `config error at rl.tree.roots: ...`.
 */
export function checkRolloutSettings(r: RolloutSettings, env?: EnvSource): void {
  const tree = r.tree?.enabled ? r.tree : undefined;
  const agent = r.agent?.enabled ? r.agent : undefined;
  if (tree && agent) throw new Error("config error at rl.tree: tree rollouts and the agent loop (rl.agent) cannot be combined; disable one of them");
  if (r.hints?.enabled && agent) throw new Error("config error at rl.hints: hints re-sample without tools, so they cannot be combined with rl.agent; disable one of them");
  if (tree) {
    if (tree.roots >= r.groupSize) throw new Error(`config error at rl.tree.roots: must be below rl.groupSize (${r.groupSize}), got ${tree.roots}`);
    const min = tree.roots * r.maxNewTokens + (r.groupSize - tree.roots);
    if (tree.budget !== undefined && tree.budget < min) throw new Error(`config error at rl.tree.budget: must be at least roots × maxNewTokens + forks = ${min}, got ${tree.budget}`);
  }
  if (env && (tree || agent || r.hints?.enabled)) throw new Error(`config error at env: an env plays its own turns, so it cannot be combined with ${tree ? "rl.tree" : agent ? "rl.agent" : "rl.hints"}; disable one of them`);
  if (agent) for (const t of agent.tools) if (!defaultTools.has(t)) throw new Error(`config error at rl.agent.tools: unknown tool ${JSON.stringify(t)}; registered: ${defaultTools.names().join(", ")} (registerTool adds one)`);
}

/**
 * Sample and verify one generation batch (GHPO's hints, which repair zero-accuracy groups, are a
 * method transforming this stage: src/methods/ghpo.ts).
 * @param seed the batch's sampling seed (plain sampling uses it exactly as the trainer always did).
 * @param step the training step, passed to the reward (user reward functions see it)
 */
export async function collectRollouts(ctx: CollectContext, r: RolloutSettings, examples: readonly Example[], prompts: readonly Int32Array[], seed: number, step?: number): Promise<CollectedRollouts> {
  checkRolloutSettings(r, ctx.env);
  if (ctx.env) return collectEpisodes(ctx, ctx.env, r, examples, seed);
  const t0 = performance.now();
  const G = r.groupSize;
  const sampling = { temperature: r.temperature, topP: r.topP, topK: r.topK, seed };
  const stopTokens = [ctx.tokenizer.eosId];
  let rollouts: Trajectory[];
  const metrics: Record<string, number> = {};
  if (r.agent?.enabled) {
    const a = r.agent;
    const res = await agentRollouts(ctx.engine, ctx.tokenizer, prompts, {
      ...sampling,
      tools: defaultTools.pick(a.tools),
      groupSize: G,
      maxTurns: a.maxTurns,
      maxTokens: a.maxTokens ?? r.maxNewTokens,
      observation: a.observation,
      toolTimeoutMs: a.toolTimeoutMs,
      ...(ctx.sampler ? { sampler: ctx.sampler } : {}),
    });
    rollouts = res.trajectories;
    Object.assign(metrics, res.metrics);
  } else if (r.tree?.enabled) {
    const t = r.tree;
    const res = await treeRollouts(ctx.engine, prompts, { ...sampling, stopTokens, groupSize: G, roots: t.roots, maxNewTokens: r.maxNewTokens, budget: t.budget, forkPoints: t.forkPoints, padId: ctx.tokenizer.padId });
    rollouts = res.trajectories;
    Object.assign(metrics, res.metrics);
  } else {
    const out = await (ctx.sampler ?? ctx.engine).sample({ prompts: [...prompts], n: G, maxNewTokens: r.maxNewTokens, temperature: r.temperature, topP: r.topP, topK: r.topK, seed, stopTokens });
    rollouts = out.map(asTrajectory);
  }
  const t1 = performance.now();
  const texts = rollouts.map((o) => o.answerText ?? ctx.tokenizer.decode(o.tokens));
  // The reward sees token lengths and truncation (length shaping) and the groups (group-aware components).
  const v = await ctx.verifyBatch(
    texts,
    rollouts.map((o) => examples[o.promptIndex]!),
    { lengths: rollouts.map((o) => o.tokens.length), truncated: rollouts.map((o) => o.stopReason === "max_tokens"), groupIds: Int32Array.from(rollouts.map((o) => o.promptIndex)), step },
  );
  const verdicts = v.verdicts;
  const events = { ...v.events };
  const sampledTokens = rollouts.reduce((a, o) => a + o.sampledTokens, 0);
  const t2 = performance.now();
  return {
    rollouts,
    texts,
    verdicts,
    events,
    sampledTokens,
    metrics,
    sampleSeconds: (t1 - t0) / 1000,
    rewardSeconds: (t2 - t1) / 1000,
  };
}

/** Play one env group per example (its slot) through the run's sampler; the env's rewards are the verdicts. */
async function collectEpisodes(ctx: CollectContext, env: EnvSource, r: RolloutSettings, examples: readonly Example[], seed: number): Promise<CollectedRollouts> {
  const t0 = performance.now();
  const groups = await Promise.all(examples.map((e) => Promise.resolve(env.def.group(slotSpec(e, env.seed, r.groupSize, ctx.tokenizer)))));
  groups.forEach((g, i) => {
    if (g.envs.length !== r.groupSize) throw new Error(`env "${env.def.name}": group ${examples[i]!.id} has ${g.envs.length} envs; rl.groupSize is ${r.groupSize} (build spec.groupSize envs)`);
  });
  const res = await envRollouts(ctx.sampler ?? ctx.engine, ctx.tokenizer, groups, {
    temperature: r.temperature,
    topP: r.topP,
    topK: r.topK,
    seed,
    maxTurns: env.maxTurns,
    maxTokens: env.maxTokens ?? r.maxNewTokens,
    maxSeqLen: ctx.engine.info().maxSeqLen,
    env: env.def,
  });
  const rollouts = res.trajectories;
  return {
    rollouts,
    texts: rollouts.map((o) => o.answerText!),
    verdicts: res.verdicts,
    prompts: res.prompts,
    events: {},
    sampledTokens: rollouts.reduce((a, o) => a + o.sampledTokens, 0),
    metrics: res.metrics,
    sampleSeconds: (performance.now() - t0) / 1000,
    rewardSeconds: 0,
  };
}

/** Loss mask of a sampled response (hint and observation tokens 0), or undefined when every token is trained. */
export function responseMask(o: SampleResult): Float32Array | undefined {
  return (o as Partial<Trajectory>).mask;
}

/** Tokens the engine sampled for a response (shared tree prefixes, hints and observations excluded). */
export function sampledTokenCount(o: SampleResult): number {
  return (o as Partial<Trajectory>).sampledTokens ?? o.tokens.length;
}
