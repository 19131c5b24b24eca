/**
 * One RL step as its stages (DESIGN.md, "The RL step as a pipeline"):
 *
 *   collect → reward → reference → advantages → optimize → metrics
 *
 * One record (StepBatch, ./batch.ts) flows through them; each stage is a function in its own
 * module of this folder and is timed under its name (`time/<stage>` in metrics.jsonl). Methods
 * (src/methods/) transform the stages they declare, through `hooks`. The stages after collect are
 * the update sequence (./update.ts), which serve's capture training runs too.
 */
import type { AlgorithmConfig } from "../algorithms/index.ts";
import { learningRate } from "../core/schedule.ts";
import { Rng, hash32 } from "../util/rng.ts";
import type { RunContext } from "./context.ts";
import type { RlStepHooks } from "./hooks.ts";
import type { RunLogger } from "./logger.ts";
import type { RlState } from "./state.ts";
import type { StepBatch } from "./batch.ts";
import { collect, rescore, rescoreReason, useUpdateForward } from "./collect.ts";
import { metrics } from "./metrics.ts";
import { timed, update } from "./update.ts";
import type { UpdatePlan } from "./update-types.ts";

/**
 * One RL step. Returns the step's metrics (also written to metrics.jsonl). An optimizer update
 * whose loss is not finite (any micro-batch) drops its gradients and is not applied; so is one
 * whose gradient norm is not finite. `skipped` is 1 when any update of the step was skipped.
 */
export async function rlStep(ctx: RunContext, alg: AlgorithmConfig, st: RlState, log: RunLogger, hooks: RlStepHooks = {}): Promise<Record<string, number>> {
  const t0 = performance.now();
  const clock = samplerClock(st, t0);
  // Count only this step's window (time between steps, e.g. an evaluation, is not the step's).
  clock.idle = 0;
  if (clock.busy === 0) clock.idleSince = t0;
  if (st.pending.length === 0) await syncSampler(ctx, st);
  const tc = performance.now();
  const batch = await (st.pending.shift() ?? clock.track(collect(ctx, st, hooks)));
  const times = batch.times;
  times["collect"] = (performance.now() - tc) / 1000;
  if (ctx.sampler && !ctx.sampler.exact) await oldLogprobs(ctx, alg, st, batch, log);
  prefetch(ctx, st, hooks);
  checkStaleness(ctx, st, batch);
  const up = await update(ctx, alg, st, batch, updatePlan(ctx, st, hooks), hooks);
  await timed(times, "sync", () => syncSampler(ctx, st));
  Object.assign(batch.metrics, hooks.stepMetrics?.(st.step));
  st.step++;
  times["step"] = (performance.now() - t0) / 1000;
  Object.assign(times, idleTimes(clock, times["step"], times["collect"]));
  return metrics(ctx, batch, up.metrics, st, log);
}

/** A sampler's batch: re-score it, or let the update's own forward give lp_old (collect.ts rescoreReason). */
async function oldLogprobs(ctx: RunContext, alg: AlgorithmConfig, st: RlState, batch: StepBatch, log: RunLogger): Promise<void> {
  const why = rescoreReason(ctx, batch, st.kl.coef > 0 || alg.kl.adaptive !== undefined);
  if (st.rescoreWhy !== why) {
    st.rescoreWhy = why;
    log.info(why === null ? "rollout: one on-policy update a step, so the trainer's log-probs come from the update's own forward (no re-score pass)" : `rollout: the trainer re-scores every batch because ${why}`);
  }
  if (why === null) useUpdateForward(batch);
  else await timed(batch.times, "rescore", () => rescore(ctx, batch));
}

/**
 * When rollouts are being sampled: the sampler is busy while a collect is in flight (a step's own,
 * or one prefetched by rl.async) and otherwise idle, waiting for weights (a sampler apart from
 * the trainer cannot sample step s+1 before the weights of step s, beyond what rl.async allows).
 */
interface SamplerClock {
  /** Collects in flight. */
  busy: number;
  /** When the sampler last went idle (ms, performance.now()), while busy is 0. */
  idleSince: number;
  /** Idle milliseconds accumulated since the last step's report. */
  idle: number;
  /** Count `p` as sampler work from now until it settles. */
  track<T>(p: Promise<T>): Promise<T>;
}

const clocks = new WeakMap<RlState, SamplerClock>();

/** The sampler clock of a run's RL state (created idle at `now`, on its first step). */
function samplerClock(st: RlState, now: number): SamplerClock {
  let c = clocks.get(st);
  if (!c) {
    const clock: SamplerClock = {
      busy: 0,
      idleSince: now,
      idle: 0,
      track: (p) => {
        if (clock.busy++ === 0) clock.idle += performance.now() - clock.idleSince;
        const done = () => {
          if (--clock.busy === 0) clock.idleSince = performance.now();
        };
        p.then(done, done);
        return p;
      },
    };
    clocks.set(st, (c = clock));
  }
  return c;
}

/**
 * Where a step's time went (seconds): `wait_rollouts`, the trainer idle waiting for its batch;
 * `wait_weights`, the sampler idle (no collect in flight) waiting for the next weights;
 * `overlap`, both at work at once (sampling beside training: rl.async), = step − wait_rollouts − wait_weights.
 */
function idleTimes(clock: SamplerClock, step: number, waitRollouts: number): Record<string, number> {
  const now = performance.now();
  if (clock.busy === 0) {
    clock.idle += now - clock.idleSince;
    clock.idleSince = now;
  }
  const waitWeights = Math.min(step, clock.idle / 1000);
  clock.idle = 0;
  return { wait_rollouts: waitRollouts, wait_weights: waitWeights, overlap: Math.max(0, step - waitRollouts - waitWeights) };
}

/**
 * rl.async (bounded staleness): start collecting the next `maxStaleness` steps' batches now, with
 * the sampler's current weights, so generation overlaps this step's training (one-step
 * off-policy for maxStaleness 1, as verl's one-step-off-policy and TRL's async GRPO). The
 * sampler applies a weight sync only after the batches queued before it, so a batch is never
 * more than maxStaleness policy versions older than the weights it is trained from.
 */
function prefetch(ctx: RunContext, st: RlState, hooks: RlStepHooks): void {
  const k = ctx.cfg.rl!.async?.maxStaleness ?? 0;
  for (let ahead = st.pending.length + 1; ahead <= k && st.step + ahead < ctx.cfg.rl!.steps; ahead++) {
    const p = samplerClock(st, performance.now()).track(collect(ctx, st, hooks, st.step + ahead));
    p.catch(() => {}); // surfaced when the step that takes it awaits it
    st.pending.push(p);
  }
}

/** How the step's update cuts and steps its batch: rl.epochs × rl.miniBatches × rl.microBatchSize, the scheduled learning rate. */
function updatePlan(ctx: RunContext, st: RlState, hooks: RlStepHooks): UpdatePlan {
  const r = ctx.cfg.rl!;
  return {
    epochs: r.epochs,
    miniBatches: r.miniBatches,
    microBatchSize: r.microBatchSize,
    shuffle: new Rng(hash32(ctx.cfg.seed, 0x6d, st.step)),
    maxLength: r.maxNewTokens,
    optim: { lr: learningRate(st.step, { lr: r.lr, schedule: r.schedule, warmupSteps: r.warmupSteps, totalSteps: r.steps, minLrRatio: r.minLrRatio }), maxGradNorm: r.maxGradNorm, weightDecay: r.weightDecay },
    ...(hooks.extraBackward ? { extraBackward: () => hooks.extraBackward!(ctx, st.step) } : {}),
  };
}

/** Push the new weights to a sampler apart from the trainer (vLLM, a server, a worker thread). */
async function syncSampler(ctx: RunContext, st: RlState): Promise<void> {
  if (ctx.sampler?.syncWeights && ctx.sampler.version?.() !== st.policyVersion) await ctx.sampler.syncWeights(ctx.engine, st.policyVersion);
}

/**
 * Refuse a batch staler than rl.async.maxStaleness allows (0 without rl.async): a guard on the
 * queue above, asserted from the versions the rollouts recorded.
 * @throws Error naming the step, the batch's version and the bound.
 */
function checkStaleness(ctx: RunContext, st: RlState, batch: StepBatch): void {
  const k = ctx.cfg.rl!.async?.maxStaleness ?? 0;
  for (const o of batch.rollouts) {
    if (o.policyVersion !== undefined && st.policyVersion - o.policyVersion > k) {
      throw new Error(`internal error: step ${st.step + 1} would train on rollouts of policy version ${o.policyVersion} at version ${st.policyVersion}, beyond rl.async.maxStaleness ${k}`);
    }
  }
}
