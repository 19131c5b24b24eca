/**
 * Bootstrap confidence intervals over prompts (Efron 1979; the percentile interval). Prompts are
 * the unit of resampling: all samples of one prompt stay together, since they are correlated.
 */
import { Rng, hash32 } from "../util/rng.ts";

/** A two-sided interval at `level` (e.g. 0.95). */
export interface Interval {
  low: number;
  high: number;
}

export interface BootstrapOptions {
  /** Number of resamples (default 1000). */
  resamples?: number;
  /** Coverage of the interval (default 0.95). */
  level?: number;
  /** Seed of the resampling stream (default 0); the same seed gives the same interval. */
  seed?: number;
}

/** Linear-interpolated quantile of a sorted array, q in [0, 1]. */
function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Percentile bootstrap intervals of the means of several per-prompt statistics at once (one
 * shared resampling of prompt indices, so intervals of related metrics are consistent).
 * @param columns name → Float64Array[P] per-prompt values (all of length P ≥ 1)
 * @returns name → interval of the mean; a degenerate [mean, mean] interval when P = 1
 * @throws RangeError when the columns differ in length or are empty.
 */
export function bootstrapMeans(columns: Record<string, ArrayLike<number>>, o: BootstrapOptions = {}): Record<string, Interval> {
  const names = Object.keys(columns);
  const out: Record<string, Interval> = {};
  if (names.length === 0) return out;
  const P = columns[names[0]!]!.length;
  for (const n of names) if (columns[n]!.length !== P) throw new RangeError(`bootstrapMeans: column ${n} has ${columns[n]!.length} values, expected ${P}`);
  if (P === 0) throw new RangeError("bootstrapMeans: no values");
  const B = o.resamples ?? 1000;
  const level = o.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new RangeError(`bootstrapMeans: level must be in (0, 1), got ${level}`);
  const rng = new Rng(hash32(o.seed ?? 0, 0xb0075));
  const stats = names.map(() => new Float64Array(B));
  const idx = new Int32Array(P);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < P; i++) idx[i] = Math.floor(rng.next() * P);
    names.forEach((n, j) => {
      const col = columns[n]!;
      let s = 0;
      for (let i = 0; i < P; i++) s += col[idx[i]!]!;
      stats[j]![b] = s / P;
    });
  }
  const a = (1 - level) / 2;
  names.forEach((n, j) => {
    const sorted = stats[j]!.sort();
    out[n] = B > 0 ? { low: quantile(sorted, a), high: quantile(sorted, 1 - a) } : { low: NaN, high: NaN };
  });
  return out;
}
