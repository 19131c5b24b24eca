/**
 * The optimize stage: the one update loop of rlvr. RL, SFT, self-play, RAFT and ReLIFT's
 * interleaved SFT steps all train through `optimize()`:
 *
 *   for each epoch: (shuffle) → split into mini-batches → for each mini-batch (one optimizer update):
 *     split into micro-batches → engine.forwardBackward per micro-batch (gradients accumulate)
 *     → extra passes (CHORD's SFT term) → engine.optimStep, or drop the gradients when a loss
 *       was not finite.
 *
 * The loss of an update is built from that update's counts (`stepCounts` over its micro-batches),
 * so the update does not depend on how the mini-batch is cut into micro-batches (verl's
 * "global token count" normalisation; see src/algorithms/aggregation.ts).
 */
import { stepCounts, type StepCounts } from "../algorithms/index.ts";
import type { Engine, LossReport, OptimStep, TokenLossFn } from "../core/engine.ts";
import { chunkBySize, chunks, packSequences, type Sequence } from "../core/sequence.ts";
import type { Rng } from "../util/rng.ts";
import { dropGradients } from "./faults.ts";

/** How to train on a set of sequences. */
export interface OptimizeOptions {
  /** Passes over the sequences (PPO epochs). Default 1. */
  epochs?: number;
  /** Optimizer updates per epoch: the sequences split into this many mini-batches. Default 1. */
  miniBatches?: number;
  /** Most sequences per engine.forwardBackward call (default: the whole mini-batch). */
  microBatchSize?: number | undefined;
  /** Shuffles the sequences before each epoch when epochs > 1 or miniBatches > 1. */
  shuffle?: Rng;
  /** Token id used for padding. */
  padId: number;
  /** Normalising length L of the update's counts (rl.maxNewTokens for RL; the longest response for SFT). */
  maxLength: number;
  /** The loss of one update, from that update's counts. */
  loss: (counts: StepCounts) => TokenLossFn;
  /** Optimizer settings of every update (the learning rate already scheduled). */
  optim: OptimStep;
  /** Ask the engine for per-token entropy (entropy bonus, entropy metrics). */
  entropy?: boolean;
  /** The loss reads scores only at trained positions (Engine.forwardBackward's trainedOnly). */
  trainedOnly?: boolean;
  /** Skip an update whose mini-batch has no trained token (RL: every response masked). */
  skipEmptyUpdates?: boolean;
  /** Extra forward/backward passes accumulated into each update before its optimizer step. */
  extraBackward?: () => Promise<LossReport[]>;
}

/** What optimize() did. */
export interface OptimizeReport {
  /** Each micro-batch's (and extra pass's) metrics with its `loss`, in order. */
  lossParts: Record<string, number>[];
  /** Sum of the losses of every micro-batch and extra pass. */
  loss: number;
  /** Gradient norm of the last update: the engine's, NaN when its loss was not finite, 0 when no update ran. */
  gradNorm: number;
  /** Optimizer updates attempted. */
  updates: number;
  /** Updates not applied (non-finite loss, or the engine skipped a non-finite gradient norm). */
  skippedUpdates: number;
  /** Trained tokens of the last update (its counts.tokens). */
  tokens: number;
}

/**
 * Train `seqs` with `engine`: epochs × mini-batches × micro-batches, one optimizer step per
 * mini-batch. A non-finite loss in any pass of an update drops that update's gradients.
 * @param seqs sequences with whatever per-token data the loss reads (advantages, old/ref log-probs, weights).
 * @returns the per-pass metrics and update counts; an empty `seqs` runs no update.
 */
export async function optimize(engine: Engine, seqs: readonly Sequence[], o: OptimizeOptions): Promise<OptimizeReport> {
  const rep: OptimizeReport = { lossParts: [], loss: 0, gradNorm: 0, updates: 0, skippedUpdates: 0, tokens: 0 };
  const epochs = o.epochs ?? 1;
  const miniBatches = o.miniBatches ?? 1;
  for (let epoch = 0; epoch < epochs && seqs.length > 0; epoch++) {
    const order = o.shuffle && (epochs > 1 || miniBatches > 1) ? o.shuffle.shuffle([...seqs]) : seqs;
    for (const mini of chunks(order, miniBatches)) await update(engine, mini, o, rep);
  }
  return rep;
}

/** One optimizer update on one mini-batch (see optimize). */
async function update(engine: Engine, mini: readonly Sequence[], o: OptimizeOptions, rep: OptimizeReport): Promise<void> {
  const micro = chunkBySize(mini, o.microBatchSize ?? mini.length).map((m) => packSequences(m, o.padId));
  const counts = stepCounts(micro, o.maxLength);
  if (o.skipEmptyUpdates && counts.tokens === 0) return;
  const lossFn = o.loss(counts);
  let finite = true;
  const record = (r: LossReport) => {
    rep.lossParts.push({ ...r.metrics, loss: r.loss });
    rep.loss += r.loss;
    if (!Number.isFinite(r.loss)) finite = false;
  };
  const fbOpts = o.entropy || o.trainedOnly ? { ...(o.entropy ? { entropy: true } : {}), ...(o.trainedOnly ? { trainedOnly: true } : {}) } : undefined;
  for (const mb of micro) record(await engine.forwardBackward(mb, lossFn, fbOpts));
  for (const r of o.extraBackward ? await o.extraBackward() : []) record(r);
  rep.updates++;
  rep.tokens = counts.tokens;
  if (!finite) {
    await dropGradients(engine);
    rep.gradNorm = Number.NaN;
    rep.skippedUpdates++;
    return;
  }
  const step = await engine.optimStep(o.optim);
  rep.gradNorm = step.gradNorm;
  if (step.skipped) rep.skippedUpdates++;
}
