/**
 * pass@k of one checkpoint on held-out `addition-scratchpad` prompts, for the pass@k-boundary and
 * KDRL experiments (scripts/experiments/passk-boundary.ts, kdrl.ts).
 *
 * What `rlvr eval --samples 256 --record` does, with two differences the experiments need:
 * the engine is chosen (`rlvr eval` always samples with the embedded engine; the torch engine
 * samples this model several times faster on the 2-core CPU), and the prompts are fixed by
 * `promptSeed` while `seed` only changes the sampling — so every checkpoint of an experiment is
 * scored on the same prompts. The summary (no per-sample outcomes) is appended to
 * `<recordDir>/eval.jsonl` under `label`, the record `rlvr plot --passk --label` draws.
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { openEngine } from "../../src/engines/open.ts";
import { evaluate, type EvalResult } from "../../src/eval/accuracy.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import { generateExamples, getTask, renderPrompt } from "../../src/tasks/index.ts";
import type { Example } from "../../src/core/example.ts";

export interface PassKOptions {
  /** "embedded" or "torch". */
  engine: "embedded" | "torch";
  /** Held-out prompts (test split of addition-scratchpad). */
  prompts: number;
  /** Samples per prompt at temperature 1 (pass@k for k = 1, 2, 4, … ≤ samples). */
  samples: number;
  difficulty: number;
  maxNewTokens: number;
  /** Seed of the prompt set (the same for every checkpoint of an experiment). */
  promptSeed: number;
  /** Seed of the sampling. */
  seed: number;
}

/** The held-out prompts: `prompts` test-split examples at `difficulty`, fixed by `promptSeed`. */
export function heldOutPrompts(o: Pick<PassKOptions, "prompts" | "difficulty" | "promptSeed">): Example[] {
  return generateExamples(getTask("addition-scratchpad"), { n: o.prompts, seed: o.promptSeed, difficulty: o.difficulty, split: "test" });
}

/**
 * Sample `o.samples` responses per held-out prompt at T = 1 from checkpoint `ckpt` (plus one greedy
 * response), verify them and, with `record`, append `{label, step: null, checkpoint, …summary}` to
 * `<record>/eval.jsonl`.
 * @returns the summary: `passAtK["pass@k"]` (unbiased estimator), `greedy`, `meanLength`, …
 */
export async function passAtKOf(ckpt: string, o: PassKOptions, record?: { dir: string; label: string }): Promise<EvalResult> {
  const tokenizer = await loadTokenizer(ckpt);
  const engine = await openEngine({ path: ckpt, engine: o.engine }, { tokenizer, seed: o.seed });
  const task = getTask("addition-scratchpad");
  try {
    const t0 = performance.now();
    const res = await evaluate(
      {
        engine,
        tokenizer,
        verify: (r, e) => task.verify(r, e),
        encodePrompt: (ex) => Int32Array.from(tokenizer.encode(renderPrompt(ex, { template: "plain" }))),
      },
      heldOutPrompts(o),
      { n: o.samples, temperature: 1, maxNewTokens: o.maxNewTokens, greedy: true, seed: o.seed, bootstrap: 0, breakdown: false },
    );
    const seconds = (performance.now() - t0) / 1000;
    if (record) appendFileSync(join(record.dir, "eval.jsonl"), JSON.stringify({ time: new Date().toISOString(), label: record.label, step: null, checkpoint: ckpt, seconds, engine: o.engine, promptSeed: o.promptSeed, ...res }) + "\n");
    return res;
  } finally {
    await engine.close();
  }
}

/**
 * Keep a run's logs in the repository: copy `metrics.jsonl`, `eval.jsonl`, `config.yaml` and
 * `result.json` (not checkpoints) of `dir` into experiments/runs/<experiment>/<name>/ (files `dir`
 * lacks are skipped).
 */
export function keepRun(dir: string, experiment: string, name: string): void {
  const to = join("experiments", "runs", experiment, name);
  mkdirSync(to, { recursive: true });
  for (const f of ["metrics.jsonl", "eval.jsonl", "config.yaml", "result.json"]) if (existsSync(join(dir, f))) copyFileSync(join(dir, f), join(to, f));
}
