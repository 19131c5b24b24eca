/**
 * Environments: a rollout source beside tasks. A task is one prompt and a verifier of one reply;
 * an environment is a stateful episode the policy acts in over several turns. After the shape of
 * tinker-cookbook's `Env` (initial observation; `step(action)` → reward, done, next observation,
 * metrics) and its group builders (n environments per prompt, an optional reward over the group).
 *
 * Everything here is token-in/token-out: observations are token ids the rollout loop appends as
 * they are (loss mask 0), actions are the ids the policy sampled (loss mask 1); earlier turns are
 * never decoded and re-encoded. `messageEnv` (./message.ts) writes an env over chat messages and
 * renders them through the tokenizer's chat template.
 */
import type { Tokenizer } from "../tokenizers/types.ts";

/** Where the policy's turn ends: any of these ids (the action includes it), or `maxTokens` sampled ids. */
export interface StopCondition {
  /** Stop ids, e.g. [tokenizer.eosId]. Must be non-empty unless `maxTokens` bounds the turn. */
  stopTokens: number[];
  /** Most ids the policy may sample this turn (default: the rollout's remaining budget). */
  maxTokens?: number;
}

/** The first observation: the prompt ids (special tokens included) and how the first turn stops. */
export interface InitialObservation extends StopCondition {
  tokens: readonly number[];
}

/** What one `step` returns. */
export interface EnvStep {
  /** Reward for this step (summed over the episode; finite). */
  reward: number;
  /** The episode is over: no further turn is sampled. */
  done: boolean;
  /**
   * Why a done episode ended, when the env cut it at a limit of its own (e.g. the tool loop's
   * call limit) rather than finishing it: the trajectory's stopReason. Default "completed".
   */
  cut?: "max_turns" | "max_tokens";
  /** Ids appended after the action (loss mask 0) before the next turn; required when not done. */
  observation?: readonly number[];
  /** Stop condition of the next turn (default: the initial one). */
  stop?: StopCondition;
  /** Numbers logged as env/<key> (mean over the step's trajectories). */
  metrics?: Record<string, number>;
}

/**
 * One episode. `initialObservation` is called once, then `step` once per sampled turn until it
 * returns `done` (or the rollout's turn/token budget ends the episode; then `step` is not called
 * again and the episode's reward is what it earned so far).
 */
export interface Env {
  initialObservation(): InitialObservation | Promise<InitialObservation>;
  /**
   * @param action the ids the policy sampled this turn (ending with the stop id when it stopped)
   * @param info whether the turn was cut at its token cap instead of a stop id
   */
  step(action: readonly number[], info: { truncated: boolean }): EnvStep | Promise<EnvStep>;
}

/** A finished episode as the group reward sees it. */
export interface EnvEpisode {
  /** Sum of the step rewards. */
  reward: number;
  /** Steps taken (= sampled turns that reached `step`). */
  turns: number;
  /** The episode returned done (false: cut by the turn or token budget). */
  done: boolean;
  /** Response ids after the initial observation (actions and observations, in order). */
  tokens: readonly number[];
}

/** The envs of one group (one "prompt") and an optional reward over the finished group. */
export interface EnvGroup {
  /** The group's envs; all must start from the same initial observation (the group's prompt). */
  envs: Env[];
  /**
   * Rewards added to each episode's once every episode is finished (ranking, pairwise, self-play
   * rewards), [envs.length], finite.
   */
  groupReward?(episodes: readonly EnvEpisode[]): number[] | Promise<number[]>;
  /** A short text naming the group's problem for samples.jsonl (default: the env's name and index). */
  label?: string;
}

/** Where a group is built: the run seed, the group's index in its split, the group size, the run's tokenizer. */
export interface EnvGroupSpec {
  seed: number;
  /** The run's tokenizer: what observations are encoded with and actions decoded with. */
  tokenizer: Tokenizer;
  index: number;
  split: "train" | "test";
  groupSize: number;
}

/** A registered environment: a name and a builder of groups. */
export interface EnvDefinition {
  /** Registry name (what `env.name` in a config names). */
  name: string;
  /** One line: what the episode is, what earns reward. */
  description: string;
  /** The envs of group `spec.index` (deterministic in `spec`), `spec.groupSize` of them. */
  group(spec: EnvGroupSpec): EnvGroup | Promise<EnvGroup>;
  /** An episode counts as solved (logged as `correct`, held-out accuracy) when its reward reaches this. Default 1. */
  solvedAt?: number;
}
