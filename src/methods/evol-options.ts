/** Options of EVOL-RL, `methods.evol` (zod only: config/ composes it; the method is in ./evol.ts). */
import { z } from "zod";

/**
 * EVOL-RL: majority anchor + novelty (1 − (meanWeight·mean + (1 − meanWeight)·max) char-n-gram
 * Jaccard similarity to group mates), in non-overlapping bands. Pair with clip-higher and an entropy bonus.
 */
export const evolOptionsSchema = z
  .strictObject({
    ngram: z.number().int().min(1).default(3),
    /** Band width w: majority rewards in [1 − w, 1], other parsable answers in [−1, −1 + w]. */
    weight: z.number().min(0).max(1).default(0.5),
    /** Share of the mean (within the response's class) in the similarity; the rest is the max over the group (EVOL-RL: ½). */
    meanWeight: z.number().min(0).max(1).default(0.5),
  });
