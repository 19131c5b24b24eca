/** Options of RAFT, `methods.raft` (zod only: config/ composes it; the method is in ./raft.ts). */
import { z } from "zod";

/** RAFT: each RL step keeps the best of its rl.groupSize responses per prompt and trains on them with the SFT loss (same samples as GRPO). */
export const raftOptionsSchema = z
  .strictObject({
    keep: z.enum(["best", "threshold"]).default("best"),
    threshold: z.number().default(1),
    perPrompt: z.number().int().min(1).default(1),
  });
