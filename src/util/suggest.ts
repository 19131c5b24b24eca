/**
 * "Did you mean …?" for a mistyped name (a config field, a verifier, a task): the known name at
 * the smallest edit distance, when it is close enough to be a typo.
 */

/**
 * Edit distance with adjacent transpositions (optimal string alignment: "exatc" is one edit from
 * "exact"), case-insensitive; small strings only.
 */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d = Array.from({ length: x.length + 1 }, (_, i) => [i, ...new Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) d[0]![j] = j;
  for (let i = 1; i <= x.length; i++)
    for (let j = 1; j <= y.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[x.length]![y.length]!;
}

/**
 * The known name closest to `name`, or null when none is within `maxEdits` edits.
 * @param known candidate names (any order; the first of equally close ones wins)
 * @param maxEdits default max(2, ⌊|name|/3⌋)
 */
export function closest(name: string, known: readonly string[], maxEdits = Math.max(2, Math.floor(name.length / 3))): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    const dist = editDistance(name, k);
    if (dist < bestD) (bestD = dist), (best = k);
  }
  return best !== null && bestD <= maxEdits ? best : null;
}

/**
 * `did you mean "x"? ` for a near miss (within max(1, ⌊|name|/3⌋) edits), else "" — for messages
 * like `unknown verifier "exatc"; did you mean "exact"? registered: …`.
 */
export function didYouMean(name: string, known: readonly string[]): string {
  const c = closest(name, known, Math.max(1, Math.floor(name.length / 3)));
  return c !== null && c !== name ? `did you mean "${c}"? ` : "";
}
