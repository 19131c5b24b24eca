/**
 * Seeded pseudo-random numbers. Every random choice in rlvr flows from a run seed through this
 * module so runs are reproducible.
 *
 * Generator: SplitMix32-style mixing over a 32-bit state (fast, good enough for sampling and data
 * shuffles; not cryptographic). State is a single uint32 so it can be checkpointed exactly.
 */
export class Rng {
  private state: number;

  /** @param seed any integer (only the low 32 bits matter). */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next uniform uint32. */
  nextU32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextU32() >>> 5; // 27 bits
    const lo = this.nextU32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Standard normal sample (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** One element of `xs`, uniformly. Throws on an empty array. */
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error("Rng.pick: empty array");
    return xs[this.int(0, xs.length - 1)]!;
  }

  /** Fisher–Yates shuffle in place; returns `xs`. */
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }

  /** A new independent generator derived from this one's stream and `salt`. */
  fork(salt = 0): Rng {
    return new Rng(hash32(this.nextU32(), salt));
  }

  /** Current state (for checkpoints). */
  getState(): number {
    return this.state;
  }

  /** Restore a state from `getState()`. */
  setState(s: number): void {
    this.state = s >>> 0;
  }
}

/** Mix integers into one 32-bit hash (for deriving sub-seeds: hash32(seed, step, index)). */
export function hash32(...xs: number[]): number {
  let h = 0x811c9dc5;
  for (const x of xs) {
    h = Math.imul(h ^ (x >>> 0), 0x01000193) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39) >>> 0;
    h = (h ^ (h >>> 15)) >>> 0;
  }
  return h >>> 0;
}
