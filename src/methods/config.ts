/**
 * The config blocks that enable the built-in methods, composed from each method's options schema
 * (`<method>-options.ts` beside `<method>.ts`; zod only, so config/ runs none of the methods' code):
 *   - `guided:`    RAFT (raft), ReLIFT (relift), LUFFY/CHORD expert mixing (expert), KDRL (kd);
 *   - `labelfree:` TTRL (ttrl), ETTRL's EAR (ear), EVOL-RL (evol), self-play (selfPlay).
 * User methods are enabled under `methods:` (src/methods/define.ts). See docs/methods.md.
 */
import { z } from "zod";
import { earOptionsSchema } from "./ear-options.ts";
import { evolOptionsSchema } from "./evol-options.ts";
import { expertOptionsSchema } from "./expert-options.ts";
import { kdOptionsSchema } from "./kdrl-options.ts";
import { raftOptionsSchema } from "./raft-options.ts";
import { reliftOptionsSchema } from "./relift-options.ts";
import { selfPlayConfigSchema } from "./selfplay-options.ts";
import { ttrlOptionsSchema } from "./ttrl-options.ts";

/** The `guided` block of a run config. */
export const guidedConfigSchema = z
  .strictObject({
    raft: raftOptionsSchema.optional(),
    relift: reliftOptionsSchema.optional(),
    expert: expertOptionsSchema.optional(),
    kd: kdOptionsSchema.optional(),
  })
  .refine((g) => !(g.raft && (g.expert || g.kd)), { message: "guided.raft trains with its own loss (SFT on the kept responses); it cannot be combined with guided.expert or guided.kd", path: ["raft"] })
  .refine((g) => !(g.kd && g.expert?.mode === "luffy"), { message: "guided.kd scores on-policy samples with the teacher; it cannot be combined with LUFFY's expert sequences", path: ["kd"] });

export type GuidedConfig = z.output<typeof guidedConfigSchema>;

/** The `labelfree` block of a run config. */
export const labelFreeConfigSchema = z.strictObject({
  ttrl: ttrlOptionsSchema.optional(),
  ear: earOptionsSchema.optional(),
  evol: evolOptionsSchema.optional(),
  selfPlay: selfPlayConfigSchema.optional(),
});

export type LabelFreeConfig = z.output<typeof labelFreeConfigSchema>;
