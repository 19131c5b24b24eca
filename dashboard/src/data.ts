/**
 * Pure data helpers of the dashboard page (no DOM): which curves to draw, series extraction from
 * metrics records, smoothing, axis ticks and evaluation-table columns. Tested under Node.
 */

/** One line of metrics.jsonl: {time, stage, step, ...metrics}. */
export type MetricRecord = { stage?: string; step?: number; time?: string } & Record<string, unknown>;

/** A chart: the metric keys it overlays (a RegExp picks every matching key) for one stage. */
export interface ChartSpec {
  id: string;
  title: string;
  stage: string;
  keys: string[] | RegExp;
  /** Values are fractions: show the axis in %. */
  percent?: boolean;
}

/** The curves shown by default (ALGORITHMS/DESIGN diagnostics), in page order. */
export const CHARTS: ChartSpec[] = [
  { id: "reward", title: "Reward (mean)", stage: "rl", keys: ["reward/mean"] },
  { id: "accuracy", title: "Accuracy (rollouts)", stage: "rl", keys: ["accuracy"], percent: true },
  { id: "reward-components", title: "Reward components", stage: "rl", keys: /^reward\/(?!mean$)/ },
  { id: "entropy", title: "Entropy (nats/token)", stage: "rl", keys: ["entropy"] },
  { id: "kl", title: "KL to reference", stage: "rl", keys: ["kl"] },
  { id: "clip", title: "Clip fractions", stage: "rl", keys: ["clipfrac_low", "clipfrac_high"], percent: true },
  { id: "length", title: "Response length (tokens)", stage: "rl", keys: ["response/length_mean", "response/length_max"] },
  { id: "truncated", title: "Truncated responses", stage: "rl", keys: ["response/truncated_frac"], percent: true },
  { id: "zero-std", title: "Zero-std groups", stage: "rl", keys: ["groups/zero_std_frac"], percent: true },
  { id: "step-time", title: "Step time (s)", stage: "rl", keys: ["time/step", "time/sample", "time/reward", "time/train"] },
  { id: "grad-norm", title: "Gradient norm", stage: "rl", keys: ["grad_norm"] },
  { id: "policy-loss", title: "Policy loss", stage: "rl", keys: ["loss/policy"] },
  { id: "sft-loss", title: "SFT loss", stage: "sft", keys: ["loss", "nll"] },
];

/** The keys of `spec` present in `records` (in spec order, or first-seen order for a RegExp). */
export function chartKeys(spec: ChartSpec, records: readonly MetricRecord[]): string[] {
  const seen = new Set<string>();
  for (const r of records) {
    if ((r.stage ?? "rl") !== spec.stage) continue;
    for (const [k, v] of Object.entries(r)) if (typeof v === "number") seen.add(k);
  }
  if (Array.isArray(spec.keys)) return spec.keys.filter((k) => seen.has(k));
  const re = spec.keys;
  return [...seen].filter((k) => re.test(k));
}

/** Numeric metric keys per stage that no default chart shows (offered as extra charts). */
export function otherKeys(records: readonly MetricRecord[]): { stage: string; key: string }[] {
  const out: { stage: string; key: string }[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    const stage = r.stage ?? "rl";
    for (const [k, v] of Object.entries(r)) {
      if (typeof v !== "number" || k === "step" || seen.has(`${stage}\0${k}`)) continue;
      seen.add(`${stage}\0${k}`);
      const covered = CHARTS.some((c) => c.stage === stage && (Array.isArray(c.keys) ? c.keys.includes(k) : c.keys.test(k)));
      if (!covered) out.push({ stage, key: k });
    }
  }
  return out.sort((a, b) => (a.stage + a.key).localeCompare(b.stage + b.key));
}

/** Points (step, value) of one key for one stage; non-finite values and records without a step are skipped. */
export function series(records: readonly MetricRecord[], stage: string, key: string): { x: number[]; y: number[] } {
  const x: number[] = [];
  const y: number[] = [];
  for (const r of records) {
    if ((r.stage ?? "rl") !== stage) continue;
    const v = r[key];
    if (typeof r.step !== "number" || typeof v !== "number" || !Number.isFinite(v)) continue;
    x.push(r.step);
    y.push(v);
  }
  return { x, y };
}

/**
 * Exponential moving average with debiasing (TensorBoard-style): weight ∈ [0, 1), 0 = raw.
 * @returns a new array of the same length.
 */
export function smooth(y: readonly number[], weight: number): number[] {
  if (!(weight > 0)) return [...y];
  const out: number[] = [];
  let acc = 0;
  let norm = 0;
  for (const v of y) {
    acc = acc * weight + v * (1 - weight);
    norm = norm * weight + (1 - weight);
    out.push(acc / norm);
  }
  return out;
}

/** "Nice" tick values (1, 2, 5 × 10^n steps) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  // A range at the limit of float resolution (two curves equal up to rounding): t += step would not advance.
  if (lo + step === lo || hi + step === hi) return [lo];
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : Number(t.toPrecision(12)));
  return ticks;
}

/** Short number formatting for axes and tables. */
export function fmt(v: number | null | undefined, percent = false): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  if (percent) return `${(v * 100).toFixed(Math.abs(v) < 0.1 && v !== 0 ? 2 : 1)}%`;
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(a >= 100 ? 1 : a >= 1 ? 3 : 4).replace(/\.?0+$/, "");
}

/** One line of eval.jsonl (the fields rlvr writes; all optional for robustness). */
export interface EvalRecord {
  label?: string;
  step?: number | null;
  prompts?: number;
  samples?: number;
  accuracy?: number;
  greedy?: number;
  meanAtN?: number;
  passAtK?: Record<string, number>;
  majAtK?: Record<string, number>;
  meanLength?: number;
  truncated?: number;
  ci?: Record<string, { low: number; high: number }>;
}

/** Sorted k values ("pass@k" keys) found across evaluation records. */
export function evalKs(rows: readonly EvalRecord[], field: "passAtK" | "majAtK"): number[] {
  const ks = new Set<number>();
  for (const r of rows) for (const key of Object.keys(r[field] ?? {})) ks.add(Number(key.slice(key.indexOf("@") + 1)));
  return [...ks].filter(Number.isFinite).sort((a, b) => a - b);
}
