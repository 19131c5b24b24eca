/**
 * The RL stage's state: what one RL step (src/pipeline/step.ts: collect → reward → reference →
 * advantages → optimize → metrics) carries to the next, and how it is saved in checkpoints.
 */
import {
  AdaptiveKlController,
  AdaptiveEntropyController,
  FixedKlController,
  FixedEntropyController,
  type AlgorithmConfig,
  type EntropyController,
  type KlController,
} from "../algorithms/index.ts";
import { DataSelection, type SavedSelection } from "../rollout/selection.ts";
import { Rng, hash32 } from "../util/rng.ts";
import type { RunContext } from "./context.ts";
import type { StepBatch } from "./batch.ts";

/**
 * State carried across RL steps (and saved in checkpoints). The prompt order is a seeded shuffle
 * (hash32(seed, 0x71)) and every per-step random stream derives from hash32(seed, tag, step), so
 * the step, the cursor and the controllers' inputs are all a checkpoint needs.
 */
export interface RlState {
  /** RL steps done. */
  step: number;
  /** Prompts consumed (index into `order`, modulo its length). */
  cursor: number;
  order: number[];
  kl: KlController;
  entropy: EntropyController;
  /** Every `kl.update(kl, n)` made so far, in order (replayed on resume to rebuild the controller). */
  klUpdates: [number, number][];
  /** Every `entropy.update(h)` made so far, in order. */
  entropyUpdates: number[];
  /** Prompt drawing, group filters, curriculum and domain weights (src/rollout/selection.ts). */
  selection: DataSelection;
  /** The policy's version: RL steps whose updates changed the weights (a sampler syncs to it). */
  policyVersion: number;
  /** rl.async: batches of the next steps being collected (not saved; a resumed run collects anew). */
  pending: Promise<StepBatch>[];
  /** Why the trainer re-scores a sampler's batches (null: it does not); logged when it changes. Not saved. */
  rescoreWhy?: string | null;
}

export function initRlState(ctx: RunContext, alg: AlgorithmConfig): RlState {
  const rng = new Rng(hash32(ctx.cfg.seed, 0x71));
  const kl = alg.kl.adaptive ? new AdaptiveKlController(alg.kl.coef || 0.001, alg.kl.adaptive.target, alg.kl.adaptive.horizon) : new FixedKlController(alg.kl.coef);
  const e = alg.entropy;
  const entropy = e.adaptive ? new AdaptiveEntropyController({ init: e.coef, ...e.adaptive }) : new FixedEntropyController(e.coef);
  const selection = new DataSelection(ctx.cfg, ctx.train);
  return { step: 0, cursor: 0, order: rng.shuffle(ctx.train.map((_, i) => i)), kl, entropy, klUpdates: [], entropyUpdates: [], selection, policyVersion: 0, pending: [] };
}

/** The JSON-serialisable part of an RlState (the order is recomputed from the seed). */
export interface SavedRlState {
  step: number;
  cursor: number;
  klUpdates: [number | null, number][];
  entropyUpdates: (number | null)[];
  /** Data-selection state (curriculum, domain rewards, pool cursors, sampled tokens); absent in older checkpoints. */
  selection?: SavedSelection;
  /** The policy version (absent in older checkpoints: the step count is used). */
  policyVersion?: number;
  /** State of the guided / label-free method hooks (RlStageHooks.saveState); absent when none or in older checkpoints. */
  methods?: Record<string, unknown>;
}

export function saveRlState(st: RlState): SavedRlState {
  return { step: st.step, cursor: st.cursor, klUpdates: st.klUpdates.map(([k, n]) => [k, n]), entropyUpdates: [...st.entropyUpdates], selection: st.selection.save(), policyVersion: st.policyVersion };
}

/**
 * Rebuild an RlState from a checkpoint: a fresh state (same seeded order, controllers at their
 * initial values) whose controllers then replay the recorded updates — the same arithmetic in the
 * same order, so their coefficients are bit-identical to the interrupted run's. (JSON turns a
 * non-finite input into null; controllers ignore non-finite inputs, and so does the replay.)
 */
export function restoreRlState(ctx: RunContext, alg: AlgorithmConfig, saved: SavedRlState): RlState {
  const st = initRlState(ctx, alg);
  st.step = saved.step;
  st.cursor = saved.cursor;
  st.policyVersion = saved.policyVersion ?? saved.step;
  st.selection.restore(saved.selection);
  for (const [k, n] of saved.klUpdates) {
    const kl = k ?? Number.NaN;
    st.kl.update(kl, n);
    st.klUpdates.push([kl, n]);
  }
  for (const h of saved.entropyUpdates) {
    const e = h ?? Number.NaN;
    st.entropy.update(e);
    st.entropyUpdates.push(e);
  }
  return st;
}
