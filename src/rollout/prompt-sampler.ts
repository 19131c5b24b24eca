/**
 * Which prompts an RL step draws: the data-selection side of the rollout stage.
 *
 * Three ways, chosen by the config:
 * - plain: a seeded shuffle of the training set, consumed in order (the trainer's `order`/`cursor`);
 * - procedural curriculum: a procedural task generates each prompt at the curriculum's current
 *   difficulty (`task.generate({seed, index: cursor, difficulty, split: "train"})`), so every prompt
 *   is new and never a held-out one;
 * - pools: the training set split into pools by domain (`Example.task`, for domain-aware sampling)
 *   and/or difficulty level (`Example.difficulty`, for a curriculum over a dataset); each prompt
 *   picks a domain by the domain weights, then the pool of the largest level ≤ the current
 *   difficulty (the smallest level when none is), and takes the pool's next example (each pool is
 *   its own seeded shuffle with its own cursor).
 *
 * Everything is deterministic in the seed, the cursors and the random numbers passed in, and the
 * state (`SamplerState`) is JSON-serialisable for checkpoints.
 */
import type { Task } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import { Rng, hash32 } from "../util/rng.ts";
import { drawIndex } from "./domain-weights.ts";

/** Cursors of the pools (pool key → examples taken). */
export type PoolCursors = Record<string, number>;

/** 32-bit FNV-1a of a string (pool keys → shuffle seeds). */
function strHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}

/** Key of a pool: domain and level ("*" when not split that way). */
export function poolKey(domain: string, level: number | "*"): string {
  return `${domain}@${level}`;
}

/** Training examples split into pools, each a seeded shuffle of example indices. */
export class PromptPools {
  /** Domain names, sorted (["*"] when not split by domain). */
  readonly domains: string[];
  /** Levels present per domain, ascending (["*"] when not split by difficulty). */
  readonly levels: Map<string, (number | "*")[]>;
  readonly pools: Map<string, number[]>;

  /**
   * @param byDomain split by `Example.task`; @param byLevel split by `Example.difficulty`
   * (examples without one go to the lowest level of their domain).
   * @throws Error when byLevel and no example has a difficulty.
   */
  constructor(train: readonly Example[], opts: { byDomain: boolean; byLevel: boolean; seed: number }) {
    if (opts.byLevel && !train.some((e) => e.difficulty !== undefined)) {
      throw new Error("config error at rl.curriculum: the training examples carry no difficulty; use a procedural data.task or rows with a difficulty field");
    }
    const groups = new Map<string, Map<number | "*", number[]>>();
    const minLevel = Math.min(...train.map((e) => e.difficulty ?? Infinity));
    train.forEach((ex, i) => {
      const d = opts.byDomain ? ex.task : "*";
      const l: number | "*" = opts.byLevel ? (ex.difficulty ?? minLevel) : "*";
      let byL = groups.get(d);
      if (!byL) groups.set(d, (byL = new Map()));
      let xs = byL.get(l);
      if (!xs) byL.set(l, (xs = []));
      xs.push(i);
    });
    this.domains = [...groups.keys()].sort();
    this.levels = new Map();
    this.pools = new Map();
    for (const d of this.domains) {
      const byL = groups.get(d)!;
      const levels = [...byL.keys()].sort((a, b) => (a === "*" || b === "*" ? 0 : a - b));
      this.levels.set(d, levels);
      for (const l of levels) {
        const key = poolKey(d, l);
        this.pools.set(key, new Rng(hash32(opts.seed, 0x71, strHash(key))).shuffle([...byL.get(l)!]));
      }
    }
  }

  /** Smallest and largest difficulty level over all pools (null when not split by level). */
  levelRange(): { min: number; max: number } | null {
    const all = [...this.levels.values()].flat().filter((l): l is number => l !== "*");
    return all.length ? { min: Math.min(...all), max: Math.max(...all) } : null;
  }

  /** The pool a prompt of `domain` at `difficulty` comes from. */
  keyFor(domain: string, difficulty: number | null): string {
    const levels = this.levels.get(domain)!;
    if (difficulty === null || levels[0] === "*") return poolKey(domain, levels[0]!);
    let pick: number | "*" = levels[0]!;
    for (const l of levels) if (l !== "*" && l <= difficulty) pick = l;
    return poolKey(domain, pick);
  }

  /**
   * Draw `n` example indices. `weights` (one per domain, Σ = 1) picks each prompt's domain with
   * `rng`; without weights the domains take turns by the rng uniformly. Advances `cursors`.
   */
  draw(n: number, opts: { cursors: PoolCursors; rng: Rng; weights?: readonly number[]; difficulty: number | null }): number[] {
    const K = this.domains.length;
    const w = opts.weights ?? this.domains.map(() => 1 / K);
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const d = this.domains[K === 1 ? 0 : drawIndex(w, opts.rng.next())]!;
      const key = this.keyFor(d, opts.difficulty);
      const pool = this.pools.get(key)!;
      const c = opts.cursors[key] ?? 0;
      out.push(pool[c % pool.length]!);
      opts.cursors[key] = c + 1;
    }
    return out;
  }
}

/**
 * Generate `n` training prompts of a procedural task at `difficulty`, indices start..start+n−1.
 * (The train split never holds a test prompt; see src/tasks/split.ts.)
 */
export function generatePrompts(task: Task, opts: { seed: number; start: number; n: number; difficulty: number }): Example[] {
  const out: Example[] = [];
  for (let i = 0; i < opts.n; i++) out.push(task.generate({ seed: opts.seed, index: opts.start + i, difficulty: opts.difficulty, split: "train" }));
  return out;
}
