/**
 * A method's loss-term metrics (kd/*, luffy/*, chord/*), summed over an update's micro-batches and
 * reported once per step through the method's `stepMetrics`.
 */
import type { TokenLossFn } from "../core/engine.ts";

export class CapturedMetrics {
  private acc: Record<string, number> = {};
  constructor(private readonly prefix: RegExp) {}

  /** Wrap `fn` so that its metrics matching the prefix are added up here. */
  wrap(fn: TokenLossFn): TokenLossFn {
    return (scores, batch) => {
      const out = fn(scores, batch);
      for (const [k, v] of Object.entries(out.metrics)) if (this.prefix.test(k)) this.add(k, v);
      return out;
    };
  }

  add(k: string, v: number): void {
    this.acc[k] = (this.acc[k] ?? 0) + v;
  }

  /** The step's sums, then start over. */
  take(): Record<string, number> {
    const m = this.acc;
    this.acc = {};
    return m;
  }
}
