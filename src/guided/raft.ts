/**
 * RAFT / rejection-sampling fine-tuning (Dong et al. 2023, "RAFT: Reward rAnked FineTuning for
 * Generative Foundation Model Alignment", arXiv:2304.06767): sample K responses per prompt, rank
 * them by reward, keep the best (or all at or above a threshold), and fine-tune on the kept ones.
 * `selectForRaft` is the pure selection; `raftStep` is the online RL-stage step (sampling needs no
 * gradients; the update is SFT on the kept samples). Offline RAFT = `collectRaftDemos` once, then
 * SFT on them.
 */
import type { AlgorithmConfig } from "../algorithms/index.ts";
import { learningRate } from "../core/schedule.ts";
import type { Example } from "../core/example.ts";
import type { Sequence } from "../core/sequence.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { RunLogger } from "../pipeline/logger.ts";
import type { RlState } from "../pipeline/state.ts";
import { hash32 } from "../util/rng.ts";
import { supervisedStep } from "./sft.ts";

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
 * Indices of the kept samples, for prompt-major groups of `groupSize`.
 * @param rewards [B] (NaN never kept).
 */
export function selectForRaft(rewards: ArrayLike<number>, groupSize: number, o: RaftSelect): number[] {
  const out: number[] = [];
  for (let g = 0; g < rewards.length; g += groupSize) {
    const idx = Array.from({ length: Math.min(groupSize, rewards.length - g) }, (_, j) => g + j).filter((i) => rewards[i]! >= o.threshold);
    if (o.keep === "threshold") out.push(...idx);
    else out.push(...idx.sort((a, b) => rewards[b]! - rewards[a]! || a - b).slice(0, o.perPrompt));
  }
  return out;
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
 * One online RAFT step in the RL stage: the same prompts × group size as a GRPO step (equal
 * samples), then one SFT update on the kept samples at rl.lr. Advances st.step and logs
 * metrics {"reward/mean", accuracy, "raft/kept", "raft/kept_frac", loss, ...}.
 */
export async function raftStep(ctx: RunContext, _alg: AlgorithmConfig, st: RlState, log: RunLogger, sel: RaftSelect): Promise<Record<string, number>> {
  const r = ctx.cfg.rl!;
  const t0 = performance.now();
  const examples: Example[] = [];
  for (let i = 0; i < r.promptsPerStep; i++) examples.push(ctx.train[st.order[st.cursor++ % st.order.length]!]!);
  const { seqs, rewards } = await collectRaftDemos(ctx, examples, r.groupSize, sel, hash32(ctx.cfg.seed, 0x5a, st.step), r.temperature);
  const lr = learningRate(st.step, { lr: r.lr, schedule: r.schedule, warmupSteps: r.warmupSteps, totalSteps: r.steps, minLrRatio: r.minLrRatio });
  const s = await supervisedStep(ctx.engine, seqs, { lr, maxGradNorm: r.maxGradNorm, weightDecay: r.weightDecay, microBatchSize: r.microBatchSize, padId: ctx.tokenizer.padId });
  const mean = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
  const metrics: Record<string, number> = {
    "reward/mean": mean,
    accuracy: mean,
    "raft/kept": seqs.length,
    "raft/kept_frac": seqs.length / Math.max(1, rewards.length),
    "groups/zero_std_frac": 0,
    entropy: 0,
    kl: 0,
    "response/length_mean": 0,
    "loss/policy": s["loss"]!,
    grad_norm: s["grad_norm"]!,
    // Nothing kept is not a fault (no update was due).
    skipped: seqs.length === 0 ? 0 : s["skipped"]!,
    "time/step": (performance.now() - t0) / 1000,
  };
  st.step++;
  log.metrics({ stage: "rl", step: st.step, ...metrics });
  return metrics;
}
