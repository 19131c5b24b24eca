/**
 * The context every stage of the RL step reads: the run's config, tokenizer, engine, sampler,
 * examples and verification. The trainer builds it from a config (src/trainer/context.ts
 * buildContext); tests and benchmarks complete a hand-built one with `contextWith`.
 */
import type { Engine, Sampler } from "../core/engine.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import type { RunConfig } from "../config/schema.ts";
import type { BatchInfo, ScoredBatch } from "../rewards/compile.ts";
import type { EnvSource } from "../rollout/collect.ts";

export interface RunContext {
  cfg: RunConfig;
  tokenizer: Tokenizer;
  engine: Engine;
  /** Where rollouts are sampled when not by `engine` (vLLM, an OpenAI-compatible server). */
  sampler?: Sampler;
  train: Example[];
  test: Example[];
  /** The env the run plays (config `env:`; docs/envs.md): its train/test examples are the env's slots. */
  env?: EnvSource;
  /**
   * Score one response with the reward block's primary verifier (hints, guided methods); never
   * throws for what a response contains. Synchronous: every built-in verifier but `code` (and an
   * async user function) answers synchronously; for those it throws an Error saying to use
   * `verifyAsync`.
   */
  verify: (response: string, example: Example) => Verdict;
  /** `verify` for any verifier, sync or async (held-out evaluation uses it). */
  verifyAsync: (response: string, example: Example) => Promise<Verdict>;
  /** Prompt token ids of an example (template applied, BOS prepended when the tokenizer has one). */
  encodePrompt: (example: Example) => Int32Array;
  /**
   * Score a batch of responses with the run's `reward:` block (src/rewards/compile.ts):
   * in-process, or in the verifier pool when rl.verifierPool.enabled (hard timeouts).
   * @param info token lengths, truncation, group ids and the step (shaping and group-aware
   *   components use them; without group ids, consecutive responses to one example form a group)
   * @returns one verdict per response — `reward` = the composed reward (NaN = skipped),
   *   `components` = each component's value by name — and event counts (reward/errors/<c>,
   *   reward/timeouts/<c>, reward/skipped, verifier/timeouts|crashes|errors with the pool).
   */
  verifyBatch: (responses: readonly string[], examples: readonly Example[], info?: BatchInfo) => Promise<ScoredBatch>;
  /** Release the engine and the verifier pool. */
  close: () => Promise<void>;
}

/**
 * Complete a hand-built context (tests, benchmarks) with in-process batch verification and a
 * close() that closes the engine.
 */
export function contextWith(parts: Omit<RunContext, "verifyBatch" | "verifyAsync" | "close">): RunContext {
  return {
    ...parts,
    verifyAsync: async (r, e) => parts.verify(r, e),
    verifyBatch: async (rs, exs) => ({ verdicts: rs.map((r, i) => parts.verify(r, exs[i]!)), events: {} }),
    close: () => parts.engine.close(),
  };
}
