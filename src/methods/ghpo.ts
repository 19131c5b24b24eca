/**
 * GHPO — guided hybrid policy optimisation (arXiv:2507.10628): a group whose responses all fail
 * is sampled again with a growing prefix of the reference solution as a hint (fractions from
 * `rl.hints.fractions`); hint tokens are masked out of the loss. Options: `rl.hints`.
 * Transforms the collect stage, per generation batch (src/rollout/hints.ts does the re-sampling).
 */
import type { RunConfig } from "../config/schema.ts";
import { applyHints } from "../rollout/hints.ts";
import type { HintsConfig } from "../rollout/strategy-config.ts";
import { hash32 } from "../util/rng.ts";
import { defineMethod } from "./define.ts";

export const ghpo = defineMethod<HintsConfig>({
  name: "ghpo",
  configPath: "rl.hints",
  options: (cfg: RunConfig) => (cfg.rl?.hints?.enabled ? cfg.rl.hints : undefined),
  needs: { groups: true },
  stages: ["collect"],
  order: 10,
  build: (ctx, hints) => ({
    async collect(ro, s) {
      const r = ctx.cfg.rl!;
      const t0 = performance.now();
      const h = await applyHints(ctx.engine, ctx.tokenizer, s.examples, s.prompts, ro.rollouts, ro.verdicts, ctx.verifyBatch, {
        temperature: r.temperature,
        topP: r.topP,
        topK: r.topK,
        seed: hash32(s.seed, 0x6817),
        stopTokens: [ctx.tokenizer.eosId],
        fractions: hints.fractions,
        groupSize: r.groupSize,
        maxNewTokens: r.maxNewTokens,
        maxSeqLen: ctx.engine.info().maxSeqLen,
      });
      const events = { ...ro.events };
      for (const [k, n] of Object.entries(h.events)) events[k] = (events[k] ?? 0) + n;
      return {
        ...ro,
        rollouts: h.trajectories,
        verdicts: h.verdicts,
        texts: h.trajectories.map((o) => ctx.tokenizer.decode(o.tokens)),
        events,
        sampledTokens: ro.sampledTokens + h.metrics["hints/sampled_tokens"],
        metrics: { ...ro.metrics, ...h.metrics },
        sampleSeconds: ro.sampleSeconds + (performance.now() - t0) / 1000,
      };
    },
  }),
});
