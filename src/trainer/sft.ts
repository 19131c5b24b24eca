/**
 * The SFT stage: cross-entropy on demonstrations (prompt tokens masked, the solution and EOS
 * trained), aggregated token-mean over the whole optimizer step.
 */
import { makeSftLoss, combineMetrics } from "../algorithms/index.ts";
import { learningRate } from "../core/schedule.ts";
import { Rng, hash32 } from "../util/rng.ts";
import type { Sequence } from "../core/sequence.ts";
import { optimize } from "../pipeline/optimize.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { Example } from "../core/example.ts";
import { evaluate } from "../eval/accuracy.ts";
import type { RunLogger } from "../pipeline/logger.ts";

export type Progress = (stage: string, step: number, total: number, info: Record<string, number>) => void;

/**
 * State carried across SFT steps (and saved in checkpoints). The example order is a seeded
 * shuffle (hash32(seed, 0x5f7)) of the first `sft.examples` training examples (all by default),
 * so a checkpoint stores only the step and the cursor into it.
 */
export interface SftState {
  /** Optimizer steps done. */
  step: number;
  /** Examples consumed (index into `order`, modulo its length). */
  cursor: number;
  order: number[];
}

export function initSftState(ctx: RunContext): SftState {
  const rng = new Rng(hash32(ctx.cfg.seed, 0x5f7));
  const pool = ctx.train.length - sftCheckSet(ctx).length;
  const n = Math.min(pool, ctx.cfg.sft?.examples ?? pool);
  return { step: 0, cursor: 0, order: rng.shuffle(Array.from({ length: n }, (_, i) => i)) };
}

/**
 * The examples `sft.stopAt` checks greedy accuracy on: the last `stopAt.prompts` training
 * examples, which SFT then never trains on. Empty without `sft.stopAt`.
 * @throws Error when the check set would leave no training example for SFT.
 */
export function sftCheckSet(ctx: RunContext): readonly Example[] {
  const stop = ctx.cfg.sft?.stopAt;
  if (!stop) return [];
  if (stop.prompts >= ctx.train.length) {
    throw new Error(`config error at sft.stopAt.prompts: ${stop.prompts} check prompts would leave none of the ${ctx.train.length} training examples for SFT; lower it`);
  }
  return ctx.train.slice(ctx.train.length - stop.prompts);
}

/**
 * Greedy accuracy on the SFT check set (see sftCheckSet), for `sft.stopAt`.
 * @returns accuracy in [0, 1]
 */
export async function sftCheckAccuracy(ctx: RunContext, maxNewTokens: number): Promise<number> {
  const r = await evaluate(ctx, sftCheckSet(ctx), { temperature: 0, maxNewTokens, seed: ctx.cfg.seed, bootstrap: 0, breakdown: false });
  return r.accuracy;
}

/**
 * `sft.stopAt`'s check after SFT step `st.step` of `total`: when one is due (every stopAt.every
 * steps, after step 0 and before the last), greedy accuracy on the check set, logged as
 * `check/accuracy` and `check/stopped`.
 * @returns the accuracy and whether it reached stopAt.accuracy, or null when no check was due.
 */
export async function sftStopCheck(ctx: RunContext, st: SftState, total: number, log: RunLogger): Promise<{ accuracy: number; stop: boolean } | null> {
  const stopAt = ctx.cfg.sft?.stopAt;
  if (!stopAt || st.step === 0 || st.step % stopAt.every !== 0 || st.step >= total) return null;
  const accuracy = await sftCheckAccuracy(ctx, ctx.cfg.eval.maxNewTokens ?? ctx.cfg.rl?.maxNewTokens ?? 16);
  const stop = accuracy >= stopAt.accuracy;
  log.metrics({ stage: "sft", step: st.step, "check/accuracy": accuracy, "check/stopped": stop ? 1 : 0 });
  return { accuracy, stop };
}

/**
 * One SFT optimizer step on the next `batchSize` examples. A non-finite loss in any micro-batch
 * drops the step's gradients and skips the update (`skipped: 1`); so does a non-finite gradient norm.
 * @returns the step's metrics (also written to metrics.jsonl).
 */
export async function sftStep(ctx: RunContext, st: SftState, log: RunLogger): Promise<Record<string, number>> {
  const s = ctx.cfg.sft!;
  const t0 = performance.now();
  const eos = ctx.tokenizer.eosId;
  const seqs: Sequence[] = [];
  for (let i = 0; i < s.batchSize; i++) {
    const ex = ctx.train[st.order[st.cursor++ % st.order.length]!]!;
    const target = ex.solution ?? ex.answer;
    seqs.push({ prompt: ctx.encodePrompt(ex), response: [...ctx.tokenizer.encode(target, { addSpecialTokens: false }), eos] });
  }
  const lr = learningRate(st.step, { lr: s.lr, schedule: s.schedule, warmupSteps: s.warmupSteps, totalSteps: s.steps, minLrRatio: s.minLrRatio });
  const rep = await optimize(ctx.engine, seqs, {
    padId: ctx.tokenizer.padId,
    microBatchSize: s.microBatchSize ?? s.batchSize,
    maxLength: Math.max(...seqs.map((q) => q.response.length)),
    loss: makeSftLoss,
    optim: { lr, maxGradNorm: s.maxGradNorm, weightDecay: s.weightDecay },
  });
  const m = combineMetrics(rep.lossParts);
  st.step++;
  const rec = { loss: rep.loss, nll: m["nll"] ?? rep.loss, lr, grad_norm: rep.gradNorm, skipped: rep.skippedUpdates > 0 ? 1 : 0, tokens: rep.tokens, step_time: (performance.now() - t0) / 1000 };
  log.metrics({ stage: "sft", step: st.step, ...rec });
  return rec;
}
