/**
 * Held-out evaluation of an env run (docs/envs.md): each held-out slot's group of `n` episodes is
 * played through the run's engine (src/rollout/env.ts) and summarised as `evaluate` summarises
 * one-reply samples: a sample is correct when its episode is solved (reward ≥ the env's solvedAt).
 */
import type { Engine } from "../core/engine.ts";
import type { Example } from "../core/example.ts";
import { slotSpec } from "../envs/task.ts";
import type { EnvSource } from "../rollout/collect.ts";
import { envRollouts } from "../rollout/env.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { EvalResult } from "./accuracy.ts";
import { summarize, type PromptOutcome } from "./summary.ts";

/**
 * @param o.n episodes per slot (temperature 0: use 1); o.maxTokens the response budget per episode
 * @returns the summary (accuracy = first episode solved, meanAtN, pass@k, lengths in response ids)
 */
export async function evaluateEnv(ctx: { engine: Engine; tokenizer: Tokenizer }, env: EnvSource, examples: readonly Example[], o: { n: number; temperature: number; maxTokens: number; seed: number }): Promise<EvalResult> {
  const groups = await Promise.all(examples.map((e) => Promise.resolve(env.def.group(slotSpec(e, env.seed, o.n, ctx.tokenizer)))));
  const res = await envRollouts(ctx.engine, ctx.tokenizer, groups, { temperature: o.temperature, seed: o.seed, maxTurns: env.maxTurns, maxTokens: o.maxTokens, maxSeqLen: ctx.engine.info().maxSeqLen, env: env.def });
  const outcomes: PromptOutcome[] = examples.map((ex) => ({ id: ex.id, task: ex.task, samples: [] }));
  res.trajectories.forEach((t, i) => {
    const v = res.verdicts[i]!;
    outcomes[t.promptIndex]!.samples.push({ correct: v.correct, extracted: null, length: t.tokens.length, truncated: t.stopReason === "max_tokens", reward: v.reward });
  });
  if (o.temperature === 0) for (const p of outcomes) p.greedy = p.samples[0];
  return summarize(outcomes, { seed: o.seed });
}
