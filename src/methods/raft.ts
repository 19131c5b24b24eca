/**
 * RAFT / rejection-sampling fine-tuning (Dong et al. 2023, "RAFT: Reward rAnked FineTuning for
 * Generative Foundation Model Alignment", arXiv:2304.06767): sample K responses per prompt, rank
 * them by reward, keep the best (or all at or above a threshold), and fine-tune on the kept ones.
 * Options: `methods.raft`.
 *
 * Online RAFT runs through the normal RL step, so curriculum, filters, samplers (vLLM) and
 * tree/agent rollouts apply, and the step logs its real entropy and KL:
 *   - reward stage: a filter. The responses RAFT does not keep get loss mask 0 (they still count
 *     in reward/accuracy metrics); `raft/kept`, `raft/kept_frac`.
 *   - optimize stage: the SFT loss (token-mean NLL of the kept responses' tokens), written as the
 *     `vanilla_pg` policy loss with advantage 1 (ℓ = −lp, ∂ℓ/∂lp = −1), so the configured
 *     KL-in-loss term and entropy bonus apply to it as to any policy loss. The estimator's
 *     advantages are computed (and logged in samples.jsonl) but not read by this loss.
 * A step that keeps nothing trains no token and takes no update (not a fault: `skipped` 0).
 * Offline RAFT = `collectRaftDemos` once, then SFT on them.
 */
import { policyLossTerms, toLossOutput, type AlgorithmConfig, type StepCounts, type StepState } from "../algorithms/index.ts";
import type { RunConfig } from "../config/schema.ts";
import type { TokenLossFn } from "../core/engine.ts";
import type { Example } from "../core/example.ts";
import type { Sequence } from "../core/sequence.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { RewardStage, RewardStageResult } from "../pipeline/hooks.ts";
import { defineMethod } from "./define.ts";

/** Which samples RAFT keeps per prompt. */
export interface RaftSelect {
  /** "best": the top-`perPrompt` by reward (ties → earliest); "threshold": every sample with reward ≥ threshold. */
  keep: "best" | "threshold";
  /** A kept sample needs reward ≥ this (default 1: correct only). */
  threshold: number;
  /** "best" keeps at most this many per prompt (default 1). */
  perPrompt: number;
}

/**
 * Indices of the kept samples, grouped by `groupIds` (any order; ties and output in index order).
 * @param rewards [B] (NaN never kept).  @param groupIds [B] group of each sample.
 */
export function selectForRaftGroups(rewards: ArrayLike<number>, groupIds: ArrayLike<number>, o: RaftSelect): number[] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < rewards.length; i++) {
    if (!(rewards[i]! >= o.threshold)) continue;
    const g = groups.get(groupIds[i]!);
    if (g) g.push(i);
    else groups.set(groupIds[i]!, [i]);
  }
  const out: number[] = [];
  for (const idx of groups.values()) out.push(...(o.keep === "threshold" ? idx : [...idx].sort((a, b) => rewards[b]! - rewards[a]! || a - b).slice(0, o.perPrompt)));
  return out.sort((a, b) => a - b);
}

/**
 * Indices of the kept samples, for prompt-major groups of `groupSize`.
 * @param rewards [B] (NaN never kept).
 */
export function selectForRaft(rewards: ArrayLike<number>, groupSize: number, o: RaftSelect): number[] {
  return selectForRaftGroups(rewards, Array.from({ length: rewards.length }, (_, i) => Math.floor(i / groupSize)), o);
}

/** Sample `n` responses for each example and keep the selected ones as demonstrations (offline RAFT / RFT). */
export async function collectRaftDemos(ctx: RunContext, examples: readonly Example[], n: number, sel: RaftSelect, seed: number, temperature = 1): Promise<{ seqs: Sequence[]; rewards: Float32Array }> {
  const prompts = examples.map(ctx.encodePrompt);
  const outs = await ctx.engine.sample({ prompts, n, maxNewTokens: ctx.cfg.rl?.maxNewTokens ?? 16, temperature, seed, stopTokens: [ctx.tokenizer.eosId] });
  const texts = outs.map((o) => ctx.tokenizer.decode(o.tokens));
  const { verdicts } = await ctx.verifyBatch(texts, outs.map((o) => examples[o.promptIndex]!));
  const rewards = Float32Array.from(verdicts.map((v) => v.reward));
  const seqs = selectForRaft(rewards, n, sel).map((i) => ({ prompt: prompts[outs[i]!.promptIndex]!, response: outs[i]!.tokens }));
  return { seqs, rewards };
}

/**
 * RAFT's reward-stage filter: the responses not kept get an all-zero loss mask.
 * @returns metrics raft/kept (responses kept) and raft/kept_frac (of the step's responses).
 */
export function raftFilter(s: RewardStage, sel: RaftSelect): RewardStageResult {
  // A rollout's promptIndex is its group (the step's kept groups, renumbered).
  const kept = new Set(selectForRaftGroups(s.rewards, s.rollouts.map((o) => o.promptIndex), sel));
  s.seqs.forEach((q, i) => {
    if (!kept.has(i)) q.mask = new Float32Array(q.response.length);
  });
  return { metrics: { "raft/kept": kept.size, "raft/kept_frac": kept.size / Math.max(1, s.rewards.length) } };
}

/**
 * RAFT's loss of one update: token-mean NLL of the trained (kept) tokens, as `vanilla_pg` with
 * advantage 1, plus the configured KL-in-loss term and entropy bonus (policyLossTerms). No
 * mismatch correction: the kept samples are the data, whichever sampler drew them.
 */
export function makeRaftLoss(alg: AlgorithmConfig, counts: StepCounts, state: StepState): TokenLossFn {
  const { mismatch: _none, ...rest } = alg;
  const sft: AlgorithmConfig = { ...rest, loss: { ...alg.loss, name: "vanilla_pg" }, aggregation: "token-mean" };
  return (scores, batch) => {
    const ones = Float32Array.from(batch.lossMask, (m) => (m > 0 ? 1 : 0));
    return toLossOutput(policyLossTerms(sft, counts, scores, { ...batch, advantages: ones }, { state }));
  };
}

export const raft = defineMethod<RaftSelect>({
  name: "raft",
  configPath: "methods.raft",
  options: (cfg: RunConfig) => cfg.methods?.raft,
  stages: ["reward", "optimize"],
  // After every other reward transform (it selects on the final rewards).
  order: 90,
  build: (_ctx, sel) => ({
    rewards: (s) => raftFilter(s, sel),
    loss: (alg, counts, state) => makeRaftLoss(alg, counts, state),
  }),
});
