/**
 * The dashboard page: polls each run's metrics.jsonl, samples.jsonl and eval.jsonl through the
 * server's API (only the bytes appended since the last poll), and draws the curves, the sample
 * browser and the evaluation tables. Several runs overlay in one colour each.
 */
import "./style.css";
import { LineChart, escapeHtml, type Series } from "./chart.ts";
import { CHARTS, chartKeys, evalKs, fmt, otherKeys, series, smooth, type ChartSpec, type EvalRecord, type MetricRecord } from "./data.ts";

interface RunInfo {
  id: number;
  name: string;
  dir: string;
}

interface Sample extends Record<string, unknown> {
  step?: number;
  prompt?: string;
  response?: string;
  answer?: string;
  reward?: number;
  advantage?: number;
  correct?: boolean;
  reason?: string;
  stop?: string;
}

interface RunState extends RunInfo {
  color: string;
  visible: boolean;
  metrics: MetricRecord[];
  samples: Sample[];
  evals: EvalRecord[];
  offsets: Record<"metrics" | "samples" | "eval", number>;
}

const COLORS = ["#2f6fde", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#e67700", "#495057"];
const DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
const $ = <T extends HTMLElement = HTMLElement>(sel: string) => document.querySelector(sel) as T;

const state = {
  runs: [] as RunState[],
  poll: 2000,
  smoothing: 0,
  tab: "curves",
  extra: [] as ChartSpec[],
  charts: new Map<string, { spec: ChartSpec; chart: LineChart; card: HTMLElement }>(),
  selectedSample: "",
  dirty: { curves: true, samples: true, eval: true },
};

async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return (await r.json()) as T;
}

/** Fetch what was appended to one JSONL file of a run; returns true when anything changed. */
async function pollFile(run: RunState, file: "metrics" | "samples" | "eval"): Promise<boolean> {
  let changed = false;
  for (let i = 0; i < 100; i++) {
    const c = await getJson<{ records: unknown[]; offset: number; reset: boolean; more: boolean }>(`api/runs/${run.id}/jsonl/${file}?from=${run.offsets[file]}`);
    const target = (file === "metrics" ? run.metrics : file === "samples" ? run.samples : run.evals) as unknown[];
    if (c.reset) (target.length = 0), (changed = true);
    if (c.records.length) target.push(...c.records), (changed = true);
    run.offsets[file] = c.offset;
    if (!c.more) break;
  }
  return changed;
}

async function pollAll(): Promise<void> {
  const status = $("#status");
  try {
    for (const run of state.runs) {
      if (await pollFile(run, "metrics")) state.dirty.curves = true;
      if (await pollFile(run, "samples")) state.dirty.samples = true;
      if (await pollFile(run, "eval")) state.dirty.eval = true;
    }
    const steps = state.runs.map((r) => r.metrics.at(-1)?.step ?? 0);
    status.textContent = `updated ${new Date().toLocaleTimeString()} · last step ${steps.join(" / ")}`;
    status.dataset.polls = String(Number(status.dataset.polls ?? 0) + 1);
  } catch (e) {
    status.textContent = `cannot reach the server (${(e as Error).message}); retrying`;
  }
  render();
}

// ---------------------------------------------------------------- curves

function visibleRuns(): RunState[] {
  return state.runs.filter((r) => r.visible);
}

function ensureChart(spec: ChartSpec, removable: boolean): { chart: LineChart; card: HTMLElement } {
  let c = state.charts.get(spec.id);
  if (c) return c;
  const card = document.createElement("div");
  card.className = "card";
  card.dataset.chart = spec.id;
  card.innerHTML = `<h3>${escapeHtml(spec.title)}${spec.stage !== "rl" ? ` <span class="muted">(${spec.stage})</span>` : ""}</h3>`;
  if (removable) {
    const x = document.createElement("button");
    x.className = "close";
    x.textContent = "×";
    x.title = "remove this chart";
    x.onclick = () => {
      state.extra = state.extra.filter((s) => s.id !== spec.id);
      state.charts.delete(spec.id);
      card.remove();
    };
    card.append(x);
  }
  const chart = new LineChart(card, { percent: spec.percent, xLabel: "step" });
  const legend = document.createElement("div");
  legend.className = "legend";
  card.append(legend);
  $("#charts").append(card);
  c = { spec, chart, card };
  state.charts.set(spec.id, c);
  return c;
}

function renderCurves(): void {
  const runs = visibleRuns();
  const all = runs.flatMap((r) => r.metrics);
  for (const spec of [...CHARTS, ...state.extra]) {
    const keys = chartKeys(spec, all);
    const isExtra = state.extra.includes(spec);
    // Default charts with no data in any run are hidden, except the core ones (so a new run shows its layout).
    const core = ["reward", "accuracy", "entropy", "kl", "clip", "length", "zero-std", "step-time"].includes(spec.id);
    if (keys.length === 0 && !core && !isExtra) {
      state.charts.get(spec.id)?.card.remove();
      state.charts.delete(spec.id);
      continue;
    }
    const { chart, card } = ensureChart(spec, isExtra);
    const data: Series[] = [];
    for (const run of runs) {
      keys.forEach((key, ki) => {
        const s = series(run.metrics, spec.stage, key);
        data.push({ label: runs.length > 1 || keys.length > 1 ? `${run.name}${keys.length > 1 ? ` · ${key}` : ""}` : key, color: run.color, dash: DASHES[ki % DASHES.length], x: s.x, y: smooth(s.y, state.smoothing) });
      });
    }
    chart.setData(data);
    const legend = card.querySelector(".legend")!;
    legend.innerHTML = data
      .filter((s) => s.x.length)
      .map((s) => `<span><i style="border-color:${s.color};border-top-style:${s.dash?.length ? "dashed" : "solid"}"></i>${escapeHtml(s.label)}</span>`)
      .join("");
  }
  // The "more metrics" menu.
  const sel = $<HTMLSelectElement>("#extra");
  const others = otherKeys(all).filter((o) => !state.extra.some((s) => s.id === `extra:${o.stage}:${o.key}`));
  const want = ["", ...others.map((o) => `${o.stage}:${o.key}`)].join("\n");
  if (sel.dataset.options !== want) {
    sel.dataset.options = want;
    sel.innerHTML = `<option value="">add a chart…</option>` + others.map((o) => `<option value="${escapeHtml(`${o.stage}:${o.key}`)}">${escapeHtml(o.key)} (${o.stage})</option>`).join("");
  }
}

// ---------------------------------------------------------------- samples

function filteredSamples(): { run: RunState; s: Sample; i: number }[] {
  const runSel = $<HTMLSelectElement>("#sample-run").value;
  const stepSel = $<HTMLSelectElement>("#sample-step").value;
  const correctSel = $<HTMLSelectElement>("#sample-correct").value;
  const q = $<HTMLInputElement>("#sample-search").value.trim().toLowerCase();
  const out: { run: RunState; s: Sample; i: number }[] = [];
  for (const run of state.runs) {
    if (runSel !== "" && String(run.id) !== runSel) continue;
    run.samples.forEach((s, i) => {
      if (stepSel !== "" && String(s.step) !== stepSel) return;
      if (correctSel !== "" && Boolean(s.correct) !== (correctSel === "1")) return;
      if (q && !`${s.prompt ?? ""}\n${s.response ?? ""}`.toLowerCase().includes(q)) return;
      out.push({ run, s, i });
    });
  }
  return out;
}

function advantageStyle(a: unknown, maxAbs: number): string {
  if (typeof a !== "number" || !Number.isFinite(a) || maxAbs === 0) return "";
  const t = Math.min(1, Math.abs(a) / maxAbs) * 0.55;
  return a >= 0 ? `background: rgba(43, 138, 62, ${t.toFixed(3)})` : `background: rgba(201, 42, 42, ${t.toFixed(3)})`;
}

const MAX_ROWS = 500;

function renderSamples(): void {
  const runSel = $<HTMLSelectElement>("#sample-run");
  const runOpts = `<option value="">all</option>` + state.runs.map((r) => `<option value="${r.id}">${escapeHtml(r.name)}</option>`).join("");
  if (runSel.dataset.options !== runOpts) {
    const v = runSel.value;
    runSel.innerHTML = runOpts;
    runSel.dataset.options = runOpts;
    runSel.value = v;
  }
  const stepSel = $<HTMLSelectElement>("#sample-step");
  const steps = [...new Set(state.runs.flatMap((r) => r.samples.map((s) => s.step)).filter((s): s is number => typeof s === "number"))].sort((a, b) => b - a);
  const stepOpts = `<option value="">all</option>` + steps.map((s) => `<option value="${s}">${s}</option>`).join("");
  if (stepSel.dataset.options !== stepOpts) {
    const v = stepSel.value;
    stepSel.innerHTML = stepOpts;
    stepSel.dataset.options = stepOpts;
    stepSel.value = v;
  }
  const rows = filteredSamples();
  // Newest first.
  rows.sort((a, b) => (b.s.step ?? 0) - (a.s.step ?? 0) || a.run.id - b.run.id || a.i - b.i);
  const shown = rows.slice(0, MAX_ROWS);
  let maxAbs = 0;
  for (const { s } of shown) if (typeof s.advantage === "number" && Number.isFinite(s.advantage)) maxAbs = Math.max(maxAbs, Math.abs(s.advantage));
  $("#sample-count").textContent = rows.length > MAX_ROWS ? `showing ${MAX_ROWS} of ${rows.length} samples` : `${rows.length} samples`;
  const body = $("#sample-table").querySelector("tbody")!;
  body.innerHTML = shown
    .map(({ run, s, i }) => {
      const key = `${run.id}:${i}`;
      const ok = s.correct === true ? `<span class="ok">✓</span>` : s.correct === false ? `<span class="bad">✗</span>` : "";
      return `<tr data-key="${key}"${key === state.selectedSample ? ' class="selected"' : ""}>
        <td><span class="swatch" style="background:${run.color}"></span> ${escapeHtml(run.name)}</td>
        <td class="num">${fmt(s.step)}</td><td class="num">${fmt(s.reward as number)}</td>
        <td class="num" style="${advantageStyle(s.advantage, maxAbs)}">${fmt(s.advantage as number)}</td>
        <td>${ok}</td><td>${escapeHtml(String(s.reason ?? ""))}</td><td>${escapeHtml(String(s.stop ?? ""))}</td>
        <td class="clip">${escapeHtml(String(s.prompt ?? ""))}</td><td class="clip">${escapeHtml(String(s.response ?? ""))}</td></tr>`;
    })
    .join("");
}

function showSample(key: string): void {
  const [rid, idx] = key.split(":").map(Number);
  const run = state.runs[rid!];
  const s = run?.samples[idx!];
  if (!run || !s) return;
  state.selectedSample = key;
  for (const tr of document.querySelectorAll("#sample-table tbody tr")) tr.classList.toggle("selected", (tr as HTMLElement).dataset.key === key);
  const known = new Set(["prompt", "response", "answer"]);
  const fields = Object.entries(s).filter(([k]) => !known.has(k));
  $("#sample-detail").innerHTML = `
    <h3>${escapeHtml(run.name)} · step ${fmt(s.step)}</h3>
    <dl>${fields.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd data-field="${escapeHtml(k)}">${escapeHtml(typeof v === "number" ? fmt(v) : typeof v === "object" ? JSON.stringify(v) : String(v))}</dd>`).join("")}</dl>
    <div class="muted">prompt</div><pre data-field="prompt">${escapeHtml(String(s.prompt ?? ""))}</pre>
    <div class="muted">response</div><pre data-field="response">${escapeHtml(String(s.response ?? ""))}</pre>
    ${s.answer !== undefined ? `<div class="muted">reference answer</div><pre data-field="answer">${escapeHtml(String(s.answer))}</pre>` : ""}`;
}

// ---------------------------------------------------------------- evaluation

let evalAccChart: LineChart | null = null;
let passkChart: LineChart | null = null;

function ciText(r: EvalRecord, key: string, v: number | undefined): string {
  const ci = r.ci?.[key];
  return `${fmt(v, key !== "meanLength")}${ci ? ` <span class="ci">[${fmt(ci.low, key !== "meanLength")}, ${fmt(ci.high, key !== "meanLength")}]</span>` : ""}`;
}

function renderEval(): void {
  const runs = visibleRuns();
  const rows = runs.flatMap((run) => run.evals.map((e) => ({ run, e })));
  const wrap = $("#eval-table-wrap");
  if (rows.length === 0) {
    wrap.innerHTML = `<div class="empty">No evaluations yet (eval.jsonl is empty).</div>`;
  } else {
    const pk = evalKs(rows.map((r) => r.e), "passAtK");
    const mk = evalKs(rows.map((r) => r.e), "majAtK").filter((k) => k > 1);
    const head = ["run", "label", "step", "prompts", "accuracy", "greedy", "mean@n", ...pk.map((k) => `pass@${k}`), ...mk.map((k) => `maj@${k}`), "mean length", "truncated"];
    wrap.innerHTML = `<table id="eval-table"><thead><tr>${head.map((h, i) => `<th${i > 2 ? ' class="num"' : ""}>${h}</th>`).join("")}</tr></thead><tbody>${rows
      .map(
        ({ run, e }) => `<tr><td><span class="swatch" style="background:${run.color}"></span> ${escapeHtml(run.name)}</td><td>${escapeHtml(String(e.label ?? ""))}</td>
        <td class="num">${fmt(e.step ?? null)}</td><td class="num">${fmt(e.prompts)}</td>
        <td class="num">${ciText(e, "accuracy", e.accuracy)}</td><td class="num">${ciText(e, "greedy", e.greedy)}</td><td class="num">${ciText(e, "meanAtN", e.meanAtN)}</td>
        ${pk.map((k) => `<td class="num">${ciText(e, `pass@${k}`, e.passAtK?.[`pass@${k}`])}</td>`).join("")}
        ${mk.map((k) => `<td class="num">${ciText(e, `maj@${k}`, e.majAtK?.[`maj@${k}`])}</td>`).join("")}
        <td class="num">${fmt(e.meanLength)}</td><td class="num">${fmt(e.truncated, true)}</td></tr>`,
      )
      .join("")}</tbody></table>`;
  }
  const accCard = document.querySelector<HTMLElement>('[data-chart="eval-accuracy"]')!;
  const pkCard = document.querySelector<HTMLElement>('[data-chart="passk"]')!;
  if (!evalAccChart || !passkChart) {
    evalAccChart = new LineChart(accCard, { percent: true, xLabel: "step", markers: true });
    passkChart = new LineChart(pkCard, { percent: true, logX: true, xLabel: "k", markers: true });
    for (const card of [accCard, pkCard]) card.append(card.querySelector(".legend")!); // legend below the plot
  }
  const acc: Series[] = [];
  const curves: Series[] = [];
  for (const run of runs) {
    // Held-out accuracy over training: every evaluation with a step (init/sft at 0, periodic and final RL ones).
    const withStep = run.evals.filter((e) => typeof e.step === "number" && typeof e.accuracy === "number").sort((a, b) => (a.step as number) - (b.step as number));
    if (withStep.length) acc.push({ label: run.name, color: run.color, x: withStep.map((e) => e.step as number), y: withStep.map((e) => e.accuracy as number) });
    const labels = [...new Set(run.evals.map((e) => e.label ?? ""))];
    labels.forEach((label, li) => {
      const last = run.evals.filter((e) => (e.label ?? "") === label).at(-1);
      const ks = last ? evalKs([last], "passAtK") : [];
      if (ks.length) curves.push({ label: `${run.name} · ${label}${typeof last?.step === "number" ? ` @${last.step}` : ""}`, color: run.color, dash: DASHES[li % DASHES.length], x: ks, y: ks.map((k) => last!.passAtK![`pass@${k}`]!) });
    });
  }
  evalAccChart.setData(acc);
  passkChart.setData(curves);
  for (const [card, data] of [[accCard, acc], [pkCard, curves]] as const) {
    card.querySelector(".legend")!.innerHTML = data.map((s) => `<span><i style="border-color:${s.color};border-top-style:${s.dash?.length ? "dashed" : "solid"}"></i>${escapeHtml(s.label)}</span>`).join("");
  }
}

// ---------------------------------------------------------------- config

async function renderConfig(): Promise<void> {
  const parts = await Promise.all(
    state.runs.map(async (r) => {
      const [cfg, report] = await Promise.all([fetch(`api/runs/${r.id}/text/config`).then((x) => x.text()), fetch(`api/runs/${r.id}/text/report`).then((x) => x.text())]);
      return `<div class="card"><h3><span class="swatch" style="background:${r.color}"></span> ${escapeHtml(r.name)} <span class="muted">${escapeHtml(r.dir)}</span></h3>
        <div class="muted">config.yaml</div><pre>${escapeHtml(cfg || "(none)")}</pre><div class="muted">report.md</div><pre>${escapeHtml(report || "(none yet)")}</pre></div>`;
    }),
  );
  $("#config-wrap").innerHTML = `<div class="charts">${parts.join("")}</div>`.replace(/<pre>/g, '<pre class="detail" style="position:static">');
}

// ---------------------------------------------------------------- wiring

function render(): void {
  if (state.tab === "curves" && state.dirty.curves) (renderCurves(), (state.dirty.curves = false));
  if (state.tab === "samples" && state.dirty.samples) (renderSamples(), (state.dirty.samples = false));
  if (state.tab === "eval" && state.dirty.eval) (renderEval(), (state.dirty.eval = false));
}

function setTab(tab: string): void {
  state.tab = tab;
  for (const b of document.querySelectorAll<HTMLButtonElement>("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const s of document.querySelectorAll<HTMLElement>(".tab")) s.hidden = s.id !== `tab-${tab}`;
  state.dirty = { curves: true, samples: true, eval: true };
  if (tab === "config") void renderConfig();
  render();
  history.replaceState(null, "", `#${tab}`);
}

async function main(): Promise<void> {
  const info = await getJson<{ runs: RunInfo[]; poll: number }>("api/runs");
  state.poll = info.poll;
  state.runs = info.runs.map((r, i) => ({ ...r, color: COLORS[i % COLORS.length]!, visible: true, metrics: [], samples: [], evals: [], offsets: { metrics: 0, samples: 0, eval: 0 } }));
  $("#runs").innerHTML = state.runs
    .map((r) => `<label title="${escapeHtml(r.dir)}"><input type="checkbox" data-run="${r.id}" checked /><span class="swatch" style="background:${r.color}"></span>${escapeHtml(r.name)}</label>`)
    .join("");
  $("#runs").addEventListener("change", (e) => {
    const t = e.target as HTMLInputElement;
    const run = state.runs[Number(t.dataset.run)];
    if (run) run.visible = t.checked;
    state.dirty = { curves: true, samples: true, eval: true };
    render();
  });
  $("#tabs").addEventListener("click", (e) => {
    const b = (e.target as HTMLElement).closest("button");
    if (b?.dataset.tab) setTab(b.dataset.tab);
  });
  $<HTMLInputElement>("#smoothing").addEventListener("input", (e) => {
    state.smoothing = Number((e.target as HTMLInputElement).value);
    $("#smoothing-value").textContent = state.smoothing.toFixed(2);
    state.dirty.curves = true;
    render();
  });
  $<HTMLSelectElement>("#extra").addEventListener("change", (e) => {
    const v = (e.target as HTMLSelectElement).value;
    if (!v) return;
    const i = v.indexOf(":");
    const stage = v.slice(0, i);
    const key = v.slice(i + 1);
    state.extra.push({ id: `extra:${stage}:${key}`, title: key, stage, keys: [key] });
    state.dirty.curves = true;
    render();
  });
  for (const id of ["#sample-run", "#sample-step", "#sample-correct", "#sample-search"]) {
    $(id).addEventListener("input", () => {
      state.dirty.samples = true;
      render();
    });
  }
  $("#sample-table").addEventListener("click", (e) => {
    const tr = (e.target as HTMLElement).closest("tr");
    if (tr?.dataset.key) showSample(tr.dataset.key);
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => {
      for (const { chart } of state.charts.values()) chart.draw();
      evalAccChart?.draw();
      passkChart?.draw();
    }, 100);
  });
  const initial = location.hash.slice(1);
  if (["curves", "samples", "eval", "config"].includes(initial)) setTab(initial);
  const loop = async () => {
    await pollAll();
    setTimeout(loop, state.poll);
  };
  await loop();
}

main().catch((e) => {
  $("#status").textContent = `error: ${(e as Error).message}`;
});
