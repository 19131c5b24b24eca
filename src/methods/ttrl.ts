/**
 * TTRL — test-time RL by majority vote (Zuo et al. 2025, arXiv:2504.16084): each group's majority
 * answer is its pseudo-label; a response's reward is 1 when its answer equals it. Options:
 * `methods.ttrl` (tie rule, `minShare` confidence filter, `trainOn` subset of the voters).
 * Transforms the reward stage; the KL-in-reward penalty is applied after it (reference stage).
 */
import type { RunConfig } from "../config/schema.ts";
import type { BuiltinMethodOptions } from "./config.ts";
import { groupVotes } from "./vote.ts";
import { defineMethod } from "./define.ts";

type TtrlOptions = BuiltinMethodOptions["ttrl"];

export const ttrl = defineMethod<TtrlOptions>({
  name: "ttrl",
  configPath: "methods.ttrl",
  options: (cfg: RunConfig) => (cfg.methods?.ttrl?.enabled && !cfg.methods.selfPlay?.enabled ? cfg.methods.ttrl : undefined),
  needs: { groups: true },
  stages: ["reward"],
  order: 10,
  validate(cfg, o) {
    const G = cfg.rl?.groupSize ?? 0;
    if (o.trainOn !== undefined && o.trainOn > G) throw new Error(`config error at methods.ttrl.trainOn: ${o.trainOn} exceeds rl.groupSize ${G} (the number of votes); lower it or raise rl.groupSize`);
    if (cfg.methods?.evol && (o.minShare ?? 0) > 0) throw new Error("config error at methods.ttrl.minShare: EVOL-RL needs every group's majority as its anchor; set minShare to 0 or drop methods.evol");
  },
  build: (_ctx, o) => ({
    rewards(s) {
      const { rewards, votes, metrics } = groupVotes(s, { tie: o.tie ?? "first", minShare: o.minShare ?? 0 });
      // Train on the first trainOn responses of each group; all of them voted (and serve as the baseline).
      if (o.trainOn !== undefined) for (const { idx } of votes) idx.forEach((i, j) => j >= o.trainOn! && (s.seqs[i]!.mask = new Float32Array(s.seqs[i]!.response.length)));
      return { rewards, metrics };
    },
  }),
});
