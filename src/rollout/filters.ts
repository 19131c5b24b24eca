/**
 * Group filters of the rollout stage: which groups (all responses to one prompt) are worth
 * training on. Both filters look at one number per response — accuracy (verdict.correct as 0/1)
 * or the verifier reward — summarised per group.
 *
 * - DAPO dynamic sampling (Yu et al. 2025, arXiv:2503.14476, §3.2 "Dynamic Sampling"): a group
 *   whose metric is identical across all its responses has zero group-normalised advantage and
 *   gives no gradient; drop it (`isInformative`).
 * - Balanced online difficulty filtering (Bae et al. 2025, "Online Difficulty Filtering for
 *   Reasoning Oriented Reinforcement Learning", arXiv:2504.03380; PRIME's accuracy filter,
 *   arXiv:2502.01456): keep a group only when its pass rate (mean accuracy) lies in a band,
 *   e.g. the closed band [0.2, 0.8] or the open band (0, 1) (`inPassBand`).
 */

/** Which per-response number a filter looks at. */
export type FilterMetric = "accuracy" | "reward";

/** Summary of one group's metric values. */
export interface GroupSummary {
  /** The group id (as given in `groupIds`). */
  group: number;
  /** Responses in the group. */
  n: number;
  /** Mean of the metric (for accuracy: the pass rate, in [0, 1]). */
  mean: number;
  min: number;
  max: number;
}

/**
 * Summarise a metric per group.
 * @param values   [B] metric per response (accuracy 0/1 or reward); NaN counts as 0.
 * @param groupIds [B] group of each response (any order; groups need not be contiguous).
 * @returns one summary per group, in order of each group's first appearance.
 * @throws RangeError when the lengths differ.
 */
export function summarizeGroups(values: ArrayLike<number>, groupIds: ArrayLike<number>): GroupSummary[] {
  if (values.length !== groupIds.length) throw new RangeError(`summarizeGroups: ${values.length} values but ${groupIds.length} group ids`);
  const byId = new Map<number, GroupSummary & { sum: number }>();
  for (let i = 0; i < values.length; i++) {
    const v = Number.isNaN(values[i]!) ? 0 : values[i]!;
    const g = groupIds[i]!;
    const s = byId.get(g);
    if (!s) byId.set(g, { group: g, n: 1, sum: v, mean: v, min: v, max: v });
    else {
      s.n++;
      s.sum += v;
      s.min = Math.min(s.min, v);
      s.max = Math.max(s.max, v);
    }
  }
  return [...byId.values()].map(({ sum, ...s }) => ({ ...s, mean: sum / s.n }));
}

/**
 * DAPO's keep rule: a group is informative when its metric is not identical across the group
 * (max − min > tol). Singleton groups are never informative.
 * @param tol absolute tolerance for "identical" (default 0: exact equality, as DAPO's accuracy filter).
 */
export function isInformative(g: GroupSummary, tol = 0): boolean {
  return g.max - g.min > tol;
}

/** A pass-rate band: [low, high] (closed) or (low, high) (open). Both ends in [0, 1]. */
export interface PassBand {
  low: number;
  high: number;
  /** true: exclusive ends, e.g. (0, 1) keeps every group that is neither all-wrong nor all-right. */
  open: boolean;
}

/**
 * Balanced online difficulty filtering: keep a group when its pass rate (`mean` of accuracy)
 * lies in the band. A small slack (1e-9) absorbs the rounding of k/n.
 */
export function inPassBand(g: GroupSummary, band: PassBand): boolean {
  const eps = 1e-9;
  const p = g.mean;
  return band.open ? p > band.low + eps && p < band.high - eps : p >= band.low - eps && p <= band.high + eps;
}

/** Metric value of one response from its verdict (accuracy: 1/0; reward: the verifier reward). */
export function metricValue(v: { correct: boolean; reward: number }, metric: FilterMetric): number {
  return metric === "accuracy" ? (v.correct ? 1 : 0) : v.reward;
}
