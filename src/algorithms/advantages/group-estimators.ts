/**
 * Group-relative advantage estimators (outcome reward per sequence → one advantage per
 * sequence, broadcast over its tokens by the caller). Formulas: docs/reference/formulas.md
 * ("Advantage estimators"); each docstring names its paper.
 *
 * Common conventions: groups come from explicit ids; NaN rewards get advantage 0 and are left out
 * of every statistic; statistics are float64; results are Float32Array[B].
 */
import { z } from "zod";
import { registerAdvantage } from "../registry.ts";
import type { AdvantageInput, AdvantageOptions } from "../types.ts";
import { checkInput, enumOpt, groupBy, groupMean, mean, numOpt, std } from "./groups.ts";

const stdKinds = ["unbiased", "population"] as const;

/** Options of `grpo` and `grpo_batch_std`. */
export const grpoOptionsSchema = z.looseObject({
  eps: z.number().min(0).default(1e-6),
  std: z.enum(stdKinds).default("unbiased"),
});

/**
 * GRPO group-normalised advantage (Shao et al. 2024, DeepSeekMath, arXiv:2402.03300):
 * A_b = (s_b − mean_g) / (std_g + eps).
 * @param input   rewards [B] (NaN = unscorable), groupIds [B].
 * @param options eps (default 1e-6, added after the std, as verl), std "unbiased" (N−1, default)
 *                or "population" (N).
 * @returns Float32Array[B]. Singleton groups: mean 0, std 1 (A = s/(1+eps)). Constant groups: 0.
 * Pinned by test/algorithms/golden.test.ts (cases.advantages.grpo, grpo_population_std).
 */
export function grpoAdvantages(input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "grpo");
  const eps = numOpt(options, "eps", 1e-6, "grpo");
  const kind = enumOpt(options, "std", stdKinds, "unbiased", "grpo");
  const r = input.rewards;
  const out = new Float32Array(B);
  for (const idx of groupBy(r, input.groupIds).members) {
    const single = idx.length === 1;
    const mu = single ? 0 : mean(r, idx);
    const sd = single ? 1 : std(r, idx, mu, kind);
    for (const i of idx) out[i] = (r[i]! - mu) / (sd + eps);
  }
  return out;
}

/**
 * Dr. GRPO advantage (Liu et al. 2025, "Understanding R1-Zero-Like Training", arXiv:2503.20783):
 * A_b = s_b − mean_g (no std division). Pair with `seq-mean-token-sum-norm` aggregation.
 * @returns Float32Array[B]; singleton groups use mean 0. Pinned by golden cases.advantages.dr_grpo.
 */
export function drGrpoAdvantages(input: AdvantageInput, _options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "dr_grpo");
  const r = input.rewards;
  const out = new Float32Array(B);
  for (const idx of groupBy(r, input.groupIds).members) {
    const mu = groupMean(r, idx);
    for (const i of idx) out[i] = r[i]! - mu;
  }
  return out;
}

/**
 * Group mean, batch std ("Lite PPO", Liu et al. 2025, "Part I: Tricks or Traps?",
 * arXiv:2508.08221; TRL `scale_rewards="batch"`): A_b = (s_b − mean_g) / (std_batch + eps), the
 * std taken over all scorable rewards of the batch.
 * @param options eps (default 1e-6), std "unbiased" (default) | "population".
 * @returns Float32Array[B]; singleton groups use mean 0; a batch of < 2 scorable samples uses std 1.
 * Pinned by test/algorithms/advantages.test.ts ("grpo_batch_std").
 */
export function grpoBatchStdAdvantages(input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "grpo_batch_std");
  const eps = numOpt(options, "eps", 1e-6, "grpo_batch_std");
  const kind = enumOpt(options, "std", stdKinds, "unbiased", "grpo_batch_std");
  const r = input.rewards;
  const groups = groupBy(r, input.groupIds);
  const all = groups.members.flat();
  let sd = all.length > 1 ? std(r, all, mean(r, all), kind) : 1;
  if (!Number.isFinite(sd)) sd = 1;
  const out = new Float32Array(B);
  for (const idx of groups.members) {
    const mu = groupMean(r, idx);
    for (const i of idx) out[i] = (r[i]! - mu) / (sd + eps);
  }
  return out;
}

/**
 * RLOO leave-one-out baseline (Ahmadian et al. 2024, "Back to Basics", arXiv:2402.14740):
 * A_b = s_b − (Σ_g s − s_b)/(n − 1).
 * @returns Float32Array[B]; singleton groups are unchanged (A = s). Pinned by golden advantages.rloo.
 */
export function rlooAdvantages(input: AdvantageInput, _options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "rloo");
  const r = input.rewards;
  const out = new Float32Array(B);
  for (const idx of groupBy(r, input.groupIds).members) {
    const n = idx.length;
    let sum = 0;
    for (const i of idx) sum += r[i]!;
    for (const i of idx) out[i] = n === 1 ? r[i]! : r[i]! - (sum - r[i]!) / (n - 1);
  }
  return out;
}

/**
 * OPO length-weighted baseline (Hao et al. 2025, "On-Policy RL with Optimal Reward Baseline",
 * arXiv:2505.23585): A_b = s_b − Σ_g len_i s_i / Σ_g len_i.
 * @param input  needs lengths [B] (response tokens). A group whose lengths sum to 0 uses the plain mean.
 * @throws TypeError when lengths are missing.
 * Pinned by golden cases.opo.
 */
export function opoAdvantages(input: AdvantageInput, _options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "opo");
  const len = input.lengths;
  if (!len) throw new TypeError("opo: needs input.lengths (Int32Array[B], response length of each sequence in tokens)");
  const r = input.rewards;
  const out = new Float32Array(B);
  for (const idx of groupBy(r, input.groupIds).members) {
    let num = 0;
    let den = 0;
    for (const i of idx) {
      num += len[i]! * r[i]!;
      den += len[i]!;
    }
    const base = den > 0 ? num / den : mean(r, idx);
    for (const i of idx) out[i] = r[i]! - base;
  }
  return out;
}

/**
 * GPG advantage (Chu et al. 2025, "GPG: A Simple and Strong Reinforcement Learning Baseline for
 * Model Reasoning", arXiv:2504.02546): A_b = α (s_b − mean_g), α = B / max(#{b : s_b − mean_g ≠ 0}, 1),
 * with B the number of scorable samples: the batch-level rescaling that corrects for samples whose
 * group gives no signal.
 * @returns Float32Array[B]; singleton groups use mean 0. Pinned by advantages.test.ts ("gpg").
 */
export function gpgAdvantages(input: AdvantageInput, _options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "gpg");
  const r = input.rewards;
  const groups = groupBy(r, input.groupIds);
  const centred = new Float64Array(B);
  let nonzero = 0;
  for (const idx of groups.members) {
    const mu = groupMean(r, idx);
    for (const i of idx) {
      centred[i] = r[i]! - mu;
      if (centred[i] !== 0) nonzero++;
    }
  }
  const alpha = groups.scorable / Math.max(nonzero, 1);
  const out = new Float32Array(B);
  for (let i = 0; i < B; i++) out[i] = alpha * centred[i]!;
  return out;
}

/**
 * Pass@k-style leave-one-out max baseline (ALGORITHMS.md `passk_grpo`): within a group the best
 * sample (first index attaining the maximum) gets s_max − s_second (the best of the others), every
 * other sample 0 — the gradient of E[max reward] with a leave-one-out max baseline.
 * @returns Float32Array[B]; groups with fewer than 2 scorable samples get 0 (the estimator needs n ≥ 2).
 * Pinned by golden cases.advantages.passk_grpo.
 */
export function passkGrpoAdvantages(input: AdvantageInput, _options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "passk_grpo");
  const r = input.rewards;
  const out = new Float32Array(B);
  for (const idx of groupBy(r, input.groupIds).members) {
    if (idx.length < 2) continue;
    let best = idx[0]!;
    for (const i of idx) if (r[i]! > r[best]!) best = i;
    let second = -Infinity;
    for (const i of idx) if (i !== best && r[i]! > second) second = r[i]!;
    out[best] = r[best]! - second;
  }
  return out;
}

/** Options of `stratified_grpo`. */
export const stratifiedOptionsSchema = z.looseObject({
  alpha: z.number().min(0).max(1).default(1),
  eps: z.number().min(0).default(1e-6),
  std: z.enum(stdKinds).default("unbiased"),
});

/**
 * Stratified GRPO / Stratified Advantage Normalization (Zhu et al. 2025, arXiv:2510.06214):
 * within each group, sequences are split into strata by a structural key (e.g. number of tool
 * calls) and normalised inside their stratum, A_SAN = (s − mean_k)/(std_k + eps); the result is
 * blended with the group-global GRPO advantage: A = α A_SAN + (1 − α) A_GRPO.
 * @param input   needs strata [B].
 * @param options alpha (blend weight of SAN, default 1 = pure SAN; the paper tunes the blend, set
 *                it from the paper body), eps (1e-6), std ("unbiased").
 * @returns Float32Array[B]. A stratum with one scorable member has A_SAN = 0 (no peers).
 * @throws TypeError when strata are missing. Pinned by advantages.test.ts ("stratified_grpo").
 */
export function stratifiedGrpoAdvantages(input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "stratified_grpo");
  if (!input.strata) throw new TypeError("stratified_grpo: needs input.strata (Int32Array[B], the stratum of each sequence, e.g. its number of tool calls)");
  const alpha = numOpt(options, "alpha", 1, "stratified_grpo");
  const eps = numOpt(options, "eps", 1e-6, "stratified_grpo");
  const kind = enumOpt(options, "std", stdKinds, "unbiased", "stratified_grpo");
  const r = input.rewards;
  const global = alpha < 1 ? grpoAdvantages(input, { eps, std: kind }) : new Float32Array(B);
  const out = new Float32Array(B);
  for (const idx of groupBy(r, input.groupIds, input.strata).members) {
    const single = idx.length === 1;
    const mu = single ? 0 : mean(r, idx);
    const sd = single ? 1 : std(r, idx, mu, kind);
    for (const i of idx) {
      const san = single ? 0 : (r[i]! - mu) / (sd + eps);
      out[i] = alpha * san + (1 - alpha) * global[i]!;
    }
  }
  return out;
}

const noOptions = z.looseObject({});
registerAdvantage("grpo", grpoAdvantages, { schema: grpoOptionsSchema });
registerAdvantage("dr_grpo", drGrpoAdvantages, { schema: noOptions });
registerAdvantage("grpo_batch_std", grpoBatchStdAdvantages, { schema: grpoOptionsSchema });
registerAdvantage("rloo", rlooAdvantages, { schema: noOptions });
registerAdvantage("opo", opoAdvantages, { schema: noOptions });
registerAdvantage("gpg", gpgAdvantages, { schema: noOptions });
registerAdvantage("passk_grpo", passkGrpoAdvantages, { schema: noOptions });
registerAdvantage("stratified_grpo", stratifiedGrpoAdvantages, { schema: stratifiedOptionsSchema });
