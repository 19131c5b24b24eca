/**
 * The collect stage: prompts → groups of rollouts with their verdicts → the step's sequences.
 *
 * One generation batch of `rl.promptsPerStep` groups at a time (sampling strategy and GHPO hints:
 * src/rollout/collect.ts); with a group filter on (DAPO dynamic sampling, pass-rate band), batches
 * are generated until promptsPerStep groups are kept or maxGenBatches is reached
 * (src/rollout/dynamic-sampling.ts). The verifier runs here, at generation time, because the group
 * filters and hints select on its verdicts; the reward stage turns verdicts into rewards.
 *
 * With a sampler apart from the trainer (RunContext.sampler: vLLM, a server), the sampler's
 * log-probs are kept as `samplerLogprobs` for mismatch correction, and the trainer's log-probs of
 * the sampled tokens become `oldLogprobs` one of two ways (`rescoreReason`):
 *   - one on-policy update (rl.epochs 1, rl.miniBatches 1, no rl.async, no KL term, no method
 *     adding sequences): the update's own forward pass is at the weights that sampled, so the loss
 *     takes lp_old = sg(lp) and no separate pass runs (TRL does the same at num_iterations 1);
 *     `mismatch/logprob_gap` measures the gap;
 *   - otherwise `rescore`: a scoring pass before the reward stage; `rollout/logprob_diff` (mean
 *     |Δ log p| over response tokens) and `rollout/logprob_diff_max` measure the gap.
 */
import { collectRollouts, responseMask } from "../rollout/collect.ts";
import { fillBatch } from "../rollout/dynamic-sampling.ts";
import { truncationMask } from "../rollout/overlong.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import { hash32 } from "../util/rng.ts";
import { packSequences, type Sequence } from "../core/sequence.ts";
import type { RunContext } from "./context.ts";
import type { RlStepHooks } from "./hooks.ts";
import type { RlState } from "./state.ts";
import type { Generated, StepBatch, UpdateBatch } from "./batch.ts";
import type { UpdateContext } from "./update-types.ts";
import type { Trajectory } from "../rollout/types.ts";

interface Group {
  example: Example;
  prompt: Int32Array;
  rollouts: Trajectory[];
  texts: string[];
  verdicts: Verdict[];
}

/**
 * Generate, verify and keep the groups of RL step `step` (default: the next step, st.step; with
 * rl.async a later one, prefetched while the trainer works); build its sequences. A sampler's
 * tokens are not re-scored here (see rescore): a prefetched batch is re-scored when it is trained.
 */
export async function collect(ctx: RunContext, st: RlState, hooks: RlStepHooks, step = st.step): Promise<StepBatch> {
  const r = ctx.cfg.rl!;
  const sel = st.selection;
  const gen: Generated = { rollouts: [], verdicts: [], examples: [], genBatches: 0, dropped: 0, surplus: 0, full: false, discardedTokens: 0, events: {}, metrics: {} };
  const times = { sample: 0, reward: 0 };
  const version = ctx.sampler?.version?.() ?? st.policyVersion;
  const generate = async (k: number): Promise<Group[]> => {
    const t0 = performance.now();
    let examples = sel.draw(st, r.promptsPerStep, step, k);
    // An env's prompts are its initial observations (the rollout returns them).
    let prompts = ctx.env ? [] : examples.map(ctx.encodePrompt);
    const seed = k === 0 ? hash32(ctx.cfg.seed, 0x5a, step) : hash32(ctx.cfg.seed, 0x5a, step, k);
    // A method's source (self-play) makes the batch's groups itself, through the same samplers.
    const made = hooks.source ? await hooks.source({ examples, prompts, seed, step }) : null;
    if (made) ({ examples, prompts } = { examples: made.examples, prompts: made.ro.prompts });
    let ro = made ? made.ro : await collectRollouts(ctx, r, examples, prompts, seed, step);
    if (hooks.collect) ro = await hooks.collect(ro, { examples, prompts, seed, step });
    for (const [e, c] of Object.entries(ro.events)) gen.events[e] = (gen.events[e] ?? 0) + c;
    for (const [m, x] of Object.entries(ro.metrics)) gen.metrics[m] = (gen.metrics[m] ?? 0) + x;
    gen.discardedTokens += ro.sampledTokens - ro.rollouts.reduce((a, o) => a + o.sampledTokens, 0);
    times.sample += (performance.now() - t0) / 1000 - ro.rewardSeconds;
    times.reward += ro.rewardSeconds;
    const groups: Group[] = examples.map((example, p) => ({ example, prompt: (ro.prompts ?? prompts)[p]!, rollouts: [], texts: [], verdicts: [] }));
    ro.rollouts.forEach((o, i) => {
      const g = groups[o.promptIndex]!;
      g.rollouts.push({ ...o, policyVersion: version });
      g.texts.push(ro.texts[i]!);
      g.verdicts.push(ro.verdicts[i]!);
    });
    return groups;
  };
  const filled = await fillBatch({ target: r.promptsPerStep, maxGenBatches: sel.maxGenBatches, generate, keep: (g) => sel.keep(g.verdicts) });
  Object.assign(gen, { genBatches: filled.genBatches, dropped: filled.dropped, surplus: filled.surplus, full: filled.full });
  for (const g of filled.generated) {
    gen.rollouts.push(...g.rollouts);
    gen.verdicts.push(...g.verdicts);
    gen.examples.push(...g.rollouts.map(() => g.example));
  }
  // The train batch: the kept groups, renumbered 0..K-1 (their position is their group id).
  const kept = filled.kept;
  const rollouts: Trajectory[] = kept.flatMap((g, gi) => g.rollouts.map((o) => ({ ...o, promptIndex: gi })));
  const batch: StepBatch = {
    step,
    examples: kept.map((g) => g.example),
    prompts: kept.map((g) => g.prompt),
    rollouts,
    texts: kept.flatMap((g) => g.texts),
    verdicts: kept.flatMap((g) => g.verdicts),
    rewards: new Float32Array(rollouts.length),
    groupIds: Int32Array.from(rollouts.map((o) => o.promptIndex)),
    lengths: Int32Array.from(rollouts.map((o) => o.tokens.length)),
    strata: Int32Array.from(rollouts.map((o) => o.toolCalls ?? 0)),
    seqs: [],
    extra: { seqs: [], rewards: [] },
    advantages: new Float32Array(0),
    generated: gen,
    metrics: {},
    times: { ...times },
    kl: 0,
    scoredReference: false,
    trainVersion: version,
    maskedTruncated: 0,
  };
  batch.seqs = sequences(ctx, batch);
  return batch;
}

/**
 * One sequence per rollout (old log-probs = the sampler's; the embedded engine samples with the
 * trained weights). With rl.maskTruncated, responses cut off at maxNewTokens carry loss mask 0.
 */
function sequences(ctx: RunContext, b: StepBatch): Sequence[] {
  const r = ctx.cfg.rl!;
  return b.rollouts.map((o) => {
    const s: Sequence = { prompt: b.prompts[o.promptIndex]!, response: o.tokens, oldLogprobs: o.logprobs, groupId: o.promptIndex, mask: responseMask(o) };
    if (o.policyVersion !== undefined) s.policyVersion = o.policyVersion;
    // A sampler's own log-probs (rescore makes the trainer's the old ones when they differ).
    if (ctx.sampler) s.samplerLogprobs = o.logprobs;
    if (r.maskTruncated && o.stopReason === "max_tokens") {
      s.mask = truncationMask(o.stopReason, o.tokens.length, s.mask);
      b.maskedTruncated++;
    }
    return s;
  });
}

/**
 * Why the trainer must re-score a sampler's batch before the reward stage, or null when the one
 * update's own forward gives the same old log-probs (lp_old = sg(lp) at the sampling weights).
 * @param klTerm the step scores a reference model (its KL reads the old log-probs first)
 */
export function rescoreReason(ctx: RunContext, b: StepBatch, klTerm: boolean): string | null {
  const r = ctx.cfg.rl!;
  if (r.epochs > 1) return `rl.epochs is ${r.epochs}: later epochs train from weights that did not sample`;
  if (r.miniBatches > 1) return `rl.miniBatches is ${r.miniBatches}: later updates train from weights that did not sample`;
  if ((r.async?.maxStaleness ?? 0) > 0) return "rl.async: batches are trained from newer weights than sampled them";
  if (klTerm) return "the KL term reads the trainer's log-probs before the update";
  if (!b.seqs.every((s) => s.samplerLogprobs !== undefined && s.oldLogprobs === s.samplerLogprobs)) return "a method added sequences with their own old log-probs";
  return null;
}

/** One on-policy update: drop the sampler's log-probs as `oldLogprobs` so the loss takes sg(lp). */
export function useUpdateForward(b: StepBatch): void {
  for (const s of b.seqs) delete s.oldLogprobs;
}

/**
 * With a sampler apart from the trainer: the trainer's log-probs of the sampled tokens (at the
 * weights it trains from now) become `oldLogprobs`, the sampler's are kept as `samplerLogprobs`
 * (mismatch correction reads both; with rl.async they also differ by the batch's staleness).
 */
export async function rescore(ctx: UpdateContext, b: UpdateBatch): Promise<void> {
  if (b.seqs.length === 0) return;
  const packed = packSequences(b.seqs, ctx.tokenizer.padId);
  const { logprobs } = await ctx.engine.score(packed, { model: "policy" });
  const T = packed.seqLen;
  let sum = 0;
  let max = 0;
  let n = 0;
  b.seqs.forEach((s, i) => {
    const P = s.prompt.length;
    const trainer = logprobs.slice(i * T + P, i * T + P + s.response.length);
    const sampler = s.oldLogprobs!;
    for (let t = 0; t < trainer.length; t++) {
      if (packed.lossMask[i * T + P + t]! === 0) continue;
      const d = Math.abs(trainer[t]! - sampler[t]!);
      sum += d;
      max = Math.max(max, d);
      n++;
    }
    s.oldLogprobs = trainer;
  });
  b.metrics["rollout/logprob_diff"] = n ? sum / n : 0;
  b.metrics["rollout/logprob_diff_max"] = max;
}
