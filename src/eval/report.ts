/**
 * Plain-text reports of evaluations for the console: a metric table (with intervals), breakdown
 * tables, the comparison table and an ASCII pass@k curve.
 */
import type { Interval } from "./bootstrap.ts";
import type { EvalResult } from "./accuracy.ts";
import type { Comparison, PassAtKCurve } from "./compare.ts";
import { metricNames, metricValue } from "./compare.ts";
import type { EvalSummary } from "./summary.ts";

/** Lengths are in tokens; every other metric is a fraction shown as a percentage. */
function isLength(metric: string): boolean {
  return metric === "meanLength" || metric === "maxLength";
}

/** Format a metric value: "42.5%" for fractions ("+3.0 pp" when signed), "12.3" for lengths. */
export function formatValue(metric: string, v: number | undefined, signed = false): string {
  if (v === undefined || Number.isNaN(v)) return "–";
  const sign = signed && v > 0 ? "+" : "";
  // A signed fraction is a difference of percentages: percentage points.
  return isLength(metric) ? `${sign}${v.toFixed(1)}` : `${sign}${(v * 100).toFixed(1)}${signed ? " pp" : "%"}`;
}

function formatInterval(metric: string, ci: Interval | undefined, signed = false): string {
  if (!ci) return "";
  const f = (x: number) => {
    const s = signed && x > 0 ? "+" : "";
    return isLength(metric) ? `${s}${x.toFixed(1)}` : `${s}${(x * 100).toFixed(1)}`;
  };
  return ` [${f(ci.low)}, ${f(ci.high)}]`;
}

/** Render rows as an aligned text table (first column left-aligned, the rest right-aligned). */
export function textTable(header: string[], rows: string[][]): string {
  const w = header.map((h, j) => Math.max(h.length, ...rows.map((r) => (r[j] ?? "").length)));
  const line = (r: string[]) => r.map((c, j) => (j === 0 ? c.padEnd(w[j]!) : c.padStart(w[j]!))).join("  ").trimEnd();
  return [line(header), w.map((x) => "-".repeat(x)).join("  "), ...rows.map(line)].join("\n");
}

/** One evaluation's metrics as a table: metric, value, interval. */
export function formatResult(r: EvalSummary, title = "evaluation"): string {
  const level = Math.round((r.level ?? 0.95) * 100);
  const rows = metricNames(r).map((m) => [m, formatValue(m, metricValue(r, m)), formatInterval(m, r.ci?.[m]).trim()]);
  rows.push(["maxLength", formatValue("maxLength", r.maxLength), ""]);
  const head = `${title}: ${r.prompts} prompts × ${r.samples} samples`;
  return `${head}\n${textTable(["metric", "value", r.ci ? `${level}% CI` : ""], rows)}`;
}

/** A breakdown (per task or per difficulty) as one row per group. */
export function formatBreakdown(groups: Record<string, EvalSummary>, title: string): string {
  const entries = Object.entries(groups);
  if (entries.length === 0) return "";
  const first = entries[0]![1];
  const cols = ["accuracy", "meanAtN", ...Object.keys(first.passAtK), ...Object.keys(first.majAtK).filter((k) => k !== "maj@1"), "meanLength", "truncated"];
  const rows = entries.map(([name, s]) => [name, String(s.prompts), ...cols.map((c) => formatValue(c, metricValue(s, c)))]);
  return `${title}\n${textTable([title.split(" ").pop() ?? "group", "prompts", ...cols], rows)}`;
}

/** The comparison table: metric, A [CI], B [CI], B − A [paired CI]. */
export function formatComparison(c: Comparison): string {
  const [la, lb] = c.labels;
  const rows = c.rows.map((r) => [
    r.metric,
    formatValue(r.metric, r.a) + formatInterval(r.metric, r.aCi),
    formatValue(r.metric, r.b) + formatInterval(r.metric, r.bCi),
    formatValue(r.metric, r.delta, true) + formatInterval(r.metric, r.deltaCi, true),
  ]);
  const note = c.paired > 0 ? `paired over ${c.paired} prompts, ${Math.round(c.level * 100)}% bootstrap intervals` : "no paired intervals (outcomes missing)";
  return `${textTable(["metric", la, lb, `${lb} − ${la}`], rows)}\n(${note})`;
}

/**
 * An ASCII plot of pass@k (y, 0–100%) against k (x, log2 scale), one marker per series
 * (the series' first letter when distinct, else 1, 2, ...); "*" where series overlap.
 */
export function asciiCurve(curve: PassAtKCurve, o: { width?: number; height?: number; which?: "passAtK" | "majAtK" } = {}): string {
  const width = o.width ?? 48;
  const height = o.height ?? 10;
  const which = o.which ?? "passAtK";
  if (curve.k.length === 0) return "(no k values)";
  const firsts = curve.series.map((s) => s.label[0] ?? "?");
  const markers = new Set(firsts).size === firsts.length ? firsts : curve.series.map((_, i) => String(i + 1));
  const grid = Array.from({ length: height + 1 }, () => Array<string>(width + 1).fill(" "));
  const lk = curve.k.map((k) => Math.log2(k));
  const x0 = lk[0]!;
  const span = Math.max(1e-9, lk[lk.length - 1]! - x0);
  curve.series.forEach((s, si) => {
    s[which].forEach((v, i) => {
      if (v === null) return;
      const x = curve.k.length === 1 ? 0 : Math.round(((lk[i]! - x0) / span) * width);
      const y = height - Math.round(v * height);
      const cell = grid[y]![x]!;
      grid[y]![x] = cell === " " || cell === markers[si] ? markers[si]! : "*";
    });
  });
  const lines = grid.map((row, y) => {
    const pct = Math.round(((height - y) / height) * 100);
    const label = y % Math.max(1, Math.floor(height / 4)) === 0 || y === height ? `${pct}%`.padStart(4) : "    ";
    return `${label} |${row.join("")}`;
  });
  lines.push(`     +${"-".repeat(width + 1)}`);
  const axis = Array<string>(width + 8).fill(" ");
  curve.k.forEach((k, i) => {
    const x = curve.k.length === 1 ? 0 : Math.round(((lk[i]! - x0) / span) * width);
    const t = String(k);
    for (let j = 0; j < t.length; j++) axis[6 + x + j] = t[j]!;
  });
  lines.push(axis.join("").trimEnd() + "   k (log scale)");
  lines.push(`${which === "passAtK" ? "pass@k" : "maj@k"}: ` + curve.series.map((s, i) => `${markers[i]} = ${s.label}`).join(", "));
  return lines.join("\n");
}

/** The whole console report of one evaluation: the metric table and the breakdowns. */
export function formatReport(r: EvalResult, title = "evaluation"): string {
  const parts = [formatResult(r, title)];
  if (r.byTask && Object.keys(r.byTask).length > 1) parts.push(formatBreakdown(r.byTask, "per task"));
  if (r.byDifficulty && Object.keys(r.byDifficulty).length > 0) parts.push(formatBreakdown(r.byDifficulty, "per difficulty"));
  return parts.join("\n\n");
}
