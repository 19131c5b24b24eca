/** Options of ReLIFT, `methods.relift` (zod only: config/ composes it; the method is in ./relift.ts). */
import { z } from "zod";

/** ReLIFT: demonstrations for the hardest questions go to a buffer; SFT steps on it interleave with RL. */
export const reliftOptionsSchema = z
  .strictObject({
    /** A group is hardest when its accuracy is <= this (0 = every response wrong). */
    hardness: z.number().min(0).max(1).default(0),
    bufferSize: z.number().int().min(1).default(256),
    batchSize: z.number().int().min(1).default(16),
    /** Consider SFT after every `every`-th RL step (0/1 = every step). */
    every: z.number().int().min(0).default(0),
    maxSftSteps: z.number().int().min(1).default(1),
    lr: z.number().positive().default(1e-3),
    /** Demonstrations: the dataset's solution (else its answer), or a teacher's greedy answer that the verifier accepts. */
    source: z.enum(["solution", "teacher"]).default("solution"),
    /** Teacher checkpoint directory (source: teacher). */
    teacher: z.string().optional(),
    /**
     * Or a teacher behind an OpenAI-compatible server (`rlvr serve`, vLLM) that shares the
     * student's tokenizer: prompts go as token ids, greedy answers come back as token ids.
     */
    teacherEndpoint: z.strictObject({ baseURL: z.string().min(1), model: z.string().min(1), apiKey: z.string().optional() }).optional(),
  })
  .refine((r) => r.source !== "teacher" || r.teacher !== undefined || r.teacherEndpoint !== undefined, { message: "source: teacher needs methods.relift.teacher (a checkpoint directory) or methods.relift.teacherEndpoint ({baseURL, model})", path: ["teacher"] })
  .refine((r) => r.teacher === undefined || r.teacherEndpoint === undefined, { message: "set methods.relift.teacher or methods.relift.teacherEndpoint, not both", path: ["teacherEndpoint"] });
