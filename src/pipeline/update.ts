/**
 * The update sequence: what follows collect in every RL update of rlvr — a run's step
 * (./step.ts, which the browser session's steps are too) and serve's capture training
 * (src/serve/train.ts) both train through `update()`:
 *
 *   reward (verifier reward → overlong shaping → method reward transforms)
 *   → reference (reference log-probs, KL, KL-in-reward after every transform)
 *   → advantages (estimator → method advantage transforms)
 *   → optimize (the policy loss, or a method's, over epochs × mini × micro-batches)
 *   → KL/entropy controllers → the update's metrics
 *
 * Each stage is timed under its name in `batch.times`. SFT has no rewards: its steps train through
 * the optimize stage's `optimize()` alone (src/trainer/sft.ts).
 */
import { combineMetrics, makePolicyLoss, type AlgorithmConfig } from "../algorithms/index.ts";
import type { UpdateBatch } from "./batch.ts";
import { advantages } from "./advantages.ts";
import { updateMetrics } from "./metrics.ts";
import { optimize, type OptimizeReport } from "./optimize.ts";
import { reference } from "./reference.ts";
import { reward } from "./reward.ts";
import type { UpdateContext, UpdateHooks, UpdatePlan, UpdateState } from "./update-types.ts";

/** Run `fn` and add its wall seconds to `times[name]`. */
export async function timed<T>(times: Record<string, number>, name: string, fn: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  times[name] = (times[name] ?? 0) + (performance.now() - t0) / 1000;
  return out;
}

/** What one update did: the optimize stage's report and the update's metrics (updateMetrics). */
export interface UpdateReport {
  opt: OptimizeReport;
  metrics: Record<string, number>;
}

/**
 * Reward → reference → advantages → optimize → controllers → metrics on a collected batch whose
 * sequences carry their old log-probs (or none: the update's own forward gives them). Advances
 * `st.policyVersion` when an update was applied, and feeds the KL and entropy controllers (their
 * inputs recorded in st.klUpdates / st.entropyUpdates for replay on resume).
 * @throws Error for a configuration the batch cannot take (see reward, reference, advantages).
 */
export async function update<B extends UpdateBatch>(ctx: UpdateContext, alg: AlgorithmConfig, st: UpdateState, batch: B, plan: UpdatePlan, hooks: UpdateHooks<NoInfer<B>> = {}): Promise<UpdateReport> {
  const times = batch.times;
  await timed(times, "reward", () => reward(ctx, alg, batch, hooks));
  const ref = await timed(times, "reference", () => reference(ctx, alg, st, batch));
  await timed(times, "advantages", () => advantages(ctx, alg, batch, ref.klTokens, hooks));
  const opt = await timed(times, "optimize", () => optimizeBatch(ctx, alg, st, batch, plan, hooks));
  updateControllers(st, batch, opt);
  return { opt, metrics: updateMetrics(batch, opt, st) };
}

/** The optimize stage: the policy loss (or a method's) over epochs × mini × micro-batches. */
async function optimizeBatch<B extends UpdateBatch>(ctx: UpdateContext, alg: AlgorithmConfig, st: UpdateState, batch: B, plan: UpdatePlan, hooks: UpdateHooks<B>): Promise<OptimizeReport> {
  batch.trainVersion = st.policyVersion;
  const state = { klCoef: alg.kl.placement === "loss" ? st.kl.coef : 0, entropyCoef: st.entropy.coef };
  const rep = await optimize(ctx.engine, batch.seqs, {
    ...plan,
    padId: ctx.tokenizer.padId,
    loss: (counts) => {
      const base = makePolicyLoss(alg, counts, state);
      return hooks.loss ? hooks.loss(alg, counts, state, base, st.step) : base;
    },
    entropy: true,
    // The policy loss reads response tokens only; a method's own loss may read more.
    trainedOnly: !hooks.loss,
    skipEmptyUpdates: true,
  });
  if (rep.updates > rep.skippedUpdates) st.policyVersion++;
  return rep;
}

/** KL and entropy controllers take the update's measurements (recorded for exact replay on resume). */
function updateControllers(st: UpdateState, batch: UpdateBatch, opt: OptimizeReport): void {
  if (batch.scoredReference) {
    st.kl.update(batch.kl, batch.rewards.length);
    st.klUpdates.push([batch.kl, batch.rewards.length]);
  }
  const entropy = combineMetrics(opt.lossParts)["entropy"];
  if (entropy !== undefined) {
    const h = entropy / Math.max(1, opt.updates);
    st.entropy.update(h);
    st.entropyUpdates.push(h);
  }
}
