/**
 * EVOL-RL — majority for selection, novelty for variation (arXiv:2509.15194): responses in their
 * group's majority get the higher reward band, each band ordered by the response's novelty
 * (char n-gram dissimilarity to its group). Options: `labelfree.evol`; the majority vote uses
 * `labelfree.ttrl`'s tie rule when TTRL is configured too. Runs after TTRL in the reward stage
 * and replaces its rewards.
 */
import type { RunConfig } from "../config/schema.ts";
import { normalizeVoteAnswer } from "../eval/majority.ts";
import type { LabelFreeConfig } from "../labelfree/config.ts";
import { evolNovelty, evolRewards } from "../labelfree/novelty.ts";
import { groupVotes } from "../labelfree/vote.ts";
import { defineMethod } from "./define.ts";

type EvolOptions = NonNullable<LabelFreeConfig["evol"]>;

export const evol = defineMethod<{ evol: EvolOptions; tie: "first" | "none" }>({
  name: "evol",
  configPath: "labelfree.evol",
  options: (cfg: RunConfig) => (cfg.labelfree?.evol && !cfg.labelfree.selfPlay?.enabled ? { evol: cfg.labelfree.evol, tie: cfg.labelfree.ttrl?.tie ?? "first" } : undefined),
  needs: { groups: true },
  stages: ["reward"],
  order: 20,
  build: (_ctx, o) => ({
    rewards(s) {
      const { rewards, votes, metrics } = groupVotes(s, { tie: o.tie, minShare: 0 });
      const answers = s.verdicts.map((v) => v.extracted);
      const out = new Float32Array(rewards.length);
      for (const { idx } of votes) {
        const inMaj = idx.map((i) => (normalizeVoteAnswer(answers[i]) === null ? null : rewards[i]! > 0 ? 1 : 0) as 0 | 1 | null);
        const nov = evolNovelty(idx.map((i) => s.texts[i]!), inMaj, o.evol.ngram, o.evol.meanWeight);
        const r = evolRewards(inMaj, nov, o.evol.weight);
        idx.forEach((i, j) => (out[i] = r[j]!));
      }
      metrics["evol/reward_mean"] = out.reduce((a, b) => a + b, 0) / Math.max(1, out.length);
      return { rewards: out, metrics };
    },
  }),
});
