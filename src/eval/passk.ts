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
