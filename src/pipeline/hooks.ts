/**
 * Extension points of the RL step (rlStep) and the RL stage (train), used by the guided methods
 * (RAFT, ReLIFT, LUFFY, CHORD, KDRL) and the label-free ones (TTRL, ETTRL, EVOL-RL, self-play);
 * src/methods/. Every hook is optional; with none, rlStep is plain RLVR. No hook replaces the
 * step: every method runs through its stages (collect → reward → reference → advantages →
 * optimize → metrics), so curriculum, filters, samplers and tree/agent rollouts apply to all.
 */
import type { AlgorithmConfig, StepCounts, StepState } from "../algorithms/index.ts";
import type { LossReport, SampleResult, TokenLossFn } from "../core/engine.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import type { Sequence } from "../core/sequence.ts";
import type { CollectedRollouts } from "../rollout/collect.ts";
import type { RunContext } from "./context.ts";
import type { RunLogger } from "./logger.ts";
import type { RlState } from "./state.ts";

/** What the step knows after verification, before advantages. */
export interface RewardStage {
  step: number;
  examples: readonly Example[];
  /** Prompt token ids, one per example. */
  prompts: readonly Int32Array[];
  rollouts: readonly SampleResult[];
  texts: readonly string[];
  verdicts: readonly Verdict[];
  /** Outcome rewards [rollouts.length] (the verifier's, after KL-in-reward when configured). */
  rewards: Float32Array;
  /** The on-policy sequences, one per rollout (a hook may set mask/refLogprobs/weights on them). */
  seqs: Sequence[];
}

/** What a reward hook returns. */
export interface RewardStageResult {
  /** Replacement rewards, [rollouts.length] (TTRL, EVOL-RL). */
  rewards?: Float32Array;
  /** Extra sequences that join groups before advantages (LUFFY's expert trajectories), with their rewards. */
  extra?: { seqs: Sequence[]; rewards: number[] };
  metrics?: Record<string, number>;
}

/** What the collect stage knows of one generation batch, for a collect hook. */
export interface CollectStage {
  examples: readonly Example[];
  prompts: readonly Int32Array[];
  /** The batch's sampling seed. */
  seed: number;
  step: number;
}

/** A generation batch a collect source made: each group's example and prompt, and its rollouts. */
export interface SourcedBatch {
  /** One example per group (promptIndex of `ro.rollouts` indexes it). */
  examples: Example[];
  /** The rollouts, with `ro.prompts` set: one prompt per group. */
  ro: CollectedRollouts & { prompts: Int32Array[] };
}

export interface RlStepHooks {
  /**
   * Make each generation batch instead of sampling the examples the step drew (self-play: the
   * proposer's tasks). `s.examples` are the drawn ones. At most one method may set it.
   */
  source?(s: CollectStage): Promise<SourcedBatch>;
  /** After each generation batch is sampled and verified, before groups are kept (GHPO's hints). */
  collect?(ro: CollectedRollouts, s: CollectStage): Promise<CollectedRollouts>;
  /** After verification, before advantages: reward transforms, extra sequences. */
  rewards?(s: RewardStage): Promise<RewardStageResult | undefined> | RewardStageResult | undefined;
  /** After advantages ([on-policy rollouts, then extras]): reshape them (ETTRL's EAR). */
  advantages?(adv: Float32Array, s: RewardStage): Float32Array;
  /**
   * The loss of one optimizer update, from `base` (the configured policy loss, or the previous
   * method's): LUFFY's mixed-policy loss replaces it, CHORD scales it, KDRL adds its KD term.
   * Methods' loss transforms chain in method order.
   */
  loss?(alg: AlgorithmConfig, counts: StepCounts, state: StepState, base: TokenLossFn, step: number): TokenLossFn;
  /** Extra forward/backward passes accumulated into an update before its optimizer step (CHORD's SFT term). */
  extraBackward?(ctx: RunContext, step: number): Promise<LossReport[]>;
  /** Metrics of the step, added to its metrics record. */
  stepMetrics?(step: number): Record<string, number>;
}

/** Extension points of the RL stage. */
export interface RlStageHooks extends RlStepHooks {
  /** Once, when the RL stage starts (e.g. load a teacher into the reference slot). */
  init?(ctx: RunContext): Promise<void>;
  /**
   * After each RL step (ReLIFT's interleaved SFT steps). The step's metrics row `m` is already in
   * metrics.jsonl: write what this hook does as rows of its own (`log.metrics`).
   */
  afterStep?(ctx: RunContext, st: RlState, m: Record<string, number>, log: RunLogger): Promise<void>;
  /** Release resources (teacher engines). */
  close?(): Promise<void>;
  /**
   * State the methods carry across steps (ReLIFT's buffer and counters, CHORD's cursor), as
   * JSON-serialisable values under method-named keys; written into checkpoints (trainer.json,
   * rl.methods) so a resumed run continues exactly where the interrupted one stood.
   */
  saveState?(): Record<string, unknown>;
  /** Restore what saveState returned (called once, after the hooks are built, on resume). */
  restoreState?(saved: Record<string, unknown>): void;
}

/**
 * Merge hook sets (applied in order): reward hooks chain (each sees the previous one's rewards;
 * extras and metrics accumulate), advantage and loss hooks compose, extra passes, metrics, init,
 * afterStep and close run in order; saved state is the union of each set's keys (each set
 * restores its own).
 * @throws Error when two sets both set a collect source.
 */
export function mergeHooks(...sets: RlStageHooks[]): RlStageHooks {
  const out: RlStageHooks = {};
  const pick = <K extends "source">(k: K, what: string) => {
    const hs = sets.filter((h) => h[k]);
    if (hs.length > 1) throw new Error(`config error: two configured methods both ${what}; enable only one of them`);
    if (hs[0]) out[k] = hs[0][k];
  };
  pick("source", "make the step's generation batches (methods.selfPlay)");
  const ls = sets.filter((h) => h.loss);
  if (ls.length) out.loss = (alg, counts, state, base, step) => ls.reduce((fn, h) => h.loss!(alg, counts, state, fn, step), base);
  const rw = sets.filter((h) => h.rewards);
  if (rw.length) {
    out.rewards = async (s) => {
      const acc: RewardStageResult = { metrics: {} };
      for (const h of rw) {
        const r = await h.rewards!(s);
        if (!r) continue;
        if (r.rewards) acc.rewards = s.rewards = r.rewards;
        if (r.extra) acc.extra = { seqs: [...(acc.extra?.seqs ?? []), ...r.extra.seqs], rewards: [...(acc.extra?.rewards ?? []), ...r.extra.rewards] };
        Object.assign(acc.metrics!, r.metrics);
      }
      return acc;
    };
  }
  const col = sets.filter((h) => h.collect);
  if (col.length) out.collect = async (ro, s) => { for (const h of col) ro = await h.collect!(ro, s); return ro; };
  const adv = sets.filter((h) => h.advantages);
  if (adv.length) out.advantages = (a, s) => adv.reduce((x, h) => h.advantages!(x, s), a);
  const xb = sets.filter((h) => h.extraBackward);
  if (xb.length) out.extraBackward = async (c, st) => (await Promise.all(xb.map((h) => h.extraBackward!(c, st)))).flat();
  const sm = sets.filter((h) => h.stepMetrics);
  if (sm.length) out.stepMetrics = (step) => Object.assign({}, ...sm.map((h) => h.stepMetrics!(step)));
  const seq = <K extends "init" | "close">(k: K) => {
    const hs = sets.filter((h) => h[k]);
    if (hs.length) out[k] = (async (...args: unknown[]) => { for (const h of hs) await (h[k] as (...a: unknown[]) => Promise<void>)(...args); }) as RlStageHooks[K];
  };
  seq("init");
  seq("close");
  const sv = sets.filter((h) => h.saveState);
  if (sv.length) {
    out.saveState = () => {
      const acc: Record<string, unknown> = {};
      for (const h of sv) {
        for (const [k, v] of Object.entries(h.saveState!())) {
          if (k in acc) throw new Error(`internal error: two method hook sets both save state under "${k}"`);
          acc[k] = v;
        }
      }
      return acc;
    };
  }
  const rs = sets.filter((h) => h.restoreState);
  if (rs.length) out.restoreState = (saved) => { for (const h of rs) h.restoreState!(saved); };
  const after = sets.filter((h) => h.afterStep);
  if (after.length) out.afterStep = async (c, st, m, log) => { for (const h of after) await h.afterStep!(c, st, m, log); };
  return out;
}
