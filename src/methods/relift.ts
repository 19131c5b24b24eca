/**
 * ReLIFT — interleave RL with SFT on the hardest questions (Ma et al. 2025, arXiv:2506.07527):
 * groups the policy fails (hardness threshold) put a demonstration — the dataset's solution or a
 * teacher's correct greedy answer (a checkpoint, or any OpenAI-compatible server) — into a buffer; after RL steps, SFT steps on the
 * buffer at their own learning rate. Options: `guided.relift`. Transforms the reward stage (reads
 * verdicts) and runs after each step; its buffer is checkpointed.
 */
import type { RunConfig } from "../config/schema.ts";
import type { Sequence } from "../core/sequence.ts";
import type { Engine } from "../core/engine.ts";
import type { GuidedConfig } from "../guided/config.ts";
import { hardestGroups, reliftSftSteps, ReliftBuffer, type SavedReliftBuffer } from "../guided/relift.ts";
import { demonstration, supervisedStep } from "../guided/sft.ts";
import type { Example } from "../core/example.ts";
import type { RunContext } from "../pipeline/context.ts";
import { defineMethod } from "./define.ts";

type ReliftOptions = NonNullable<GuidedConfig["relift"]>;

/** The teacher: a checkpoint on the embedded engine, or a model behind an OpenAI-compatible server. */
async function openTeacher(ctx: RunContext, rc: ReliftOptions): Promise<Pick<Engine, "sample" | "close">> {
  // Imported on first use so that loading the method registry (config validation) stays light.
  if (rc.teacherEndpoint) {
    const { OpenAISampler } = await import("../rollout/samplers/openai.ts");
    const s = new OpenAISampler(rc.teacherEndpoint);
    return { sample: (req) => s.sample(req), close: async () => s.close?.() };
  }
  const { openEngine } = await import("../engines/open.ts");
  return openEngine({ path: rc.teacher!, engine: "embedded" }, { tokenizer: ctx.tokenizer, seed: ctx.cfg.seed });
}

/** Correct greedy answers of the teacher (null where it is wrong); opens it on first use. */
function teacherDemos(ctx: RunContext, rc: ReliftOptions, closers: (() => Promise<void>)[]) {
  let teacher: Pick<Engine, "sample" | "close"> | null = null;
  return async (exs: Example[]): Promise<(Sequence | null)[]> => {
    if (!teacher) {
      teacher = await openTeacher(ctx, rc);
      closers.push(() => teacher!.close());
    }
    const prompts = exs.map(ctx.encodePrompt);
    const outs = await teacher.sample({ prompts, n: 1, maxNewTokens: ctx.cfg.rl!.maxNewTokens, temperature: 0, seed: ctx.cfg.seed, stopTokens: [ctx.tokenizer.eosId] });
    const verdicts = await Promise.all(outs.map((o) => ctx.verify(ctx.tokenizer.decode(o.tokens), exs[o.promptIndex]!)));
    return outs.map((o, i) => (verdicts[i]!.correct ? { prompt: prompts[o.promptIndex]!, response: o.tokens } : null));
  };
}

export const relift = defineMethod<ReliftOptions>({
  name: "relift",
  configPath: "guided.relift",
  options: (cfg: RunConfig) => cfg.guided?.relift,
  needs: { groups: true, synchronous: true },
  stages: ["reward", "after"],
  order: 30,
  build(ctx, rc) {
    const r = ctx.cfg.rl!;
    const buffer = new ReliftBuffer(rc.bufferSize);
    const closers: (() => Promise<void>)[] = [];
    const fromTeacher = teacherDemos(ctx, rc, closers);
    let added = 0;
    let sftSteps = 0;
    return {
      async rewards(s) {
        // Correctness per group (by prompt; group sizes may differ, e.g. tree rollouts).
        const byGroup: boolean[][] = s.examples.map(() => []);
        s.rollouts.forEach((o, i) => byGroup[o.promptIndex]!.push(s.verdicts[i]!.correct));
        const hard = byGroup.flatMap((c, p) => (c.length && hardestGroups(c, c.length, rc.hardness).length ? [p] : []));
        const exs = hard.map((h) => s.examples[h]!);
        const demos = rc.source === "teacher" ? await fromTeacher(exs) : exs.map((e) => demonstration(e, ctx.encodePrompt, ctx.tokenizer));
        let n = 0;
        demos.forEach((d, k) => d && buffer.add({ id: exs[k]!.id, seq: d, step: s.step }) && n++);
        added += n;
        return { metrics: { "relift/hard_frac": hard.length / Math.max(1, s.examples.length), "relift/added": n, "relift/buffer": buffer.size } };
      },
      async afterStep(c, st, _m, log) {
        const steps = reliftSftSteps(st.step, buffer.size, { batchSize: rc.batchSize, every: rc.every, maxSftSteps: rc.maxSftSteps });
        for (let k = 0; k < steps; k++) {
          const demos = buffer.take(rc.batchSize);
          const sm = await supervisedStep(c.engine, demos.map((d) => d.seq), { lr: rc.lr, maxGradNorm: r.maxGradNorm, weightDecay: r.weightDecay, microBatchSize: r.microBatchSize, padId: c.tokenizer.padId });
          sftSteps++;
          log.metrics({ stage: "relift-sft", step: st.step, sft_step: sftSteps, demos: demos.length, buffer: buffer.size, ...sm });
        }
        // New weights: a sampler apart from the trainer syncs to this version before the next step.
        if (steps > 0) st.policyVersion++;
      },
      saveState: () => ({ relift: { buffer: buffer.save(), added, sftSteps } }),
      restoreState(saved) {
        const rs = saved["relift"] as { buffer: SavedReliftBuffer; added: number; sftSteps: number } | undefined;
        if (!rs) return;
        buffer.restore(rs.buffer);
        added = rs.added;
        sftSteps = rs.sftSteps;
      },
      async close() {
        for (const f of closers) await f();
      },
    };
  },
});
