/** Options of LUFFY's and CHORD's expert mixing, `methods.expert` (zod only: config/ composes it; the methods are ./luffy.ts and ./chord.ts). */
import { z } from "zod";

/** A coefficient schedule (CHORD's μ; ./schedule.ts). */
const schedule = z.strictObject({
  start: z.number().min(0).max(1),
  end: z.number().min(0).max(1).default(0),
  /** Steps from start to end (default: rl.steps). */
  steps: z.number().int().min(0).optional(),
  shape: z.enum(["linear", "cosine", "constant"]).default("linear"),
});

/** Off-policy expert mixing: LUFFY (experts join groups, shaped ratio) or CHORD (SFT term with weight μ and φ token weights). */
export const expertOptionsSchema = z
  .strictObject({
    mode: z.enum(["luffy", "chord"]),
    /** LUFFY: expert trajectories added to each group. */
    perGroup: z.number().int().min(1).default(1),
    /** LUFFY: only groups whose on-policy responses are all wrong get experts. */
    onlyFailed: z.boolean().default(false),
    /** LUFFY shaping f(p) = p/(p + gamma). */
    gamma: z.number().gt(0).default(0.1),
    /** CHORD: demonstrations per update. */
    batchSize: z.number().int().min(1).default(16),
    /** CHORD: L = (1 − μ)·L_RL + μ·L_SFT. */
    mu: schedule.prefault({ start: 0.5, end: 0 }),
    /** CHORD-φ token weights p(1 − p). */
    phi: z.boolean().default(true),
  });
