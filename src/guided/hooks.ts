/**
 * The guided methods as RL-stage hooks (src/trainer/hooks.ts), built from the `guided` config block.
 */
import { composeLosses, makeChordSftLoss, makeKdLoss, makeMixedPolicyLoss, makePolicyLoss, scaleLoss, stepCounts } from "../algorithms/index.ts";
import type { Engine, TokenLossFn } from "../engines/engine.ts";
import { EmbeddedEngine } from "../engines/embedded/engine.ts";
import type { Example } from "../tasks/types.ts";
import { chunkBySize, packSequences, type Sequence } from "../trainer/batch.ts";
import type { RunContext } from "../trainer/context.ts";
import type { RewardStageResult, RlStageHooks } from "../trainer/hooks.ts";
import { Rng, hash32 } from "../util/rng.ts";
import type { GuidedConfig } from "./config.ts";
import { expertSequence } from "./expert.ts";
import { raftStep } from "./raft.ts";
import { hardestGroups, reliftSftSteps, ReliftBuffer, type SavedReliftBuffer } from "./relift.ts";
import { scheduleValue } from "./schedule.ts";
import { demonstration, supervisedStep } from "./sft.ts";

/**
 * Hooks for the configured guided methods (none configured → {}).
 * @throws Error naming the field when the algorithm block conflicts (KDRL needs kl.coef 0: the
 *         reference slot holds the teacher).
 */
export function buildGuidedHooks(ctx: RunContext, g: GuidedConfig | undefined): RlStageHooks {
  if (!g) return {};
  const r = ctx.cfg.rl!;
  const alg = ctx.cfg.algorithm!;
  const hooks: RlStageHooks = {};
  let teacher: Engine | null = null;
  const closers: (() => Promise<void>)[] = [];

  if (g.raft) {
    const sel = g.raft;
    hooks.step = (c, a, st, log) => raftStep(c, a, st, log, sel);
  }

  if (g.kd) {
    if (alg.kl.coef > 0 || alg.kl.adaptive) throw new Error("config error at rl.algorithm.kl.coef: guided.kd puts the teacher in the reference slot, so the KL-to-reference penalty must be off; set rl.algorithm.kl.coef to 0 (e.g. {preset: grpo, kl: {coef: 0}})");
    if (r.referenceResetEvery > 0) throw new Error("config error at rl.referenceResetEvery: guided.kd keeps the teacher in the reference slot; set it to 0");
  }
  // KDRL's teacher goes into the reference slot before the first step that needs it (also after a resume).
  let teacherInSlot = false;

  // Per-step state shared by the hooks below.
  let relift: ReliftBuffer | null = null;
  let reliftAdded = 0;
  let sftSteps = 0;
  let chordCursor = 0;
  const chordOrder = new Rng(hash32(ctx.cfg.seed, 0xc4)).shuffle(ctx.train.map((_, i) => i));
  if (g.relift) relift = new ReliftBuffer(g.relift.bufferSize);

  const teacherDemo = async (exs: Example[]): Promise<(Sequence | null)[]> => {
    if (!teacher) {
      teacher = await EmbeddedEngine.fromPretrained(g.relift!.teacher!, { tokenizer: ctx.tokenizer, seed: ctx.cfg.seed });
      closers.push(() => teacher!.close());
    }
    const prompts = exs.map(ctx.encodePrompt);
    const outs = await teacher.sample({ prompts, n: 1, maxNewTokens: r.maxNewTokens, temperature: 0, seed: ctx.cfg.seed, stopTokens: [ctx.tokenizer.eosId] });
    return outs.map((o) => (ctx.verify(ctx.tokenizer.decode(o.tokens), exs[o.promptIndex]!).correct ? { prompt: prompts[o.promptIndex]!, response: o.tokens } : null));
  };

  let step = 0;
  if (g.relift || g.expert || g.kd) {
    hooks.rewards = async (s): Promise<RewardStageResult> => {
      step = s.step;
      const metrics: Record<string, number> = {};
      const res: RewardStageResult = { metrics };
      // Correctness per group (by prompt; group sizes may differ, e.g. tree rollouts).
      const byGroup: boolean[][] = s.examples.map(() => []);
      s.rollouts.forEach((o, i) => byGroup[o.promptIndex]!.push(s.verdicts[i]!.correct));
      if (relift && g.relift) {
        const hard = byGroup.flatMap((c, p) => (c.length && hardestGroups(c, c.length, g.relift!.hardness).length ? [p] : []));
        const exs = hard.map((h) => s.examples[h]!);
        const demos = g.relift.source === "teacher" ? await teacherDemo(exs) : exs.map((e) => demonstration(e, ctx.encodePrompt, ctx.tokenizer));
        let added = 0;
        demos.forEach((d, k) => d && relift!.add({ id: exs[k]!.id, seq: d, step: s.step }) && added++);
        reliftAdded += added;
        metrics["relift/hard_frac"] = hard.length / Math.max(1, s.examples.length);
        metrics["relift/added"] = added;
        metrics["relift/buffer"] = relift.size;
      }
      if (g.expert?.mode === "luffy") {
        const seqs: Sequence[] = [];
        const rewards: number[] = [];
        s.examples.forEach((ex, p) => {
          if (g.expert!.onlyFailed && byGroup[p]!.some(Boolean)) return;
          const target = ex.solution ?? ex.answer;
          const reward = ctx.verify(target, ex).reward;
          for (let k = 0; k < g.expert!.perGroup; k++) {
            seqs.push(expertSequence(ex, ctx.encodePrompt, ctx.tokenizer, p, target));
            rewards.push(reward);
          }
        });
        res.extra = { seqs, rewards };
        metrics["luffy/expert_seqs"] = seqs.length;
      }
      if (g.kd) {
        if (!teacherInSlot) {
          await ctx.engine.setReference({ dir: g.kd.teacher });
          teacherInSlot = true;
        }
        // Teacher log-probs of the student's own tokens (the teacher is in the reference slot).
        const batch = packSequences(s.seqs, ctx.tokenizer.padId);
        const t = await ctx.engine.score(batch, { model: "reference" });
        s.seqs.forEach((q, i) => (q.refLogprobs = t.logprobs.slice(i * batch.seqLen + q.prompt.length, i * batch.seqLen + q.prompt.length + q.response.length)));
      }
      return res;
    };
  }

  const mu = (step: number) => (g.expert?.mode === "chord" ? scheduleValue({ ...g.expert.mu, steps: g.expert.mu.steps ?? r.steps }, step) : 0);
  // The step's metrics of the method terms ("kd/…", "luffy/…", "chord/…"), summed over micro-batches.
  let captured: Record<string, number> = {};
  const capture = (fn: TokenLossFn): TokenLossFn => (scores, batch) => {
    const out = fn(scores, batch);
    for (const [k, v] of Object.entries(out.metrics)) if (/^(kd|luffy|chord)\//.test(k)) captured[k] = (captured[k] ?? 0) + v;
    return out;
  };
  if (g.expert?.mode === "luffy" || g.expert?.mode === "chord" || g.kd) {
    hooks.loss = (a, counts, state) => {
      const base = g.expert?.mode === "luffy" ? makeMixedPolicyLoss(a, counts, state, g.expert.gamma) : makePolicyLoss(a, counts, state);
      if (g.kd) return capture(composeLosses([{ fn: base }, { fn: makeKdLoss(counts, { coef: g.kd.coef, estimator: g.kd.estimator, aggregation: a.aggregation }) }]));
      if (g.expert?.mode === "chord") return scaleLoss(base, 1 - mu(step));
      return capture(base);
    };
    hooks.stepMetrics = () => {
      const m = { ...captured, ...(g.expert?.mode === "chord" ? { "chord/mu": mu(step) } : {}) };
      captured = {};
      return m;
    };
  }
  if (g.expert?.mode === "chord") {
    const e = g.expert;
    hooks.extraBackward = async (c, st) => {
      const m = mu(st);
      if (m <= 0) return [];
      const seqs: Sequence[] = [];
      for (let i = 0; i < e.batchSize; i++) {
        const ex = c.train[chordOrder[chordCursor++ % chordOrder.length]!]!;
        const d = demonstration(ex, c.encodePrompt, c.tokenizer);
        seqs.push({ ...d, weights: new Float32Array(d.response.length).fill(1) });
      }
      const micro = chunkBySize(seqs, r.microBatchSize ?? seqs.length).map((q) => packSequences(q, c.tokenizer.padId));
      const counts = stepCounts(micro, Math.max(...seqs.map((q) => q.response.length)));
      const fn = scaleLoss(makeChordSftLoss(counts, { phi: e.phi }), m);
      const reps = [];
      for (const mb of micro) {
        const rep = await c.engine.forwardBackward(mb, fn);
        captured["chord/sft_loss"] = (captured["chord/sft_loss"] ?? 0) + rep.loss;
        captured["chord/phi_mean"] = (captured["chord/phi_mean"] ?? 0) + (rep.metrics["chord/phi_sum"] ?? 0) / Math.max(1, counts.tokens);
        reps.push({ ...rep, metrics: {} });
      }
      return reps;
    };
  }

  if (relift && g.relift) {
    const rc = g.relift;
    hooks.afterStep = async (c, st, _m, log) => {
      const n = reliftSftSteps(st.step, relift!.size, { batchSize: rc.batchSize, every: rc.every, maxSftSteps: rc.maxSftSteps });
      for (let k = 0; k < n; k++) {
        const demos = relift!.take(rc.batchSize);
        const sm = await supervisedStep(c.engine, demos.map((d) => d.seq), { lr: rc.lr, maxGradNorm: r.maxGradNorm, weightDecay: r.weightDecay, microBatchSize: r.microBatchSize, padId: c.tokenizer.padId });
        sftSteps++;
        log.metrics({ stage: "relift-sft", step: st.step, sft_step: sftSteps, demos: demos.length, buffer: relift!.size, ...sm });
      }
    };
  }

  // Checkpointed state (trainer.json rl.methods): ReLIFT's buffer and counters, CHORD's cursor.
  // (The step counter `step` is set by every step's reward hook before it is read; KDRL's teacher
  // goes back into the reference slot lazily; the teacher engine is reloaded on demand.)
  if (relift || g.expert?.mode === "chord") {
    hooks.saveState = () => ({
      ...(relift ? { relift: { buffer: relift.save(), added: reliftAdded, sftSteps } } : {}),
      ...(g.expert?.mode === "chord" ? { chord: { cursor: chordCursor } } : {}),
    });
    hooks.restoreState = (saved) => {
      const rs = saved["relift"] as { buffer: SavedReliftBuffer; added: number; sftSteps: number } | undefined;
      if (relift && rs) {
        relift.restore(rs.buffer);
        reliftAdded = rs.added;
        sftSteps = rs.sftSteps;
      }
      const cs = saved["chord"] as { cursor: number } | undefined;
      if (cs) chordCursor = cs.cursor;
    };
  }

  hooks.close = async () => {
    for (const f of closers) await f();
  };
  return hooks;
}
