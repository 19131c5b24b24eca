/**
 * Absolute-Zero-style self-play (arXiv:2505.03335): one policy proposes checkable tasks and solves
 * them; `seedSteps` format-only SFT steps at init. Options: `labelfree.selfPlay`. Replaces the
 * whole RL step (and so excludes the other label-free methods).
 */
import type { RunConfig } from "../config/schema.ts";
import { selfPlayHooks } from "../labelfree/selfplay.ts";
import type { SelfPlayConfig } from "../labelfree/selfplay-config.ts";
import { defineMethod } from "./define.ts";

export const selfPlay = defineMethod<SelfPlayConfig>({
  name: "selfplay",
  configPath: "labelfree.selfPlay",
  options: (cfg: RunConfig) => (cfg.labelfree?.selfPlay?.enabled ? cfg.labelfree.selfPlay : undefined),
  needs: { groups: true, sequenceAdvantages: true, synchronous: true },
  stages: ["init", "step"],
  order: 20,
  build: (ctx, sp) => selfPlayHooks(ctx, sp),
});
