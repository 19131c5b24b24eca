/** Options of KDRL, `methods.kd` (zod only: config/ composes it; the method is in ./kdrl.ts). */
import { z } from "zod";

/** KDRL: + coef · reverse KL(student ‖ teacher) on the student's samples; the teacher sits in the reference slot. */
export const kdOptionsSchema = z
  .strictObject({
    teacher: z.string(),
    coef: z.number().min(0).default(0.1),
    estimator: z.enum(["k1", "k2", "k3", "k3+"]).default("k2"),
  });
