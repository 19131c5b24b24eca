/**
 * Held-out evaluation: sample responses to test prompts with the run's engine, verify them, and
 * summarise (accuracy, greedy accuracy, mean@n, pass@k, maj@k, lengths, truncation, bootstrap
 * intervals, per-task and per-difficulty breakdowns). Formulas live in ./summary.ts.
 */
import type { SampleRequest, SampleResult } from "../core/engine.ts";
import type { Example } from "../core/example.ts";
import type { RunContext } from "../pipeline/context.ts";
import { breakdown, summarize, type EvalSummary, type PromptOutcome, type SampleOutcome } from "./summary.ts";

export interface EvalOptions {
  /** Sampling temperature (0 = greedy, the default). */
  temperature?: number;
  /** Nucleus sampling (default 1 = off). */
  topP?: number;
  /** Samples per prompt n (pass@k, maj@k and mean@n use them; default 1). */
  n?: number;
  maxNewTokens: number;
  /** Sampler seed; also seeds the bootstrap (default 0). */
  seed?: number;
  /** k values for pass@k and maj@k (default 1, 2, 4, … ≤ n and n). */
  ks?: readonly number[];
  /** Bootstrap resamples for confidence intervals (default 1000; 0 = none). */
  bootstrap?: number;
  /** Interval coverage (default 0.95). */
  level?: number;
  /** With temperature > 0, also take one greedy sample per prompt for greedy accuracy (default false). */
  greedy?: boolean;
  /** Keep every prompt's outcomes (responses included) in the result (default false). */
  keepOutcomes?: boolean;
  /** Add per-task and per-difficulty summaries (default true). */
  breakdown?: boolean;
  /**
   * Most sequences (prompts × n) one sample call asks for (default 512): larger evaluations go in
   * calls of whole prompts, the call starting at prompt i seeded seed + i·n (so a vLLM sampler,
   * which seeds sample j of prompt i with seed + i·n + j, draws what one call would). Bounds each
   * call's time (a sampler's request deadline) and memory, and lets `onProgress` report.
   */
  chunkSequences?: number;
  /** Called after each sample call with the sequences done and in all. */
  onProgress?: (done: number, total: number) => void;
}

export interface EvalResult extends EvalSummary {
  /** Summaries per task name. */
  byTask?: Record<string, EvalSummary>;
  /** Summaries per "task@difficulty" (prompts with a difficulty only). */
  byDifficulty?: Record<string, EvalSummary>;
  /** Every prompt's samples, when `keepOutcomes` (for comparisons and reports). */
  outcomes?: PromptOutcome[];
}

type EvalContext = Pick<RunContext, "engine" | "tokenizer" | "verify" | "encodePrompt"> & Partial<Pick<RunContext, "verifyAsync">>;

async function outcome(ctx: EvalContext, r: SampleResult, ex: Example, keepText: boolean): Promise<SampleOutcome> {
  const text = ctx.tokenizer.decode(r.tokens);
  const v = ctx.verifyAsync ? await ctx.verifyAsync(text, ex) : ctx.verify(text, ex);
  const s: SampleOutcome = { correct: v.correct, extracted: v.extracted, length: r.tokens.length, truncated: r.stopReason === "max_tokens", reward: v.reward };
  if (keepText) (s.response = text), (s.reason = v.reason);
  return s;
}

/**
 * Evaluate `examples` (all of them) with the run's engine, tokenizer and verifier.
 * @returns the summary over all prompts (the fields `accuracy`, `meanAtN`, `passAtK`,
 *   `meanLength`, `truncated`, `prompts` keep their meaning from earlier versions), plus
 *   breakdowns and, with `keepOutcomes`, every sample.
 */
export async function evaluate(ctx: EvalContext, examples: readonly Example[], o: EvalOptions): Promise<EvalResult> {
  const n = o.n ?? 1;
  const temperature = o.temperature ?? 0;
  const seed = o.seed ?? 0;
  const prompts = examples.map(ctx.encodePrompt);
  const stopTokens = [ctx.tokenizer.eosId];
  const results = await sampleInChunks(ctx, { prompts, n, maxNewTokens: o.maxNewTokens, temperature, topP: o.topP, seed, stopTokens }, o);
  const keep = o.keepOutcomes ?? false;
  const outcomes: PromptOutcome[] = examples.map((ex) => ({ id: ex.id, task: ex.task, ...(ex.difficulty !== undefined ? { difficulty: ex.difficulty } : {}), samples: [] }));
  for (const r of results) outcomes[r.promptIndex]!.samples.push(await outcome(ctx, r, examples[r.promptIndex]!, keep));
  if (temperature === 0) {
    for (const p of outcomes) p.greedy = p.samples[0];
  } else if (o.greedy) {
    const g = await sampleInChunks(ctx, { prompts, n: 1, maxNewTokens: o.maxNewTokens, temperature: 0, seed, stopTokens }, o);
    for (const r of g) outcomes[r.promptIndex]!.greedy = await outcome(ctx, r, examples[r.promptIndex]!, keep);
  }
  const opts = { ks: o.ks, bootstrap: o.bootstrap, level: o.level, seed };
  const res: EvalResult = summarize(outcomes, opts);
  if (o.breakdown ?? true) Object.assign(res, breakdown(outcomes, { ks: o.ks, level: o.level, seed }));
  if (keep) res.outcomes = outcomes;
  return res;
}

/** `req` as calls of at most o.chunkSequences sequences of whole prompts (see EvalOptions.chunkSequences); results prompt-major, promptIndex into req.prompts. */
async function sampleInChunks(ctx: EvalContext, req: SampleRequest, o: EvalOptions): Promise<SampleResult[]> {
  const per = Math.max(1, Math.floor((o.chunkSequences ?? 512) / req.n));
  if (req.prompts.length <= per) return ctx.engine.sample(req);
  const out: SampleResult[] = [];
  const total = req.prompts.length * req.n;
  for (let i = 0; i < req.prompts.length; i += per) {
    const part = await ctx.engine.sample({ ...req, prompts: req.prompts.slice(i, i + per), seed: (req.seed ?? 0) + i * req.n });
    for (const r of part) out.push({ ...r, promptIndex: r.promptIndex + i });
    o.onProgress?.(Math.min(total, (i + per) * req.n), total);
  }
  return out;
}

