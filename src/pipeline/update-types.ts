/**
 * What the update sequence (./update.ts) and its stages read of their caller. A run's RunContext,
 * RlState and RlStepHooks are one of each; serve's capture training (src/serve/train.ts) builds
 * its own from the served engine and its options.
 */
import type { Engine, LossReport, OptimStep } from "../core/engine.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Rng } from "../util/rng.ts";
import type { RewardStageResult, RlStepHooks } from "./hooks.ts";
import type { RlState } from "./state.ts";

/** The engine that trains and scores, and the padding id its batches use. */
export interface UpdateContext {
  engine: Engine;
  tokenizer: Pick<Tokenizer, "padId">;
  /**
   * The run's config: only `rl.maxNewTokens` is read (DAPO overlong's default maximum length).
   * Absent (serve), `algorithm.overlong` must give its `maxLength`.
   */
  cfg?: { rl?: { maxNewTokens: number } };
}

/** The state the update reads and advances: the KL/entropy controllers (and their recorded updates) and the policy version. */
export type UpdateState = Pick<RlState, "step" | "policyVersion" | "kl" | "entropy" | "klUpdates" | "entropyUpdates">;

/** Method transforms of the update's stages (RlStepHooks is one, over a StepBatch). */
export interface UpdateHooks<B> {
  /** After verification, before the KL penalty and advantages: reward transforms, extra sequences. */
  rewards?(s: B): Promise<RewardStageResult | undefined> | RewardStageResult | undefined;
  /** After advantages ([on-policy rollouts, then extras]): reshape them (ETTRL's EAR). */
  advantages?(adv: Float32Array, s: B): Float32Array;
  /** The loss of one optimizer update, from the configured policy loss. */
  loss?: RlStepHooks["loss"];
}

/** How the optimize stage cuts and steps the batch (a run: from `rl:`; serve: from its options). */
export interface UpdatePlan {
  /** PPO epochs over the batch. */
  epochs: number;
  /** Optimizer updates per epoch. */
  miniBatches: number;
  /** Most sequences per engine.forwardBackward call (default: the whole mini-batch). */
  microBatchSize?: number | undefined;
  /** Shuffles the sequences before each epoch when epochs > 1 or miniBatches > 1. */
  shuffle?: Rng;
  /** Normalising length L of the loss (rl.maxNewTokens; serve: the longest response). */
  maxLength: number;
  /** Optimizer settings (the learning rate already scheduled). */
  optim: OptimStep;
  /** Extra passes accumulated into each update (CHORD's SFT term). */
  extraBackward?: () => Promise<LossReport[]>;
}
