/**
 * ReLIFT (Ma et al. 2025, "Learning What Reinforcement Learning Can't: Interleaved Online
 * Fine-Tuning for Hardest Questions", arXiv:2506.07527): train mostly with RL; when a question is
 * among the hardest (here: its group's accuracy ≤ `hardness`, default 0 = every response wrong),
 * put a high-quality demonstration for it into a buffer; when the buffer holds a batch, take an
 * SFT step on it, interleaved with the RL steps.
 */
import type { Sequence } from "../core/sequence.ts";

/** One buffered demonstration. */
export interface BufferedDemo {
  /** Example id (the buffer holds at most one demonstration per id). */
  id: string;
  seq: Sequence;
  /** RL step at which it was added. */
  step: number;
}

/** FIFO buffer of demonstrations for the hardest questions, deduplicated by example id. */
export class ReliftBuffer {
  private items: BufferedDemo[] = [];
  /** Demonstrations evicted because the buffer was full. */
  evicted = 0;
  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`ReliftBuffer: capacity must be >= 1, got ${capacity}`);
  }
  get size(): number {
    return this.items.length;
  }
  /** Add a demonstration; an id already buffered is refreshed (moved to the back). Evicts the oldest when full. @returns whether the id was new. */
  add(d: BufferedDemo): boolean {
    const at = this.items.findIndex((x) => x.id === d.id);
    if (at >= 0) this.items.splice(at, 1);
    this.items.push(d);
    while (this.items.length > this.capacity) {
      this.items.shift();
      this.evicted++;
    }
    return at < 0;
  }
  /** Remove and return the `n` oldest demonstrations (fewer when the buffer holds fewer). */
  take(n: number): BufferedDemo[] {
    return this.items.splice(0, Math.max(0, n));
  }
  /** The buffered ids, oldest first. */
  ids(): string[] {
    return this.items.map((x) => x.id);
  }
  /** JSON-serialisable contents (for checkpoints): each demonstration's id, step and token ids, oldest first. */
  save(): SavedReliftBuffer {
    return { evicted: this.evicted, items: this.items.map((d) => ({ id: d.id, step: d.step, prompt: Array.from(d.seq.prompt), response: Array.from(d.seq.response) })) };
  }
  /** Replace the contents with a saved buffer (the capacity stays this buffer's). */
  restore(s: SavedReliftBuffer): void {
    this.items = s.items.map((d) => ({ id: d.id, step: d.step, seq: { prompt: Int32Array.from(d.prompt), response: Int32Array.from(d.response) } }));
    this.evicted = s.evicted;
    while (this.items.length > this.capacity) {
      this.items.shift();
      this.evicted++;
    }
  }
}

/** A ReliftBuffer as stored in a checkpoint. */
export interface SavedReliftBuffer {
  evicted: number;
  items: { id: string; step: number; prompt: number[]; response: number[] }[];
}

/** When ReLIFT takes SFT steps. */
export interface ReliftSchedule {
  /** Demonstrations per SFT step. */
  batchSize: number;
  /** Consider SFT only after every `every`-th RL step (0 or 1 = after every step). */
  every: number;
  /** At most this many SFT steps after one RL step. */
  maxSftSteps: number;
}

/**
 * Number of SFT steps to take after RL step `step` (1-based) with `buffered` demonstrations:
 * 0 off-schedule, else min(maxSftSteps, ⌊buffered / batchSize⌋) (only full batches).
 */
export function reliftSftSteps(step: number, buffered: number, s: ReliftSchedule): number {
  if (s.every > 1 && step % s.every !== 0) return 0;
  return Math.min(s.maxSftSteps, Math.floor(buffered / s.batchSize));
}

/**
 * Groups that count as hardest: accuracy (mean of `correct` over the group) ≤ `hardness`.
 * @param correct prompt-major [B], B a multiple of groupSize.
 * @returns group indices.
 */
export function hardestGroups(correct: readonly boolean[], groupSize: number, hardness = 0): number[] {
  const out: number[] = [];
  for (let g = 0; g * groupSize < correct.length; g++) {
    const c = correct.slice(g * groupSize, (g + 1) * groupSize);
    if (c.filter(Boolean).length / c.length <= hardness + 1e-12) out.push(g);
  }
  return out;
}
