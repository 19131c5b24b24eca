// User code registers its own advantage estimator and policy loss, names them in a config, and
// trains with them through the same entry points as the built-ins. This is the example of
// docs/algorithms.md ("Registering your own").
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  computeAdvantages,
  computeTokenAdvantages,
  makePolicyLoss,
  registerAdvantage,
  registerPolicyLoss,
  resolveAlgorithm,
  stepCounts,
  type AdvantageInput,
  type PolicyLossContext,
  type PolicyLossTerms,
} from "../../src/algorithms/index.ts";
import { assertClose, randomBatch } from "./helpers.ts";

// --- the docs example ------------------------------------------------------------------------
/** Group-median baseline: A = s − median_g (NaN rewards get 0 and are left out). */
function medianBaseline(input: AdvantageInput, options: Record<string, unknown>): Float32Array {
  const scale = (options["scale"] as number | undefined) ?? 1;
  const groups = new Map<number, number[]>();
  for (let b = 0; b < input.rewards.length; b++) {
    if (Number.isNaN(input.rewards[b]!)) continue;
    const g = input.groupIds[b]!;
    groups.set(g, [...(groups.get(g) ?? []), b]);
  }
  const out = new Float32Array(input.rewards.length);
  for (const idx of groups.values()) {
    const s = idx.map((b) => input.rewards[b]!).sort((x, y) => x - y);
    const med = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    for (const b of idx) out[b] = scale * (input.rewards[b]! - med);
  }
  return out;
}
registerAdvantage("median_baseline", medianBaseline, { schema: z.looseObject({ scale: z.number().gt(0).default(1) }) });

/** Advantage-weighted log-likelihood with a cap on |A|: ℓ = −clamp(A, ±cap) · lp. */
function cappedPg(ctx: PolicyLossContext): PolicyLossTerms {
  const cap = (ctx.options["cap"] as number | undefined) ?? 1;
  const n = ctx.batchSize * ctx.seqLen;
  const loss = new Float64Array(n);
  const grad = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (!(ctx.mask[i]! > 0)) continue;
    const a = Math.max(-cap, Math.min(cap, ctx.advantages[i]!));
    loss[i] = -a * ctx.logprobs[i]!;
    grad[i] = -a;
  }
  return { loss, grad };
}
registerPolicyLoss("capped_pg", cappedPg, { defaults: { cap: 1 }, schema: z.looseObject({ cap: z.number().gt(0) }) });
// ---------------------------------------------------------------------------------------------

describe("registering a custom estimator and a custom loss", () => {
  it("the estimator is called by name, with its options validated and defaulted", () => {
    const rewards = Float64Array.from([1, 0, 0, 0.5, Number.NaN]);
    const groupIds = Int32Array.from([2, 2, 2, 9, 9]);
    assert.deepEqual([...computeAdvantages("median_baseline", { rewards, groupIds })], [1, 0, 0, 0, 0]);
    const cfg = resolveAlgorithm({ advantage: { name: "median_baseline" }, loss: { name: "capped_pg", cap: 0.5 } });
    assert.equal(cfg.advantage["scale"], 1);
    assert.deepEqual([...computeAdvantages(cfg.advantage.name, { rewards, groupIds }, { scale: 2 })], [2, 0, 0, 0, 0]);
    assert.throws(() => resolveAlgorithm({ advantage: { name: "median_baseline", scale: -1 } }), /algorithm\.advantage\.scale/);
  });
  it("the loss runs through makePolicyLoss with aggregation, KL and entropy like a built-in", () => {
    const { batch, logprobs, entropy } = randomBatch(12, 5, 6);
    const rewards = Float64Array.from([1, 0, 1, 0, 0.5]);
    batch.advantages = computeTokenAdvantages("median_baseline", { rewards, groupIds: batch.groupIds!, mask: batch.lossMask, seqLen: 6 });
    const cfg = resolveAlgorithm({
      advantage: { name: "median_baseline" },
      loss: { name: "capped_pg", cap: 0.5 },
      aggregation: "seq-mean-token-mean",
      entropy: { coef: 0.001 },
    });
    const counts = stepCounts([batch], 6);
    const out = makePolicyLoss(cfg, counts)({ logprobs: Float32Array.from(logprobs), entropy: Float32Array.from(entropy) }, batch);
    assert.ok(Number.isFinite(out.loss) && out.dEntropy !== undefined);
    // Check one token's cotangent against the formula.
    const i = batch.lossMask.findIndex((m) => m > 0);
    const b = Math.floor(i / 6);
    let Tb = 0;
    for (let t = 0; t < 6; t++) Tb += batch.lossMask[b * 6 + t]!;
    const a = Math.max(-0.5, Math.min(0.5, batch.advantages[i]!));
    assertClose(out.dLogprobs[i]!, -a / (counts.sequences * Tb), 1e-6);
  });
  it("a bad registration is refused", () => {
    assert.throws(() => registerPolicyLoss("has space", cappedPg), /identifier/);
    assert.throws(() => registerAdvantage("x", 3 as never), /function/);
  });
});
