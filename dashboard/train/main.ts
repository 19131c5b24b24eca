/**
 * The training page: runs the quickstart in this tab (src/browser/session.ts) on jax-js's WebGPU
 * backend when the browser offers an adapter, else on Wasm, and draws what the Node trainer
 * writes to a run directory with the dashboard's own chart and data helpers (../src/chart.ts,
 * ../src/data.ts): the curves, the held-out evaluations and the latest step's samples. A button
 * downloads the trained model as a Hugging Face checkpoint folder in a zip.
 *
 * URL parameters preset the form (backend, digits, sftSteps, stopAt, rlSteps, promptsPerStep,
 * groupSize, seed) and a few sizes it does not show (sftBatch, evalPrompts, evalSamples,
 * trainSize); autostart=1 starts training on load.
 *
 * When the server serves a model (`rlvr play --model`: model/index.json lists its files), the page
 * fetches those files and trains that model instead — a LoRA GRPO run on word problems in the
 * model's chat template (src/browser/session.ts `PlaySession.openModel`, ModelPlaySettings: the
 * form's rlSteps, promptsPerStep, groupSize, maxNewTokens, loraRank, lr, evalPrompts, seed, and
 * difficulty, trainSize from the URL). `window.rlvrPlay` exposes the run's state for
 * tests and curious visitors.
 */
import "../../src/browser/process-shim.ts"; // first: rlvr's modules read `process`
import "../src/style.css";
import { LineChart, escapeHtml, type Series } from "../src/chart.ts";
import { CHARTS, chartKeys, fmt, series, type MetricRecord } from "../src/data.ts";
import { MODEL_PLAY, PlaySession, QUICKSTART_PLAY, type ModelPlaySettings, type PlayEvents, type PlaySettings } from "../../src/browser/session.ts";
import type { JaxBackend } from "../../src/engines/embedded/runtime.ts";
import type { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import type { EvalResult } from "../../src/eval/accuracy.ts";
import { downloadZip } from "./download.ts";

type EvalRow = { label: string; step: number } & EvalResult;
/** model/index.json of `rlvr play --model` (src/dashboard/server.ts MountedFiles). */
interface ModelIndex {
  label: string;
  files: { name: string; bytes: number }[];
}
/** Checksums of one weight: [Σ|x|, Σ x·(i mod 97 + 1), count] (equal arrays ⇔ unchanged, for any practical purpose). */
type WeightSums = [number, number, number];
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
  /** `rlvr play --model`: the served model's name and shape once loaded, else null (the quickstart). */
  model: { label: string; vocabSize: number; numLayers: number; hiddenSize: number; trainableParams: number; mbytes: number } | null;
  /** Seconds to fetch the model's files and to build the session; wall seconds of each GRPO step. */
  loadSeconds: { fetch: number; build: number } | null;
  stepSeconds: number[];
  /** Model mode: checksums of a few base and LoRA weights ("loaded", then after each GRPO step "step1", …). */
  weights: Record<string, Record<string, WeightSums>>;
  /** The held-out example `i` and the prompt ids the run encodes it to. */
  promptIds: (i: number) => { row: Record<string, unknown>; ids: number[] };
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
  model: null,
  loadSeconds: null,
  stepSeconds: [],
  weights: {},
  promptIds: () => {
    throw new Error("no run yet: train first");
  },
};
/** The model the server serves (`rlvr play --model`), or null: the quickstart. */
let served: ModelIndex | null = null;
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

/** Form values, with the URL's parameters (then `defaults`) for what the form leaves out. */
function readSettings<T extends object>(defaults: T): { settings: T; backend: string } {
  const form = $<HTMLFormElement>("#settings");
  const data = new FormData(form);
  const url = new URLSearchParams(location.search);
  const settings = { ...defaults } as Record<string, number>;
  for (const key of Object.keys(settings)) {
    const v = data.get(key) ?? url.get(key);
    if (v === null || v === "") continue;
    // Fail closed: a value that is not a number is an error in the status line, not a silent default.
    if (!Number.isFinite(Number(v))) throw new Error(`setting ${key}: ${JSON.stringify(String(v))} is not a number`);
    settings[key] = Number(v);
  }
  return { settings: settings as T, backend: String(data.get("backend") ?? "auto") };
}

/** The served model's file list, or null when the server serves none (then model/index.json is the page itself). */
async function servedModel(): Promise<ModelIndex | null> {
  const res = await fetch("model/index.json").catch(() => null);
  if (!res?.ok || !res.headers.get("content-type")?.startsWith("application/json")) return null;
  return (await res.json()) as ModelIndex;
}

/** Switch the form to the model's run: its fields and MODEL_PLAY's values (the URL's, presetForm, come after). */
function modelForm(m: ModelIndex): void {
  for (const el of document.querySelectorAll<HTMLElement>(".qs")) el.hidden = true;
  for (const el of document.querySelectorAll<HTMLElement>(".lm")) el.hidden = false;
  for (const el of $<HTMLFormElement>("#settings").elements) {
    const input = el as HTMLInputElement;
    if (!input.name || input.name === "backend") continue;
    input.disabled = !(input.name in MODEL_PLAY);
    if (input.name in MODEL_PLAY) input.value = String(MODEL_PLAY[input.name as keyof ModelPlaySettings]);
  }
  const mb = m.files.reduce((s, f) => s + f.bytes, 0) / 1e6;
  $("#title").textContent = `GRPO on word problems with ${m.label} (LoRA), in this tab`;
  $("#model-about").textContent = `rlvr play --model ${m.label}: the page fetches the model's files (${mb.toFixed(0)} MB), builds rlvr's embedded engine from them with a frozen bfloat16 base and trainable LoRA adapters, and runs GRPO on word problems rendered through the model's own chat template (the real-model recipe at a tab's size), with a greedy held-out evaluation before and after. Each step samples, scores and trains layer by layer: minutes on a CPU.`;
}

/** Fetch the served model's files, reporting progress in the status line. */
async function fetchModel(m: ModelIndex): Promise<Record<string, Uint8Array>> {
  const total = m.files.reduce((s, f) => s + f.bytes, 0);
  let done = 0;
  const files: Record<string, Uint8Array> = {};
  for (const f of m.files) {
    const res = await fetch(`model/${encodeURIComponent(f.name)}`);
    if (!res.ok || !res.body) throw new Error(`model/${f.name}: HTTP ${res.status}`);
    const out = new Uint8Array(f.bytes);
    let at = 0;
    const reader = res.body.getReader();
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      if (at + value.length > out.length) throw new Error(`model/${f.name}: more than the ${f.bytes} bytes listed`);
      out.set(value, at);
      at += value.length;
      done += value.length;
      setStatus("running", `loading model: ${f.name} — ${(done / 1e6).toFixed(0)} of ${(total / 1e6).toFixed(0)} MB`);
    }
    if (at !== f.bytes) throw new Error(`model/${f.name}: got ${at} of ${f.bytes} bytes`);
    files[f.name] = out;
  }
  return files;
}

/** Checksums of a few weights of the session's model: layer 0's q_proj and the last layer's down_proj, base and LoRA. */
async function weightSums(s: PlaySession): Promise<Record<string, WeightSums>> {
  const e = s.ctx.engine as EmbeddedEngine;
  const last = e.config.numLayers - 1;
  const names = e.weightNames().filter((n) => n.includes("layers.0.self_attn.q_proj.") || n.includes(`layers.${last}.mlp.down_proj.`));
  const out: Record<string, WeightSums> = {};
  for (const n of names) {
    const w = await e.getWeight(n);
    let abs = 0;
    let mix = 0;
    for (let i = 0; i < w.length; i++) {
      abs += Math.abs(w[i]!);
      mix += w[i]! * ((i % 97) + 1);
    }
    out[n] = [abs, mix, w.length];
  }
  return out;
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
  const head = ["evaluated", "prompts", served ? "accuracy (greedy)" : "pass@1 (T=1)", "greedy", "mean length", "truncated"];
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

/** The page's callbacks of a session. */
function events(): PlayEvents {
  return {
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
  };
}

/** Open the quickstart's session, or the served model's (fetching its files first). */
async function openSession(backend: JaxBackend): Promise<PlaySession> {
  if (!served) {
    const { settings } = readSettings<PlaySettings>(QUICKSTART_PLAY);
    $("#title").textContent = `GRPO on ${settings.digits}-digit addition, in this tab`;
    return PlaySession.open(settings, backend, events());
  }
  const m = served;
  const { settings } = readSettings<ModelPlaySettings>(MODEL_PLAY);
  const t0 = performance.now();
  const files = await fetchModel(m);
  const t1 = performance.now();
  let stepStart = 0;
  const base = events();
  const ev: PlayEvents = {
    ...base,
    stage: (name, detail) => {
      if (name === "rl" && detail.startsWith("GRPO:")) stepStart = performance.now(); // the first step starts
      base.stage!(name, detail);
    },
    rlStepDone: async (step) => {
      play.stepSeconds.push((performance.now() - stepStart) / 1000);
      play.weights[`step${step}`] = await weightSums(s);
      stepStart = performance.now();
    },
  };
  const s = await PlaySession.openModel(files, m.label, settings, backend, ev);
  const e = s.ctx.engine as EmbeddedEngine;
  play.loadSeconds = { fetch: (t1 - t0) / 1000, build: (performance.now() - t1) / 1000 };
  play.model = { label: m.label, vocabSize: e.config.vocabSize, numLayers: e.config.numLayers, hiddenSize: e.config.hiddenSize, trainableParams: e.info().numParams, mbytes: m.files.reduce((n, f) => n + f.bytes, 0) / 1e6 };
  play.weights = { loaded: await weightSums(s) };
  return s;
}

async function start(): Promise<void> {
  const { backend: choice } = readSettings({});
  $<HTMLButtonElement>("#start").disabled = true;
  $<HTMLButtonElement>("#download").disabled = true;
  play.metrics = [];
  play.evals = [];
  play.stepSeconds = [];
  samples = [];
  try {
    setStatus("running", "starting jax-js…");
    // jax-js starts once per tab: a second run reuses the first run's backend.
    const backend = play.backend ?? (await pickBackend(choice));
    play.backend = backend;
    await session?.close();
    session = null;
    session = await openSession(backend);
    const s = session;
    play.device = s.device();
    $("#device").textContent = play.device;
    play.probe = async (prompt, answer) => {
      const tk = s.ctx.tokenizer;
      const ids = [...(tk.bosId !== null ? [tk.bosId] : []), ...tk.encode(prompt), ...tk.encode(answer), tk.eosId];
      const batch = { batchSize: 1, seqLen: ids.length, tokens: Int32Array.from(ids), lengths: Int32Array.from([ids.length]), lossMask: new Float32Array(ids.length) };
      const { logprobs } = await s.ctx.engine.score(batch, { model: "policy" });
      return { tokens: ids, logprobs: [...logprobs] };
    };
    play.promptIds = (i) => ({ row: { ...s.ctx.test[i]! }, ids: [...s.ctx.encodePrompt(s.ctx.test[i]!)] });
    $<HTMLButtonElement>("#stop").disabled = false;
    await s.run();
    setStatus("done", `done — held-out ${served ? "greedy accuracy" : "pass@1"} ${play.evals.map((e) => fmt(e.meanAtN, true)).join(" → ")}`);
    // A pretrained model's checkpoint is hundreds of MB: the download is the quickstart's.
    $<HTMLButtonElement>("#download").disabled = served !== null;
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
served = await servedModel();
if (served) modelForm(served);
presetForm();
if (new URLSearchParams(location.search).get("autostart") === "1") void start();
