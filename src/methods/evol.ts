/**
 * EVOL-RL — majority for selection, novelty for variation (arXiv:2509.15194): responses in their
 * group's majority get the higher reward band, each band ordered by the response's novelty
 * (char n-gram dissimilarity to its group). Options: `methods.evol`; the majority vote uses
 * `methods.ttrl`'s tie rule when TTRL is configured too. Runs after TTRL in the reward stage
 * and replaces its rewards.
 */
import type { RunConfig } from "../config/schema.ts";
import { normalizeVoteAnswer } from "../eval/majority.ts";
import type { BuiltinMethodOptions } from "./config.ts";
import { groupVotes } from "./vote.ts";
import { defineMethod } from "./define.ts";

/*
 * EVOL-RL's variation signal, computed offline (Zhou et al. 2025, "Evolving Language Models
 * without Labels: Majority Drives Selection, Novelty Promotes Variation", arXiv:2509.15194).
 * The paper's abstract states the rule — the majority answer is the anchor (selection), a
 * novelty-aware reward favours responses whose reasoning differs from the group's (variation),
 * with non-overlapping reward bands for majority and minority — and its released reference
 * implementation (github.com/YujunZhou/EVOL-RL, reward manager "semantic_novelty") gives the
 * numbers, which rlvr follows (its own code) except for the similarity:
 *
 *   similarity  s_ij: the paper uses the cosine of sentence embeddings (clipped to [0, 1]); rlvr,
 *               with no embedding model on the CPU, uses the Jaccard similarity of character
 *               n-gram sets, J(a, b) = |N(a) ∩ N(b)| / |N(a) ∪ N(b)| (N(s) = the length-n
 *               substrings of s; a string shorter than n is its own single gram; J(∅, ∅) = 1).
 *   novelty     u_i = 1 − (m · mean_{j ∈ C(i), j≠i} s_ij + (1 − m) · max_{j≠i} s_ij), m = ½,
 *               C(i) = the responses in i's class (majority / other parsable); the max runs over
 *               every parsable group mate; alone in its class, the mean runs over all of them.
 *   bands       per class, u is min–max normalised to ũ ∈ [0, 1]; majority: 1 − w + w·ũ ∈ [0.5, 1],
 *               other parsable: −1 + w·ũ ∈ [−1, −0.5] (w = ½); a class whose novelties are all
 *               equal gets its band's midpoint; a class of one gets its band's top (majority 1,
 *               other −0.5); unparsable responses: −1 and no part in the similarities.
 *
 * Any majority response outranks any other; within a band, near-duplicates earn less than
 * distinct responses. (One edge case differs from the reference code on purpose: when a single
 * response is parsable, the reference gives every response −1; rlvr gives that one its band's top.)
 * `noveltyScores` is the simpler score METHODS.md suggests (m = 0: 1 − the maximum similarity).
 */
/** The set of character n-grams of `s` (n ≥ 1). */
export function charNgrams(s: string, n = 3): Set<string> {
  if (!(n >= 1)) throw new RangeError(`charNgrams: n must be >= 1, got ${n}`);
  const out = new Set<string>();
  if (s.length < n) {
    if (s.length > 0) out.add(s);
    return out;
  }
  for (let i = 0; i + n <= s.length; i++) out.add(s.slice(i, i + n));
  return out;
}

/** Jaccard similarity of two sets (1 for two empty sets). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * novelty_i = 1 − max_{j≠i} J(N(texts_i), N(texts_j)), in [0, 1]; a group of one has novelty 1.
 */
export function noveltyScores(texts: readonly string[], n = 3): Float64Array {
  const grams = texts.map((t) => charNgrams(t, n));
  const out = new Float64Array(texts.length);
  for (let i = 0; i < texts.length; i++) {
    let mx = 0;
    for (let j = 0; j < texts.length; j++) if (j !== i) mx = Math.max(mx, jaccard(grams[i]!, grams[j]!));
    out[i] = 1 - mx;
  }
  return out;
}

/**
 * EVOL-RL novelty u_i of one group (see the module comment): 1 − (m·mean similarity to the
 * response's own class + (1 − m)·max similarity to any parsable group mate).
 * @param inMajority per response: 1 = agrees with the majority label, 0 = parsable but not, null = unparsable.
 * @param meanWeight m (default ½, as EVOL-RL; 0 = 1 − max similarity, as `noveltyScores`).
 * @returns u ∈ [0, 1] per response; NaN for unparsable ones; 1 for a response with no parsable mate.
 */
export function evolNovelty(texts: readonly string[], inMajority: readonly (0 | 1 | null)[], n = 3, meanWeight = 0.5): Float64Array {
  const grams = texts.map((t) => charNgrams(t, n));
  const out = new Float64Array(texts.length).fill(Number.NaN);
  const valid = inMajority.flatMap((m, i) => (m === null ? [] : [i]));
  for (const i of valid) {
    const others = valid.filter((j) => j !== i);
    if (others.length === 0) {
      out[i] = 1;
      continue;
    }
    const sim = new Map(others.map((j) => [j, jaccard(grams[i]!, grams[j]!)]));
    const same = others.filter((j) => inMajority[j] === inMajority[i]);
    const pool = same.length ? same : others;
    const mean = pool.reduce((a, j) => a + sim.get(j)!, 0) / pool.length;
    const max = Math.max(...sim.values());
    out[i] = 1 - (meanWeight * mean + (1 - meanWeight) * max);
  }
  return out;
}

/**
 * EVOL-RL rewards of one group (see the module comment for the bands).
 * @param inMajority per response: 1 = agrees with the majority label, 0 = parsable but not, null = unparsable.
 * @param novelty    per response (any scale: it is min–max normalised within each class).
 * @param weight     band width w (default ½: majority [0.5, 1], other [−1, −0.5]).
 */
export function evolRewards(inMajority: readonly (0 | 1 | null)[], novelty: ArrayLike<number>, weight = 0.5): Float32Array {
  const out = new Float32Array(inMajority.length).fill(-1);
  for (const cls of [1, 0] as const) {
    const idx = inMajority.flatMap((m, i) => (m === cls ? [i] : []));
    if (idx.length === 0) continue;
    const lo = cls === 1 ? 1 - weight : -1;
    const xs = idx.map((i) => novelty[i]!);
    const mn = Math.min(...xs);
    const mx = Math.max(...xs);
    idx.forEach((i, k) => {
      const u = idx.length === 1 ? 1 : mx > mn ? (xs[k]! - mn) / (mx - mn) : 0.5;
      out[i] = lo + weight * u;
    });
  }
  return out;
}

type EvolOptions = BuiltinMethodOptions["evol"];

export const evol = defineMethod<{ evol: EvolOptions; tie: "first" | "none" }>({
  name: "evol",
  configPath: "methods.evol",
  options: (cfg: RunConfig) => (cfg.methods?.evol && !cfg.methods.selfPlay?.enabled ? { evol: cfg.methods.evol, tie: cfg.methods.ttrl?.tie ?? "first" } : undefined),
  needs: { groups: true },
  stages: ["reward"],
  order: 20,
  build: (_ctx, o) => ({
    rewards(s) {
      const { rewards, votes, metrics } = groupVotes(s, { tie: o.tie, minShare: 0 });
      const answers = s.verdicts.map((v) => v.extracted);
      const out = new Float32Array(rewards.length);
      for (const { idx } of votes) {
        const inMaj = idx.map((i) => (normalizeVoteAnswer(answers[i]) === null ? null : rewards[i]! > 0 ? 1 : 0) as 0 | 1 | null);
        const nov = evolNovelty(idx.map((i) => s.texts[i]!), inMaj, o.evol.ngram, o.evol.meanWeight);
        const r = evolRewards(inMaj, nov, o.evol.weight);
        idx.forEach((i, j) => (out[i] = r[j]!));
      }
      metrics["evol/reward_mean"] = out.reduce((a, b) => a + b, 0) / Math.max(1, out.length);
      return { rewards: out, metrics };
    },
  }),
});
