/**
 * Figures of runs: a metric over steps for several runs (from each run's metrics.jsonl) and the
 * pass@k curve (from eval.jsonl), as SVG or PNG.
 *
 * The chart is a Vega-Lite specification (Satyanarayan et al. 2017) compiled by `vega-lite` and
 * rendered headlessly to SVG by `vega`'s scenegraph; PNG is that SVG rasterised by
 * `@resvg/resvg-js` (prebuilt native binaries shipped as per-platform npm packages, nothing
 * downloaded at install time). Autosize "fit" makes the whole figure — axes and legend included —
 * exactly `width` × `height` CSS pixels; PNG has `scale` device pixels per CSS pixel. The three
 * libraries load on the first figure drawn, so importing rlvr (or running another command) does
 * not load them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { TopLevelSpec } from "vega-lite";

/** One line of a figure. */
export interface PlotSeries {
  /** Legend label (a run's name). */
  name: string;
  /** Points in drawing order. */
  points: { x: number; y: number }[];
}

/** How to draw a figure. */
export interface ChartOptions {
  title?: string;
  xTitle: string;
  yTitle: string;
  /** Log₂ x axis (pass@k over k = 1, 2, 4, …). */
  logX?: boolean;
  /** Whole figure size in CSS pixels (default 640 × 400). */
  width?: number;
  height?: number;
}

/** Read a JSON-lines file; a bad line is one error naming the file and the line. */
function readJsonl(file: string): Record<string, unknown>[] {
  if (!existsSync(file)) throw new Error(`${file} not found: expected a run directory written by \`rlvr train\``);
  const rows: Record<string, unknown>[] = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        rows.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        throw new Error(`${file} line ${i + 1}: not valid JSON`);
      }
    });
  return rows;
}

/** Short, distinct names for run directories: the basename, or the path relative to the cwd when basenames collide. */
export function runNames(runDirs: readonly string[]): string[] {
  const base = runDirs.map((d) => basename(resolve(d)));
  const unique = new Set(base).size === base.length;
  return runDirs.map((d, i) => (unique ? base[i]! : relative(process.cwd(), resolve(d)) || base[i]!));
}

/**
 * A metric over steps of one stage from `<runDir>/metrics.jsonl`.
 * @returns the points (x = step) of records of `stage` where the metric is a finite number.
 * @throws Error in one line when the file is missing, or when no record of the stage has the
 *   metric — the message lists the metrics the stage's records do have.
 */
export function readMetricSeries(runDir: string, metric: string, stage = "rl"): { x: number; y: number }[] {
  const file = join(runDir, "metrics.jsonl");
  const rows = readJsonl(file).filter((r) => r.stage === stage);
  if (rows.length === 0) {
    const stages = [...new Set(readJsonl(file).map((r) => String(r.stage)))].join(", ") || "none";
    throw new Error(`${file}: no records of stage "${stage}" (stages present: ${stages}); choose one with --stage`);
  }
  const points = rows
    .filter((r) => typeof r[metric] === "number" && Number.isFinite(r[metric]) && typeof r.step === "number")
    .map((r) => ({ x: r.step as number, y: r[metric] as number }));
  if (points.length === 0) {
    const present = new Set<string>();
    for (const r of rows) for (const [k, v] of Object.entries(r)) if (typeof v === "number" && k !== "step") present.add(k);
    throw new Error(`${file}: no metric "${metric}" in stage "${stage}"; metrics present: ${[...present].sort().join(", ")}`);
  }
  return points;
}

/**
 * The pass@k curve of one evaluation in `<runDir>/eval.jsonl`: the last record, or the last one
 * labelled `label` (e.g. "sft" for the base before RL, "rl" for the end).
 * @returns points x = k, y = pass@k (unbiased estimator, src/eval/passk.ts), sorted by k, and the
 *   record's label and step.
 * @throws Error in one line when there is no such record or it has no pass@k values.
 */
export function readPassAtK(runDir: string, label?: string): { points: { x: number; y: number }[]; label: string; step: number } {
  const file = join(runDir, "eval.jsonl");
  const rows = readJsonl(file);
  const pick = [...rows].reverse().find((r) => label === undefined || r.label === label);
  if (pick === undefined) {
    const labels = [...new Set(rows.map((r) => String(r.label)))].join(", ") || "none";
    throw new Error(`${file}: no evaluation${label === undefined ? "" : ` labelled "${label}"`} (labels present: ${labels})`);
  }
  const pk = (pick.passAtK ?? {}) as Record<string, unknown>;
  const points = Object.entries(pk)
    .map(([k, v]) => ({ x: Number(k.replace(/^pass@/, "")), y: v as number }))
    .filter((p) => Number.isInteger(p.x) && p.x > 0 && typeof p.y === "number" && Number.isFinite(p.y))
    .sort((a, b) => a.x - b.x);
  if (points.length === 0) throw new Error(`${file}: the evaluation "${String(pick.label)}" at step ${String(pick.step)} has no passAtK values; evaluate with eval.samples > 1`);
  return { points, label: String(pick.label), step: Number(pick.step) };
}

/** The Vega-Lite specification of a line chart of `series` (one colour per series, points marked). */
export function lineChartSpec(series: readonly PlotSeries[], o: ChartOptions): TopLevelSpec {
  const values = series.flatMap((s) => s.points.map((p) => ({ series: s.name, x: p.x, y: p.y })));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: o.width ?? 640,
    height: o.height ?? 400,
    autosize: { type: "fit", contains: "padding" },
    padding: 8,
    background: "white",
    ...(o.title ? { title: o.title } : {}),
    data: { values },
    mark: { type: "line", point: true, strokeWidth: 2 },
    encoding: {
      x: { field: "x", type: "quantitative", title: o.xTitle, ...(o.logX ? { scale: { type: "log", base: 2 }, axis: { tickCount: 8 } } : {}) },
      y: { field: "y", type: "quantitative", title: o.yTitle, scale: { zero: false } },
      color: { field: "series", type: "nominal", title: null, sort: series.map((s) => s.name) },
    },
    // Explicit limits: vega's default title limit misplaces the chart title above a long y title,
    // and its default legend label limit (160 px) cuts run names.
    config: {
      font: "DejaVu Sans, Arial, sans-serif",
      legend: { orient: "bottom", labelLimit: o.width ?? 640 },
      axisY: { titleLimit: Math.max(100, (o.height ?? 400) - 120) },
      axisX: { titleLimit: o.width ?? 640 },
    },
  };
}

/**
 * Render a line chart to SVG text or PNG bytes.
 * @param format "svg" (text, `width` × `height` CSS px) or "png" (`scale` × that in pixels, default 2)
 */
export async function renderLineChart(series: readonly PlotSeries[], o: ChartOptions & { format: "svg" }): Promise<string>;
export async function renderLineChart(series: readonly PlotSeries[], o: ChartOptions & { format: "png"; scale?: number }): Promise<Buffer>;
export async function renderLineChart(series: readonly PlotSeries[], o: ChartOptions & { format: "svg" | "png"; scale?: number }): Promise<string | Buffer> {
  const [{ compile }, { parse, View }] = await Promise.all([import("vega-lite"), import("vega")]);
  const view = new View(parse(compile(lineChartSpec(series, o)).spec), { renderer: "none" });
  let svg: string;
  try {
    svg = await view.toSVG();
  } finally {
    view.finalize();
  }
  if (o.format === "svg") return svg;
  const { Resvg } = await import("@resvg/resvg-js");
  const png = new Resvg(svg, {
    fitTo: { mode: "zoom", value: o.scale ?? 2 },
    background: "white",
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans", sansSerifFamily: "DejaVu Sans" },
  }).render();
  return png.asPng();
}

/** What {@link plotRuns} draws and where. */
export interface PlotRunsOptions {
  /** A metrics.jsonl key, e.g. "accuracy", "response/length_mean", "entropy" (required unless passk). */
  metric?: string;
  /** Stage whose records are read (default "rl"; "sft" for the warm-up). */
  stage?: string;
  /** Draw the pass@k curve from eval.jsonl instead of a metric. */
  passk?: boolean;
  /** With passk: the evaluation label to draw (default: each run's last evaluation). */
  evalLabel?: string;
  /** Output file; its extension (.png or .svg) picks the format. */
  out: string;
  title?: string;
  width?: number;
  height?: number;
  /** PNG device pixels per CSS pixel (default 2). */
  scale?: number;
}

/**
 * Draw a metric over steps (or the pass@k curve) of several runs into one figure and write it.
 * @param runDirs run directories written by `rlvr train` (metrics.jsonl, eval.jsonl)
 * @returns the file written, its format, its size in pixels (PNG: × scale) and the series drawn
 * @throws Error in one line for a bad extension, a missing file or a metric no run has
 */
export async function plotRuns(
  runDirs: readonly string[],
  o: PlotRunsOptions,
): Promise<{ out: string; format: "png" | "svg"; width: number; height: number; series: PlotSeries[] }> {
  const ext = o.out.toLowerCase().match(/\.(png|svg)$/)?.[1] as "png" | "svg" | undefined;
  if (ext === undefined) throw new Error(`plot output ${o.out}: expected a file name ending in .png or .svg`);
  if (runDirs.length === 0) throw new Error("plot: give at least one run directory");
  if (!o.passk && !o.metric) throw new Error("plot: give --metric <name> (a key of metrics.jsonl, e.g. accuracy) or --passk");
  const names = runNames(runDirs);
  const width = o.width ?? 640;
  const height = o.height ?? 400;
  let series: PlotSeries[];
  let chart: ChartOptions;
  if (o.passk) {
    series = runDirs.map((d, i) => {
      const r = readPassAtK(d, o.evalLabel);
      return { name: `${names[i]} (${r.label}, step ${r.step})`, points: r.points };
    });
    chart = { title: o.title ?? "pass@k", xTitle: "k (samples per prompt)", yTitle: "pass@k", logX: true, width, height };
  } else {
    const stage = o.stage ?? "rl";
    series = runDirs.map((d, i) => ({ name: names[i]!, points: readMetricSeries(d, o.metric!, stage) }));
    chart = { title: o.title ?? `${o.metric} (${stage})`, xTitle: `${stage} step`, yTitle: o.metric!, width, height };
  }
  const scale = o.scale ?? 2;
  if (ext === "svg") writeFileSync(o.out, await renderLineChart(series, { ...chart, format: "svg" }));
  else writeFileSync(o.out, await renderLineChart(series, { ...chart, format: "png", scale }));
  const k = ext === "png" ? scale : 1;
  return { out: o.out, format: ext, width: Math.round(width * k), height: Math.round(height * k), series };
}
