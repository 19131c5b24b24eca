/**
 * EVOL-RL's variation signal, computed offline (Zhou et al. 2025, "Evolving Language Models
 * without Labels: Majority Drives Selection, Novelty Promotes Variation", arXiv:2509.15194).
 * The paper measures novelty in a semantic embedding space; rlvr uses a CPU stand-in with no
 * model: the Jaccard similarity of character n-gram sets,
 *   J(a, b) = |N(a) ∩ N(b)| / |N(a) ∪ N(b)|,   N(s) = the set of length-n substrings of s
 * (strings shorter than n contribute themselves as one gram; two empty strings have J = 1), and
 *   novelty_i = 1 − max_{j ≠ i} J(y_i, y_j)   over the group mates j.
 * Reward (our reading of the paper's "majority selects, novelty varies"):
 *   majority responses: 0.5 + 0.5 · novelty ∈ [0.5, 1]; other parsable responses: −1 + 0.5 · novelty ∈ [−1, −0.5];
 *   unparsable responses: −1. Any majority response thus outranks any non-majority one.
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
 * EVOL-RL rewards of one group.
 * @param inMajority per response: 1 = agrees with the majority label, 0 = parsable but not, null = unparsable.
 * @param novelty    per response, in [0, 1].
 * @param weight     novelty weight (default 0.5; the bands above are for 0.5).
 */
export function evolRewards(inMajority: readonly (0 | 1 | null)[], novelty: ArrayLike<number>, weight = 0.5): Float32Array {
  return Float32Array.from(inMajority, (m, i) => (m === null ? -1 : m === 1 ? 1 - weight + weight * novelty[i]! : -1 + weight * novelty[i]!));
}
