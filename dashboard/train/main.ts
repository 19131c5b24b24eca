/**
 * The training page: runs the quickstart in this tab (src/browser/session.ts) on jax-js's WebGPU
 * backend when the browser offers an adapter, else on Wasm, and draws what the Node trainer
 * writes to a run directory with the dashboard's own chart and data helpers (../src/chart.ts,
 * ../src/data.ts): the curves, the held-out evaluations and the latest step's samples. A button
 * downloads the trained model as a Hugging Face checkpoint folder in a zip.
 *
 * URL parameters preset the form (backend, digits, sftSteps, stopAt, rlSteps, promptsPerStep,
 * groupSize, seed) and a few sizes it does not show (sftBatch, evalPrompts, evalSamples,
 * trainSize); autostart=1 starts training on load. `window.rlvrPlay` exposes the run's state for
 * tests and curious visitors.
 */
import "../../src/browser/process-shim.ts"; // first: rlvr's modules read `process`
import "../src/style.css";
import { LineChart, escapeHtml, type Series } from "../src/chart.ts";
import { CHARTS, chartKeys, fmt, series, type MetricRecord } from "../src/data.ts";
import { PlaySession, QUICKSTART_PLAY, type PlaySettings } from "../../src/browser/session.ts";
import type { JaxBackend } from "../../src/engines/embedded/runtime.ts";
import type { EvalResult } from "../../src/eval/accuracy.ts";
import { downloadZip } from "./download.ts";

type EvalRow = { label: string; step: number } & EvalResult;
type Sample = Record<string, unknown> & { step?: number };

/** What the page exposes as window.rlvrPlay. */
interface PlayState {
  state: "idle" | "running" | "done" | "error";
  backend: JaxBackend | null;
  device: string;
  error: string | null;
  metrics: MetricRecord[];
  evals: EvalRow[];
  /** Log-probabilities the trained policy gives each token of `text` after its prompt (for checking a download). */
  probe: (prompt: string, answer: string) => Promise<{ tokens: number[]; logprobs: number[] }>;
}

const COLOR = "#2f6fde"; // the dashboard's first run colour
/** The dashboard's charts (data.ts CHARTS) this page shows, in the order a run fills them. */
const SHOWN = ["sft-loss", "reward", "accuracy", "entropy", "length", "step-time"];
const $ = <T extends HTMLElement = HTMLElement>(sel: string) => document.querySelector(sel) as T;

const play: PlayState = {
  state: "idle",
  backend: null,
  device: "",
  error: null,
  metrics: [],
  evals: [],
  probe: async () => {
    throw new Error("no model yet: train first");
  },
};
(window as unknown as { rlvrPlay: PlayState }).rlvrPlay = play;
let session: PlaySession | null = null;
let samples: Sample[] = [];
const charts = new Map<string, LineChart>();

function setStatus(state: PlayState["state"], text: string): void {
  play.state = state;
  const el = $("#status");
  el.dataset.state = state;
  el.textContent = text;
}

/** Form values, with the URL's parameters as defaults. */
function readSettings(): { settings: PlaySettings; backend: string } {
  const form = $<HTMLFormElement>("#settings");
  const data = new FormData(form);
  const url = new URLSearchParams(location.search);
  const settings = { ...QUICKSTART_PLAY };
  for (const key of Object.keys(settings) as (keyof PlaySettings)[]) {
    const v = data.get(key) ?? url.get(key);
    if (v !== null && v !== "" && Number.isFinite(Number(v))) settings[key] = Number(v);
  }
  return { settings, backend: String(data.get("backend") ?? "auto") };
}

/** Put the URL's parameters into the form. */
function presetForm(): void {
  const url = new URLSearchParams(location.search);
  for (const el of $<HTMLFormElement>("#settings").elements) {
    const input = el as HTMLInputElement;
    const v = input.name ? url.get(input.name) : null;
    if (v !== null) input.value = v;
  }
}

/** "webgpu" when asked for (or "auto") and the browser gives an adapter; else "wasm". @throws when WebGPU is asked for and absent. */
async function pickBackend(choice: string): Promise<JaxBackend> {
  if (choice === "wasm") return "wasm";
  const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
  const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
  if (adapter) return "webgpu";
  if (choice === "webgpu") throw new Error(gpu ? "this browser offers no WebGPU adapter" : "this browser has no WebGPU (navigator.gpu)");
  return "wasm";
}

// ---------------------------------------------------------------- drawing

function renderCurves(): void {
  const host = $("#charts");
  for (const spec of SHOWN.map((id) => CHARTS.find((c) => c.id === id)!)) {
    const keys = chartKeys(spec, play.metrics);
    let chart = charts.get(spec.id);
    if (!chart) {
      const card = document.createElement("div");
      card.className = "card";
      card.dataset.chart = spec.id;
      card.innerHTML = `<h3>${escapeHtml(spec.title)}</h3>`;
      host.append(card);
      chart = new LineChart(card, { percent: spec.percent, xLabel: "step" });
      card.append(Object.assign(document.createElement("div"), { className: "legend" }));
      charts.set(spec.id, chart);
    }
    const dashes = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
    const data: Series[] = keys.map((key, i) => ({ label: key, color: COLOR, dash: dashes[i % dashes.length], ...series(play.metrics, spec.stage, key) }));
    chart.setData(data);
    chart.host.querySelector(".legend")!.innerHTML = data
      .filter((s) => s.x.length)
      .map((s) => `<span><i style="border-color:${s.color};border-top-style:${s.dash?.length ? "dashed" : "solid"}"></i>${escapeHtml(s.label)}</span>`)
      .join("");
  }
}

function renderEvals(): void {
  if (play.evals.length === 0) return;
  const head = ["evaluated", "prompts", "pass@1 (T=1)", "greedy", "mean length", "truncated"];
  $("#evals").innerHTML = `<table id="eval-table"><thead><tr>${head.map((h, i) => `<th${i ? ' class="num"' : ""}>${h}</th>`).join("")}</tr></thead><tbody>${play.evals
    .map(
      (e) => `<tr data-label="${escapeHtml(e.label)}"><td>${{ init: "before training", sft: "after SFT warm-up", rl: `after GRPO (step ${e.step})` }[e.label] ?? escapeHtml(e.label)}</td>
      <td class="num">${fmt(e.prompts)}</td><td class="num" data-field="meanAtN">${fmt(e.meanAtN, true)}</td><td class="num" data-field="greedy">${fmt(e.greedy ?? null, true)}</td>
      <td class="num">${fmt(e.meanLength)}</td><td class="num">${fmt(e.truncated, true)}</td></tr>`,
    )
    .join("")}</tbody></table>`;
}

function renderSamples(): void {
  const last = samples.at(-1)?.step;
  const rows = samples.filter((s) => s.step === last).slice(0, 32);
  $("#sample-table tbody").innerHTML = rows
    .map((s) => {
      const ok = s["correct"] === true ? `<span class="ok">✓</span>` : s["correct"] === false ? `<span class="bad">✗</span>` : "";
      return `<tr><td class="num">${fmt(s.step)}</td><td class="num">${fmt(s["reward"] as number)}</td><td class="num">${fmt(s["advantage"] as number)}</td><td>${ok}</td>
        <td>${escapeHtml(String(s["stop"] ?? ""))}</td><td class="clip">${escapeHtml(String(s["prompt"] ?? ""))}</td><td class="clip">${escapeHtml(String(s["response"] ?? ""))}</td></tr>`;
    })
    .join("");
}

// ---------------------------------------------------------------- running

async function start(): Promise<void> {
  const { settings, backend: choice } = readSettings();
  $<HTMLButtonElement>("#start").disabled = true;
  $<HTMLButtonElement>("#download").disabled = true;
  play.metrics = [];
  play.evals = [];
  samples = [];
  try {
    setStatus("running", "starting jax-js…");
    // jax-js starts once per tab: a second run reuses the first run's backend.
    const backend = play.backend ?? (await pickBackend(choice));
    play.backend = backend;
    await session?.close();
    session = await PlaySession.open(settings, backend, {
      metrics: (r) => {
        play.metrics.push(r as MetricRecord);
        renderCurves();
      },
      samples: (rs) => {
        samples = rs as Sample[];
        renderSamples();
      },
      eval: (e) => {
        play.evals.push(e);
        renderEvals();
      },
      stage: (name, detail) => {
        if (name !== "done") setStatus("running", `${name}: ${detail}`);
      },
    });
    const s = session;
    $("#title").textContent = `GRPO on ${settings.digits}-digit addition, in this tab`;
    play.device = s.device();
    $("#device").textContent = play.device;
    play.probe = async (prompt, answer) => {
      const tk = s.ctx.tokenizer;
      const ids = [...(tk.bosId !== null ? [tk.bosId] : []), ...tk.encode(prompt), ...tk.encode(answer), tk.eosId];
      const batch = { batchSize: 1, seqLen: ids.length, tokens: Int32Array.from(ids), lengths: Int32Array.from([ids.length]), lossMask: new Float32Array(ids.length) };
      const { logprobs } = await s.ctx.engine.score(batch, { model: "policy" });
      return { tokens: ids, logprobs: [...logprobs] };
    };
    $<HTMLButtonElement>("#stop").disabled = false;
    await s.run();
    setStatus("done", `done — held-out pass@1 ${play.evals.map((e) => fmt(e.meanAtN, true)).join(" → ")}`);
    $<HTMLButtonElement>("#download").disabled = false;
  } catch (e) {
    play.error = (e as Error).message;
    setStatus("error", `error: ${play.error}`);
    console.error(e);
  } finally {
    $<HTMLButtonElement>("#start").disabled = false;
    $<HTMLButtonElement>("#stop").disabled = true;
  }
}

async function download(): Promise<void> {
  if (!session) return;
  const files = await session.checkpoint();
  const digits = session.cfg.data.difficulty ?? 2;
  downloadZip(files, `rlvr-addition${digits}-seed${session.cfg.seed}`);
}

presetForm();
$<HTMLFormElement>("#settings").addEventListener("submit", (e) => {
  e.preventDefault();
  void start();
});
$("#stop").addEventListener("click", () => session?.stop());
$("#download").addEventListener("click", () => void download());
let resizeTimer = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => charts.forEach((c) => c.draw()), 100);
});
renderCurves();
if (new URLSearchParams(location.search).get("autostart") === "1") void start();
