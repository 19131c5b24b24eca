// Capture training runs the update sequence of a run (src/pipeline/update.ts): DAPO overlong shaping
// and the KL-in-reward penalty reach the advantages the loss trains on, exactly as in a run's
// reward → reference → advantages stages; an episode's turns share one reward, one KL sum and one
// advantage. (Before, serve ran its own advantages → optimize: no reward transforms, and a KL
// coefficient went into the loss whatever algorithm.kl.placement said.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { computeAdvantages, dapoOverlongPenalty } from "../../src/algorithms/index.ts";
import type { Engine, LossReport, TokenBatch, TokenLossFn, TokenScores } from "../../src/core/engine.ts";
import type { Episode } from "../../src/serve/capture.ts";
import type { ServeContext } from "../../src/serve/context.ts";
import { trainServed } from "../../src/serve/train.ts";

/** Policy log-probs −0.5 per token, reference −0.7: k1 KL is 0.2 per response token. Records what it trains. */
class RecordingEngine implements Engine {
  readonly trained: TokenBatch[] = [];
  readonly references: string[] = [];
  info() {
    return { engine: "fake", modelId: "fake", vocabSize: 16, maxSeqLen: 64, numParams: 0, device: "cpu", dtype: "float32" };
  }
  async sample(): Promise<never> {
    throw new Error("not used");
  }
  async score(batch: TokenBatch, opts: { model: "policy" | "reference" }): Promise<TokenScores> {
    return { logprobs: new Float32Array(batch.batchSize * batch.seqLen).fill(opts.model === "reference" ? -0.7 : -0.5) };
  }
  async forwardBackward(batch: TokenBatch, loss: TokenLossFn): Promise<LossReport> {
    this.trained.push(batch);
    const n = batch.batchSize * batch.seqLen;
    const r = loss({ logprobs: new Float32Array(n).fill(-0.5), entropy: new Float32Array(n).fill(0.3) }, batch);
    return { loss: r.loss, metrics: r.metrics, tokens: batch.lossMask.reduce((a, m) => a + (m > 0 ? 1 : 0), 0) };
  }
  async optimStep() {
    return { gradNorm: 1, skipped: false };
  }
  async setReference(from: unknown) {
    this.references.push(String(from));
  }
  async save() {}
  async load() {}
  async close() {}
}

function context(engine: Engine): ServeContext {
  return { engine, tokenizer: { padId: 0 }, batcher: { exclusive: <T>(fn: () => Promise<T>) => fn() }, episodes: null, policyVersion: 0, captureUpdates: 0, autosave: null } as unknown as ServeContext;
}

const turn = (prompt: number[], tokens: number[]) => ({ promptTokens: prompt, tokens, logprobs: tokens.map(() => -0.5), policyVersion: 0, finishReason: "stop" as const });
/** Group g: a two-turn episode (2 + 3 response tokens), a 4-token one and a 1-token one; group h: two 2-token episodes. */
const EPISODES: Episode[] = [
  { id: "a", group: "g", reward: 1, turns: [turn([1, 2], [3, 4]), turn([1, 2, 3, 4, 5], [6, 7, 8])] },
  { id: "b", group: "g", reward: 1, turns: [turn([1, 2], [3, 4, 5, 6])] },
  { id: "c", group: "g", reward: 0, turns: [turn([1, 2], [3])] },
  { id: "d", group: "h", reward: 1, turns: [turn([1], [2, 3])] },
  { id: "e", group: "h", reward: 0, turns: [turn([1], [4, 5])] },
];
const LENGTHS = [5, 4, 1, 2, 2];
const EPISODE_OF_TURN = [0, 0, 1, 2, 3, 4];
const GROUPS = Int32Array.from([0, 0, 0, 1, 1]);
const BETA = 0.05;

/** The advantage each trained sequence carried (its first response token's). */
function trainedAdvantages(engine: RecordingEngine): number[] {
  const b = engine.trained[0]!;
  const out: number[] = [];
  for (let r = 0; r < b.batchSize; r++) {
    const t = Array.from(b.lossMask.subarray(r * b.seqLen, (r + 1) * b.seqLen)).findIndex((m) => m > 0);
    out.push(b.advantages![r * b.seqLen + t]!);
  }
  return out;
}

function expectedAdvantages(rewards: number[]): number[] {
  const adv = computeAdvantages("grpo", { rewards: Float32Array.from(rewards), groupIds: GROUPS, lengths: Int32Array.from(LENGTHS), strata: new Int32Array(5) }, {});
  return EPISODE_OF_TURN.map((e) => adv[e]!);
}

const close = (a: number[], b: number[], what: string) => a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) < 1e-5, `${what} [${i}]: ${x} vs ${b[i]}`));

test("serve training applies overlong shaping and the KL-in-reward penalty as a run does, per episode", async () => {
  const engine = new RecordingEngine();
  const overlong = { enabled: true, maxLength: 5, buffer: 2, factor: 1 };
  const rep = (await trainServed(context(engine), { lr: 0.01, algorithm: { advantage: { name: "grpo" }, loss: { name: "ppo_clip" }, kl: { coef: BETA, placement: "reward", estimator: "k1" }, overlong } }, EPISODES))!;
  const raw = EPISODES.map((e) => e.reward!);
  const penalty = LENGTHS.map((l) => dapoOverlongPenalty(l, 5, 2, 1));
  assert.ok(penalty.some((p) => p < 0), "the overlong penalty bites on some episode (the check is not vacuous)");
  // The run's order: verifier reward → overlong → (method transforms) → − β·Σ_t kl_t over the episode's turns.
  const shaped = raw.map((r, i) => r + penalty[i]! - BETA * 0.2 * LENGTHS[i]!);
  close(trainedAdvantages(engine), expectedAdvantages(shaped), "advantage");
  assert.notDeepEqual(expectedAdvantages(shaped).map((x) => x.toFixed(4)), expectedAdvantages(raw).map((x) => x.toFixed(4)), "shaping changes the advantages");
  assert.deepEqual(engine.references, ["policy"], "the reference is the policy as loaded");
  assert.equal(engine.trained[0]!.refLogprobs !== undefined, true);
  // The run's metrics: reward/mean after shaping, the overlong penalty's mean, k1 KL per token, β.
  assert.ok(Math.abs(rep.metrics["reward/mean"]! - shaped.reduce((a, b) => a + b, 0) / 5) < 1e-6);
  assert.ok(Math.abs(rep.metrics["reward/overlong_penalty"]! - penalty.reduce((a, b) => a + b, 0) / 5) < 1e-6);
  assert.ok(Math.abs(rep.metrics["kl"]! - 0.2) < 1e-6);
  assert.equal(rep.metrics["kl_coef"], BETA);
  assert.ok(Math.abs(rep.metrics["entropy"]! - 0.3) < 1e-6, "entropy is measured, as in a run");
  assert.equal(rep.reward, 0.6, "the report's reward is the episodes' own");
  assert.equal(rep.policyVersion, 1);
});

test("control: without shaping or KL the advantages are the raw rewards' (and KL in the loss leaves the rewards alone)", async () => {
  for (const kl of [{ coef: 0 }, { coef: BETA, placement: "loss" as const }]) {
    const engine = new RecordingEngine();
    const rep = (await trainServed(context(engine), { algorithm: { advantage: { name: "grpo" }, loss: { name: "ppo_clip" }, kl } }, EPISODES))!;
    close(trainedAdvantages(engine), expectedAdvantages(EPISODES.map((e) => e.reward!)), `advantage (kl ${JSON.stringify(kl)})`);
    assert.equal(rep.metrics["reward/overlong_penalty"], undefined);
  }
});

test("what capture training cannot do is a config error naming the field", async () => {
  const run = (algorithm: Record<string, unknown>) => trainServed(context(new RecordingEngine()), { algorithm: { advantage: { name: "grpo" }, loss: { name: "ppo_clip" }, ...algorithm } }, EPISODES);
  await assert.rejects(run({ overlong: { enabled: true } }), /config error at algorithm\.overlong\.maxLength/);
  await assert.rejects(run({ kl: { coef: 0.01, adaptive: { target: 0.1, horizon: 100 } } }), /config error at algorithm\.kl\.adaptive/);
  await assert.rejects(run({ advantage: { name: "reinforce_pp" } }), /config error at algorithm\.advantage\.name: the token-level estimator "reinforce_pp"/);
});
