/** Options of ETTRL's EAR, `methods.ear` (zod only: config/ composes it; the method is in ./ear.ts). */
import { z } from "zod";

/** ETTRL entropy-based advantage reshaping, rlvr's stand-in (the paper's formula was not available): A' = A · clamp((H/H̄_group)^alpha, min, max). */
export const earOptionsSchema = z
  .strictObject({
    alpha: z.number().min(0).default(1),
    min: z.number().gt(0).default(0.5),
    max: z.number().gt(0).default(2),
  })
  .refine((e) => e.min <= e.max, { message: "need min <= max", path: ["max"] });
