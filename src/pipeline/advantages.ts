/**
 * The advantages stage: the registry estimator over the kept groups (extra sequences join the
 * groups they name), then method advantage transforms (ETTRL's EAR), then each sequence gets its
 * advantage (token-level estimators: per-token advantages).
 */
import { computeAdvantages, computeTokenAdvantages, getAdvantage, type AlgorithmConfig } from "../algorithms/index.ts";
import { packSequences, type Sequence } from "../core/sequence.ts";
import type { UpdateBatch } from "./batch.ts";
import type { KlTokens } from "./reference.ts";
import type { UpdateContext, UpdateHooks } from "./update-types.ts";

/**
 * Compute advantages, apply advantage transforms, append the extra sequences to `batch.seqs`.
 * Every sequence of a rollout (`batch.rolloutOf`) gets the rollout's advantage.
 * @throws Error for a token-level estimator over multi-sequence rollouts, or with an advantage hook.
 */
export function advantages<B extends UpdateBatch>(ctx: UpdateContext, alg: AlgorithmConfig, batch: B, klTokens: KlTokens | null, hooks: UpdateHooks<NoInfer<B>>): B {
  const { name, ...options } = alg.advantage;
  const extra = batch.extra;
  const R = batch.rewards.length;
  const tokenLevel = getAdvantage(name).level === "token";
  if (tokenLevel && batch.rolloutOf) throw new Error(`config error at algorithm.advantage.name: the token-level estimator "${name}" credits the tokens of one sequence, but these rollouts are several sequences each (multi-turn episodes); use a sequence-level estimator (grpo, rloo, …)`);
  const cat = <A extends Float32Array | Int32Array>(a: A, more: number[]): A => {
    const o = new (a.constructor as new (n: number) => A)(a.length + more.length);
    o.set(a);
    o.set(more, a.length);
    return o;
  };
  const input = extra.seqs.length === 0
    ? { rewards: batch.rewards, groupIds: batch.groupIds, lengths: batch.lengths, strata: batch.strata }
    : { rewards: cat(batch.rewards, extra.rewards), groupIds: cat(batch.groupIds, extra.seqs.map((q) => q.groupId ?? -1)), lengths: cat(batch.lengths, extra.seqs.map((q) => q.response.length)), strata: cat(batch.strata, extra.seqs.map(() => 0)) };
  let adv: Float32Array;
  let tokenAdv: Float32Array[] | null = null;
  if (R + extra.seqs.length === 0) adv = new Float32Array(0);
  else if (tokenLevel) ({ adv, tokenAdv } = sequenceTokenAdvantages(name, options, [...batch.seqs, ...extra.seqs], input, klTokens, ctx.tokenizer.padId));
  else adv = computeAdvantages(name, input, options);
  if (hooks.advantages) {
    if (tokenAdv) throw new Error(`advantage estimator "${name}" is token-level; an advantage hook (e.g. methods.ear) reshapes sequence advantages and cannot be combined with it`);
    adv = hooks.advantages(adv, batch);
  }
  const of = batch.rolloutOf;
  batch.seqs.forEach((s, i) => {
    s.advantage = adv[of ? of[i]! : i]!;
    if (tokenAdv) s.tokenAdvantages = tokenAdv[i]!;
  });
  extra.seqs.forEach((q, j) => batch.seqs.push({ ...q, advantage: adv[R + j]!, ...(tokenAdv ? { tokenAdvantages: tokenAdv[R + j]! } : {}) }));
  batch.advantages = adv;
  return batch;
}

/**
 * Token-level advantages (REINFORCE++) for `seqs`, in their order: the sequences are packed to get
 * the loss mask [B*T]; with KL in the reward, token rewards are −β·kl_t on the first `kl`-covered
 * sequences (the rollouts; extra sequences such as LUFFY's experts get none).
 * @returns per sequence its response tokens' advantages, and `adv` [B] = their mean over masked
 *          tokens (for hooks' metrics and the samples log).
 */
export function sequenceTokenAdvantages(
  name: string,
  options: Record<string, unknown>,
  seqs: readonly Sequence[],
  input: { rewards: Float32Array; groupIds: Int32Array; lengths: Int32Array; strata?: Int32Array },
  kl: KlTokens | null,
  padId: number,
): { adv: Float32Array; tokenAdv: Float32Array[] } {
  const packed = packSequences(seqs, padId);
  const T = packed.seqLen;
  let tokenRewards: Float32Array | undefined;
  if (kl) {
    tokenRewards = new Float32Array(seqs.length * T);
    for (let b = 0; b * kl.seqLen < kl.kl.length && b < seqs.length; b++) {
      const P = seqs[b]!.prompt.length;
      for (let t = 0; t < seqs[b]!.response.length; t++) tokenRewards[b * T + P + t] = -kl.coef * kl.kl[b * kl.seqLen + P + t]!;
    }
  }
  const tok = computeTokenAdvantages(name, { ...input, mask: packed.lossMask, seqLen: T, ...(tokenRewards ? { tokenRewards } : {}) }, options);
  const tokenAdv = seqs.map((s, b) => tok.slice(b * T + s.prompt.length, b * T + s.prompt.length + s.response.length));
  const adv = Float32Array.from(seqs.map((s, b) => {
    let sum = 0;
    let n = 0;
    for (let t = 0; t < s.response.length; t++) if (packed.lossMask[b * T + s.prompt.length + t]! > 0) (sum += tokenAdv[b]![t]!), n++;
    return n ? sum / n : 0;
  }));
  return { adv, tokenAdv };
}
