/**
 * Capture mode: every completion the server returns for a request that names an episode
 * (header `x-rlvr-episode`, or `metadata.episode_id`) is recorded with its exact prompt and
 * response token ids, the sampler's log-probs and the policy version that sampled it. The
 * client scores an episode (`POST /v1/rlvr/episodes/{id}/reward`, or `episodes.reward(id, r)`);
 * scored episodes become RL batches (./train.ts). Episodes that share a group id (header
 * `x-rlvr-group` or `metadata.group_id`: e.g. attempts at the same task) form one GRPO group.
 */

/** One model call of an episode (one turn of a multi-turn agent). */
export interface Turn {
  /** The prompt ids exactly as the model saw them (chat template applied, BOS included). */
  promptTokens: number[];
  /** The response ids the model sampled (EOS included when it ended the turn). */
  tokens: number[];
  /** Sampler log-prob of each response token, nats, [tokens.length]. */
  logprobs: number[];
  /** Optimizer updates applied to the weights that sampled this turn (0 = as loaded). */
  policyVersion: number;
  finishReason: "stop" | "length";
}

/** A client's episode: its turns in order, its group and, once scored, its reward. */
export interface Episode {
  id: string;
  group: string;
  turns: Turn[];
  reward: number | null;
}

export class EpisodeStore {
  private readonly byId = new Map<string, Episode>();

  /** Append a turn to episode `id` (created on first use, in group `group` or its own). */
  record(id: string, turn: Turn, group?: string): void {
    let ep = this.byId.get(id);
    if (!ep) {
      ep = { id, group: group ?? id, turns: [], reward: null };
      this.byId.set(id, ep);
    }
    ep.turns.push(turn);
  }

  /**
   * Score episode `id` with reward `r` (a finite number).
   * @throws Error when the episode is unknown (no completion was recorded under it) or r is not finite.
   */
  reward(id: string, r: number): void {
    const ep = this.byId.get(id);
    if (!ep) throw new Error(`no episode "${id}": send its completions with the x-rlvr-episode header (or metadata.episode_id) first`);
    if (typeof r !== "number" || !Number.isFinite(r)) throw new Error(`reward of episode "${id}" must be a finite number, got ${JSON.stringify(r)}`);
    ep.reward = r;
  }

  /** The episode `id`, or undefined. */
  get(id: string): Episode | undefined {
    return this.byId.get(id);
  }

  /** Scored episodes, in the order they were first recorded. */
  scored(): Episode[] {
    return [...this.byId.values()].filter((e) => e.reward !== null);
  }

  /** Remove and return the scored episodes (the next RL batch); unscored ones stay. */
  takeScored(): Episode[] {
    const out = this.scored();
    for (const e of out) this.byId.delete(e.id);
    return out;
  }

  /** Number of episodes held (scored or not). */
  get size(): number {
    return this.byId.size;
  }
}
