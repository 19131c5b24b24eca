/**
 * Config blocks of the sampling side of the rollout stage (fields of `rl` in the run config;
 * src/config/schema.ts spreads `rolloutStrategyFields` into its rl schema): `rl.tree` (entropy-
 * guided tree rollouts, ./tree.ts), `rl.hints` (GHPO guided hints, ./hints.ts) and `rl.agent`
 * (multi-turn tool use, ./agent.ts). A block that is present is on unless it says `enabled: false`.
 */
import { z } from "zod";

const posInt = z.number().int().positive();

/** rl.tree — entropy-fork tree rollouts (ETTRL arXiv:2508.11356; CURE arXiv:2508.11016). */
export const treeSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** First samples per prompt; the other groupSize − roots trajectories are forks. */
  roots: posInt.default(2),
  /** Most sampled tokens per prompt (roots + fork suffixes); default groupSize × maxNewTokens. */
  budget: posInt.optional(),
  /** Distinct fork positions per prompt (highest entropy first); default groupSize − roots. */
  forkPoints: posInt.optional(),
});

/** rl.hints — GHPO adaptive hints for zero-accuracy groups (arXiv:2507.10628). */
export const hintsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Hint lengths as fractions of the reference solution, tried in growing order. */
  fractions: z
    .array(z.number().gt(0).lt(1))
    .min(1)
    .default([0.25, 0.5, 0.75])
    .refine((f) => f.every((x, i) => i === 0 || x > f[i - 1]!), { message: "fractions must be strictly increasing" }),
});

/** rl.agent — multi-turn tool use (`<tool>input</tool>` calls, observations masked from the loss). */
export const agentSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Registered tool names the model may call (built in: calc, python, js). */
  tools: z.array(z.string()).min(1).default(["calc"]),
  /** Most tool calls per trajectory. */
  maxTurns: posInt.default(2),
  /** Most response tokens (sampled + observations); default rl.maxNewTokens. */
  maxTokens: posInt.optional(),
  /** Observation text around a tool's output; "{}" is replaced by it. */
  observation: z.string().includes("{}").default("<out>{}</out>"),
  /** Tool timeout (ms) for tools that set none. */
  toolTimeoutMs: posInt.default(10000),
});

/** Spread into the rl schema. */
export const rolloutStrategyFields = {
  tree: treeSchema.optional(),
  hints: hintsSchema.optional(),
  agent: agentSchema.optional(),
};

export type TreeConfig = z.output<typeof treeSchema>;
export type HintsConfig = z.output<typeof hintsSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
