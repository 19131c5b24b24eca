/**
 * The RL stage: per step, sample a group of responses for each of a batch of prompts, score them
 * with the verifier, compute advantages per group, and optimise the policy loss — all formulas
 * from src/algorithms, chosen by the config (GRPO + PPO-clip by default).
 */
import {
  applyKlToRewards,
  AdaptiveKlController,
  AdaptiveEntropyController,
  FixedKlController,
  FixedEntropyController,
  combineMetrics,
  computeAdvantages,
  computeTokenAdvantages,
  getAdvantage,
  klPenaltyPerToken,
  makePolicyLoss,
  stepCounts,
  type AlgorithmConfig,
  type EntropyController,
  type KlController,
} from "../algorithms/index.ts";
import { learningRate } from "../engines/embedded/optimizer.ts";
import type { SampleResult, TokenBatch } from "../engines/engine.ts";
import { dapoOverlongPenalty } from "../algorithms/shaping.ts";
import { collectRollouts, responseMask, sampledTokenCount } from "../rollout/collect.ts";
import type { Trajectory } from "../rollout/types.ts";
import { fillBatch } from "../rollout/dynamic-sampling.ts";
import { truncationMask } from "../rollout/overlong.ts";
import { DataSelection, type SavedSelection } from "../rollout/selection.ts";
import type { Example, Verdict } from "../tasks/types.ts";
import { Rng, hash32 } from "../util/rng.ts";
import { chunkBySize, chunks, packSequences, type Sequence } from "./batch.ts";
import type { RunContext } from "./context.ts";
import type { RunLogger } from "./logger.ts";
import { dropGradients } from "./faults.ts";
import type { RewardStage, RlStepHooks } from "./hooks.ts";

/**
 * State carried across RL steps (and saved in checkpoints). The prompt order is a seeded shuffle
 * (hash32(seed, 0x71)) and every per-step random stream derives from hash32(seed, tag, step), so
 * the step, the cursor and the controllers' inputs are all a checkpoint needs.
 */
export interface RlState {
  /** RL steps done. */
  step: number;
  /** Prompts consumed (index into `order`, modulo its length). */
  cursor: number;
  order: number[];
  kl: KlController;
  entropy: EntropyController;
  /** Every `kl.update(kl, n)` made so far, in order (replayed on resume to rebuild the controller). */
  klUpdates: [number, number][];
  /** Every `entropy.update(h)` made so far, in order. */
  entropyUpdates: number[];
  /** Prompt drawing, group filters, curriculum and domain weights (src/rollout/selection.ts). */
  selection: DataSelection;
}

export function initRlState(ctx: RunContext, alg: AlgorithmConfig): RlState {
  const rng = new Rng(hash32(ctx.cfg.seed, 0x71));
  const kl = alg.kl.adaptive ? new AdaptiveKlController(alg.kl.coef || 0.001, alg.kl.adaptive.target, alg.kl.adaptive.horizon) : new FixedKlController(alg.kl.coef);
  const e = alg.entropy;
  const entropy = e.adaptive ? new AdaptiveEntropyController({ init: e.coef, ...e.adaptive }) : new FixedEntropyController(e.coef);
  const selection = new DataSelection(ctx.cfg, ctx.train, alg);
  return { step: 0, cursor: 0, order: rng.shuffle(ctx.train.map((_, i) => i)), kl, entropy, klUpdates: [], entropyUpdates: [], selection };
}

/** The JSON-serialisable part of an RlState (the order is recomputed from the seed). */
export interface SavedRlState {
  step: number;
  cursor: number;
  klUpdates: [number | null, number][];
  entropyUpdates: (number | null)[];
  /** Data-selection state (curriculum, domain rewards, pool cursors, sampled tokens); absent in older checkpoints. */
  selection?: SavedSelection;
  /** State of the guided / label-free method hooks (RlStageHooks.saveState); absent when none or in older checkpoints. */
  methods?: Record<string, unknown>;
}

export function saveRlState(st: RlState): SavedRlState {
  return { step: st.step, cursor: st.cursor, klUpdates: st.klUpdates.map(([k, n]) => [k, n]), entropyUpdates: [...st.entropyUpdates], selection: st.selection.save() };
}

/**
 * Rebuild an RlState from a checkpoint: a fresh state (same seeded order, controllers at their
 * initial values) whose controllers then replay the recorded updates — the same arithmetic in the
 * same order, so their coefficients are bit-identical to the interrupted run's. (JSON turns a
 * non-finite input into null; controllers ignore non-finite inputs, and so does the replay.)
 */
export function restoreRlState(ctx: RunContext, alg: AlgorithmConfig, saved: SavedRlState): RlState {
  const st = initRlState(ctx, alg);
  st.step = saved.step;
  st.cursor = saved.cursor;
  st.selection.restore(saved.selection);
  for (const [k, n] of saved.klUpdates) {
    const kl = k ?? Number.NaN;
    st.kl.update(kl, n);
    st.klUpdates.push([kl, n]);
  }
  for (const h of saved.entropyUpdates) {
    const e = h ?? Number.NaN;
    st.entropy.update(e);
    st.entropyUpdates.push(e);
  }
  return st;
}

/**
 * Token-level advantages (REINFORCE++) for `seqs`, in their order: the sequences are packed to get
 * the loss mask [B*T]; with KL in the reward, token rewards are −β·kl_t on the first `kl`-covered
 * sequences (the rollouts; extra sequences such as LUFFY's experts get none).
 * @returns per sequence its response tokens' advantages, and `adv` [B] = their mean over masked
 *          tokens (for hooks' metrics and the samples log).
 */
export function sequenceTokenAdvantages(
  name: string,
  options: Record<string, unknown>,
  seqs: readonly Sequence[],
  input: { rewards: Float32Array; groupIds: Int32Array; lengths: Int32Array; strata?: Int32Array },
  kl: { kl: Float32Array; seqLen: number; coef: number } | null,
  padId: number,
): { adv: Float32Array; tokenAdv: Float32Array[] } {
  const packed = packSequences(seqs, padId);
  const T = packed.seqLen;
  let tokenRewards: Float32Array | undefined;
  if (kl) {
    tokenRewards = new Float32Array(seqs.length * T);
    for (let b = 0; b * kl.seqLen < kl.kl.length && b < seqs.length; b++) {
      const P = seqs[b]!.prompt.length;
      for (let t = 0; t < seqs[b]!.response.length; t++) tokenRewards[b * T + P + t] = -kl.coef * kl.kl[b * kl.seqLen + P + t]!;
    }
  }
  const tok = computeTokenAdvantages(name, { ...input, mask: packed.lossMask, seqLen: T, ...(tokenRewards ? { tokenRewards } : {}) }, options);
  const tokenAdv = seqs.map((s, b) => tok.slice(b * T + s.prompt.length, b * T + s.prompt.length + s.response.length));
  const adv = Float32Array.from(seqs.map((s, b) => {
    let sum = 0;
    let n = 0;
    for (let t = 0; t < s.response.length; t++) if (packed.lossMask[b * T + s.prompt.length + t]! > 0) (sum += tokenAdv[b]![t]!), n++;
    return n ? sum / n : 0;
  }));
  return { adv, tokenAdv };
}

/** Fraction of groups (by group id; any size, any order) whose rewards are all equal. */
function zeroStdFraction(rewards: Float32Array, groupIds: Int32Array): number {
  const first = new Map<number, number>();
  const mixed = new Set<number>();
  rewards.forEach((r, i) => {
    const g = groupIds[i]!;
    const f = first.get(g);
    if (f === undefined) first.set(g, r);
    else if (f !== r) mixed.add(g);
  });
  return first.size ? (first.size - mixed.size) / first.size : 0;
}

/**
 * One RL step. Returns the step's metrics (also written to metrics.jsonl). An optimizer update
 * whose loss is not finite (any micro-batch) drops its gradients and is not applied; so is one
 * whose gradient norm is not finite. `skipped` is 1 when any update of the step was skipped.
 */
export async function rlStep(ctx: RunContext, alg: AlgorithmConfig, st: RlState, log: RunLogger, hooks: RlStepHooks = {}): Promise<Record<string, number>> {
  const r = ctx.cfg.rl!;
  const tStart = performance.now();
  const sel = st.selection;

  // 1–2. Rollouts and rewards, one generation batch of promptsPerStep groups at a time; with a
  // group filter on (DAPO dynamic sampling, pass-rate band), batches are generated until
  // promptsPerStep groups are kept or maxGenBatches is reached (src/rollout/dynamic-sampling.ts).
  interface Group {
    example: Example;
    prompt: Int32Array;
    rollouts: SampleResult[];
    texts: string[];
    verdicts: Verdict[];
  }
  const events: Record<string, number> = {};
  let sampleSeconds = 0;
  let rewardSeconds = 0;
  const rolloutMetrics: Record<string, number> = {};
  let discardedTokens = 0; // sampled, then replaced (GHPO hints): counted in rollout/sampled_tokens
  const generate = async (k: number): Promise<Group[]> => {
    const t0 = performance.now();
    const batchExamples = sel.draw(st, r.promptsPerStep, st.step, k);
    const batchPrompts = batchExamples.map(ctx.encodePrompt);
    // Sampling strategy (plain, rl.tree, rl.agent) and GHPO hints (rl.hints): src/rollout/collect.ts.
    const ro = await collectRollouts(ctx, r, batchExamples, batchPrompts, k === 0 ? hash32(ctx.cfg.seed, 0x5a, st.step) : hash32(ctx.cfg.seed, 0x5a, st.step, k));
    const out = ro.rollouts;
    const outTexts = ro.texts;
    const v = { verdicts: ro.verdicts };
    for (const [e, c] of Object.entries(ro.events)) events[e] = (events[e] ?? 0) + c;
    for (const [m, x] of Object.entries(ro.metrics)) rolloutMetrics[m] = (rolloutMetrics[m] ?? 0) + x;
    discardedTokens += ro.sampledTokens - out.reduce((a, o) => a + o.sampledTokens, 0);
    sampleSeconds += (performance.now() - t0) / 1000 - ro.rewardSeconds;
    rewardSeconds += ro.rewardSeconds;
    const groups: Group[] = batchExamples.map((example, p) => ({ example, prompt: batchPrompts[p]!, rollouts: [], texts: [], verdicts: [] }));
    out.forEach((o, i) => {
      const g = groups[o.promptIndex]!;
      g.rollouts.push(o);
      g.texts.push(outTexts[i]!);
      g.verdicts.push(v.verdicts[i]!);
    });
    return groups;
  };
  const filled = await fillBatch({ target: r.promptsPerStep, maxGenBatches: sel.maxGenBatches, generate, keep: (g) => sel.keep(g.verdicts) });
  // The train batch: the kept groups, renumbered 0..K-1 (their position is their group id).
  const kept = filled.kept;
  const examples = kept.map((g) => g.example);
  const prompts = kept.map((g) => g.prompt);
  const rollouts: SampleResult[] = kept.flatMap((g, gi) => g.rollouts.map((o) => ({ ...o, promptIndex: gi })));
  const texts = kept.flatMap((g) => g.texts);
  const verdicts = kept.flatMap((g) => g.verdicts);
  const allRollouts = filled.generated.flatMap((g) => g.rollouts);
  const allVerdicts = filled.generated.flatMap((g) => g.verdicts);
  const allExamples = filled.generated.flatMap((g) => g.rollouts.map(() => g.example));
  let rewards: Float32Array = Float32Array.from(verdicts.map((v) => v.reward));
  const groupIds = Int32Array.from(rollouts.map((o) => o.promptIndex));
  const lengths = Int32Array.from(rollouts.map((o) => o.tokens.length));
  // Strata for stratified_grpo: the number of tool calls (agent loop; 0 otherwise).
  const strata = Int32Array.from(rollouts.map((o) => (o as Partial<Trajectory>).toolCalls ?? 0));
  // DAPO soft overlong punishment (algorithm block `overlong`), added to the verifier reward.
  let overlongPenalty = 0;
  if (alg.overlong?.enabled) {
    const o = alg.overlong;
    const maxLength = o.maxLength ?? r.maxNewTokens;
    const buffer = o.buffer ?? Math.max(1, Math.round(o.bufferFraction * maxLength));
    for (let i = 0; i < rewards.length; i++) {
      const p = dapoOverlongPenalty(lengths[i]!, maxLength, Math.min(buffer, maxLength), o.factor);
      rewards[i] = rewards[i]! + p;
      overlongPenalty += p;
    }
  }
  const tReward = performance.now();

  // 3. Sequences (old log-probs = the sampler's: the embedded engine samples with the trained weights).
  // With rl.maskTruncated, responses cut off at maxNewTokens carry loss mask 0 (overlong filtering).
  let maskedTruncated = 0;
  const seqs: Sequence[] = rollouts.map((o) => {
    const s: Sequence = { prompt: prompts[o.promptIndex]!, response: o.tokens, oldLogprobs: o.logprobs, groupId: o.promptIndex, mask: responseMask(o) };
    if (r.maskTruncated && o.stopReason === "max_tokens") {
      s.mask = truncationMask(o.stopReason, o.tokens.length, s.mask);
      maskedTruncated++;
    }
    return s;
  });
  const needRef = st.kl.coef > 0 || alg.kl.adaptive !== undefined;
  // Token-level estimators (REINFORCE++) take the KL penalty as per-token rewards −β·kl_t instead
  // of a sequence sum subtracted from the outcome reward.
  const tokenLevel = getAdvantage(alg.advantage.name).level === "token";
  let klTokens: Float32Array | null = null;
  let refBatch: TokenBatch | null = null;
  let klMean = 0;
  if (needRef && seqs.length > 0) {
    refBatch = packSequences(seqs, ctx.tokenizer.padId);
    const ref = await ctx.engine.score(refBatch, { model: "reference" });
    refBatch.refLogprobs = ref.logprobs;
    const kl = klPenaltyPerToken(refBatch.oldLogprobs!, ref.logprobs, refBatch.lossMask, "k1");
    let s = 0;
    let n = 0;
    for (let i = 0; i < kl.length; i++) if (refBatch.lossMask[i]) (s += kl[i]!), n++;
    klMean = n ? s / n : 0;
    if (alg.kl.placement === "reward" && tokenLevel) {
      klTokens = klPenaltyPerToken(refBatch.oldLogprobs!, ref.logprobs, refBatch.lossMask, alg.kl.estimator === "k3+" ? "k3" : alg.kl.estimator);
    } else if (alg.kl.placement === "reward") {
      rewards = applyKlToRewards(rewards, refBatch.oldLogprobs!, ref.logprobs, refBatch.lossMask, st.kl.coef, alg.kl.estimator === "k3+" ? "k3" : alg.kl.estimator);
    }
  }

  // Method hooks (src/guided, src/labelfree): reward transforms (TTRL, EVOL-RL), expert sequences (LUFFY).
  const stage: RewardStage = { step: st.step, examples, prompts, rollouts, texts, verdicts, rewards, seqs };
  const hooked = hooks.rewards ? await hooks.rewards(stage) : undefined;
  if (hooked?.rewards) rewards = stage.rewards = hooked.rewards;
  const extra = hooked?.extra ?? { seqs: [], rewards: [] };

  // 4. Advantages per group, over the kept groups only (extra sequences join the groups they name).
  const { name: advName, ...advOpts } = alg.advantage;
  const cat = <A extends Float32Array | Int32Array>(a: A, more: number[]): A => { const o = new (a.constructor as new (n: number) => A)(a.length + more.length); o.set(a); o.set(more, a.length); return o; };
  const advInput = extra.seqs.length === 0
    ? { rewards, groupIds, lengths, strata }
    : { rewards: cat(rewards, extra.rewards), groupIds: cat(groupIds, extra.seqs.map((q) => q.groupId ?? -1)), lengths: cat(lengths, extra.seqs.map((q) => q.response.length)), strata: cat(strata, extra.seqs.map(() => 0)) };
  let adv: Float32Array;
  let tokenAdv: Float32Array[] | null = null;
  if (seqs.length + extra.seqs.length === 0) adv = new Float32Array(0);
  else if (tokenLevel) {
    ({ adv, tokenAdv } = sequenceTokenAdvantages(advName, advOpts, [...seqs, ...extra.seqs], advInput, klTokens && refBatch ? { kl: klTokens, seqLen: refBatch.seqLen, coef: st.kl.coef } : null, ctx.tokenizer.padId));
  } else adv = computeAdvantages(advName, advInput, advOpts);
  if (hooks.advantages) {
    if (tokenAdv) throw new Error(`advantage estimator "${advName}" is token-level; an advantage hook (e.g. labelfree.ear) reshapes sequence advantages and cannot be combined with it`);
    adv = hooks.advantages(adv, stage);
  }
  seqs.forEach((s, i) => {
    s.advantage = adv[i]!;
    if (tokenAdv) s.tokenAdvantages = tokenAdv[i]!;
    if (refBatch) s.refLogprobs = refBatch.refLogprobs!.subarray(i * refBatch.seqLen + s.prompt.length, i * refBatch.seqLen + s.prompt.length + s.response.length);
  });
  extra.seqs.forEach((q, j) => seqs.push({ ...q, advantage: adv[rollouts.length + j]!, ...(tokenAdv ? { tokenAdvantages: tokenAdv[rollouts.length + j]! } : {}) }));
  const trainSeqs = seqs;

  // 5. Policy optimisation: epochs × mini-batches, micro-batches accumulate.
  const lossParts: Record<string, number>[] = [];
  let gradNorm = 0;
  let updates = 0;
  let skippedUpdates = 0;
  const rng = new Rng(hash32(ctx.cfg.seed, 0x6d, st.step));
  for (let epoch = 0; epoch < r.epochs && trainSeqs.length > 0; epoch++) {
    const shuffled = r.epochs > 1 || r.miniBatches > 1 ? rng.shuffle([...trainSeqs]) : trainSeqs;
    for (const mini of chunks(shuffled, r.miniBatches)) {
      const micro = chunkBySize(mini, r.microBatchSize ?? mini.length).map((m) => packSequences(m, ctx.tokenizer.padId));
      const counts = stepCounts(micro, r.maxNewTokens);
      if (counts.tokens === 0) continue;
      const lossState = { klCoef: alg.kl.placement === "loss" ? st.kl.coef : 0, entropyCoef: st.entropy.coef };
      const lossFn = hooks.loss?.(alg, counts, lossState) ?? makePolicyLoss(alg, counts, lossState);
      let finite = true;
      for (const mb of micro) {
        const rep = await ctx.engine.forwardBackward(mb, lossFn, { entropy: true });
        lossParts.push({ ...rep.metrics, loss: rep.loss });
        if (!Number.isFinite(rep.loss)) finite = false;
      }
      for (const rep of hooks.extraBackward ? await hooks.extraBackward(ctx, st.step) : []) {
        lossParts.push({ ...rep.metrics, loss: rep.loss });
        if (!Number.isFinite(rep.loss)) finite = false;
      }
      updates++;
      if (!finite) {
        await dropGradients(ctx.engine);
        gradNorm = Number.NaN;
        skippedUpdates++;
        continue;
      }
      const lr = learningRate(st.step, { lr: r.lr, schedule: r.schedule, warmupSteps: r.warmupSteps, totalSteps: r.steps, minLrRatio: r.minLrRatio });
      const o = await ctx.engine.optimStep({ lr, maxGradNorm: r.maxGradNorm, weightDecay: r.weightDecay });
      gradNorm = o.gradNorm;
      if (o.skipped) skippedUpdates++;
    }
  }
  const tTrain = performance.now();
  const lm = combineMetrics(lossParts);
  // Loss metrics are summable within an optimizer step; average them over the step's updates.
  const mean = (k: string) => (lm[k] ?? 0) / Math.max(1, updates);
  if (needRef) {
    st.kl.update(klMean, rollouts.length);
    st.klUpdates.push([klMean, rollouts.length]);
  }
  if (lm["entropy"] !== undefined) {
    st.entropy.update(mean("entropy"));
    st.entropyUpdates.push(mean("entropy"));
  }

  // Accuracy, lengths and token counts cover every sampled response of the step (all generation
  // batches, kept or not); rewards and group statistics cover the train batch.
  const allLengths = allRollouts.map((o) => o.tokens.length);
  const accuracy = allVerdicts.filter((v) => v.correct).length / Math.max(1, allVerdicts.length);
  const sampledTokens = allRollouts.reduce((a, o) => a + sampledTokenCount(o), discardedTokens);
  const selMetrics = sel.observe(allExamples, allVerdicts, sampledTokens);
  const metrics: Record<string, number> = {
    "reward/mean": rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0,
    "reward/verifier": allVerdicts.reduce((a, v) => a + v.reward, 0) / Math.max(1, allVerdicts.length),
    "verifier/timeouts": events["verifier/timeouts"] ?? 0,
    "verifier/crashes": events["verifier/crashes"] ?? 0,
    "verifier/errors": events["verifier/errors"] ?? 0,
    accuracy,
    "groups/zero_std_frac": zeroStdFraction(rewards, groupIds),
    "groups/trained_seqs": trainSeqs.length,
    "rollout/gen_batches": filled.genBatches,
    "rollout/groups_kept": kept.length,
    "rollout/groups_dropped": filled.dropped,
    "rollout/groups_surplus": filled.surplus,
    "rollout/batch_full": filled.full ? 1 : 0,
    "rollout/sampled_tokens": sampledTokens,
    "rollout/sampled_tokens_total": sel.sampledTokens,
    "rollout/masked_truncated": maskedTruncated,
    ...(alg.overlong?.enabled ? { "reward/overlong_penalty": overlongPenalty / Math.max(1, rewards.length) } : {}),
    ...selMetrics,
    "response/length_mean": sampledTokens / Math.max(1, allLengths.length),
    "response/length_max": Math.max(0, ...allLengths),
    "response/truncated_frac": allRollouts.filter((o) => o.stopReason === "max_tokens").length / Math.max(1, allRollouts.length),
    entropy: mean("entropy"),
    kl: needRef ? klMean : 0,
    kl_coef: st.kl.coef,
    "loss/policy": mean("loss"),
    clipfrac_low: mean("clipfrac_low"),
    clipfrac_high: mean("clipfrac_high"),
    ratio_mean: lm["ratio_mean"] !== undefined ? mean("ratio_mean") : 1,
    ratio_max: lm["ratio_max"] ?? 1,
    approx_kl_old: lm["approx_kl"] !== undefined ? mean("approx_kl") : 0,
    grad_norm: gradNorm,
    updates,
    skipped: skippedUpdates > 0 ? 1 : 0,
    "time/sample": sampleSeconds,
    "time/reward": rewardSeconds,
    "time/train": (tTrain - tReward) / 1000,
    "time/step": (tTrain - tStart) / 1000,
    "throughput/sample_tokens_per_s": sampledTokens / Math.max(1e-9, sampleSeconds),
  };
  Object.assign(metrics, hooked?.metrics, hooks.stepMetrics?.());
  Object.assign(metrics, rolloutMetrics);
  st.step++;
  log.metrics({ stage: "rl", step: st.step, ...metrics });
  const k = ctx.cfg.logging.samplesPerStep;
  log.samples(
    rollouts.slice(0, k).map((o, i) => ({
      step: st.step,
      prompt: examples[o.promptIndex]!.prompt,
      response: texts[i],
      answer: examples[o.promptIndex]!.answer,
      reward: rewards[i],
      advantage: adv[i],
      correct: verdicts[i]!.correct,
      reason: verdicts[i]!.reason,
      stop: o.stopReason,
    })),
  );
  return metrics;
}
