/**
 * What every rollout strategy returns: the engine's SampleResult plus the per-token loss mask and
 * the bookkeeping the trainer logs. Trajectories are token-in/token-out: `tokens` is exactly the
 * response the policy is trained on (sampled ids, shared prefixes, hint ids and observation ids in
 * order); nothing is re-tokenized.
 */
import type { Engine, SampleResult } from "../core/engine.ts";
import { hash32 } from "../util/rng.ts";

export interface Trajectory extends SampleResult {
  /**
   * Loss mask per response token, [tokens.length]: 1 = trained (the policy produced it), 0 = not
   * trained (hint tokens, tool observations). Absent = all 1.
   */
  mask?: Float32Array;
  /** Tokens the engine sampled for this trajectory in this rollout (shared prefixes, hints and observations excluded). */
  sampledTokens: number;
  /** Text the verifier scores, when it is not the decoded response (agent loop: the final answer after the last observation). */
  answerText?: string;
  /** Tree rollouts: index within its prompt's group of the trajectory it forked from, and the response position of the fork. */
  forkOf?: number;
  forkAt?: number;
  /** Hints: number of reference-solution tokens at the start of the response (mask 0). */
  hintTokens?: number;
  /** Agent loop: tool calls executed. */
  toolCalls?: number;
  /** Policy version of the weights that sampled it (the RL step's collect stage sets it; rl.async staleness). */
  policyVersion?: number;
}

/** Sampling settings shared by every call a strategy makes. */
export interface SamplingSettings {
  temperature: number;
  topP?: number;
  topK?: number;
  stopTokens?: number[];
  seed: number;
}

/** A plain sample wrapped as a trajectory (every token sampled and trained). */
export function asTrajectory(r: SampleResult): Trajectory {
  return { ...r, sampledTokens: r.tokens.length };
}

/**
 * Sample one continuation for each item (its own prefix and its own token cap), with as few
 * engine calls as there are distinct caps. Items with cap <= 0 get an empty `max_tokens` result.
 * @returns results aligned with `items` (promptIndex = the item's index).
 * Seeds: call k (distinct cap c) uses hash32(seed, 0x7ee, c); row i of it the engine's own stream.
 */
export async function sampleEach(engine: Engine, items: readonly { prefix: Int32Array; maxNewTokens: number }[], s: SamplingSettings): Promise<SampleResult[]> {
  const out: SampleResult[] = new Array(items.length);
  const byCap = new Map<number, number[]>();
  items.forEach((it, i) => {
    if (it.maxNewTokens <= 0) out[i] = { promptIndex: i, tokens: new Int32Array(0), logprobs: new Float32Array(0), stopReason: "max_tokens" };
    else byCap.set(it.maxNewTokens, [...(byCap.get(it.maxNewTokens) ?? []), i]);
  });
  for (const cap of [...byCap.keys()].sort((a, b) => a - b)) {
    const idx = byCap.get(cap)!;
    const res = await engine.sample({
      prompts: idx.map((i) => items[i]!.prefix),
      n: 1,
      maxNewTokens: cap,
      temperature: s.temperature,
      topP: s.topP,
      topK: s.topK,
      stopTokens: s.stopTokens,
      seed: hash32(s.seed, 0x7ee, cap),
    });
    for (const r of res) out[idx[r.promptIndex]!] = { ...r, promptIndex: idx[r.promptIndex]! };
  }
  return out;
}

/** Concatenate Int32Arrays / Float32Arrays. */
export function concatI32(...xs: ArrayLike<number>[]): Int32Array {
  const out = new Int32Array(xs.reduce((a, x) => a + x.length, 0));
  let o = 0;
  for (const x of xs) out.set(x, o), (o += x.length);
  return out;
}
export function concatF32(...xs: ArrayLike<number>[]): Float32Array {
  const out = new Float32Array(xs.reduce((a, x) => a + x.length, 0));
  let o = 0;
  for (const x of xs) out.set(x, o), (o += x.length);
  return out;
}
