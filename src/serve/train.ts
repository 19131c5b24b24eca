/**
 * Training the served model on captured episodes (capture mode, docs/serve.md): scored episodes
 * become one RL update of the engine behind the server, between requests.
 *
 *   scored episodes → sequences (one per turn: prompt ids, response ids, sampler log-probs,
 *   policy version; the loss masks the prompt, i.e. everything the model did not generate)
 *   → advantages per episode over its group (GRPO by default; every turn of an episode shares
 *   its advantage) → old (and reference) log-probs scored by the trainer → optimize() with the
 *   configured policy loss → policy version + 1.
 *
 * The same pure pieces as the RL step (src/pipeline/: computeAdvantages, makePolicyLoss,
 * optimize); the update runs under the batcher's lock, so requests in flight finish on the
 * version they started with and later ones see the new weights. Off-policy turns (sampled by an
 * older version) are corrected with their recorded sampler log-probs: truncated importance
 * sampling (`algorithm.mismatch`, on by default here, as for vLLM rollouts).
 */
import { combineMetrics, computeAdvantages, makePolicyLoss, resolveAlgorithm, type AlgorithmConfig, type AlgorithmConfigInput } from "../algorithms/index.ts";
import { packSequences, type Sequence } from "../core/sequence.ts";
import { optimize } from "../pipeline/optimize.ts";
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
  /** The loss's metrics (combined over micro-batches) plus loss and grad_norm. */
  metrics: Record<string, number>;
}

const DEFAULT_ALGORITHM: AlgorithmConfigInput = { advantage: { name: "grpo" }, loss: { name: "ppo_clip" }, mismatch: {} };

/**
 * Per-sequence [response.length] log-probs of `seqs` under the policy or the reference.
 * Response token t of sequence b sits at position prompt.length + t of the packed row.
 */
async function scoreResponses(server: ServeContext, seqs: Sequence[], model: "policy" | "reference"): Promise<Float32Array[]> {
  const batch = packSequences(seqs, server.tokenizer.padId);
  const s = await server.engine.score(batch, { model });
  return seqs.map((q, b) => s.logprobs.slice(b * batch.seqLen + q.prompt.length, b * batch.seqLen + q.prompt.length + q.response.length));
}

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
 * Train the served engine on `episodes` (default: every scored episode, taken from the store).
 * @returns null when there is nothing scored; else what the update did.
 * @throws Error when the server is not in capture mode.
 */
export async function trainServed(target: Server | ServeContext, o: CaptureTrainOptions = {}, episodes?: Episode[]): Promise<CaptureStepReport | null> {
  const server: ServeContext = "ctx" in target ? target.ctx : target;
  if (!server.episodes && !episodes) throw new Error("trainServed: the server is not in capture mode; start it with serve({capture: true}) or rlvr serve --capture");
  const eps = episodes ?? server.episodes!.takeScored();
  if (eps.length === 0) return null;
  const alg: AlgorithmConfig = resolveAlgorithm(o.algorithm ?? DEFAULT_ALGORITHM);
  const { seqs, episodeOf, rewards, groupIds, lengths } = episodesToSequences(eps);
  const { name, ...options } = alg.advantage;
  const adv = computeAdvantages(name, { rewards, groupIds, lengths, strata: new Int32Array(eps.length) }, options);
  seqs.forEach((q, k) => (q.advantage = adv[episodeOf[k]!]!));
  const maxLength = Math.max(1, ...seqs.map((q) => q.response.length));
  const warmup = o.warmupUpdates ?? 10;
  const lr = (o.lr ?? 1e-3) * (warmup > 0 ? Math.min(1, (server.captureUpdates + 1) / warmup) : 1);
  const report = await server.batcher.exclusive(async () => {
    const old = await scoreResponses(server, seqs, "policy");
    seqs.forEach((q, k) => (q.oldLogprobs = old[k]!));
    if (alg.kl.coef > 0) {
      if (!refSet.has(server)) {
        await server.engine.setReference("policy");
        refSet.add(server);
      }
      const ref = await scoreResponses(server, seqs, "reference");
      seqs.forEach((q, k) => (q.refLogprobs = ref[k]!));
    }
    const rep = await optimize(server.engine, seqs, {
      epochs: o.epochs ?? 1,
      microBatchSize: o.microBatchSize,
      padId: server.tokenizer.padId,
      maxLength,
      loss: (counts) => makePolicyLoss(alg, counts, { klCoef: alg.kl.coef, entropyCoef: alg.entropy.coef }),
      optim: { lr, maxGradNorm: o.maxGradNorm ?? 1 },
      skipEmptyUpdates: true,
      entropy: alg.entropy.coef !== 0,
    });
    if (rep.updates > rep.skippedUpdates) server.policyVersion++;
    server.captureUpdates++;
    const v = server.policyVersion;
    return {
      episodes: eps.length,
      sequences: seqs.length,
      reward: rewards.reduce((s, x) => s + x, 0) / eps.length,
      policyVersion: v,
      maxStaleness: Math.max(0, ...seqs.map((q) => v - 1 - (q.policyVersion ?? v - 1))),
      metrics: { ...combineMetrics(rep.lossParts), loss: rep.loss, grad_norm: rep.gradNorm, lr },
    };
  });
  const a = server.autosave;
  if (a && a.every > 0 && server.captureUpdates % a.every === 0) await saveServed(server, a.dir);
  return report;
}

/** Servers whose engine already froze its reference (KL needs one). */
const refSet = new WeakSet<ServeContext>();
