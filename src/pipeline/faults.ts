/**
 * Faults during training: steps skipped for a non-finite loss or gradient, the stop after too
 * many in a row, and the interruption (SIGINT) that ends a run at a step boundary.
 */
import type { Engine } from "../core/engine.ts";

/**
 * Drop the gradients accumulated since the last optimizer step (both engines have `zeroGrad`;
 * it is not part of the engine contract, so an engine without it is left as is — its next
 * `optimStep` then applies them).
 */
export async function dropGradients(engine: Engine): Promise<void> {
  const e = engine as Engine & { zeroGrad?: () => void | Promise<void> };
  await e.zeroGrad?.();
}

/** Thrown when `faults.maxConsecutiveSkips` steps in a row were skipped. */
export class NonFiniteError extends Error {
  override name = "NonFiniteError";
}

/** Thrown by `train` when its abort signal fired; the run stopped at a step boundary. */
export class RunInterrupted extends Error {
  override name = "RunInterrupted";
  constructor(
    message: string,
    /** The checkpoint written on the way out (null when no step had run yet). */
    readonly checkpoint: string | null,
  ) {
    super(message);
  }
}

/**
 * Counts skipped steps in a row.
 * @param limit stop after this many consecutive skipped steps (>= 1).
 */
export class SkipCounter {
  constructor(
    readonly limit: number,
    public inARow = 0,
  ) {}

  /**
   * Record one step. @throws NonFiniteError (message names the stage, step, the last loss and
   * gradient norm, and what to change) when the limit is reached.
   */
  record(stage: string, step: number, m: Record<string, number>, latestCheckpoint: string | null): void {
    if (!m["skipped"]) {
      this.inARow = 0;
      return;
    }
    this.inARow++;
    if (this.inARow < this.limit) return;
    const loss = m["loss"] ?? m["loss/policy"];
    const lr = stage === "sft" ? "sft.lr" : "rl.lr";
    throw new NonFiniteError(
      `training stopped at ${stage} step ${step}: ${this.inARow} steps in a row were skipped because the loss or the gradient was not finite ` +
        `(last step: loss ${loss}, grad_norm ${m["grad_norm"]}); no update was applied for them. ` +
        `Lower ${lr} or the gradient clip (maxGradNorm), check custom losses and rewards for NaN/Infinity, ` +
        `then resume from ${latestCheckpoint ?? "the start (no checkpoint was written; set checkpoint.every)"}. ` +
        `The limit is faults.maxConsecutiveSkips (${this.limit}).`,
    );
  }
}
