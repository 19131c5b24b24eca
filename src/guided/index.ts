/**
 * Guided RL (learning beyond the model's reach): SFT utilities and RAFT, ReLIFT, LUFFY/CHORD
 * expert mixing, KDRL. Configured by the run config's `guided` block; see docs/methods.md.
 */
import type { RunConfig } from "../config/schema.ts";
import { buildLabelFreeHooks } from "../labelfree/hooks.ts";
import type { RunContext } from "../trainer/context.ts";
import { mergeHooks, type RlStageHooks } from "../trainer/hooks.ts";
import { buildGuidedHooks } from "./hooks.ts";

export * from "./config.ts";
export * from "./sft.ts";
export * from "./raft.ts";
export * from "./relift.ts";
export * from "./expert.ts";
export * from "./schedule.ts";
export { buildGuidedHooks } from "./hooks.ts";

/** The RL-stage hooks of every guided and label-free method a run config enables ({} when none). */
export function buildMethodHooks(ctx: RunContext, cfg: RunConfig): RlStageHooks {
  return mergeHooks(buildGuidedHooks(ctx, cfg.guided), buildLabelFreeHooks(ctx, cfg.labelfree));
}
