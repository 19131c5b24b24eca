/**
 * LUFFY — off-policy guidance (Yan et al. 2025, arXiv:2504.14945): expert demonstrations join each
 * group as extra sequences (rewarded by the verifier), and the mixed-policy loss (policy shaping
 * with γ) replaces the policy loss. Options: `methods.expert` with `mode: luffy`.
 * Transforms the reward stage (extra sequences) and the optimize stage (loss).
 */
import { makeMixedPolicyLoss } from "../algorithms/index.ts";
import type { RunConfig } from "../config/schema.ts";
import type { Sequence } from "../core/sequence.ts";
import type { BuiltinMethodOptions } from "./config.ts";
import { CapturedMetrics } from "./capture.ts";
import { defineMethod } from "./define.ts";
import type { Example } from "../core/example.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { demonstration } from "./sft.ts";

/*
 * Expert trajectories for off-policy mixing (LUFFY, CHORD): demonstration Sequences marked as
 * expert tokens (weights 1) with the bookkeeping the losses in src/algorithms/guidance.ts read.
 */
/**
 * An expert trajectory for LUFFY's mixed group: the demonstration's response, mask 1 and
 * weights 1 on every response token (the mixed-policy loss treats weights > 0 as off-policy),
 * oldLogprobs 0 (LUFFY takes the expert's probability as 1; the shaped term does not read them),
 * groupId = the on-policy group it joins.
 */
export function expertSequence(example: Example, encodePrompt: (e: Example) => Int32Array, tokenizer: Tokenizer, groupId: number, target?: string): Sequence {
  const d = demonstration(example, encodePrompt, tokenizer, target);
  const n = d.response.length;
  return { ...d, groupId, mask: new Float32Array(n).fill(1), weights: new Float32Array(n).fill(1), oldLogprobs: new Float32Array(n) };
}

type ExpertOptions = BuiltinMethodOptions["expert"];

export const luffy = defineMethod<ExpertOptions>({
  name: "luffy",
  configPath: "methods.expert",
  options: (cfg: RunConfig) => (cfg.methods?.expert?.mode === "luffy" ? cfg.methods.expert : undefined),
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
