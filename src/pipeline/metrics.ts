/**
 * The metrics stage: the one place that names every metric of an RL step, written to
 * metrics.jsonl (and to `train()`'s step events) and the step's samples to samples.jsonl.
 *
 * Accuracy, lengths and token counts cover every sampled response of the step (all generation
 * batches, kept or not); rewards and group statistics cover the train batch. `reward/<name>` is
 * the mean score of each reward component (Verdict.components) over every sampled response, with
 * the reward layer's event counts (rewardMetrics, src/rewards/compile.ts).
 */
import { combineMetrics } from "../algorithms/index.ts";
import { rewardMetrics } from "../rewards/compile.ts";
import { sampledTokenCount } from "../rollout/collect.ts";
import type { RunLogger } from "./logger.ts";
import type { RlState } from "./state.ts";
import type { RunContext } from "./context.ts";
import type { StepBatch, UpdateBatch } from "./batch.ts";
import type { OptimizeReport } from "./optimize.ts";

/** Fraction of groups (by group id; any size, any order) whose rewards are all equal. */
export function zeroStdFraction(rewards: Float32Array, groupIds: Int32Array): number {
  const first = new Map<number, number>();
  const mixed = new Set<number>();
  rewards.forEach((r, i) => {
    const g = groupIds[i]!;
    const f = first.get(g);
    if (f === undefined) first.set(g, r);
    else if (f !== r) mixed.add(g);
  });
  return first.size ? (first.size - mixed.size) / first.size : 0;
}

/** Mean of the finite values (a skipped sample's reward is NaN); 0 when there are none. */
function finiteMean(xs: ArrayLike<number>): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < xs.length; i++) if (Number.isFinite(xs[i]!)) (s += xs[i]!), n++;
  return n ? s / n : 0;
}

/** Staleness of the trained sequences: policy version now minus the version that sampled each. */
function staleness(batch: StepBatch, st: RlState): Record<string, number> {
  const v = batch.rollouts.map((o) => o.policyVersion).filter((x): x is number => x !== undefined);
  if (v.length === 0) return {};
  const s = v.map((x) => batch.trainVersion - x);
  return { "rollout/staleness": s.reduce((a, b) => a + b, 0) / s.length, "rollout/staleness_max": Math.max(...s), "policy/version": st.policyVersion };
}

/**
 * The update's metrics (every caller of the update sequence, ./update.ts, gets them): rewards of the
 * train batch, KL, the loss's metrics averaged over the updates, the gradient norm, skipped updates
 * and mismatch correction.
 */
export function updateMetrics(batch: UpdateBatch, opt: OptimizeReport, st: Pick<RlState, "kl">): Record<string, number> {
  const lm = combineMetrics(opt.lossParts);
  // Loss metrics are summable within an optimizer step; average them over the step's updates.
  const mean = (k: string) => (lm[k] ?? 0) / Math.max(1, opt.updates);
  return {
    "reward/mean": finiteMean(batch.rewards),
    "groups/zero_std_frac": zeroStdFraction(batch.rewards, batch.groupIds),
    "groups/trained_seqs": batch.seqs.length,
    entropy: mean("entropy"),
    kl: batch.scoredReference ? batch.kl : 0,
    kl_coef: st.kl.coef,
    "loss/policy": mean("loss"),
    clipfrac_low: mean("clipfrac_low"),
    clipfrac_high: mean("clipfrac_high"),
    ratio_mean: lm["ratio_mean"] !== undefined ? mean("ratio_mean") : 1,
    ratio_max: lm["ratio_max"] ?? 1,
    approx_kl_old: lm["approx_kl"] !== undefined ? mean("approx_kl") : 0,
    grad_norm: opt.gradNorm,
    updates: opt.updates,
    skipped: opt.skippedUpdates > 0 ? 1 : 0,
    // Mismatch correction (algorithm.mismatch; on by default with vLLM rollouts): mean weight, corrected fraction, |Δ log p|, largest ratio.
    ...Object.fromEntries(Object.keys(lm).filter((k) => k.startsWith("mismatch/") || k.startsWith("rollout/logprob_diff")).map((k) => [k, k.endsWith("_max") ? lm[k]! : mean(k)])),
  };
}

/**
 * Name, log and return the step's metrics (st.step already advanced): what was sampled (accuracy,
 * lengths, tokens, verifier events, data selection), times and staleness, and `update`, the
 * update sequence's own (updateMetrics).
 */
export function metrics(ctx: RunContext, batch: StepBatch, update: Record<string, number>, st: RlState, log: RunLogger): Record<string, number> {
  const g = batch.generated;
  const allLengths = g.rollouts.map((o) => o.tokens.length);
  const sampledTokens = g.rollouts.reduce((a, o) => a + sampledTokenCount(o), g.discardedTokens);
  const selMetrics = st.selection.observe(g.examples, g.verdicts, sampledTokens);
  const t = batch.times;
  const m: Record<string, number> = {
    "reward/verifier": finiteMean(g.verdicts.map((v) => v.reward)),
    "verifier/timeouts": g.events["verifier/timeouts"] ?? 0,
    "verifier/crashes": g.events["verifier/crashes"] ?? 0,
    "verifier/errors": g.events["verifier/errors"] ?? 0,
    ...rewardMetrics(g.verdicts, g.events),
    accuracy: g.verdicts.filter((v) => v.correct).length / Math.max(1, g.verdicts.length),
    "rollout/gen_batches": g.genBatches,
    "rollout/groups_kept": batch.examples.length,
    "rollout/groups_dropped": g.dropped,
    "rollout/groups_surplus": g.surplus,
    "rollout/batch_full": g.full ? 1 : 0,
    "rollout/sampled_tokens": sampledTokens,
    "rollout/sampled_tokens_total": st.selection.sampledTokens,
    "rollout/masked_truncated": batch.maskedTruncated,
    ...selMetrics,
    "response/length_mean": sampledTokens / Math.max(1, allLengths.length),
    "response/length_max": Math.max(0, ...allLengths),
    // Mean length of correct and of wrong responses (absent when the batch has none): Dr. GRPO's length-bias check.
    ...Object.fromEntries((["correct", "wrong"] as const).flatMap((k) => { const l = allLengths.filter((_, i) => (g.verdicts[i]?.correct === true) === (k === "correct")); return l.length ? [[`response/length_${k}_mean`, l.reduce((a, b) => a + b, 0) / l.length]] : []; })),
    "response/truncated_frac": g.rollouts.filter((o) => o.stopReason === "max_tokens").length / Math.max(1, g.rollouts.length),
    ...update,
    "time/sample": t["sample"] ?? 0,
    "time/reward": t["reward"] ?? 0,
    "time/train": (t["reference"] ?? 0) + (t["advantages"] ?? 0) + (t["optimize"] ?? 0),
    "time/step": t["step"] ?? 0,
    "throughput/sample_tokens_per_s": sampledTokens / Math.max(1e-9, t["sample"] ?? 0),
    ...Object.fromEntries(Object.entries(t).filter(([k]) => !["sample", "reward", "step"].includes(k)).map(([k, v]) => [`time/${k}`, v])),
    ...staleness(batch, st),
  };
  Object.assign(m, batch.metrics, g.metrics);
  log.metrics({ stage: "rl", step: st.step, ...m });
  const k = ctx.cfg.logging.samplesPerStep;
  log.samples(
    batch.rollouts.slice(0, k).map((o, i) => ({
      step: st.step,
      prompt: batch.examples[o.promptIndex]!.prompt,
      response: batch.texts[i],
      answer: batch.examples[o.promptIndex]!.answer,
      reward: batch.rewards[i],
      advantage: batch.advantages[i],
      correct: batch.verdicts[i]!.correct,
      reason: batch.verdicts[i]!.reason,
      stop: o.stopReason,
    })),
  );
  return m;
}
