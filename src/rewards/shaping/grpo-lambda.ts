/**
 * GRPO-λ reward (Dai, Liu & Si 2025, "Stable Reinforcement Learning for Efficient Reasoning",
 * arXiv:2505.18086).
 *
 * The paper's observation: a length penalty applied to every group makes accuracy collapse early
 * in training. GRPO-λ monitors each group's correctness ratio (correct / n) and applies the
 * length-penalised reward only to groups whose ratio is high; every other group gets plain 0/1
 * correctness. Two readings of "high" are supported:
 *   - "top-fraction" (default): within a batch, the top λ fraction of groups ranked by correctness
 *     ratio (the batch-wise top-λ selection the paper describes; ties keep batch order; the count
 *     is round(λ · G), at least 1 when λ > 0);
 *   - "ratio": every group with ratio ≥ λ (usable group by group, no batch needed).
 * Groups with no correct response are never selected by default (`requireCorrect`): a length
 * penalty on an all-wrong group only rewards brevity of wrong answers.
 *
 * Length-penalised reward (default): correctness plus the Kimi k1.5 length reward (Kimi Team 2025,
 * arXiv:2501.12599, §2.3.3), which the paper's "length penalty" baseline uses:
 *   λ_i = 0.5 − (len_i − min_len)/(max_len − min_len)   (0 when all lengths are equal)
 *   correct: 1 + w·λ_i        wrong: 0 + w·min(0, λ_i)
 * with min/max over the group. The exact penalty of the paper may differ in detail; pass
 * `lengthReward` to use another form.
 */
import type { RewardComponent, RewardValue } from "../compose.ts";

export interface GrpoLambdaOptions {
  /** λ: the fraction of groups ("top-fraction") or the ratio threshold ("ratio"). In [0, 1]. */
  lambda: number;
  selection?: "top-fraction" | "ratio";
  /** Only groups with at least one correct response can be selected (default true). */
  requireCorrect?: boolean;
  /** Weight w of the length term (default 1). */
  weight?: number;
  /** Custom length-penalised reward for a selected group: (correct, lengths) → rewards. */
  lengthReward?: (correct: boolean[], lengths: number[]) => number[];
}

export interface GrpoLambdaGroup {
  correct: boolean[];
  lengths: number[];
}

/** Kimi k1.5 length reward added to 0/1 correctness (see module doc). */
export function kimiLengthReward(correct: boolean[], lengths: number[], weight = 1): number[] {
  const min = Math.min(...lengths);
  const max = Math.max(...lengths);
  return correct.map((c, i) => {
    const lam = max === min ? 0 : 0.5 - (lengths[i]! - min) / (max - min);
    return c ? 1 + weight * lam : weight * Math.min(0, lam);
  });
}

/**
 * Which groups of a batch get the length-penalised reward.
 * @returns one boolean per group
 * @throws Error when λ is outside [0, 1]
 */
export function grpoLambdaSelect(ratios: number[], opts: GrpoLambdaOptions): boolean[] {
  const { lambda } = opts;
  if (!(lambda >= 0 && lambda <= 1)) throw new Error(`grpoLambda.lambda: expected a number in [0, 1], got ${lambda}`);
  const eligible = ratios.map((r) => (opts.requireCorrect ?? true ? r > 0 : true));
  if ((opts.selection ?? "top-fraction") === "ratio") return ratios.map((r, i) => eligible[i]! && r >= lambda);
  const k = lambda === 0 ? 0 : Math.max(1, Math.round(lambda * ratios.length));
  const order = ratios.map((r, i) => ({ r, i })).sort((a, b) => b.r - a.r || a.i - b.i);
  const chosen = new Array<boolean>(ratios.length).fill(false);
  for (const { i } of order.slice(0, k)) chosen[i] = eligible[i]!;
  return chosen;
}

/**
 * GRPO-λ rewards for a batch of groups.
 * @returns rewards per group per response, and which groups were length-penalised
 */
export function grpoLambdaRewards(groups: GrpoLambdaGroup[], opts: GrpoLambdaOptions): { rewards: number[][]; penalised: boolean[] } {
  const ratios = groups.map((g) => (g.correct.length ? g.correct.filter(Boolean).length / g.correct.length : 0));
  const penalised = grpoLambdaSelect(ratios, opts);
  const rewards = groups.map((g, gi) =>
    penalised[gi] ? (opts.lengthReward ?? ((c, l) => kimiLengthReward(c, l, opts.weight ?? 1)))(g.correct, g.lengths) : g.correct.map((c) => (c ? 1 : 0)),
  );
  return { rewards, penalised };
}

/**
 * GRPO-λ as a batch reward component reading correctness from another component (value ≥
 * `correctAt`, default 1, = correct, as `reward.correctAt`; null stays null). Give the correctness component weight 0 so it is logged only.
 */
export function grpoLambdaComponent(opts: GrpoLambdaOptions & { name?: string; correctness: string; weight?: number; correctAt?: number }): RewardComponent {
  return {
    name: opts.name ?? "grpo_lambda",
    weight: 1,
    batch: ({ components, lengths }) => {
      const groups = components.map((c, gi) => {
        const vals = c[opts.correctness];
        if (!vals) throw new Error(`grpoLambda: no component named "${opts.correctness}"`);
        return { correct: vals.map((v) => v !== null && v >= (opts.correctAt ?? 1)), lengths: lengths[gi]! };
      });
      const { rewards } = grpoLambdaRewards(groups, opts);
      return rewards.map((r, gi): RewardValue[] => r.map((v, i) => (components[gi]![opts.correctness]![i] === null ? null : v)));
    },
  };
}
