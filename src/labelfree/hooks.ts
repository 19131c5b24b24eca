/**
 * The label-free methods as RL-stage hooks (src/trainer/hooks.ts), built from the `labelfree`
 * config block. The reward path reads only the responses: the verifier is used as an answer
 * extractor (Verdict.extracted, computed from the response alone), and its `correct` — which
 * needs the label — feeds only the evaluation metrics `ttrl/label_acc` (pseudo-label accuracy =
 * maj@k on the training prompts) and `ttrl/reward_acc`.
 */
import { normalizeVoteAnswer } from "../eval/majority.ts";
import type { RunContext } from "../trainer/context.ts";
import type { RewardStageResult, RlStageHooks } from "../trainer/hooks.ts";
import type { LabelFreeConfig } from "./config.ts";
import { entropyAdvantageReshape, responseEntropy } from "./ear.ts";
import { ttrlRewards, type MajorityVote } from "./majority.ts";
import { evolNovelty, evolRewards } from "./novelty.ts";
import { selfPlayHooks } from "./selfplay.ts";

/** Hooks for the configured label-free methods (none configured → {}). */
export function buildLabelFreeHooks(ctx: RunContext, lf: LabelFreeConfig | undefined): RlStageHooks {
  if (!lf) return {};
  if (lf.selfPlay?.enabled) return selfPlayHooks(ctx, lf.selfPlay);
  const hooks: RlStageHooks = {};
  const G = ctx.cfg.rl!.groupSize;
  const ttrl = lf.ttrl?.enabled ? lf.ttrl : undefined;
  if (ttrl?.trainOn !== undefined && ttrl.trainOn > G) throw new Error(`config error at labelfree.ttrl.trainOn: ${ttrl.trainOn} exceeds rl.groupSize ${G} (the number of votes); lower it or raise rl.groupSize`);
  if (lf.evol && (ttrl?.minShare ?? 0) > 0) throw new Error("config error at labelfree.ttrl.minShare: EVOL-RL needs every group's majority as its anchor; set minShare to 0 or drop labelfree.evol");
  if (ttrl || lf.evol) {
    hooks.rewards = (s): RewardStageResult => {
      const answers = s.verdicts.map((v) => v.extracted);
      // Groups by prompt (sizes may differ, e.g. tree rollouts); each votes on its own.
      const groups = new Map<number, number[]>();
      s.rollouts.forEach((o, i) => groups.set(o.promptIndex, [...(groups.get(o.promptIndex) ?? []), i]));
      const rewards = new Float32Array(answers.length);
      const votes: { v: MajorityVote; idx: number[] }[] = [];
      for (const idx of groups.values()) {
        const t = ttrlRewards(idx.map((i) => answers[i]!), idx.length, { tie: ttrl?.tie ?? "first", minShare: ttrl?.minShare ?? 0 });
        idx.forEach((i, j) => (rewards[i] = t.rewards[j]!));
        votes.push({ v: t.votes[0]!, idx });
      }
      let out = rewards;
      if (lf.evol) {
        out = new Float32Array(rewards.length);
        for (const { idx } of votes) {
          const inMaj = idx.map((i) => (normalizeVoteAnswer(answers[i]) === null ? null : rewards[i]! > 0 ? 1 : 0) as 0 | 1 | null);
          const nov = evolNovelty(idx.map((i) => s.texts[i]!), inMaj, lf.evol.ngram, lf.evol.meanWeight);
          const r = evolRewards(inMaj, nov, lf.evol.weight);
          idx.forEach((i, j) => (out[i] = r[j]!));
        }
      }
      // Train on the first trainOn responses of each group; all of them voted (and serve as the baseline).
      if (ttrl?.trainOn !== undefined) {
        for (const { idx } of votes) idx.forEach((i, j) => j >= ttrl.trainOn! && (s.seqs[i]!.mask = new Float32Array(s.seqs[i]!.response.length)));
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
      const metrics: Record<string, number> = {
        "ttrl/label_acc": labelled.length ? labelAcc / labelled.length : 0,
        "ttrl/maj_at_k": majRight / Math.max(1, votes.length),
        "ttrl/reward_acc": agree / Math.max(1, rewards.length),
        "ttrl/no_label_frac": 1 - labelled.length / Math.max(1, votes.length),
        "ttrl/low_share_frac": votes.filter(({ v }) => v.lowShare).length / Math.max(1, votes.length),
        "ttrl/tie_frac": votes.filter(({ v }) => v.tied).length / Math.max(1, votes.length),
        "ttrl/vote_share": votes.reduce((a, { v }) => a + v.share, 0) / Math.max(1, votes.length),
        "ttrl/unparsable_frac": votes.reduce((a, { v }) => a + v.unparsable, 0) / Math.max(1, answers.length),
      };
      if (lf.evol) metrics["evol/reward_mean"] = out.reduce((a, b) => a + b, 0) / Math.max(1, out.length);
      return { rewards: out, metrics };
    };
  }
  if (lf.ear) {
    const ear = lf.ear;
    hooks.advantages = (adv, s) =>
      entropyAdvantageReshape(adv, s.rollouts.map((o) => responseEntropy(o.logprobs)), s.rollouts.map((o) => o.promptIndex), ear);
  }
  return hooks;
}
