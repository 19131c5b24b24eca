/**
 * Held-out evaluation: sample responses to test prompts and verify them.
 */
import type { Example } from "../tasks/types.ts";
import type { RunContext } from "../trainer/context.ts";
import { passAtK } from "./passk.ts";

export interface EvalOptions {
  /** Sampling temperature (0 = greedy, the default). */
  temperature?: number;
  /** Samples per prompt (pass@k and mean@k use them; default 1). */
  n?: number;
  maxNewTokens: number;
  seed?: number;
}

export interface EvalResult {
  /** Fraction of prompts whose first sample is correct (greedy accuracy when temperature is 0). */
  accuracy: number;
  /** Mean correctness over all samples (mean@n). */
  meanAtN: number;
  /** Unbiased pass@k for k = 1, 2, 4, ... ≤ n. */
  passAtK: Record<string, number>;
  /** Mean response length in tokens. */
  meanLength: number;
  /** Fraction of responses cut by maxNewTokens. */
  truncated: number;
  prompts: number;
}

/** Evaluate `examples` (all of them) with the run's engine, tokenizer and verifier. */
export async function evaluate(ctx: Pick<RunContext, "engine" | "tokenizer" | "verify" | "encodePrompt">, examples: readonly Example[], o: EvalOptions): Promise<EvalResult> {
  const n = o.n ?? 1;
  const results = await ctx.engine.sample({
    prompts: examples.map(ctx.encodePrompt),
    n,
    maxNewTokens: o.maxNewTokens,
    temperature: o.temperature ?? 0,
    seed: o.seed ?? 0,
    stopTokens: [ctx.tokenizer.eosId],
  });
  const correct = new Int32Array(examples.length);
  let first = 0;
  let len = 0;
  let trunc = 0;
  results.forEach((r, i) => {
    const ok = ctx.verify(ctx.tokenizer.decode(r.tokens), examples[r.promptIndex]!).correct;
    if (ok) correct[r.promptIndex]! += 1;
    if (ok && i % n === 0) first++;
    len += r.tokens.length;
    if (r.stopReason === "max_tokens") trunc++;
  });
  const pk: Record<string, number> = {};
  for (let k = 1; k <= n; k *= 2) {
    let s = 0;
    for (const c of correct) s += passAtK(n, c, k);
    pk[`pass@${k}`] = s / examples.length;
  }
  const total = correct.reduce((a, b) => a + b, 0);
  return {
    accuracy: first / examples.length,
    meanAtN: total / (examples.length * n),
    passAtK: pk,
    meanLength: len / results.length,
    truncated: trunc / results.length,
    prompts: examples.length,
  };
}
