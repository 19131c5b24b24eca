/**
 * ReLIFT — interleave RL with SFT on the hardest questions (Ma et al. 2025, arXiv:2506.07527):
 * groups the policy fails (hardness threshold) put a demonstration — the dataset's solution or a
 * teacher's correct greedy answer (a checkpoint, or any OpenAI-compatible server) — into a buffer; after RL steps, SFT steps on the
 * buffer at their own learning rate. Options: `methods.relift`. Transforms the reward stage (reads
 * verdicts) and runs after each step; its buffer is checkpointed.
 */
import type { RunConfig } from "../config/schema.ts";
import type { Sequence } from "../core/sequence.ts";
import type { Engine } from "../core/engine.ts";
import type { BuiltinMethodOptions } from "./config.ts";
import { demonstration, supervisedStep } from "./sft.ts";
import type { Example } from "../core/example.ts";
import type { RunContext } from "../pipeline/context.ts";
import { defineMethod } from "./define.ts";

/*
 * ReLIFT (Ma et al. 2025, "Learning What Reinforcement Learning Can't: Interleaved Online
 * Fine-Tuning for Hardest Questions", arXiv:2506.07527): train mostly with RL; when a question is
 * among the hardest (here: its group's accuracy ≤ `hardness`, default 0 = every response wrong),
 * put a high-quality demonstration for it into a buffer; when the buffer holds a batch, take an
 * SFT step on it, interleaved with the RL steps.
 */
/** One buffered demonstration. */
export interface BufferedDemo {
  /** Example id (the buffer holds at most one demonstration per id). */
  id: string;
  seq: Sequence;
  /** RL step at which it was added. */
  step: number;
}

/** FIFO buffer of demonstrations for the hardest questions, deduplicated by example id. */
export class ReliftBuffer {
  private items: BufferedDemo[] = [];
  /** Demonstrations evicted because the buffer was full. */
  evicted = 0;
  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`ReliftBuffer: capacity must be >= 1, got ${capacity}`);
  }
  get size(): number {
    return this.items.length;
  }
  /** Add a demonstration; an id already buffered is refreshed (moved to the back). Evicts the oldest when full. @returns whether the id was new. */
  add(d: BufferedDemo): boolean {
    const at = this.items.findIndex((x) => x.id === d.id);
    if (at >= 0) this.items.splice(at, 1);
    this.items.push(d);
    while (this.items.length > this.capacity) {
      this.items.shift();
      this.evicted++;
    }
    return at < 0;
  }
  /** Remove and return the `n` oldest demonstrations (fewer when the buffer holds fewer). */
  take(n: number): BufferedDemo[] {
    return this.items.splice(0, Math.max(0, n));
  }
  /** The buffered ids, oldest first. */
  ids(): string[] {
    return this.items.map((x) => x.id);
  }
  /** JSON-serialisable contents (for checkpoints): each demonstration's id, step and token ids, oldest first. */
  save(): SavedReliftBuffer {
    return { evicted: this.evicted, items: this.items.map((d) => ({ id: d.id, step: d.step, prompt: Array.from(d.seq.prompt), response: Array.from(d.seq.response) })) };
  }
  /** Replace the contents with a saved buffer (the capacity stays this buffer's). */
  restore(s: SavedReliftBuffer): void {
    this.items = s.items.map((d) => ({ id: d.id, step: d.step, seq: { prompt: Int32Array.from(d.prompt), response: Int32Array.from(d.response) } }));
    this.evicted = s.evicted;
    while (this.items.length > this.capacity) {
      this.items.shift();
      this.evicted++;
    }
  }
}

/** A ReliftBuffer as stored in a checkpoint. */
export interface SavedReliftBuffer {
  evicted: number;
  items: { id: string; step: number; prompt: number[]; response: number[] }[];
}

/** When ReLIFT takes SFT steps. */
export interface ReliftSchedule {
  /** Demonstrations per SFT step. */
  batchSize: number;
  /** Consider SFT only after every `every`-th RL step (0 or 1 = after every step). */
  every: number;
  /** At most this many SFT steps after one RL step. */
  maxSftSteps: number;
}

/**
 * Number of SFT steps to take after RL step `step` (1-based) with `buffered` demonstrations:
 * 0 off-schedule, else min(maxSftSteps, ⌊buffered / batchSize⌋) (only full batches).
 */
export function reliftSftSteps(step: number, buffered: number, s: ReliftSchedule): number {
  if (s.every > 1 && step % s.every !== 0) return 0;
  return Math.min(s.maxSftSteps, Math.floor(buffered / s.batchSize));
}

/**
 * Groups that count as hardest: accuracy (mean of `correct` over the group) ≤ `hardness`.
 * @param correct prompt-major [B], B a multiple of groupSize.
 * @returns group indices.
 */
export function hardestGroups(correct: readonly boolean[], groupSize: number, hardness = 0): number[] {
  const out: number[] = [];
  for (let g = 0; g * groupSize < correct.length; g++) {
    const c = correct.slice(g * groupSize, (g + 1) * groupSize);
    if (c.filter(Boolean).length / c.length <= hardness + 1e-12) out.push(g);
  }
  return out;
}

type ReliftOptions = BuiltinMethodOptions["relift"];

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
  configPath: "methods.relift",
  options: (cfg: RunConfig) => cfg.methods?.relift,
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
