/**
 * Group bookkeeping shared by the estimators: groups come from explicit ids (any order, any
 * integers), and unscorable samples (NaN reward) are left out of every statistic.
 */
import type { AdvantageInput, NumArray } from "../types.ts";

/** Scorable members of each group, in first-seen order of the group ids. */
export interface Groups {
  /** Indices (into the batch) of the scorable members of each group. */
  members: number[][];
  /** Number of scorable sequences in the batch. */
  scorable: number;
}

/**
 * Validate an advantage input and return B.
 * @throws RangeError naming the mismatched field.
 */
export function checkInput(input: AdvantageInput, estimator: string): number {
  const B = input.rewards.length;
  if (input.groupIds.length !== B) {
    throw new RangeError(`${estimator}: groupIds has length ${input.groupIds.length}, rewards has length ${B}; give one group id per sequence`);
  }
  if (input.lengths && input.lengths.length !== B) {
    throw new RangeError(`${estimator}: lengths has length ${input.lengths.length}, expected ${B} (one per sequence)`);
  }
  if (input.strata && input.strata.length !== B) {
    throw new RangeError(`${estimator}: strata has length ${input.strata.length}, expected ${B} (one per sequence)`);
  }
  return B;
}

/** True when the reward is a finite number (NaN/±Inf = unscorable). */
export function scorable(x: number): boolean {
  return Number.isFinite(x);
}

/**
 * Group the scorable sequences by id (optionally by id and a second key, e.g. stratum).
 * @param keys   group ids, [B].
 * @param key2   optional second key, [B]; cells are (id, key2) pairs.
 */
export function groupBy(rewards: NumArray, keys: NumArray, key2?: NumArray): Groups {
  const index = new Map<string, number>();
  const members: number[][] = [];
  let n = 0;
  for (let b = 0; b < rewards.length; b++) {
    if (!scorable(rewards[b]!)) continue;
    n++;
    const k = key2 ? `${keys[b]}\u0000${key2[b]}` : String(keys[b]);
    let g = index.get(k);
    if (g === undefined) {
      g = members.length;
      index.set(k, g);
      members.push([]);
    }
    members[g]!.push(b);
  }
  return { members, scorable: n };
}

/** Mean of rewards over `idx`. */
export function mean(r: NumArray, idx: number[]): number {
  let s = 0;
  for (const i of idx) s += r[i]!;
  return s / idx.length;
}

/**
 * Standard deviation of rewards over `idx` around `mu`.
 * @param kind  "unbiased" divides by n−1, "population" by n. n ≤ 1 with "unbiased" returns NaN.
 */
export function std(r: NumArray, idx: number[], mu: number, kind: "unbiased" | "population"): number {
  let s = 0;
  for (const i of idx) s += (r[i]! - mu) ** 2;
  const d = kind === "unbiased" ? idx.length - 1 : idx.length;
  return d > 0 ? Math.sqrt(s / d) : NaN;
}

/**
 * Group mean with the library's singleton convention (ALGORITHMS.md): a group with one scorable
 * member has mean 0 (so its centred advantage is its reward).
 */
export function groupMean(r: NumArray, idx: number[]): number {
  return idx.length === 1 ? 0 : mean(r, idx);
}

/** Read a numeric option with a default. @throws TypeError naming the option. */
export function numOpt(options: Record<string, unknown>, key: string, dflt: number, estimator: string): number {
  const v = options[key];
  if (v === undefined) return dflt;
  if (typeof v !== "number" || Number.isNaN(v)) throw new TypeError(`${estimator}: option ${key} must be a number, got ${JSON.stringify(v)}`);
  return v;
}

/** Read an enum option with a default. @throws TypeError naming the option and the choices. */
export function enumOpt<T extends string>(options: Record<string, unknown>, key: string, choices: readonly T[], dflt: T, estimator: string): T {
  const v = options[key];
  if (v === undefined) return dflt;
  if (typeof v !== "string" || !(choices as readonly string[]).includes(v)) {
    throw new TypeError(`${estimator}: option ${key} must be one of ${choices.join(" | ")}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}
