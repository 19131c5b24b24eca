/**
 * Evaluation metrics from per-sample outcomes (pure; no engine): accuracy, greedy accuracy,
 * mean@n, pass@k, maj@k, response length and truncation rate, bootstrap intervals, and
 * breakdowns per task and per difficulty. Metric definitions: ALGORITHMS.md ("Evaluation").
 */
import { bootstrapMeans, type Interval } from "./bootstrap.ts";
import { majAtK } from "./majority.ts";
import { kValues, passAtK } from "./passk.ts";

/** One sampled response, as scored. */
export interface SampleOutcome {
  correct: boolean;
  /** The verifier's extracted answer (maj@k votes on it), or null. */
  extracted: string | null;
  /** Response length in tokens. */
  length: number;
  /** Cut by the token budget (stop reason `max_tokens`). */
  truncated: boolean;
  /** Verifier reward in [0, 1] (optional). */
  reward?: number;
  /** The decoded response (kept for reports; optional). */
  response?: string;
  /** The verifier's reason (optional). */
  reason?: string;
}

/** All samples of one prompt. */
export interface PromptOutcome {
  id: string;
  task: string;
  difficulty?: number;
  /** The n samples (temperature as configured), in sampling order. */
  samples: SampleOutcome[];
  /** A separate greedy (temperature 0) sample, when one was taken. */
  greedy?: SampleOutcome;
}

export interface SummaryOptions {
  /** k values for pass@k and maj@k (default: 1, 2, 4, … ≤ n and n). */
  ks?: readonly number[];
  /** Bootstrap resamples for the intervals (default 1000; 0 = no intervals). */
  bootstrap?: number;
  /** Interval coverage (default 0.95). */
  level?: number;
  /** Seed of the bootstrap (default 0). */
  seed?: number;
}

/** Metrics over a set of prompts. Fractions are in [0, 1]; lengths in tokens. */
export interface EvalSummary {
  prompts: number;
  /** Samples per prompt n. */
  samples: number;
  /** Fraction of prompts whose first sample is correct (greedy accuracy at temperature 0). */
  accuracy: number;
  /** Greedy accuracy from the separate greedy samples (present when they were taken). */
  greedy?: number;
  /** Mean correctness over all samples (mean@n). */
  meanAtN: number;
  /** Unbiased pass@k, keys "pass@k". */
  passAtK: Record<string, number>;
  /** maj@k (mean over disjoint blocks of k samples), keys "maj@k". */
  majAtK: Record<string, number>;
  /** Mean response length over all samples. */
  meanLength: number;
  /** Longest response. */
  maxLength: number;
  /** Fraction of samples cut by the token budget. */
  truncated: number;
  /** Percentile bootstrap intervals over prompts, keyed like the metrics ("accuracy", "meanAtN", "pass@4", "maj@4", "greedy", "meanLength", "truncated"). */
  ci?: Record<string, Interval>;
  /** Interval coverage of `ci`. */
  level?: number;
}

/**
 * Per-prompt values of every metric (the means of these columns are the summary's metrics, and
 * the bootstrap resamples their rows).
 * @returns column name → Float64Array[P]
 * @throws RangeError when prompts have different sample counts or none.
 */
export function promptColumns(outcomes: readonly PromptOutcome[], ks?: readonly number[]): Record<string, Float64Array> {
  if (outcomes.length === 0) return {};
  const n = outcomes[0]!.samples.length;
  if (n < 1) throw new RangeError("evaluation: a prompt has no samples");
  for (const o of outcomes) if (o.samples.length !== n) throw new RangeError(`evaluation: prompt ${o.id} has ${o.samples.length} samples, expected ${n} like the others`);
  const P = outcomes.length;
  const col = () => new Float64Array(P);
  const cols: Record<string, Float64Array> = { accuracy: col(), meanAtN: col(), meanLength: col(), truncated: col() };
  const kk = kValues(n, ks);
  for (const k of kk) (cols[`pass@${k}`] = col()), (cols[`maj@${k}`] = col());
  const withGreedy = outcomes.every((o) => o.greedy !== undefined);
  if (withGreedy) cols["greedy"] = col();
  outcomes.forEach((o, p) => {
    const c = o.samples.filter((s) => s.correct).length;
    cols["accuracy"]![p] = o.samples[0]!.correct ? 1 : 0;
    cols["meanAtN"]![p] = c / n;
    cols["meanLength"]![p] = o.samples.reduce((a, s) => a + s.length, 0) / n;
    cols["truncated"]![p] = o.samples.filter((s) => s.truncated).length / n;
    for (const k of kk) {
      cols[`pass@${k}`]![p] = passAtK(n, c, k);
      cols[`maj@${k}`]![p] = majAtK(o.samples, k);
    }
    if (withGreedy) cols["greedy"]![p] = o.greedy!.correct ? 1 : 0;
  });
  return cols;
}

function mean(a: Float64Array): number {
  let s = 0;
  for (const x of a) s += x;
  return a.length ? s / a.length : NaN;
}

/**
 * Summarise outcomes: metric means over prompts, and (with `bootstrap` > 0 and ≥ 2 prompts)
 * percentile bootstrap intervals over prompts.
 * @throws RangeError when prompts have different sample counts.
 */
export function summarize(outcomes: readonly PromptOutcome[], o: SummaryOptions = {}): EvalSummary {
  const cols = promptColumns(outcomes, o.ks);
  const P = outcomes.length;
  const n = P ? outcomes[0]!.samples.length : 0;
  const passK: Record<string, number> = {};
  const majK: Record<string, number> = {};
  for (const [name, c] of Object.entries(cols)) {
    if (name.startsWith("pass@")) passK[name] = mean(c);
    if (name.startsWith("maj@")) majK[name] = mean(c);
  }
  let maxLength = 0;
  for (const p of outcomes) for (const s of p.samples) maxLength = Math.max(maxLength, s.length);
  const s: EvalSummary = {
    prompts: P,
    samples: n,
    accuracy: P ? mean(cols["accuracy"]!) : NaN,
    meanAtN: P ? mean(cols["meanAtN"]!) : NaN,
    passAtK: passK,
    majAtK: majK,
    meanLength: P ? mean(cols["meanLength"]!) : NaN,
    maxLength,
    truncated: P ? mean(cols["truncated"]!) : NaN,
  };
  if (cols["greedy"]) s.greedy = mean(cols["greedy"]);
  const B = o.bootstrap ?? 1000;
  if (B > 0 && P >= 2) {
    s.ci = bootstrapMeans(cols, { resamples: B, level: o.level, seed: o.seed });
    s.level = o.level ?? 0.95;
  }
  return s;
}

/** Group outcomes by a key (insertion order = first appearance), skipping undefined keys. */
function groupBy(outcomes: readonly PromptOutcome[], key: (o: PromptOutcome) => string | undefined): Map<string, PromptOutcome[]> {
  const m = new Map<string, PromptOutcome[]>();
  for (const o of outcomes) {
    const k = key(o);
    if (k === undefined) continue;
    const g = m.get(k);
    if (g) g.push(o);
    else m.set(k, [o]);
  }
  return m;
}

/**
 * Summaries per task and per (task, difficulty) — the latter keyed "task@difficulty"; prompts
 * without a difficulty are left out of it. Breakdowns carry no intervals unless `bootstrap` is set.
 */
export function breakdown(outcomes: readonly PromptOutcome[], o: SummaryOptions = {}): { byTask: Record<string, EvalSummary>; byDifficulty: Record<string, EvalSummary> } {
  const opts = { ...o, bootstrap: o.bootstrap ?? 0 };
  const byTask: Record<string, EvalSummary> = {};
  for (const [k, g] of groupBy(outcomes, (x) => x.task)) byTask[k] = summarize(g, opts);
  const byDifficulty: Record<string, EvalSummary> = {};
  const groups = [...groupBy(outcomes, (x) => (x.difficulty === undefined ? undefined : `${x.task}@${x.difficulty}`))];
  groups.sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }));
  for (const [k, g] of groups) byDifficulty[k] = summarize(g, opts);
  return { byTask, byDifficulty };
}
