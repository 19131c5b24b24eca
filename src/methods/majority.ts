/**
 * TTRL's reward: majority vote over a group's extracted answers as the pseudo-label, reward 1 for
 * agreeing with it (Zuo et al. 2025, "TTRL: Test-Time Reinforcement Learning", arXiv:2504.16084).
 * Votes are compared after `normalizeVoteAnswer` (the same normalisation as maj@k in src/eval).
 */
import { normalizeVoteAnswer } from "../eval/majority.ts";

/** How a tie for the most votes is broken. */
export type TieRule = "first" | "none";

/** The result of one majority vote. */
export interface MajorityVote {
  /** The winning normalised answer, or null (no parsable answer, or a tie under tie: "none"). */
  label: string | null;
  /** Index of the earliest response holding the label (-1 when none; a `lowShare` vote keeps its majority's). */
  index: number;
  /** Votes for the label. */
  count: number;
  /** count / number of responses (parsable or not); 0 when the vote found no label (a `lowShare` vote keeps its share). */
  share: number;
  /** Whether two or more answers shared the top count. */
  tied: boolean;
  /** Set by `ttrlRewards` when the label was dropped for a share below `minShare` (label null; index and share kept). */
  lowShare?: boolean;
  /** Responses without a parsable answer. */
  unparsable: number;
}

/**
 * Majority vote over extracted answers (null = unparsable: never a candidate, counted in `share`'s
 * denominator).
 * @param tie "first" (default): the tied answer that appears first wins (as maj@k);
 *            "none": a tie gives no pseudo-label.
 */
export function majorityVote(answers: readonly (string | null)[], tie: TieRule = "first"): MajorityVote {
  const counts = new Map<string, { count: number; first: number }>();
  let unparsable = 0;
  answers.forEach((a, i) => {
    const key = normalizeVoteAnswer(a);
    if (key === null) return void unparsable++;
    const e = counts.get(key);
    if (e) e.count++;
    else counts.set(key, { count: 1, first: i });
  });
  let label: string | null = null;
  let best = { count: 0, first: -1 };
  let tied = false;
  for (const [k, e] of counts) {
    if (e.count > best.count) (label = k), (best = e), (tied = false);
    else if (e.count === best.count) tied = true;
  }
  if (label === null || (tied && tie === "none")) return { label: null, index: -1, count: 0, share: 0, tied, unparsable };
  return { label, index: best.first, count: best.count, share: best.count / Math.max(1, answers.length), tied, unparsable };
}

/** Options of `ttrlRewards`. */
export interface TtrlOptions {
  tie?: TieRule;
  /**
   * Confidence filter: a vote whose winning share (votes for the label / responses) is below this
   * gets no pseudo-label, so its group is rewarded 0 throughout and carries no gradient. Default 0
   * (plain TTRL). In [0, 1].
   */
  minShare?: number;
}

/** TTRL rewards of one step. */
export interface TtrlRewards {
  /** 1 if the response's normalised answer equals its group's pseudo-label, else 0 (unparsable: 0). [B] */
  rewards: Float32Array;
  /** Per group: the vote. */
  votes: MajorityVote[];
}

/**
 * TTRL rewards for prompt-major groups of `groupSize` responses.
 * `opts.minShare` > 0 keeps only confident votes (a share below it: no label, rewards 0) — a
 * filter in the spirit of TTRL's observation that the majority is more often right when it is
 * large; not part of TTRL's own recipe.
 * @param answers extracted answers [B], B a multiple of groupSize (null = unparsable).
 * @throws RangeError when B is not a multiple of groupSize.
 */
export function ttrlRewards(answers: readonly (string | null)[], groupSize: number, opts: TtrlOptions = {}): TtrlRewards {
  if (!(groupSize >= 1) || answers.length % groupSize !== 0) throw new RangeError(`ttrlRewards: ${answers.length} answers are not groups of ${groupSize}`);
  const rewards = new Float32Array(answers.length);
  const votes: MajorityVote[] = [];
  for (let g = 0; g < answers.length; g += groupSize) {
    const group = answers.slice(g, g + groupSize);
    const m = majorityVote(group, opts.tie ?? "first");
    const v = m.label !== null && m.share < (opts.minShare ?? 0) ? { ...m, label: null, lowShare: true } : m;
    votes.push(v);
    if (v.label === null) continue;
    group.forEach((a, j) => (rewards[g + j] = normalizeVoteAnswer(a) === v.label ? 1 : 0));
  }
  return { rewards, votes };
}
