/**
 * Metric conventions. Every metric a loss in this library returns is micro-batch-summable: means
 * are already divided by the GLOBAL counts of the step, so the caller adds the values of the
 * micro-batches to get the step's value. Names ending in `_max` combine by max, `_min` by min.
 */

/**
 * Combine the metrics of a step's micro-batches.
 * @param parts metrics objects, one per micro-batch.
 * @returns the step's metrics (sum, or max/min for `_max`/`_min` names).
 */
export function combineMetrics(parts: readonly Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of parts) {
    for (const [k, v] of Object.entries(p)) {
      const prev = out[k];
      if (prev === undefined) out[k] = v;
      else if (k.endsWith("_max")) out[k] = Math.max(prev, v);
      else if (k.endsWith("_min")) out[k] = Math.min(prev, v);
      else out[k] = prev + v;
    }
  }
  return out;
}
