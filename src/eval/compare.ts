/**
 * Base-vs-trained comparison of two evaluations on the same prompts: a table of every metric with
 * both values, their bootstrap intervals and the paired difference (B − A) with a paired
 * bootstrap interval over the prompts both evaluated; and the pass@k / maj@k curves.
 */
import { bootstrapMeans, type Interval } from "./bootstrap.ts";
import type { EvalResult } from "./accuracy.ts";
import { promptColumns, type EvalSummary, type PromptOutcome } from "./summary.ts";

export interface ComparisonRow {
  metric: string;
  a: number;
  b: number;
  /** b − a */
  delta: number;
  aCi?: Interval;
  bCi?: Interval;
  /** Paired bootstrap interval of b − a (prompts matched by id). */
  deltaCi?: Interval;
}

/** pass@k and maj@k against k, one series per evaluation (the dashboard plots this JSON). */
export interface PassAtKCurve {
  k: number[];
  series: { label: string; passAtK: (number | null)[]; majAtK: (number | null)[] }[];
}

export interface Comparison {
  labels: [string, string];
  rows: ComparisonRow[];
  curve: PassAtKCurve;
  /** Number of prompts present in both evaluations (0 without outcomes: no paired intervals). */
  paired: number;
  level: number;
}

/** The metric names of a summary, in display order. */
export function metricNames(s: EvalSummary): string[] {
  const byK = (x: string) => Number(x.slice(x.indexOf("@") + 1));
  return [
    "accuracy",
    ...(s.greedy !== undefined ? ["greedy"] : []),
    "meanAtN",
    ...Object.keys(s.passAtK).sort((x, y) => byK(x) - byK(y)),
    ...Object.keys(s.majAtK ?? {}).sort((x, y) => byK(x) - byK(y)),
    "meanLength",
    "truncated",
  ];
}

/** A metric's value from a summary by its name ("accuracy", "pass@4", "maj@2", ...). */
export function metricValue(s: EvalSummary, name: string): number | undefined {
  if (name.startsWith("pass@")) return s.passAtK[name];
  if (name.startsWith("maj@")) return s.majAtK?.[name];
  const v = (s as unknown as Record<string, unknown>)[name];
  return typeof v === "number" ? v : undefined;
}

/** pass@k and maj@k curves of several evaluations over the union of their k values. */
export function passAtKCurve(results: { label: string; result: EvalSummary }[]): PassAtKCurve {
  const ks = new Set<number>();
  for (const { result } of results) for (const key of Object.keys(result.passAtK)) ks.add(Number(key.slice(5)));
  const k = [...ks].sort((x, y) => x - y);
  return {
    k,
    series: results.map(({ label, result }) => ({
      label,
      passAtK: k.map((x) => result.passAtK[`pass@${x}`] ?? null),
      majAtK: k.map((x) => result.majAtK?.[`maj@${x}`] ?? null),
    })),
  };
}

/**
 * Compare evaluation A (e.g. the base model) with B (the trained one).
 * Paired intervals need `outcomes` in both (evaluate with keepOutcomes); they use the prompts
 * whose ids appear in both and the k values both have.
 */
export function compareResults(a: EvalResult, b: EvalResult, o: { labels?: [string, string]; bootstrap?: number; level?: number; seed?: number } = {}): Comparison {
  const labels = o.labels ?? ["A", "B"];
  const level = o.level ?? a.level ?? 0.95;
  const names = metricNames(a).filter((m) => metricValue(b, m) !== undefined);
  let deltaCi: Record<string, Interval> = {};
  let paired = 0;
  if (a.outcomes && b.outcomes && (o.bootstrap ?? 1000) > 0) {
    const ids = new Map<string, PromptOutcome>(b.outcomes.map((p) => [p.id, p]));
    const pa: PromptOutcome[] = [];
    const pb: PromptOutcome[] = [];
    for (const p of a.outcomes) {
      const q = ids.get(p.id);
      if (q) pa.push(p), pb.push(q);
    }
    paired = pa.length;
    if (paired >= 2) {
      const ks = Object.keys(a.passAtK).map((x) => Number(x.slice(5)));
      const ca = promptColumns(pa, ks);
      const cb = promptColumns(pb, ks);
      const diff: Record<string, Float64Array> = {};
      for (const m of names) if (ca[m] && cb[m]) diff[m] = cb[m]!.map((x, i) => x - ca[m]![i]!);
      deltaCi = bootstrapMeans(diff, { resamples: o.bootstrap ?? 1000, level, seed: o.seed });
    }
  }
  const rows = names.map((m) => {
    const va = metricValue(a, m)!;
    const vb = metricValue(b, m)!;
    const row: ComparisonRow = { metric: m, a: va, b: vb, delta: vb - va };
    if (a.ci?.[m]) row.aCi = a.ci[m];
    if (b.ci?.[m]) row.bCi = b.ci[m];
    if (deltaCi[m]) row.deltaCi = deltaCi[m];
    return row;
  });
  return { labels, rows, curve: passAtKCurve([{ label: labels[0], result: a }, { label: labels[1], result: b }]), paired, level };
}
