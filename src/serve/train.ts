/**
 * Training the served model on captured episodes (capture mode, docs/serve.md): scored episodes
 * become one RL update of the engine behind the server, between requests.
 *
 *   scored episodes → an update batch (one rollout per episode, one sequence per turn: prompt
 *   ids, response ids, sampler log-probs, policy version; the loss masks the prompt, i.e.
 *   everything the model did not generate) → old log-probs scored by the trainer (the pipeline's
 *   `rescore`) → the update sequence of every run (src/pipeline/update.ts): reward (overlong
 *   shaping) → reference (KL, KL-in-reward summed over an episode's turns) → advantages per
 *   episode over its group (GRPO by default; every turn shares its episode's advantage) →
 *   optimize with the configured policy loss → the update's metrics → policy version + 1.
 *
 * The update runs under the batcher's lock, so requests in flight finish on the version they
 * started with and later ones see the new weights. Off-policy turns (sampled by an older
 * version) are corrected with their recorded sampler log-probs: truncated importance sampling
 * (`algorithm.mismatch`, on by default here, as for vLLM rollouts).
 */
import { FixedEntropyController, FixedKlController, resolveAlgorithm, type AlgorithmConfig, type AlgorithmConfigInput } from "../algorithms/index.ts";
import type { Sequence } from "../core/sequence.ts";
import type { UpdateBatch } from "../pipeline/batch.ts";
import { rescore } from "../pipeline/collect.ts";
import { update } from "../pipeline/update.ts";
import type { UpdatePlan, UpdateState } from "../pipeline/update-types.ts";
import type { Episode } from "./capture.ts";
import type { Server, ServeContext } from "./context.ts";
import { saveServed } from "./state.ts";

export interface CaptureTrainOptions {
  /** Algorithm (preset name or block); default GRPO advantages, PPO-clip loss, TIS mismatch correction, no KL. */
  algorithm?: string | AlgorithmConfigInput;
  /** Peak learning rate (default 1e-3: tiny models; a trained model wants less, docs/serve.md). */
  lr?: number;
  /**
   * Linear warm-up over the first this many capture updates (default 10; 0 = none): update k
   * (0-based, counted across calls and restarts) uses lr · min(1, (k + 1) / warmupUpdates).
   * Adam's first steps from fresh moments move every weight by about lr; the warm-up keeps
   * them small.
   */
  warmupUpdates?: number;
  /** Global gradient-norm clip (default 1). */
  maxGradNorm?: number;
  /** PPO epochs over the batch (default 1). */
  epochs?: number;
  /** Most sequences per forward/backward call (default: all). */
  microBatchSize?: number;
}

/** What one update did. */
export interface CaptureStepReport {
  /** Episodes and turns (sequences) trained on. */
  episodes: number;
  sequences: number;
  /** Mean reward of the episodes. */
  reward: number;
  /** The policy version after the update. */
  policyVersion: number;
  /** Largest staleness (new version − a turn's version − 1; 0 = all on-policy). */
  maxStaleness: number;
  /**
   * The update's metrics, named as a run's metrics.jsonl (src/pipeline/metrics.ts updateMetrics:
   * reward/mean after shaping and the KL penalty, kl, kl_coef, entropy, loss/policy, clipfrac_*,
   * grad_norm, mismatch/*), the stages' own (reward/overlong_penalty, rollout/logprob_diff), plus
   * `loss` (summed over micro-batches) and `lr`.
   */
  metrics: Record<string, number>;
}

const DEFAULT_ALGORITHM: AlgorithmConfigInput = { advantage: { name: "grpo" }, loss: { name: "ppo_clip" }, mismatch: {} };

/** Sequences and per-episode inputs of the advantage estimator. */
export function episodesToSequences(eps: Episode[]): { seqs: Sequence[]; episodeOf: number[]; rewards: Float32Array; groupIds: Int32Array; lengths: Int32Array } {
  const groupIndex = new Map<string, number>();
  const groupIds = new Int32Array(eps.length);
  const rewards = new Float32Array(eps.length);
  const lengths = new Int32Array(eps.length);
  const seqs: Sequence[] = [];
  const episodeOf: number[] = [];
  eps.forEach((e, i) => {
    if (!groupIndex.has(e.group)) groupIndex.set(e.group, groupIndex.size);
    groupIds[i] = groupIndex.get(e.group)!;
    rewards[i] = e.reward ?? Number.NaN;
    for (const t of e.turns) {
      lengths[i] += t.tokens.length;
      seqs.push({ prompt: t.promptTokens, response: t.tokens, samplerLogprobs: t.logprobs, policyVersion: t.policyVersion, groupId: groupIds[i]! });
      episodeOf.push(i);
    }
  });
  return { seqs, episodeOf, rewards, groupIds, lengths };
}

/**
 * The update batch of `eps`: episode i is rollout i (its reward, group, length = its turns'
 * tokens), each turn one sequence of it (`rolloutOf`); old log-probs are the sampler's until rescored.
 */
export function episodeBatch(eps: Episode[], step: number, version: number): UpdateBatch {
  const { seqs, episodeOf, rewards, groupIds, lengths } = episodesToSequences(eps);
  return {
    step,
    verdicts: Array.from(rewards, (reward) => ({ reward })),
    rewards,
    groupIds,
    lengths,
    strata: new Int32Array(eps.length),
    seqs: seqs.map((q) => ({ ...q, oldLogprobs: q.samplerLogprobs! })),
    rolloutOf: Int32Array.from(episodeOf),
    extra: { seqs: [], rewards: [] },
    advantages: new Float32Array(0),
    metrics: {},
    times: {},
    kl: 0,
    scoredReference: false,
    trainVersion: version,
  };
}

/**
 * The controllers of one capture update: fixed coefficients (no state is carried between updates).
 * @throws Error "config error at algorithm.kl.adaptive" / "…entropy.adaptive" for an adaptive controller.
 */
function updateState(alg: AlgorithmConfig, server: ServeContext): UpdateState {
  for (const k of ["kl", "entropy"] as const) {
    if (alg[k].adaptive) throw new Error(`config error at algorithm.${k}.adaptive: capture training keeps no controller state between updates; give a fixed algorithm.${k}.coef`);
  }
  return { step: server.captureUpdates, policyVersion: server.policyVersion, kl: new FixedKlController(alg.kl.coef), entropy: new FixedEntropyController(alg.entropy.coef), klUpdates: [], entropyUpdates: [] };
}

/**
 * Train the served engine on `episodes` (default: every scored episode, taken from the store)
 * with the update sequence of a run (reward transforms, KL in the reward or the loss, metrics).
 * @returns null when there is nothing scored; else what the update did.
 * @throws Error when the server is not in capture mode, or a `config error at algorithm.…` line
 *   for what capture training cannot do (adaptive KL/entropy, overlong shaping without maxLength,
 *   a token-level estimator over multi-turn episodes).
 */
export async function trainServed(target: Server | ServeContext, o: CaptureTrainOptions = {}, episodes?: Episode[]): Promise<CaptureStepReport | null> {
  const server: ServeContext = "ctx" in target ? target.ctx : target;
  if (!server.episodes && !episodes) throw new Error("trainServed: the server is not in capture mode; start it with serve({capture: true}) or rlvr serve --capture");
  const eps = episodes ?? server.episodes!.takeScored();
  if (eps.length === 0) return null;
  const alg: AlgorithmConfig = resolveAlgorithm(o.algorithm ?? DEFAULT_ALGORITHM);
  const st = updateState(alg, server);
  const batch = episodeBatch(eps, server.captureUpdates, server.policyVersion);
  const warmup = o.warmupUpdates ?? 10;
  const lr = (o.lr ?? 1e-3) * (warmup > 0 ? Math.min(1, (server.captureUpdates + 1) / warmup) : 1);
  const plan: UpdatePlan = { epochs: o.epochs ?? 1, miniBatches: 1, microBatchSize: o.microBatchSize, maxLength: Math.max(1, ...batch.seqs.map((q) => q.response.length)), optim: { lr, maxGradNorm: o.maxGradNorm ?? 1 } };
  const report = await server.batcher.exclusive(async () => {
    await rescore(server, batch);
    if (st.kl.coef > 0 && !refSet.has(server)) {
      await server.engine.setReference("policy");
      refSet.add(server);
    }
    const up = await update(server, alg, st, batch, plan);
    server.policyVersion = st.policyVersion;
    server.captureUpdates++;
    const v = server.policyVersion;
    return {
      episodes: eps.length,
      sequences: batch.seqs.length,
      reward: batch.verdicts.reduce((s, x) => s + x.reward, 0) / eps.length,
      policyVersion: v,
      maxStaleness: Math.max(0, ...batch.seqs.map((q) => v - 1 - (q.policyVersion ?? v - 1))),
      metrics: { ...up.metrics, ...batch.metrics, loss: up.opt.loss, lr },
    };
  });
  const a = server.autosave;
  if (a && a.every > 0 && server.captureUpdates % a.every === 0) await saveServed(server, a.dir);
  return report;
}

/** Servers whose engine already froze its reference (KL needs one). */
const refSet = new WeakSet<ServeContext>();
