/** The `guided` block of a run config: RAFT, ReLIFT, LUFFY/CHORD expert mixing, KDRL. See docs/methods.md. */
import { z } from "zod";

const schedule = z.strictObject({
  start: z.number().min(0).max(1),
  end: z.number().min(0).max(1).default(0),
  /** Steps from start to end (default: rl.steps). */
  steps: z.number().int().min(0).optional(),
  shape: z.enum(["linear", "cosine", "constant"]).default("linear"),
});

export const guidedConfigSchema = z
  .strictObject({
    /** RAFT: each RL step keeps the best of its rl.groupSize responses per prompt and trains on them with the SFT loss (same samples as GRPO). */
    raft: z
      .strictObject({
        keep: z.enum(["best", "threshold"]).default("best"),
        threshold: z.number().default(1),
        perPrompt: z.number().int().min(1).default(1),
      })
      .optional(),
    /** ReLIFT: demonstrations for the hardest questions go to a buffer; SFT steps on it interleave with RL. */
    relift: z
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
      .refine((r) => r.source !== "teacher" || r.teacher !== undefined || r.teacherEndpoint !== undefined, { message: "source: teacher needs guided.relift.teacher (a checkpoint directory) or guided.relift.teacherEndpoint ({baseURL, model})", path: ["teacher"] })
      .refine((r) => r.teacher === undefined || r.teacherEndpoint === undefined, { message: "set guided.relift.teacher or guided.relift.teacherEndpoint, not both", path: ["teacherEndpoint"] })
      .optional(),
    /** Off-policy expert mixing: LUFFY (experts join groups, shaped ratio) or CHORD (SFT term with weight μ and φ token weights). */
    expert: z
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
      })
      .optional(),
    /** KDRL: + coef · reverse KL(student ‖ teacher) on the student's samples; the teacher sits in the reference slot. */
    kd: z
      .strictObject({
        teacher: z.string(),
        coef: z.number().min(0).default(0.1),
        estimator: z.enum(["k1", "k2", "k3", "k3+"]).default("k2"),
      })
      .optional(),
  })
  .refine((g) => !(g.raft && (g.expert || g.kd)), { message: "guided.raft trains with its own loss (SFT on the kept responses); it cannot be combined with guided.expert or guided.kd", path: ["raft"] })
  .refine((g) => !(g.kd && g.expert?.mode === "luffy"), { message: "guided.kd scores on-policy samples with the teacher; it cannot be combined with LUFFY's expert sequences", path: ["kd"] });

export type GuidedConfig = z.output<typeof guidedConfigSchema>;
