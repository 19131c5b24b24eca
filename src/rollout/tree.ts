/**
 * Entropy-guided tree rollouts: sample `roots` first responses per prompt, find the positions
 * where the policy was most uncertain, and fork the rest of the group from there — a fork
 * re-samples the response from a high-entropy token on, sharing the root's tokens before it.
 *
 * Sources: ETTRL's entropy-fork tree rollout (Liu et al. 2025, "ETTRL: Balancing Exploration and
 * Exploitation in LLM Test-Time Reinforcement Learning via Entropy Mechanism", arXiv:2508.11356)
 * and CURE's critical-token re-concatenation (Li et al. 2025, arXiv:2508.11016): branch at the
 * highest-entropy tokens of a first sample, keep its prefix, regenerate the suffix.
 *
 * Shape: every prompt gets exactly `groupSize` trajectories (`roots` roots, then
 * `groupSize − roots` forks), prompt-major, so group statistics (GRPO advantages, zero-std and
 * dynamic-sampling filters) work unchanged; all join the prompt's group.
 *
 * Budget: `budget` is the most tokens the engine may sample per prompt (roots + fork suffixes;
 * shared prefix tokens are not re-sampled and cost nothing). It holds in the worst case: roots may
 * use `roots × maxNewTokens`; each fork reserves its largest possible suffix before it is sampled,
 * choosing the highest-entropy position whose suffix fits in what is left (keeping one token for
 * every later fork); when no position fits, the fork goes at the latest position and its suffix
 * is capped to what is left (it may end `max_tokens`). Requires budget ≥ roots × maxNewTokens +
 * (groupSize − roots).
 *
 * Training choice: a fork's shared prefix tokens are part of its response with loss mask 1 — the
 * policy sampled them, and the fork is a complete trajectory of the policy (prompt → answer) whose
 * reward says something about those tokens too. A prefix shared by k trajectories of a group is
 * therefore trained k times, once with each trajectory's advantage (for GRPO this sums the group's
 * advantages over the subtree, the tree credit assignment of TreeRPO / TreeRL). The old log-probs of
 * prefix tokens are the root's sampler log-probs (the same weights sampled both).
 *
 * Entropy: per-token entropy of the policy's next-token distribution at temperature 1, from
 * `engine.score(batch, {entropy: true})` on the roots (one extra forward pass, no gradients).
 */
import type { Engine } from "../core/engine.ts";
import { packSequences } from "../core/sequence.ts";
import { hash32 } from "../util/rng.ts";
import { asTrajectory, concatF32, concatI32, sampleEach, type SamplingSettings, type Trajectory } from "./types.ts";

export interface TreeRolloutOptions extends SamplingSettings {
  /** Trajectories per prompt G (roots + forks). */
  groupSize: number;
  /** First samples per prompt, 1 ≤ roots < groupSize. */
  roots: number;
  /** Most response tokens of any trajectory (the prefix plus the suffix of a fork). */
  maxNewTokens: number;
  /** Most sampled tokens per prompt (roots + fork suffixes). Default groupSize × maxNewTokens (never binds). */
  budget?: number;
  /** Distinct fork positions per prompt (the highest-entropy ones; forks cycle over them). Default groupSize − roots. */
  forkPoints?: number;
  /** Longest prompt + response the engine accepts (default engine.info().maxSeqLen); fork suffixes are capped to fit, with 3 tokens of slack for engines that pad prompts. */
  maxSeqLen?: number;
  /** Padding id for the scoring batch. Default 0. */
  padId?: number;
}

export interface TreeRolloutResult {
  /** prompts.length × groupSize trajectories, prompt-major: roots first, then forks. */
  trajectories: Trajectory[];
  metrics: {
    "tree/forks": number;
    "tree/sampled_tokens": number;
    "tree/shared_prefix_tokens": number;
    /** Mean entropy (nats) at the chosen fork positions, and over all root positions. */
    "tree/fork_entropy": number;
    "tree/root_entropy": number;
    /** Forks whose suffix cap was cut by the budget. */
    "tree/capped_forks": number;
    /** Forks whose first sampled token equals the root's token at the fork position. */
    "tree/same_token_frac": number;
  };
}

/** A fork decided before sampling: root j of the prompt, position t, suffix cap. */
export interface ForkPlan {
  root: number;
  at: number;
  cap: number;
  entropy: number;
}

/**
 * Decide where one prompt's forks go (pure; exposed for tests).
 * @param rootEntropy per root, the entropy (nats) at each of its response positions [L_j].
 * @param forks       number of forks F.
 * @param remaining   sampled-token budget left after the roots.
 * @returns F plans; Σ cap ≤ remaining whenever remaining ≥ F (each cap ≥ 1).
 */
export function planForks(rootEntropy: readonly ArrayLike<number>[], forks: number, remaining: number, maxNewTokens: number, forkPoints: number): ForkPlan[] {
  const cands: ForkPlan[] = [];
  rootEntropy.forEach((h, j) => {
    for (let t = 0; t < h.length; t++) cands.push({ root: j, at: t, cap: maxNewTokens - t, entropy: Number.isFinite(h[t]!) ? h[t]! : 0 });
  });
  if (cands.length === 0) return [];
  cands.sort((a, b) => b.entropy - a.entropy || a.root - b.root || a.at - b.at);
  const top = cands.slice(0, Math.max(1, forkPoints));
  const uses = new Map<ForkPlan, number>();
  const plans: ForkPlan[] = [];
  for (let k = 0; k < forks; k++) {
    const avail = remaining - (forks - k - 1);
    if (avail < 1) break;
    const byUse = [...top].sort((a, b) => (uses.get(a) ?? 0) - (uses.get(b) ?? 0) || b.entropy - a.entropy);
    let pick = byUse.find((c) => c.cap <= avail) ?? cands.find((c) => c.cap <= avail);
    let cap: number;
    if (pick) cap = pick.cap;
    else {
      pick = cands.reduce((a, b) => (b.at > a.at ? b : a));
      cap = avail;
    }
    uses.set(pick, (uses.get(pick) ?? 0) + 1);
    plans.push({ ...pick, cap });
    remaining -= cap;
  }
  return plans;
}

/**
 * Tree rollouts for a batch of prompts.
 * @param prompts prompt token ids, one per prompt.
 * @returns prompts.length × groupSize trajectories and the metrics above.
 * @throws RangeError when roots ∉ [1, groupSize) or the budget is below roots × maxNewTokens + forks.
 */
export async function treeRollouts(engine: Engine, prompts: readonly Int32Array[], o: TreeRolloutOptions): Promise<TreeRolloutResult> {
  const G = o.groupSize;
  const R = o.roots;
  const F = G - R;
  const budget = o.budget ?? G * o.maxNewTokens;
  const maxSeqLen = o.maxSeqLen ?? engine.info().maxSeqLen;
  if (!(Number.isInteger(R) && R >= 1 && R < G)) throw new RangeError(`tree rollouts: roots must be an integer in [1, groupSize − 1] = [1, ${G - 1}], got ${R}`);
  const minBudget = R * o.maxNewTokens + F;
  if (budget < minBudget) throw new RangeError(`tree rollouts: budget ${budget} is below roots × maxNewTokens + forks = ${minBudget}; raise the budget or lower roots`);

  const roots = await engine.sample({ prompts: [...prompts], n: R, maxNewTokens: o.maxNewTokens, temperature: o.temperature, topP: o.topP, topK: o.topK, stopTokens: o.stopTokens, seed: hash32(o.seed, 0x7a) });
  // Entropy of the distribution that produced each root token (one scoring pass).
  const batch = packSequences(roots.map((r) => ({ prompt: prompts[r.promptIndex]!, response: r.tokens })), o.padId ?? 0);
  const scores = await engine.score(batch, { model: "policy", entropy: true });
  const T = batch.seqLen;
  const H = roots.map((r, b) => {
    const P = prompts[r.promptIndex]!.length;
    return scores.entropy!.subarray(b * T + P, b * T + P + r.tokens.length);
  });

  const items: { prefix: Int32Array; maxNewTokens: number }[] = [];
  const meta: { p: number; plan: ForkPlan }[] = [];
  let rootH = 0;
  let rootN = 0;
  for (let p = 0; p < prompts.length; p++) {
    const own = H.slice(p * R, (p + 1) * R);
    for (const h of own) for (const x of h) (rootH += x), rootN++;
    const used = roots.slice(p * R, (p + 1) * R).reduce((a, r) => a + r.tokens.length, 0);
    for (const plan of planForks(own, F, budget - used, o.maxNewTokens, o.forkPoints ?? F)) {
      const root = roots[p * R + plan.root]!;
      const prefix = concatI32(prompts[p]!, root.tokens.subarray(0, plan.at));
      plan.cap = Math.max(1, Math.min(plan.cap, maxSeqLen - 3 - prefix.length));
      items.push({ prefix, maxNewTokens: plan.cap });
      meta.push({ p, plan });
    }
  }
  const conts = await sampleEach(engine, items, { ...o, seed: hash32(o.seed, 0x7b) });

  const out: Trajectory[] = [];
  const m = { forks: 0, sampled: 0, shared: 0, forkH: 0, capped: 0, same: 0 };
  let k = 0;
  for (let p = 0; p < prompts.length; p++) {
    for (let j = 0; j < R; j++) {
      const r = roots[p * R + j]!;
      out.push(asTrajectory(r));
      m.sampled += r.tokens.length;
    }
    while (k < meta.length && meta[k]!.p === p) {
      const { plan } = meta[k]!;
      const root = roots[p * R + plan.root]!;
      const c = conts[k]!;
      out.push({
        promptIndex: p,
        tokens: concatI32(root.tokens.subarray(0, plan.at), c.tokens),
        logprobs: concatF32(root.logprobs.subarray(0, plan.at), c.logprobs),
        stopReason: c.stopReason,
        sampledTokens: c.tokens.length,
        forkOf: plan.root,
        forkAt: plan.at,
      });
      m.forks++;
      m.sampled += c.tokens.length;
      m.shared += plan.at;
      m.forkH += plan.entropy;
      if (plan.cap < o.maxNewTokens - plan.at) m.capped++;
      if (c.tokens.length > 0 && c.tokens[0] === root.tokens[plan.at]) m.same++;
      k++;
    }
  }
  return {
    trajectories: out,
    metrics: {
      "tree/forks": m.forks,
      "tree/sampled_tokens": m.sampled,
      "tree/shared_prefix_tokens": m.shared,
      "tree/fork_entropy": m.forks ? m.forkH / m.forks : 0,
      "tree/root_entropy": rootN ? rootH / rootN : 0,
      "tree/capped_forks": m.capped,
      "tree/same_token_frac": m.forks ? m.same / m.forks : 0,
    },
  };
}
