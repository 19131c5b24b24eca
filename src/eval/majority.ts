/**
 * maj@k: correctness of the most frequent normalised extracted answer among k samples (ties go
 * to the answer that appears first), as in ALGORITHMS.md ("Evaluation") and the self-consistency
 * evaluation of Wang et al. 2022 (arXiv:2203.11171).
 */

/**
 * Normalise an extracted answer for voting: Unicode NFKC, strip surrounding `$…$` and `\boxed{…}`
 * wrappers, drop all whitespace, a trailing period and `\left`/`\right`, lower-case; a plain
 * decimal number (optionally with thousands commas) becomes its canonical JS form ("3.50" → "3.5",
 * "1,000" → "1000"). Signs and other punctuation are kept, so "-3" and "3" stay distinct.
 * @returns the vote key, or null for null/blank input.
 */
export function normalizeVoteAnswer(answer: string | null | undefined): string | null {
  if (answer === null || answer === undefined) return null;
  let s = answer.normalize("NFKC").trim();
  for (let changed = true; changed; ) {
    changed = false;
    const before = s;
    s = s.replace(/^\$+|\$+$/g, "").trim();
    const boxed = /^\\boxed\{(.*)\}$/s.exec(s);
    if (boxed) s = boxed[1]!.trim();
    s = s.replace(/\.$/, "").trim();
    if (s !== before) changed = true;
  }
  s = s.replace(/\\left|\\right/g, "").replace(/\s+/g, "").toLowerCase();
  if (/^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$|^[+-]?\.\d+$/.test(s)) {
    const v = Number(s.replace(/,/g, ""));
    if (Number.isFinite(v)) s = String(v);
  }
  return s === "" ? null : s;
}

/** One sample as maj@k sees it. */
export interface Vote {
  /** The verifier's extracted answer (`Verdict.extracted`), or null when none was found. */
  extracted: string | null;
  /** Whether the verifier accepted the sample. */
  correct: boolean;
}

/**
 * Majority vote over `votes` (in sample order).
 * @returns the index of the earliest sample holding the winning normalised answer (the most
 *   frequent; ties → the answer that appears first), or -1 when no sample has an answer.
 */
export function majorityIndex(votes: readonly Vote[]): number {
  const counts = new Map<string, { count: number; first: number }>();
  votes.forEach((v, i) => {
    const key = normalizeVoteAnswer(v.extracted);
    if (key === null) return;
    const e = counts.get(key);
    if (e) e.count++;
    else counts.set(key, { count: 1, first: i });
  });
  let best = -1;
  let bestCount = 0;
  // Map iteration follows first appearance, so on a tie the earlier answer is kept.
  for (const { count, first } of counts.values()) {
    if (count > bestCount) {
      best = first;
      bestCount = count;
    }
  }
  return best;
}

/** maj@k of one group of exactly k votes: 1 when the winning answer is correct, else 0 (0 when no answer). */
export function majorityCorrect(votes: readonly Vote[]): number {
  const i = majorityIndex(votes);
  return i >= 0 && votes[i]!.correct ? 1 : 0;
}

/**
 * maj@k estimate for one prompt from its n ≥ k samples: the mean of majorityCorrect over the
 * ⌊n/k⌋ disjoint consecutive blocks of k samples (samples are i.i.d., so each block is an
 * independent draw of maj@k; using every block lowers the variance versus the first k alone).
 * @throws RangeError unless 1 ≤ k ≤ votes.length.
 */
export function majAtK(votes: readonly Vote[], k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > votes.length) throw new RangeError(`majAtK: need an integer 1 <= k <= n=${votes.length}, got k=${k}`);
  const blocks = Math.floor(votes.length / k);
  let s = 0;
  for (let b = 0; b < blocks; b++) s += majorityCorrect(votes.slice(b * k, (b + 1) * k));
  return s / blocks;
}
