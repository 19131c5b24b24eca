/**
 * Entropy bonus coefficient controllers. The bonus itself (− c · agg(H), H the per-token entropy
 * the engine computes over the full vocabulary) lives in the policy loss (policy-loss.ts), which
 * returns dL/dH = − c · w.
 */

/** An entropy coefficient controller: `coef` is c for the next step. */
export interface EntropyController {
  readonly coef: number;
  /** Feed the step's mean token entropy (nats); returns the coefficient to use for the step. */
  update(meanEntropy: number): number;
}

/** Fixed c. */
export class FixedEntropyController implements EntropyController {
  constructor(public readonly coef: number) {}
  update(): number {
    return this.coef;
  }
}

/**
 * Adaptive entropy control (Skywork Open Reasoner 1 Technical Report, He et al. 2025,
 * arXiv:2505.22312): the internal coefficient rises by `step` while the mean entropy is below
 * `target` and falls by `step` otherwise, clamped to [min, max]; the bonus is applied only while
 * the entropy is below target (the returned coefficient is 0 otherwise).
 * Defaults follow TRL: step 0.005, bounds [0, 1], target 0.2.
 */
export class AdaptiveEntropyController implements EntropyController {
  private c: number;
  private active = 0;
  constructor(readonly opts: { init?: number; target?: number; step?: number; min?: number; max?: number } = {}) {
    const { init = 0, min = 0, max = 1 } = opts;
    if (!(min <= max)) throw new RangeError(`AdaptiveEntropyController: min (${min}) must be ≤ max (${max})`);
    this.c = Math.min(max, Math.max(min, init));
  }
  /** Coefficient returned by the last `update` (0 before the first). */
  get coef(): number {
    return this.active;
  }
  /** The internal (unmasked) coefficient. */
  get internal(): number {
    return this.c;
  }
  /** @returns the coefficient for this step: the updated c if meanEntropy < target, else 0. */
  update(meanEntropy: number): number {
    const { target = 0.2, step = 0.005, min = 0, max = 1 } = this.opts;
    if (!Number.isFinite(meanEntropy)) return this.active;
    const below = meanEntropy < target;
    this.c = Math.min(max, Math.max(min, this.c + (below ? step : -step)));
    this.active = below ? this.c : 0;
    return this.active;
  }
}
