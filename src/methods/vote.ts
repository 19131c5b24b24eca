/**
 * Majority votes of a step's groups (TTRL, arXiv:2504.16084), shared by the TTRL and EVOL-RL
 * methods. The vote reads only the responses: the verifier is used as an answer extractor
 * (Verdict.extracted, computed from the response alone); its `correct` — which needs the label —
 * feeds only the evaluation metrics `ttrl/label_acc` (pseudo-label accuracy = maj@k on the
 * training prompts) and `ttrl/reward_acc`.
 */
import type { RewardStage } from "../pipeline/hooks.ts";
import { ttrlRewards, type MajorityVote, type TieRule } from "./majority.ts";

/** One group's vote: the vote and the indices (into the step's rollouts) of its members. */
export interface GroupVote {
  v: MajorityVote;
  idx: number[];
}

/**
 * Vote in each group (by prompt; sizes may differ, e.g. tree rollouts).
 * @returns TTRL's rewards [R] (1 for answers equal to the group's pseudo-label, else 0), the votes
 *          and the ttrl/* metrics.
 */
export function groupVotes(s: RewardStage, o: { tie: TieRule; minShare: number }): { rewards: Float32Array; votes: GroupVote[]; metrics: Record<string, number> } {
  const answers = s.verdicts.map((v) => v.extracted);
  const groups = new Map<number, number[]>();
  s.rollouts.forEach((r, i) => groups.set(r.promptIndex, [...(groups.get(r.promptIndex) ?? []), i]));
  const rewards = new Float32Array(answers.length);
  const votes: GroupVote[] = [];
  for (const idx of groups.values()) {
    const t = ttrlRewards(idx.map((i) => answers[i]!), idx.length, o);
    idx.forEach((i, j) => (rewards[i] = t.rewards[j]!));
    votes.push({ v: t.votes[0]!, idx });
  }
  // Evaluation only: labels never reach the rewards above.
  const labelled = votes.filter(({ v }) => v.label !== null);
  let labelAcc = 0;
  for (const { v, idx } of labelled) if (s.verdicts[idx[v.index]!]!.correct) labelAcc++;
  // maj@k counts every group's majority, including those the minShare filter left unlabelled.
  let majRight = 0;
  for (const { v, idx } of votes) if ((v.label !== null || v.lowShare) && s.verdicts[idx[v.index]!]!.correct) majRight++;
  let agree = 0;
  rewards.forEach((r, i) => ((r > 0) === s.verdicts[i]!.correct ? agree++ : 0));
  const G = Math.max(1, votes.length);
  const metrics: Record<string, number> = {
    "ttrl/label_acc": labelled.length ? labelAcc / labelled.length : 0,
    "ttrl/maj_at_k": majRight / G,
    "ttrl/reward_acc": agree / Math.max(1, rewards.length),
    "ttrl/no_label_frac": 1 - labelled.length / G,
    "ttrl/low_share_frac": votes.filter(({ v }) => v.lowShare).length / G,
    "ttrl/tie_frac": votes.filter(({ v }) => v.tied).length / G,
    "ttrl/vote_share": votes.reduce((a, { v }) => a + v.share, 0) / G,
    "ttrl/unparsable_frac": votes.reduce((a, { v }) => a + v.unparsable, 0) / Math.max(1, answers.length),
  };
  return { rewards, votes, metrics };
}
