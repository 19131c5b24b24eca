/**
 * Config blocks of the data-selection side of the rollout stage (fields of `rl` in the run
 * config; src/config/schema.ts spreads `rolloutSelectionFields` into its rl schema). Every block
 * is optional; a block that is present is on unless it says `enabled: false`. Errors name the
 * field, e.g. `config error at rl.difficultyFilter.high: need low ≤ high, got 0.1`.
 */
import { z } from "zod";

const posInt = z.number().int().positive();
const unit = z.number().min(0).max(1);

/** rl.dynamicSampling — DAPO dynamic sampling with resampling (arXiv:2503.14476). */
export const dynamicSamplingSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** What must differ within a group for it to be kept: accuracy (verdict.correct, DAPO's default) or the verifier reward. */
  metric: z.enum(["accuracy", "reward"]).default("accuracy"),
  /** Most generation batches (of promptsPerStep prompts each) per step; 1 = drop without resampling. */
  maxGenBatches: posInt.default(10),
});

/** rl.difficultyFilter — balanced online difficulty filtering (arXiv:2504.03380): keep groups whose pass rate is in the band. */
export const difficultyFilterSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    low: unit.default(0.2),
    high: unit.default(0.8),
    /** true: the open band (low, high); false: the closed band [low, high]. */
    open: z.boolean().default(false),
    maxGenBatches: posInt.default(10),
  })
  .refine((f) => f.low <= f.high, { message: "need low ≤ high", path: ["high"] });

/** rl.curriculum — raise/lower the task difficulty from the rolling training accuracy. */
export const curriculumSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** First difficulty (default: min). */
    start: z.number().int().optional(),
    /** Bounds (default: the task's range, or the difficulties present in a dataset). */
    min: z.number().int().optional(),
    max: z.number().int().optional(),
    raiseAbove: unit.default(0.8),
    lowerBelow: unit.default(0.2),
    /** RL steps of accuracy in the rolling mean. */
    window: posInt.default(4),
    step: posInt.default(1),
  })
  .refine((c) => c.lowerBelow < c.raiseAbove, { message: "need lowerBelow < raiseAbove", path: ["lowerBelow"] })
  .refine((c) => c.min === undefined || c.max === undefined || c.min <= c.max, { message: "need min ≤ max", path: ["max"] });

/** rl.domainSampling — RuleReasoner's domain-aware dynamic sampling (arXiv:2506.08672) over Example.task. */
export const domainSamplingSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Per-response number the domain's EMA tracks. */
  metric: z.enum(["accuracy", "reward"]).default("reward"),
  /** EMA weight α of the newest step, in (0, 1]. */
  smoothing: z.number().gt(0).max(1).default(0.3),
  /** Least sampling probability of any domain (≤ 1 / number of domains). */
  floor: z.number().min(0).lt(1).default(0.05),
});

/** The fields spread into the rl schema. */
export const rolloutSelectionFields = {
  dynamicSampling: dynamicSamplingSchema.optional(),
  difficultyFilter: difficultyFilterSchema.optional(),
  curriculum: curriculumSchema.optional(),
  domainSampling: domainSamplingSchema.optional(),
  /** Overlong filtering: mask responses cut off at maxNewTokens (stop reason max_tokens) out of the loss. */
  maskTruncated: z.boolean().optional(),
};

/** The rl block's selection fields, as the config loader outputs them. */
export type RolloutSelectionConfig = Partial<{ [K in keyof typeof rolloutSelectionFields]: z.output<(typeof rolloutSelectionFields)[K]> }>;
export type DynamicSamplingConfig = z.output<typeof dynamicSamplingSchema>;
export type DifficultyFilterConfig = z.output<typeof difficultyFilterSchema>;
export type CurriculumConfig = z.output<typeof curriculumSchema>;
export type DomainSamplingConfig = z.output<typeof domainSamplingSchema>;
