/** Options of TTRL, `methods.ttrl` (zod only: config/ composes it; the method is in ./ttrl.ts). */
import { z } from "zod";

/** TTRL: reward agreement with the group's majority answer instead of the verifier's label. */
export const ttrlOptionsSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Responses per group that are trained on (the first trainOn); all rl.groupSize of them vote. Default: all. */
    trainOn: z.number().int().min(2).optional(),
    /** Tie for the most votes: "first" (earliest answer wins, as maj@k) or "none" (no pseudo-label, rewards 0). */
    tie: z.enum(["first", "none"]).default("first"),
    /** Confidence filter: groups whose majority holds less than this share of the votes get no pseudo-label (reward 0, no gradient). 0 = plain TTRL. */
    minShare: z.number().min(0).max(1).default(0),
  });
