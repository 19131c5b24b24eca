/**
 * Dynamic sampling with resampling (DAPO, Yu et al. 2025, arXiv:2503.14476, §3.2 and Algorithm 1;
 * verl's `filter_groups` with `max_num_gen_batches`): generate a batch of prompt groups, keep the
 * groups a filter accepts, and generate further batches until `target` groups are kept or
 * `maxGenBatches` batches have been generated. Kept groups beyond `target` are dropped (the train
 * batch has a fixed size), in generation order.
 *
 * When the budget runs out first the step trains on the groups it has (`full` = false) — DAPO's
 * reference implementation raises an error there; a small model early in training often has
 * batches with no informative group at all, and skipping its update is the useful behaviour.
 */

/** What one filled batch holds. */
export interface FilledBatch<G> {
  /** Kept groups, in generation order, at most `target`. */
  kept: G[];
  /** Every generated group (kept or not), in generation order (for metrics such as accuracy). */
  generated: G[];
  /** Generation batches used (1..maxGenBatches). */
  genBatches: number;
  /** Groups the filter rejected. */
  dropped: number;
  /** Groups the filter accepted but the full batch had no room for. */
  surplus: number;
  /** Whether `target` groups were kept. */
  full: boolean;
}

export interface FillOptions<G> {
  /** Groups wanted in the train batch (> 0). */
  target: number;
  /** Most generation batches (≥ 1). 1 = filter only (no resampling). */
  maxGenBatches: number;
  /** Generate the k-th batch of groups (k = 0, 1, …). */
  generate: (k: number) => Promise<G[]>;
  /** Whether to keep a group. */
  keep: (g: G) => boolean;
}

/**
 * Fill a train batch of groups by repeated generation.
 * @throws RangeError when target < 1 or maxGenBatches < 1.
 */
export async function fillBatch<G>(o: FillOptions<G>): Promise<FilledBatch<G>> {
  if (!(o.target >= 1)) throw new RangeError(`fillBatch: target must be >= 1, got ${o.target}`);
  if (!(o.maxGenBatches >= 1)) throw new RangeError(`fillBatch: maxGenBatches must be >= 1, got ${o.maxGenBatches}`);
  const kept: G[] = [];
  const generated: G[] = [];
  let dropped = 0;
  let surplus = 0;
  let k = 0;
  while (k < o.maxGenBatches && kept.length < o.target) {
    const groups = await o.generate(k++);
    for (const g of groups) {
      generated.push(g);
      if (!o.keep(g)) dropped++;
      else if (kept.length < o.target) kept.push(g);
      else surplus++;
    }
  }
  return { kept, generated, genBatches: k, dropped, surplus, full: kept.length >= o.target };
}
