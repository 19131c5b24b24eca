/**
 * The SFT stage: cross-entropy on demonstrations (prompt tokens masked, the solution and EOS
 * trained), aggregated token-mean over the whole optimizer step.
 */
import { makeSftLoss, stepCounts, combineMetrics } from "../algorithms/index.ts";
import { learningRate } from "../engines/embedded/optimizer.ts";
import { Rng, hash32 } from "../util/rng.ts";
import { chunkBySize, packSequences, type Sequence } from "./batch.ts";
import type { RunContext } from "./context.ts";
import type { RunLogger } from "./logger.ts";

export type Progress = (stage: string, step: number, total: number, info: Record<string, number>) => void;

/** Run `cfg.sft.steps` optimizer steps of supervised fine-tuning on the train examples. */
export async function runSft(ctx: RunContext, log: RunLogger, progress?: Progress): Promise<void> {
  const s = ctx.cfg.sft;
  if (!s || s.steps === 0) return;
  const rng = new Rng(hash32(ctx.cfg.seed, 0x5f7));
  const order = rng.shuffle(ctx.train.map((_, i) => i));
  let cursor = 0;
  const eos = ctx.tokenizer.eosId;
  for (let step = 0; step < s.steps; step++) {
    const t0 = performance.now();
    const seqs: Sequence[] = [];
    for (let i = 0; i < s.batchSize; i++) {
      const ex = ctx.train[order[cursor++ % order.length]!]!;
      const target = ex.solution ?? ex.answer;
      seqs.push({ prompt: ctx.encodePrompt(ex), response: [...ctx.tokenizer.encode(target), eos] });
    }
    const micro = chunkBySize(seqs, s.microBatchSize ?? s.batchSize).map((m) => packSequences(m, ctx.tokenizer.padId));
    const counts = stepCounts(micro, Math.max(...seqs.map((q) => q.response.length)));
    const lossFn = makeSftLoss(counts);
    const parts: Record<string, number>[] = [];
    let loss = 0;
    for (const mb of micro) {
      const r = await ctx.engine.forwardBackward(mb, lossFn);
      loss += r.loss;
      parts.push(r.metrics);
    }
    const lr = learningRate(step, { lr: s.lr, schedule: s.schedule, warmupSteps: s.warmupSteps, totalSteps: s.steps, minLrRatio: s.minLrRatio });
    const { gradNorm, skipped } = await ctx.engine.optimStep({ lr, maxGradNorm: s.maxGradNorm, weightDecay: s.weightDecay });
    const m = combineMetrics(parts);
    const rec = { stage: "sft", step: step + 1, loss, nll: m["nll"] ?? loss, lr, grad_norm: gradNorm, skipped: skipped ? 1 : 0, tokens: counts.tokens, step_time: (performance.now() - t0) / 1000 };
    log.metrics(rec);
    progress?.("sft", step + 1, s.steps, { loss });
  }
}
