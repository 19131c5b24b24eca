/** Options of self-play, `methods.selfPlay` (zod only: config/ composes it; the method is in ./selfplay.ts). */
import { z } from "zod";

/** Absolute-Zero-style self-play: the model proposes checkable tasks and solves them (the collect stage's source). */
export const selfPlayConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Task kind the proposer writes: "maximum" (a digit list; the runner computes its maximum) or "arithmetic" (an expression; the runner evaluates it). */
  kind: z.enum(["maximum", "arithmetic"]).default("maximum"),
  /** The proposer's prompt (its characters must be in the tokenizer's alphabet). */
  proposePrompt: z.string().min(1).default("?"),
  /** Proposals sampled per step (one proposer group). */
  proposals: z.number().int().min(2).default(16),
  /** Solver samples per valid proposal (its group; estimates the solve rate). */
  solverGroup: z.number().int().min(2).default(8),
  /** Most proposals solved (and trained) per step. */
  maxTasks: z.number().int().min(1).default(16),
  /** Proposer tokens (the solver uses rl.maxNewTokens). */
  proposeMaxTokens: z.number().int().min(1).default(12),
  /** Reward of an invalid proposal (learnability of a valid one is in [0, 1]). */
  invalidReward: z.number().max(0).default(-1),
  /** Train the proposer role too (false = fixed proposer: only the solver learns). */
  trainProposer: z.boolean().default(true),
  /** SFT steps on random well-formed proposals (format only, no answers) before self-play: AZR's seed. */
  seedSteps: z.number().int().min(0).default(0),
  /** Shortest and longest seed/valid proposal, in items (digits for maximum, operands for arithmetic). */
  minItems: z.number().int().min(1).default(2),
  maxItems: z.number().int().min(1).default(6),
});

export type SelfPlayConfig = z.output<typeof selfPlayConfigSchema>;
