/**
 * CHORD — on- and off-policy as one objective (arXiv:2508.11408): L = (1 − μ)·L_RL + μ·L_SFT, with
 * μ on a schedule and optional φ = p(1 − p) token weights on the SFT term. Options:
 * `methods.expert` with `mode: chord`. Transforms the optimize stage: scales the policy loss and
 * adds an SFT pass on demonstrations to every update.
 */
import { makeChordSftLoss, scaleLoss, stepCounts } from "../algorithms/index.ts";
import type { RunConfig } from "../config/schema.ts";
import { chunkBySize, packSequences, type Sequence } from "../core/sequence.ts";
import type { BuiltinMethodOptions } from "./config.ts";
import { scheduleValue } from "./schedule.ts";
import { demonstration } from "./sft.ts";
import { Rng, hash32 } from "../util/rng.ts";
import { CapturedMetrics } from "./capture.ts";
import { defineMethod } from "./define.ts";

type ExpertOptions = BuiltinMethodOptions["expert"];

export const chord = defineMethod<ExpertOptions>({
  name: "chord",
  configPath: "methods.expert",
  options: (cfg: RunConfig) => (cfg.methods?.expert?.mode === "chord" ? cfg.methods.expert : undefined),
  stages: ["optimize", "metrics"],
  order: 45,
  build(ctx, e) {
    const r = ctx.cfg.rl!;
    const captured = new CapturedMetrics(/^chord\//);
    const order = new Rng(hash32(ctx.cfg.seed, 0xc4)).shuffle(ctx.train.map((_, i) => i));
    let cursor = 0;
    const mu = (t: number) => scheduleValue({ ...e.mu, steps: e.mu.steps ?? r.steps }, t);
    return {
      loss: (_alg, _counts, _state, base, step) => scaleLoss(base, 1 - mu(step)),
      async extraBackward(c, st) {
        const m = mu(st);
        if (m <= 0) return [];
        const seqs: Sequence[] = [];
        for (let i = 0; i < e.batchSize; i++) {
          const d = demonstration(c.train[order[cursor++ % order.length]!]!, c.encodePrompt, c.tokenizer);
          seqs.push({ ...d, weights: new Float32Array(d.response.length).fill(1) });
        }
        const micro = chunkBySize(seqs, r.microBatchSize ?? seqs.length).map((q) => packSequences(q, c.tokenizer.padId));
        const counts = stepCounts(micro, Math.max(...seqs.map((q) => q.response.length)));
        const fn = scaleLoss(makeChordSftLoss(counts, { phi: e.phi }), m);
        const reps = [];
        for (const mb of micro) {
          const rep = await c.engine.forwardBackward(mb, fn);
          captured.add("chord/sft_loss", rep.loss);
          captured.add("chord/phi_mean", (rep.metrics["chord/phi_sum"] ?? 0) / Math.max(1, counts.tokens));
          reps.push({ ...rep, metrics: {} });
        }
        return reps;
      },
      stepMetrics: (step) => ({ ...captured.take(), "chord/mu": mu(step) }),
      saveState: () => ({ chord: { cursor } }),
      restoreState(saved) {
        const cs = saved["chord"] as { cursor: number } | undefined;
        if (cs) cursor = cs.cursor;
      },
    };
  },
});
