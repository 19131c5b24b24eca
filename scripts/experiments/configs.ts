/**
 * The base run config of the rollout experiments: task `maximum` (largest of `difficulty` digits,
 * one-token answers), no SFT, a randomly initialised 64-wide 2-layer model on the embedded engine,
 * GRPO advantages with PPO-clip and no KL, 16 prompts × 8 responses per train batch, lr 3e-3,
 * greedy held-out evaluation on 256 prompts. `rl.steps` is a cap; runs stop at a token budget.
 */
import type { RunConfigInput } from "../../src/config/schema.ts";

export function maximumBase(seed: number, difficulty = 5): RunConfigInput {
  return {
    seed,
    model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 24 } },
    tokenizer: { type: "char", alphabet: "0123456789,>" },
    data: { task: "maximum", difficulty, trainSize: 4000, testSize: 256 },
    rl: { steps: 10000, promptsPerStep: 16, groupSize: 8, maxNewTokens: 1, lr: 3e-3, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 1 },
  };
}

/** The same with extra rl fields. */
export function withRl(cfg: RunConfigInput, rl: Record<string, unknown>): RunConfigInput {
  return { ...cfg, rl: { ...cfg.rl!, ...rl } as RunConfigInput["rl"] };
}
