/**
 * Unbiased pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code",
 * arXiv:2107.03374): from n ≥ k samples of which c are correct, 1 − C(n−c, k) / C(n, k),
 * computed as a stable product.
 * @throws RangeError unless 0 ≤ c ≤ n and 1 ≤ k ≤ n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) || c < 0 || c > n || k < 1 || k > n) {
    throw new RangeError(`passAtK: need integers 0 <= c <= n and 1 <= k <= n, got n=${n} c=${c} k=${k}`);
  }
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/**
 * The k values reported for n samples per prompt: 1, 2, 4, … ≤ n, plus n itself.
 * `requested` (e.g. from `--k 1,5,10`) replaces the powers of two; values > n are dropped.
 * @returns sorted, distinct integers in [1, n].
 * @throws RangeError when n < 1 or a requested k is not a positive integer.
 */
export function kValues(n: number, requested?: readonly number[]): number[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`kValues: need an integer n >= 1, got ${n}`);
  let ks: number[];
  if (requested && requested.length > 0) {
    for (const k of requested) if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
    ks = requested.filter((k) => k <= n);
    if (ks.length === 0) ks = [n];
  } else {
    ks = [];
    for (let k = 1; k <= n; k *= 2) ks.push(k);
    ks.push(n);
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}
