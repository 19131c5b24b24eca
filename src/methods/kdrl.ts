/**
 * KDRL — knowledge distillation + RL in one objective (arXiv:2506.02208): the policy loss plus
 * coef · KL(student ‖ teacher) on the student's own samples; the teacher checkpoint sits in the
 * reference-model slot. Options: `methods.kd`. Transforms the reward stage (teacher log-probs of
 * the sampled tokens) and the optimize stage (adds the KD term).
 */
import { composeLosses, makeKdLoss } from "../algorithms/index.ts";
import type { RunConfig } from "../config/schema.ts";
import { packSequences } from "../core/sequence.ts";
import type { BuiltinMethodOptions } from "./config.ts";
import { CapturedMetrics } from "./capture.ts";
import { defineMethod } from "./define.ts";

type KdOptions = BuiltinMethodOptions["kd"];

export const kdrl = defineMethod<KdOptions>({
  name: "kdrl",
  configPath: "methods.kd",
  options: (cfg: RunConfig) => cfg.methods?.kd,
  needs: { referenceSlot: true },
  stages: ["reward", "optimize", "metrics"],
  order: 50,
  validate(cfg) {
    const kl = cfg.algorithm?.kl;
    if (kl && (kl.coef > 0 || kl.adaptive)) throw new Error("config error at rl.algorithm.kl.coef: methods.kd puts the teacher in the reference slot, so the KL-to-reference penalty must be off; set rl.algorithm.kl.coef to 0 (e.g. {preset: grpo, kl: {coef: 0}})");
    if ((cfg.rl?.referenceResetEvery ?? 0) > 0) throw new Error("config error at rl.referenceResetEvery: methods.kd keeps the teacher in the reference slot; set it to 0");
  },
  build(ctx, kd) {
    const captured = new CapturedMetrics(/^kd\//);
    // The teacher goes into the reference slot before the first step that needs it (also after a resume).
    let teacherInSlot = false;
    return {
      async rewards(s) {
        if (!teacherInSlot) {
          await ctx.engine.setReference({ dir: kd.teacher });
          teacherInSlot = true;
        }
        // Teacher log-probs of the student's own tokens.
        const batch = packSequences(s.seqs, ctx.tokenizer.padId);
        const t = await ctx.engine.score(batch, { model: "reference" });
        s.seqs.forEach((q, i) => (q.refLogprobs = t.logprobs.slice(i * batch.seqLen + q.prompt.length, i * batch.seqLen + q.prompt.length + q.response.length)));
        return undefined;
      },
      loss: (alg, counts, _state, base) => captured.wrap(composeLosses([{ fn: base }, { fn: makeKdLoss(counts, { coef: kd.coef, estimator: kd.estimator, aggregation: alg.aggregation }) }])),
      stepMetrics: () => captured.take(),
    };
  },
});
