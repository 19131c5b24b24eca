/**
 * Shared-prefix passes of the embedded engine (src/engines/embedded/prefix.ts, model.ts
 * prefixTokenLogprobs): the plan finds a GRPO batch's groups and their shared prompt and refuses
 * batches without one; the layout maps are adjoint; and an engine running shared prefixes gives
 * the same log-probs, entropies, gradients and samples as one running every row in full
 * (Llama with grouped-query attention, Qwen2 with biases and tied embeddings; one pass and chunked).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hfParamNames, type ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { planSharedPrefix, prefixShift, prefixUnshift, type PrefixPlan } from "../../src/engines/embedded/prefix.ts";
import type { TokenBatch, TokenLossFn } from "../../src/core/engine.ts";
import { tinyLlama, tinyQwen2, randomHfWeights, maxAbsDiff, groupBatch, Rng } from "./helpers/tiny.ts";

describe("planSharedPrefix", () => {
  test("a GRPO batch: groups of n, shared positions up to the last prompt token", () => {
    const batch = groupBatch(new Rng(1), 11, 8, 4, 7, 5);
    assert.equal(batch.seqLen, 12);
    // Positions 0..5 once per group; 6..10 (predicting tokens 7..11) for every row, padded to 8.
    assert.deepEqual(planSharedPrefix(batch, 4), { n: 4, shared: 6, rest: 8 });
    assert.deepEqual(planSharedPrefix(batch, 1), { n: 4, shared: 6, rest: 5 });
  });

  test("the shared part stops before the first scored token, and at the shortest group's agreement", () => {
    const batch = groupBatch(new Rng(2), 11, 4, 2, 6, 3);
    // Score a prompt token of one row: the shared part may only predict tokens before it.
    batch.lossMask[5 * batch.seqLen + 4] = 1;
    assert.equal(batch.seqLen, 9);
    assert.deepEqual(planSharedPrefix(batch, 1, { minSaving: 0 }), { n: 2, shared: 3, rest: 5 });
    assert.equal(planSharedPrefix(batch, 1), null, "4·3 + 8·5 = 52 positions against 8·8 = 64 in full: 19% saved, under the default 20%");
    assert.equal(planSharedPrefix(batch, 4, { minSaving: 0 }), null, "4·3 + 8·8 = 76 against 8·8: the bucket eats the saving");
    // A group whose rows differ at token 2: nothing to gain over the full pass.
    const b2 = groupBatch(new Rng(3), 11, 4, 2, 6, 3);
    b2.tokens[1 * b2.seqLen + 2] = (b2.tokens[2]! + 1) % 11;
    assert.equal(planSharedPrefix(b2, 4), null);
  });

  test("no plan for distinct prompts, one row, or groups that do not tile the batch", () => {
    const rng = new Rng(4);
    assert.equal(planSharedPrefix(groupBatch(rng, 11, 8, 1, 7, 5), 4), null);
    assert.equal(planSharedPrefix(groupBatch(rng, 11, 1, 1, 7, 5), 4), null);
    // 3 rows sharing a prompt then 2 sharing another: no equal group size shares enough.
    const a = groupBatch(rng, 11, 1, 3, 7, 3);
    const b = groupBatch(rng, 11, 1, 2, 7, 3);
    const T = Math.max(a.seqLen, b.seqLen);
    const tokens = new Int32Array(5 * T);
    const lossMask = new Float32Array(5 * T);
    for (const [src, off] of [[a, 0], [b, 3]] as const)
      for (let r = 0; r < src.batchSize; r++)
        for (let t = 0; t < src.seqLen; t++) {
          tokens[(off + r) * T + t] = src.tokens[r * src.seqLen + t]!;
          lossMask[(off + r) * T + t] = src.lossMask[r * src.seqLen + t]!;
        }
    const mixed: TokenBatch = { batchSize: 5, seqLen: T, tokens, lengths: Int32Array.from([...a.lengths, ...b.lengths]), lossMask };
    assert.equal(planSharedPrefix(mixed, 4), null);
  });

  test("prefixShift is the adjoint of prefixUnshift (⟨unshift(p, r), c⟩ = ⟨p, shift(c).pre⟩ + ⟨r, shift(c).rest⟩)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const rng = new Rng(seed);
        const n = rng.int(2, 4);
        const U = rng.int(1, 5);
        const batch = groupBatch(rng, 11, U, n, rng.int(2, 6), 4);
        const plan = planSharedPrefix(batch, 4, { minSaving: -10, padRows: (r) => r }) as PrefixPlan; // any saving, even negative
        assert.ok(plan, "a plan whatever it saves");
        const groups = U * n / plan.n;
        const S = plan.rest;
        const pre = Float32Array.from({ length: groups * plan.shared }, () => rng.normal());
        const rest = Float32Array.from({ length: groups * plan.n * S }, () => rng.normal());
        const c = Float32Array.from({ length: batch.batchSize * batch.seqLen }, () => rng.normal());
        const u = prefixUnshift(pre, rest, batch, plan);
        const sh = prefixShift(c, batch, plan, groups);
        const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
        const lhs = dot(u, c);
        const rhs = dot(pre, sh.pre) + dot(rest, sh.rest);
        assert.ok(Math.abs(lhs - rhs) <= 1e-4 * (1 + Math.abs(lhs)), `${lhs} vs ${rhs}`);
      }),
      { numRuns: 30 },
    );
  });
});

/** Engines a (shared prefixes) and b (full passes) with the same random weights. */
async function pair(cfg: ModelConfig, seed: number, opts: { maxPassRows?: number } = {}) {
  const weights = randomHfWeights(hfParamNames(cfg), new Rng(seed), 0.3);
  const make = async (sharedPrefix: boolean) => {
    const e = await EmbeddedEngine.create(cfg, { seed, sharedPrefix, ...opts });
    for (const [name, data] of weights) e.setWeight(name, Float32Array.from(data));
    return e;
  };
  return { a: await make(true), b: await make(false) };
}

/** A loss with a cotangent on every predicted token (prompt tokens included) and on every entropy. */
function everywhereLoss(batch: TokenBatch, seed: number): TokenLossFn {
  const rng = new Rng(seed);
  const c = Float32Array.from(batch.tokens, () => rng.normal());
  const e = Float32Array.from(batch.tokens, () => 0.3 * rng.normal());
  return (scores) => {
    let loss = 0;
    for (let i = 0; i < c.length; i++) loss += c[i]! * scores.logprobs[i]! + e[i]! * scores.entropy![i]!;
    return { loss, dLogprobs: c, dEntropy: e, metrics: {} };
  };
}

for (const [label, cfg] of [
  ["llama (grouped-query attention)", tinyLlama()],
  ["qwen2 (biases, tied embeddings)", tinyQwen2({ numKvHeads: 4 })],
] as const) {
  describe(`shared-prefix passes equal full passes: ${label}`, () => {
    for (const maxPassRows of [undefined, 8]) {
      test(`score and forwardBackward${maxPassRows ? " in chunks of 8 rows" : " in one pass"}`, async () => {
        const { a, b } = await pair(cfg, 5, { maxPassRows });
        const batch = groupBatch(new Rng(6), cfg.vocabSize, 6, 4, 9, 6);
        assert.ok(planSharedPrefix(batch, 4), "the batch takes the shared-prefix path");
        const sa = await a.score(batch, { model: "policy", entropy: true });
        const sb = await b.score(batch, { model: "policy", entropy: true });
        assert.ok(maxAbsDiff(sa.logprobs, sb.logprobs) < 2e-5, `logprobs differ by ${maxAbsDiff(sa.logprobs, sb.logprobs)}`);
        assert.ok(maxAbsDiff(sa.entropy!, sb.entropy!) < 2e-5, `entropies differ by ${maxAbsDiff(sa.entropy!, sb.entropy!)}`);
        const loss = everywhereLoss(batch, 7);
        const ra = await a.forwardBackward(batch, loss, { entropy: true });
        const rb = await b.forwardBackward(batch, loss, { entropy: true });
        assert.ok(Math.abs(ra.loss - rb.loss) < 1e-3 * (1 + Math.abs(rb.loss)), `loss ${ra.loss} vs ${rb.loss}`);
        for (const name of a.weightNames()) {
          const ga = (await a.getGrad(name))!;
          const gb = (await b.getGrad(name))!;
          const scale = Math.max(1e-3, ...gb.map(Math.abs));
          assert.ok(maxAbsDiff(ga, gb) <= 1e-4 * scale, `${name}: gradients differ by ${maxAbsDiff(ga, gb)} (scale ${scale})`);
        }
        await a.close();
        await b.close();
      });
    }
  });
}

describe("sampling: the prompt step runs each distinct prompt once", () => {
  for (const [label, cfg] of [
    ["llama", tinyLlama()],
    ["qwen2", tinyQwen2({ numKvHeads: 4 })],
  ] as const) {
    test(`${label}: the same samples and log-probs as running every row's prompt (prompts of different lengths, chunked)`, async () => {
      const { a, b } = await pair(cfg, 8, {});
      const rng = new Rng(9);
      const prompts = Array.from({ length: 5 }, (_, i) => Int32Array.from({ length: 3 + (i % 3) * 2 }, () => rng.int(0, cfg.vocabSize - 1)));
      for (const maxSampleBatch of [512, 6]) {
        (a as unknown as { opts: { maxSampleBatch: number } }).opts.maxSampleBatch = maxSampleBatch;
        (b as unknown as { opts: { maxSampleBatch: number } }).opts.maxSampleBatch = maxSampleBatch;
        const req = { prompts, n: 3, maxNewTokens: 6, temperature: 1, seed: 4 };
        const ra = await a.sample(req);
        const rb = await b.sample(req);
        assert.equal(ra.length, 15);
        for (let i = 0; i < ra.length; i++) {
          assert.deepEqual([...ra[i]!.tokens], [...rb[i]!.tokens], `sample ${i} (rows per call ${maxSampleBatch})`);
          assert.ok(maxAbsDiff(ra[i]!.logprobs, rb[i]!.logprobs) < 1e-5, `sample ${i}: log-probs differ by ${maxAbsDiff(ra[i]!.logprobs, rb[i]!.logprobs)}`);
        }
        // The group's samples differ (the prompt's cache rows were copied, not shared by mistake).
        assert.ok(new Set(ra.slice(0, 3).map((r) => r.tokens.join(","))).size > 1);
      }
      await a.close();
      await b.close();
    });
  }
});
