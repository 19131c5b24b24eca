/**
 * LUFFY — off-policy guidance (Yan et al. 2025, arXiv:2504.14945): expert demonstrations join each
 * group as extra sequences (rewarded by the verifier), and the mixed-policy loss (policy shaping
 * with γ) replaces the policy loss. Options: `guided.expert` with `mode: luffy`.
 * Transforms the reward stage (extra sequences) and the optimize stage (loss).
 */
import { makeMixedPolicyLoss } from "../algorithms/index.ts";
import type { RunConfig } from "../config/schema.ts";
import type { Sequence } from "../core/sequence.ts";
import type { GuidedConfig } from "../guided/config.ts";
import { expertSequence } from "../guided/expert.ts";
import { CapturedMetrics } from "./capture.ts";
import { defineMethod } from "./define.ts";

type ExpertOptions = NonNullable<GuidedConfig["expert"]>;

export const luffy = defineMethod<ExpertOptions>({
  name: "luffy",
  configPath: "guided.expert",
  options: (cfg: RunConfig) => (cfg.guided?.expert?.mode === "luffy" ? cfg.guided.expert : undefined),
  needs: { groups: true },
  stages: ["reward", "optimize", "metrics"],
  order: 40,
  build(ctx, e) {
    const captured = new CapturedMetrics(/^luffy\//);
    return {
      async rewards(s) {
        const seqs: Sequence[] = [];
        const rewards: number[] = [];
        const solved = s.examples.map(() => false);
        s.rollouts.forEach((o, i) => s.verdicts[i]!.correct && (solved[o.promptIndex] = true));
        for (const [p, ex] of s.examples.entries()) {
          if (e.onlyFailed && solved[p]) continue;
          const target = ex.solution ?? ex.answer;
          const reward = (await ctx.verify(target, ex)).reward;
          for (let k = 0; k < e.perGroup; k++) {
            seqs.push(expertSequence(ex, ctx.encodePrompt, ctx.tokenizer, p, target));
            rewards.push(reward);
          }
        }
        return { extra: { seqs, rewards }, metrics: { "luffy/expert_seqs": seqs.length } };
      },
      loss: (alg, counts, state) => captured.wrap(makeMixedPolicyLoss(alg, counts, state, e.gamma)),
      stepMetrics: () => captured.take(),
    };
  },
});
