/**
 * The `labelfree` block of a run config: TTRL, ETTRL's EAR, EVOL-RL and self-play. See
 * docs/methods.md for each method's source and formula.
 */
import { z } from "zod";
import { selfPlayConfigSchema } from "./selfplay-config.ts";

export const labelFreeConfigSchema = z.strictObject({
  /** TTRL: reward agreement with the group's majority answer instead of the verifier's label. */
  ttrl: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Responses per group that are trained on (the first trainOn); all rl.groupSize of them vote. Default: all. */
      trainOn: z.number().int().min(2).optional(),
      /** Tie for the most votes: "first" (earliest answer wins, as maj@k) or "none" (no pseudo-label, rewards 0). */
      tie: z.enum(["first", "none"]).default("first"),
    })
    .optional(),
  /** ETTRL entropy-based advantage reshaping: A' = A · clamp((H/H̄_group)^alpha, min, max). */
  ear: z
    .strictObject({
      alpha: z.number().min(0).default(1),
      min: z.number().gt(0).default(0.5),
      max: z.number().gt(0).default(2),
    })
    .refine((e) => e.min <= e.max, { message: "need min <= max", path: ["max"] })
    .optional(),
  /** EVOL-RL: majority anchor + novelty (1 − max char-n-gram Jaccard to group mates). Pair with clip-higher and an entropy bonus. */
  evol: z
    .strictObject({
      ngram: z.number().int().min(1).default(3),
      weight: z.number().min(0).max(1).default(0.5),
    })
    .optional(),
  /** Absolute-Zero-style self-play: the model proposes checkable tasks and solves them (replaces the RL step). */
  selfPlay: selfPlayConfigSchema.optional(),
});

export type LabelFreeConfig = z.output<typeof labelFreeConfigSchema>;
