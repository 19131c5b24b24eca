/**
 * The reference stage: reference-model log-probs of the step's sequences and the KL penalty.
 *
 * Scored when a KL term is on (fixed coefficient > 0, or the adaptive controller). The step's KL
 * (k1, mean over response tokens) feeds the KL controller and the `kl` metric. With
 * `kl.placement: reward` the penalty is applied here, after every reward transform of the reward
 * stage: sequence-level estimators get rewards − β·Σ_t kl_t (applyKlToRewards); token-level ones
 * (REINFORCE++) get per-token rewards −β·kl_t in the advantages stage (`klTokens`).
 */
import { applyKlToRewards, getAdvantage, klPenaltyPerToken, type AlgorithmConfig } from "../algorithms/index.ts";
import { packSequences } from "../core/sequence.ts";
import type { RlState } from "./state.ts";
import type { UpdateBatch } from "./batch.ts";
import type { UpdateContext } from "./update-types.ts";

/** Per-token KL of the rollouts for token-level estimators: [R*T] with T = `seqLen`. */
export interface KlTokens {
  kl: Float32Array;
  seqLen: number;
  coef: number;
}

/**
 * Score the reference, set each sequence's refLogprobs, apply KL-in-reward (a rollout of several
 * sequences, `batch.rolloutOf`, is penalised by the sum over all of them).
 * @throws Error for a token-level estimator with KL in the reward over multi-sequence rollouts.
 */
export async function reference<B extends UpdateBatch>(ctx: UpdateContext, alg: AlgorithmConfig, st: Pick<RlState, "kl">, batch: B): Promise<{ batch: B; klTokens: KlTokens | null }> {
  const needRef = st.kl.coef > 0 || alg.kl.adaptive !== undefined;
  batch.scoredReference = needRef;
  if (!needRef || batch.seqs.length === 0) return { batch, klTokens: null };
  const packed = packSequences(batch.seqs, ctx.tokenizer.padId);
  const ref = await ctx.engine.score(packed, { model: "reference" });
  const T = packed.seqLen;
  const kl = klPenaltyPerToken(packed.oldLogprobs!, ref.logprobs, packed.lossMask, "k1");
  let s = 0;
  let n = 0;
  for (let i = 0; i < kl.length; i++) if (packed.lossMask[i]) (s += kl[i]!), n++;
  batch.kl = n ? s / n : 0;
  batch.seqs.forEach((q, i) => (q.refLogprobs = ref.logprobs.subarray(i * T + q.prompt.length, i * T + q.prompt.length + q.response.length)));
  if (alg.kl.placement !== "reward") return { batch, klTokens: null };
  const estimator = alg.kl.estimator === "k3+" ? "k3" : alg.kl.estimator;
  if (getAdvantage(alg.advantage.name).level === "token") {
    if (batch.rolloutOf) throw new Error(`config error at algorithm.kl.placement: the token-level estimator "${alg.advantage.name}" takes the KL penalty per token of one sequence, but these rollouts are several sequences each (multi-turn episodes); use placement: loss or a sequence-level estimator`);
    return { batch, klTokens: { kl: klPenaltyPerToken(packed.oldLogprobs!, ref.logprobs, packed.lossMask, estimator), seqLen: T, coef: st.kl.coef } };
  }
  batch.rewards = applyKlToRewards(batch.rewards, packed.oldLogprobs!, ref.logprobs, packed.lossMask, st.kl.coef, estimator, batch.rolloutOf);
  return { batch, klTokens: null };
}
