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
      /** Confidence filter: groups whose majority holds less than this share of the votes get no pseudo-label (reward 0, no gradient). 0 = plain TTRL. */
      minShare: z.number().min(0).max(1).default(0),
    })
    .optional(),
  /** ETTRL entropy-based advantage reshaping, rlvr's stand-in (the paper's formula was not available): A' = A · clamp((H/H̄_group)^alpha, min, max). */
  ear: z
    .strictObject({
      alpha: z.number().min(0).default(1),
      min: z.number().gt(0).default(0.5),
      max: z.number().gt(0).default(2),
    })
    .refine((e) => e.min <= e.max, { message: "need min <= max", path: ["max"] })
    .optional(),
  /**
   * EVOL-RL: majority anchor + novelty (1 − (meanWeight·mean + (1 − meanWeight)·max) char-n-gram
   * Jaccard similarity to group mates), in non-overlapping bands. Pair with clip-higher and an entropy bonus.
   */
  evol: z
    .strictObject({
      ngram: z.number().int().min(1).default(3),
      /** Band width w: majority rewards in [1 − w, 1], other parsable answers in [−1, −1 + w]. */
      weight: z.number().min(0).max(1).default(0.5),
      /** Share of the mean (within the response's class) in the similarity; the rest is the max over the group (EVOL-RL: ½). */
      meanWeight: z.number().min(0).max(1).default(0.5),
    })
    .optional(),
  /** Absolute-Zero-style self-play: the model proposes checkable tasks and solves them (replaces the RL step). */
  selfPlay: selfPlayConfigSchema.optional(),
});

export type LabelFreeConfig = z.output<typeof labelFreeConfigSchema>;
