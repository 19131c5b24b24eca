/**
 * Environment rollouts (src/envs/, docs/envs.md): play each env of each group to the end, sampling
 * every turn through the run's sampler (the engine, vLLM, a server: the same `SampleRequest` path
 * as plain rollouts), and return what the RL step consumes — one Trajectory and one Verdict per
 * episode — so rewards, advantages and the update train it unchanged.
 *
 * Token-in/token-out: a trajectory's response is the concatenation of the ids the sampler returned
 * (loss mask 1, its log-probs) and the env's observation ids (loss mask 0, log-prob 0), in order;
 * each turn's prefix is the initial observation plus the response so far. Nothing is re-tokenised.
 *
 * Ends (stopReason): `completed` (the env returned done; an env's own limit: its `cut`), `max_turns` (`maxTurns` steps taken),
 * `max_tokens` (the response reached `maxTokens`, or the model's length, or an observation did not
 * fit). The episode's reward is the sum of its step rewards plus its group reward; the verdict
 * counts it solved when that reaches the env's `solvedAt` (default 1).
 */
import type { Sampler } from "../core/engine.ts";
import type { EnvDefinition, EnvEpisode, EnvGroup, EnvStep, StopCondition } from "../envs/types.ts";
import type { Verdict } from "../rewards/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { hash32 } from "../util/rng.ts";
import { concatI32, type SamplingSettings, type Trajectory } from "./types.ts";

export interface EnvRolloutOptions extends Omit<SamplingSettings, "stopTokens"> {
  /** Most env steps (sampled turns) per episode. */
  maxTurns: number;
  /** Most response ids (sampled + observations) per episode. */
  maxTokens: number;
  /** Longest prompt + response the sampler accepts. */
  maxSeqLen: number;
  /** The env's name and solved threshold (verdicts, errors). */
  env: Pick<EnvDefinition, "name" | "solvedAt">;
}

export interface EnvRolloutResult {
  /** Each group's prompt: the initial observation its envs share. */
  prompts: Int32Array[];
  /** Σ groups' sizes trajectories, group-major (promptIndex = the group's index). */
  trajectories: Trajectory[];
  verdicts: Verdict[];
  /** env/turns, env/done_frac, env/observation_tokens, env/sample_calls and env/<key> of the steps' metrics (means per episode). */
  metrics: Record<string, number>;
}

interface Row {
  g: number;
  env: EnvGroup["envs"][number];
  stop: StopCondition;
  tokens: number[];
  logprobs: number[];
  mask: number[];
  reward: number;
  turns: number;
  sampled: number;
  done: boolean;
  end: Trajectory["stopReason"] | null;
  metrics: Record<string, number>;
}

/**
 * Play `groups` to the end.
 * @throws Error naming the env when an env throws, returns a non-finite reward, omits the
 *   observation of a step that is not done, or the envs of one group start differently
 */
export async function envRollouts(sampler: Pick<Sampler, "sample">, tokenizer: Tokenizer, groups: readonly EnvGroup[], o: EnvRolloutOptions): Promise<EnvRolloutResult> {
  const { prompts, rows } = await startEpisodes(groups, o.env.name);
  // Engines may pad a prompt (the embedded engine to a multiple of 4): keep 3 positions of slack.
  const room = (r: Row) => Math.min(o.maxTokens - r.tokens.length, o.maxSeqLen - 3 - prompts[r.g]!.length - r.tokens.length);
  const count = { calls: 0, obsTokens: 0 };
  for (let round = 0; ; round++) {
    for (const r of rows) if (!r.done && room(r) <= 0) finish(r, "max_tokens");
    const active = rows.filter((r) => !r.done);
    if (active.length === 0) break;
    // One sample call per distinct (cap, stop ids): usually one per round.
    const byKey = new Map<string, Row[]>();
    for (const r of active) {
      const key = `${Math.min(room(r), r.stop.maxTokens ?? Infinity)}|${r.stop.stopTokens.join(",")}`;
      byKey.set(key, [...(byKey.get(key) ?? []), r]);
    }
    for (const [key, batch] of byKey) {
      const req = { prompts: batch.map((r) => concatI32(prompts[r.g]!, r.tokens)), n: 1, maxNewTokens: Number(key.split("|")[0]), stopTokens: batch[0]!.stop.stopTokens };
      const res = await sampler.sample({ ...req, temperature: o.temperature, topP: o.topP, topK: o.topK, seed: hash32(o.seed, 0xe7, round, count.calls++) });
      await Promise.all(
        batch.map(async (r, i) => {
          const s = res[i]!;
          const n = Math.min(s.tokens.length, room(r));
          for (let t = 0; t < n; t++) r.tokens.push(s.tokens[t]!), r.logprobs.push(s.logprobs[t]!), r.mask.push(1);
          r.sampled += n;
          const obs = await stepEpisode(r, Array.from(s.tokens.subarray(0, n)), s.stopReason !== "completed" || n < s.tokens.length, o, room);
          count.obsTokens += obs;
        }),
      );
    }
  }
  await addGroupRewards(groups, rows, o.env.name);
  return results(tokenizer, prompts, rows, o, count);
}

/** Each env's initial observation, checked to be its group's prompt. */
async function startEpisodes(groups: readonly EnvGroup[], name: string): Promise<{ prompts: Int32Array[]; rows: Row[] }> {
  const prompts: Int32Array[] = [];
  const rows: Row[] = [];
  for (let g = 0; g < groups.length; g++) {
    for (const env of groups[g]!.envs) {
      const init = await Promise.resolve(env.initialObservation());
      const ids = Int32Array.from(init.tokens);
      if (prompts[g] === undefined) prompts[g] = ids;
      else if (prompts[g]!.length !== ids.length || prompts[g]!.some((x, i) => x !== ids[i])) throw new Error(`env "${name}": the envs of group ${g} start from different initial observations; a group shares its prompt`);
      const stop = { stopTokens: init.stopTokens, ...(init.maxTokens !== undefined ? { maxTokens: init.maxTokens } : {}) };
      rows.push({ g, env, stop, tokens: [], logprobs: [], mask: [], reward: 0, turns: 0, sampled: 0, done: false, end: null, metrics: {} });
    }
  }
  return { prompts, rows };
}

/**
 * Hand the turn's action to the env, add its reward and metrics, append its observation (mask 0)
 * or end the episode. @returns the observation ids appended
 */
async function stepEpisode(r: Row, action: number[], truncated: boolean, o: EnvRolloutOptions, room: (r: Row) => number): Promise<number> {
  const name = o.env.name;
  let st: EnvStep;
  try {
    st = await Promise.resolve(r.env.step(action, { truncated }));
  } catch (e) {
    throw new Error(`env "${name}": step threw: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!Number.isFinite(st.reward)) throw new Error(`env "${name}": step returned reward ${st.reward}; rewards must be finite numbers`);
  r.reward += st.reward;
  r.turns++;
  for (const [k, v] of Object.entries(st.metrics ?? {})) r.metrics[k] = (r.metrics[k] ?? 0) + v;
  if (st.cut !== undefined && st.cut !== "max_turns" && st.cut !== "max_tokens") throw new Error(`env "${name}": step returned cut ${JSON.stringify(st.cut)}; it must be "max_turns" or "max_tokens" (or absent)`);
  if (st.done) return finish(r, st.cut ?? "completed");
  if (!st.observation) throw new Error(`env "${name}": step returned done: false without an observation; return the ids of the next observation or done: true`);
  if (st.stop) r.stop = st.stop;
  if (r.turns >= o.maxTurns) return finish(r, "max_turns");
  if (st.observation.length > room(r)) return finish(r, "max_tokens");
  for (const id of st.observation) r.tokens.push(id), r.logprobs.push(0), r.mask.push(0);
  return st.observation.length;
}

function finish(r: Row, end: Trajectory["stopReason"]): 0 {
  r.done = true;
  r.end = end;
  return 0;
}

/** Add each group's reward (once every episode of it is finished). */
async function addGroupRewards(groups: readonly EnvGroup[], rows: Row[], name: string): Promise<void> {
  for (let g = 0; g < groups.length; g++) {
    const fn = groups[g]!.groupReward;
    if (!fn) continue;
    const members = rows.filter((r) => r.g === g);
    const episodes: EnvEpisode[] = members.map((r) => ({ reward: r.reward, turns: r.turns, done: r.end === "completed", tokens: r.tokens }));
    const extra = await Promise.resolve(fn(episodes));
    if (!Array.isArray(extra) || extra.length !== members.length || !extra.every(Number.isFinite)) throw new Error(`env "${name}": groupReward must return ${members.length} finite numbers, got ${JSON.stringify(extra).slice(0, 80)}`);
    members.forEach((r, i) => (r.reward += extra[i]!));
  }
}

/** The episodes as trajectories and verdicts, and the round's metrics. */
function results(tokenizer: Tokenizer, prompts: Int32Array[], rows: Row[], o: EnvRolloutOptions, count: { calls: number; obsTokens: number }): EnvRolloutResult {
  const solvedAt = o.env.solvedAt ?? 1;
  const trajectories: Trajectory[] = rows.map((r) => ({
    promptIndex: r.g,
    tokens: Int32Array.from(r.tokens),
    logprobs: Float32Array.from(r.logprobs),
    mask: Float32Array.from(r.mask),
    stopReason: r.end ?? "max_tokens",
    sampledTokens: r.sampled,
    answerText: tokenizer.decode(r.tokens),
    // Turns taken (stratified advantages group by it, as by the agent loop's tool calls).
    toolCalls: r.turns,
  }));
  const verdicts: Verdict[] = rows.map((r) => ({ correct: r.reward >= solvedAt, reward: r.reward, extracted: null, reason: `env ${o.env.name}: ${r.turns} turn(s), ${r.end}, reward ${r.reward}` }));
  const n = Math.max(1, rows.length);
  const metrics: Record<string, number> = {
    "env/turns": rows.reduce((a, r) => a + r.turns, 0) / n,
    "env/done_frac": rows.filter((r) => r.end === "completed").length / n,
    "env/observation_tokens": count.obsTokens,
    "env/sample_calls": count.calls,
  };
  for (const r of rows) for (const [k, v] of Object.entries(r.metrics)) metrics[`env/${k}`] = (metrics[`env/${k}`] ?? 0) + v / n;
  return { prompts, trajectories, verdicts, metrics };
}
