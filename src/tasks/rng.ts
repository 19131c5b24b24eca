/**
 * Small deterministic pseudo-random tools for procedural tasks.
 *
 * - `hash32` / `hashSeed`: mix strings and numbers into a 32-bit seed (FNV-1a over UTF-16 code
 *   units, then the murmur3 `fmix32` finaliser so nearby inputs give unrelated seeds).
 * - `Rng`: the mulberry32 generator (Tommy Ettinger's 32-bit generator, public domain
 *   algorithm); period 2^32, plenty for generating one example per seed.
 *
 * Every random choice a task makes flows from `Rng`, so the same (seed, split, difficulty, index)
 * always yields the same example on every platform.
 */

/** murmur3's 32-bit finaliser: an avalanche mix of a 32-bit integer. Returns an unsigned 32-bit int. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 32-bit hash of a string (FNV-1a over UTF-16 code units, finalised with fmix32). Unsigned. */
export function hash32(text: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/**
 * Combine any number of parts (numbers or strings) into one 32-bit seed. Order matters.
 * Numbers must be finite; they are written in decimal, so 1 and "1" hash alike (on purpose).
 */
export function hashSeed(...parts: (number | string)[]): number {
  return hash32(parts.map((p) => String(p)).join("\u241f"));
}

/** Hash of a string mapped to [0, 1). Used to partition instance spaces (train/test). */
export function hashUnit(text: string, salt = 0): number {
  return hash32(text, salt) / 4294967296;
}

/** mulberry32 pseudo-random generator with convenience draws. Deterministic for a seed. */
export class Rng {
  private state: number;

  /** @param seed any number; only its low 32 bits are used. */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next unsigned 32-bit integer. */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (both inclusive). Throws if hi < lo or the range exceeds 2^53. */
  int(lo: number, hi: number): number {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) {
      throw new RangeError(`Rng.int: need integers lo <= hi, got ${lo}, ${hi}`);
    }
    const span = hi - lo + 1;
    if (span <= 4294967296) return lo + Math.floor(this.next() * span);
    // Wide ranges: combine two draws (53 bits).
    const r = (this.nextU32() * 2097152 + (this.nextU32() >>> 11)) / 9007199254740992;
    return lo + Math.floor(r * span);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("Rng.pick: empty array");
    return items[this.int(0, items.length - 1)]!;
  }

  /** A shuffled copy of `items` (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      const tmp = out[i]!;
      out[i] = out[j]!;
      out[j] = tmp;
    }
    return out;
  }

  /** A random string of exactly `digits` decimal digits, no leading zero unless digits === 1. */
  digits(digits: number): string {
    let s = digits === 1 ? String(this.int(0, 9)) : String(this.int(1, 9));
    for (let i = 1; i < digits; i++) s += String(this.int(0, 9));
    return s;
  }
}
