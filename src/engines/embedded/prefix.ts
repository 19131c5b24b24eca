/**
 * Shared-prefix passes: finding the prefix a group of rows shares, and moving per-token values
 * between the contract layout [B·T] and the shared-prefix pass's layout.
 *
 * A GRPO batch holds n samples of each prompt in consecutive rows, so every group of n rows starts
 * with the same prompt tokens. `model.ts`'s `prefixTokenLogprobs` runs those shared positions once
 * per group; this file decides when that pays and maps the pass's outputs and cotangents.
 *
 * A pass runs positions 0..T−2 of rows of T tokens (position t predicts token t + 1; the last
 * token predicts nothing), padded to a multiple of the length bucket.
 *
 * Layouts (P = shared positions, S = the rest padded to the bucket, U = groups, n = rows per group):
 *   - prefix predictions [U, P]: position p (0 ≤ p < P) of group u predicts token p + 1, the same
 *     in every row of the group;
 *   - rest predictions [U·n, S]: position P + s of row b predicts token P + s + 1;
 *   - contract layout [B·T]: value t belongs to token t (predicted by position t − 1), 0 at t = 0
 *     and at t ≥ lengths[b].
 */
import type { TokenBatch } from "../../core/engine.ts";

/** Rows come in consecutive groups of `n` whose first `shared` + 1 tokens agree. */
export interface PrefixPlan {
  /** Rows per group (≥ 2); the batch size is a multiple of it. */
  n: number;
  /** Positions run once per group, P ≥ 1: their predictions (tokens 1..P) are the group's. */
  shared: number;
  /** Positions P..P+S−1 run for every row: S = T − 1 − P rounded up to the length bucket. */
  rest: number;
}

/** n rounded up to a multiple of m. */
export function roundUp(n: number, m: number): number {
  return Math.ceil(n / m) * m;
}

/** Positions a full pass over rows of `seqLen` tokens runs: 0..T−2, padded to the bucket (at least one). */
export function passLength(seqLen: number, bucket: number): number {
  return roundUp(Math.max(seqLen - 1, 1), bucket);
}

/** Smallest power of two ≥ n (passes pad their row count to one: a new shape is a new jit compile). */
export function pow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * The cheapest shared-prefix plan for `batch`, or null when none saves at least `minSaving` of
 * the full pass's token-positions. Groups must be consecutive and of equal size; the shared part
 * stops before the first scored token (the first lossMask > 0 of any row), so a batch of fixed-
 * length prompts gives the same shapes every step (one jit compile).
 * @param bucket  passes pad their length to a multiple of this (a new length is a new jit compile)
 * @param padRows how the pass pads its row count (default: next power of two)
 */
export function planSharedPrefix(batch: TokenBatch, bucket: number, opts: { minSaving?: number; padRows?: (n: number) => number } = {}): PrefixPlan | null {
  const { batchSize: B, seqLen: T, tokens, lengths, lossMask } = batch;
  const minSaving = opts.minSaving ?? 0.2;
  const padRows = opts.padRows ?? pow2;
  if (B < 2) return null;
  // The shared predictions (tokens 1..P) end before the first scored token of any row.
  let firstScored = T;
  for (let b = 0; b < B; b++) {
    const len = Math.min(lengths[b]!, T);
    let t = 0;
    while (t < len && !(lossMask[b * T + t]! > 0)) t++;
    firstScored = Math.min(firstScored, t);
  }
  // lcp[b] = tokens rows b and b + 1 have in common from the start (within both lengths).
  const lcp = new Int32Array(B - 1);
  for (let b = 0; b + 1 < B; b++) {
    const len = Math.min(lengths[b]!, lengths[b + 1]!, T);
    let t = 0;
    while (t < len && tokens[b * T + t] === tokens[(b + 1) * T + t]) t++;
    lcp[b] = t;
  }
  const full = padRows(B) * passLength(T, bucket);
  let best: PrefixPlan | null = null;
  let bestCost = full * (1 - minSaving);
  for (let n = 2; n <= B; n++) {
    if (B % n !== 0) continue;
    let common = firstScored; // tokens 0..P must agree within every group: P ≤ common − 1
    for (let b = 0; b + 1 < B && common > 1; b++) if ((b + 1) % n !== 0) common = Math.min(common, lcp[b]!);
    const P = common - 1;
    if (P < 1) continue;
    const U = padRows(B / n);
    const S = roundUp(Math.max(T - 1 - P, 1), bucket);
    const cost = U * P + U * n * S;
    if (cost < bestCost) {
      bestCost = cost;
      best = { n, shared: P, rest: S };
    }
  }
  return best;
}

/**
 * Contract-layout values [B·T] from a shared-prefix pass's outputs.
 * @param pre  [Up·P] prefix predictions (row-major, Up ≥ B/n padded groups)
 * @param rest [Up·n·S] predictions of the other positions
 */
export function prefixUnshift(pre: Float32Array, rest: Float32Array, batch: TokenBatch, plan: PrefixPlan): Float32Array {
  const { batchSize: B, seqLen: T, lengths } = batch;
  const { n, shared: P, rest: S } = plan;
  const out = new Float32Array(B * T);
  for (let b = 0; b < B; b++) {
    const g = Math.floor(b / n);
    const len = Math.min(lengths[b]!, T);
    for (let t = 1; t < len; t++) out[b * T + t] = t - 1 < P ? pre[g * P + t - 1]! : rest[b * S + t - 1 - P]!;
  }
  return out;
}

/**
 * Cotangents [B·T] (contract layout) → the pass's layout: a prefix position's cotangent is the sum
 * over its group's rows (the one shared value stands for n per-row values).
 * @returns pre [Up·P] and rest [Up·n·S], zero on padding
 */
export function prefixShift(c: Float32Array | undefined, batch: TokenBatch, plan: PrefixPlan, groups: number): { pre: Float32Array; rest: Float32Array } {
  const { n, shared: P, rest: S } = plan;
  const pre = new Float32Array(groups * P);
  const rest = new Float32Array(groups * n * S);
  if (!c) return { pre, rest };
  const { batchSize: B, seqLen: T, lengths } = batch;
  for (let b = 0; b < B; b++) {
    const g = Math.floor(b / n);
    const len = Math.min(lengths[b]!, T);
    for (let t = 1; t < len; t++) {
      if (t - 1 < P) pre[g * P + t - 1]! += c[b * T + t]!;
      else rest[b * S + t - 1 - P] = c[b * T + t]!;
    }
  }
  return { pre, rest };
}
