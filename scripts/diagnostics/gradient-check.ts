/**
 * Diagnostic: is the GRPO gradient an unbiased, usable estimate of the gradient of the expected
 * reward? On fixed-width addition the correct answer y* of a prompt x is unique, so the expected
 * reward of the policy on a prompt set is exactly J = mean_x π(y*|x) (one `score` call), and its
 * gradient is exact: dJ/dlog π(y*_t|x, y*_<t) = π(y*|x)/N on each answer token. The script
 * compares, on the same prompts,
 *   - the exact ∇J,
 *   - the SFT gradient (mean token log-likelihood of y*),
 *   - K independent GRPO batches (G samples per prompt, group-normalised advantages, per-sequence
 *     token mean) and their running mean — the mean must converge to ∇J's direction;
 * and prints cosine similarities. Used for docs/experiments.md ("Third round").
 *
 *   npx tsx scripts/diagnostics/gradient-check.ts <checkpoint dir> [--prompts 64] [--group 8] [--batches 16]
 *
 * The checkpoint must be a model trained on `addition-padded` (e.g. <quickstart run>/checkpoints/final).
 */
import { parseArgs } from "node:util";
import { parseRunConfig } from "../../src/config/schema.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { packSequences } from "../../src/core/sequence.ts";
import { grpoAdvantages } from "../../src/algorithms/index.ts";
import type { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import type { TokenBatch, TokenLossFn } from "../../src/core/engine.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { prompts: { type: "string", default: "64" }, group: { type: "string", default: "8" }, batches: { type: "string", default: "16" }, digits: { type: "string", default: "2" } },
});
if (!positionals[0]) throw new Error("usage: gradient-check.ts <checkpoint dir> [--prompts N] [--group G] [--batches K]");
const N = Number(values.prompts);
const G = Number(values.group);
const K = Number(values.batches);
const digits = Number(values.digits);

const cfg = parseRunConfig({
  seed: 1,
  out: "/tmp/rlvr-gradient-check",
  model: { path: positionals[0] },
  data: { task: "addition-padded", difficulty: digits, trainSize: N, testSize: 1 },
  rl: { steps: 1, promptsPerStep: N, groupSize: G, maxNewTokens: digits + 2, lr: 1e-4 },
});
const ctx = await buildContext(cfg);
const engine = ctx.engine as EmbeddedEngine;
const names = engine.weightNames();
const eos = ctx.tokenizer.eosId;
const examples = ctx.train.slice(0, N);
const prompts = examples.map(ctx.encodePrompt);

/** The accumulated gradient as one flat vector; clears it. */
async function takeGrad(): Promise<Float64Array> {
  const parts: Float32Array[] = [];
  for (const n of names) parts.push((await engine.getGrad(n)) ?? new Float32Array((await engine.getWeight(n)).length));
  const out = new Float64Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  engine.zeroGrad();
  return out;
}
const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const cos = (a: Float64Array, b: Float64Array) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
/** A loss whose dL/dlog p is `coef(b)` on every response token of sequence b. */
const perSequence = (coef: (b: number) => number): TokenLossFn => (_s, bt: TokenBatch) => {
  const d = new Float32Array(bt.tokens.length);
  for (let b = 0; b < bt.batchSize; b++) for (let t = 0; t < bt.seqLen; t++) if (bt.lossMask[b * bt.seqLen + t]) d[b * bt.seqLen + t] = coef(b);
  return { loss: 0, dLogprobs: d, metrics: {} };
};

// Exact J and ∇J (descent direction of −J), and the SFT gradient.
const answers = packSequences(examples.map((e, i) => ({ prompt: prompts[i]!, response: Int32Array.from([...ctx.tokenizer.encode(e.answer, { addSpecialTokens: false }), eos]) })));
const scores = await engine.score(answers, { model: "policy" });
const T = answers.seqLen;
const pStar = examples.map((_, b) => {
  let s = 0;
  for (let t = 0; t < T; t++) if (answers.lossMask[b * T + t]) s += scores.logprobs[b * T + t]!;
  return Math.exp(s);
});
process.stdout.write(`exact expected reward J = mean π(y*|x) over ${N} prompts: ${(pStar.reduce((a, b) => a + b, 0) / N).toFixed(4)}\n`);
await engine.forwardBackward(answers, perSequence((b) => -pStar[b]! / N));
const gJ = await takeGrad();
await engine.forwardBackward(answers, perSequence(() => -1 / N));
const gSft = await takeGrad();
process.stdout.write(`cos(SFT gradient, exact ∇J) = ${cos(gSft, gJ).toFixed(3)}\n`);

const mean = new Float64Array(gJ.length);
for (let k = 1; k <= K; k++) {
  const ro = await engine.sample({ prompts, n: G, maxNewTokens: digits + 2, temperature: 1, stopTokens: [eos], seed: 1000 + k });
  const reward = ro.map((o) => ctx.verify(ctx.tokenizer.decode(Array.from(o.tokens).filter((t) => t !== eos)), examples[o.promptIndex]!).reward);
  const adv = grpoAdvantages({ rewards: Float32Array.from(reward), groupIds: Int32Array.from(ro.map((o) => o.promptIndex)) });
  const batch = packSequences(ro.map((o) => ({ prompt: prompts[o.promptIndex]!, response: o.tokens })));
  await engine.forwardBackward(batch, perSequence((b) => -adv[b]! / (N * G)));
  const g = await takeGrad();
  for (let i = 0; i < g.length; i++) mean[i]! += g[i]!;
  const r = reward.reduce((a, b) => a + b, 0) / reward.length;
  process.stdout.write(
    `GRPO batch ${k}: reward ${r.toFixed(3)}  cos(batch, ∇J) ${cos(g, gJ).toFixed(3)}  cos(mean of ${k}, ∇J) ${cos(mean, gJ).toFixed(3)}  cos(batch, SFT) ${cos(g, gSft).toFixed(3)}\n`,
  );
}
await ctx.close();
