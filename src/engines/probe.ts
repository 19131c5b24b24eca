/**
 * The engine probe: how much faster the torch engine is than the embedded engine on this machine,
 * for one model, measured — a few RL steps of that model on each engine — not guessed.
 *
 * One probe step is the engine's share of an RL step (94% or more of one on the embedded engine,
 * docs/benchmarks.md): sample `groupSize` responses to each of `prompts` prompts (no stop token, so
 * every response is `newTokens` long), score them under the reference model, forward-backward a
 * policy-gradient loss with ±1 advantages, one AdamW step. Each engine runs two warm-up steps (jit
 * compilation, thread pools) and then `steps` timed ones; the median is its time per step.
 *
 * Results are cached per machine, Python, thread settings, model shape and probe shape in
 * `$RLVR_CACHE_DIR/engine-probe.json` (default `$XDG_CACHE_HOME/rlvr`, else `~/.cache/rlvr`), so
 * only the first run of a model shape pays for it. `RLVR_ENGINE_PROBE=off` skips the probe,
 * `RLVR_ENGINE_PROBE=refresh` measures again. The probe runs only when the torch engine is set up
 * (an explicit Python that exists, `$RLVR_PYTHON`, or `python/.venv` from `rlvr setup torch`); it
 * never tries the system `python3` on its own.
 *
 * `model.engine: auto` (chooseEngine) picks torch when it is set up and the probe finds it at least
 * AUTO_MIN_RATIO times faster per step; embedded otherwise, with the reason in one line.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, homedir, hostname } from "node:os";
import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import type { Engine, TokenLossFn } from "../core/engine.ts";
import { packSequences } from "../core/sequence.ts";
import { Rng } from "../util/rng.ts";
import { openEngineOfKind, type EngineKindOptions, type ModelSpec } from "./open-kind.ts";
import { DEFAULT_VENV, resolvePython } from "./torch/worker.ts";

/** The batch one probe step runs: `prompts × groupSize` responses of `newTokens` tokens after prompts of `promptTokens`. */
export interface ProbeShape {
  prompts: number;
  groupSize: number;
  promptTokens: number;
  newTokens: number;
}

/** A measured probe: seconds per step (median of `steps` after the warm-up) on each engine. */
export interface ProbeMeasurement {
  /** Embedded engine, seconds per probe step. */
  embeddedSeconds: number;
  /** Torch engine, seconds per probe step. */
  torchSeconds: number;
  /** embeddedSeconds / torchSeconds: > 1 means torch is faster. */
  ratio: number;
  /** Wall-clock seconds the whole probe took (both engines: start, warm-up, timed steps). */
  probeSeconds: number;
  /** Timed steps per engine. */
  steps: number;
  shape: ProbeShape;
  /** True when read from the cache (then probeSeconds is what the measurement cost back then). */
  cached: boolean;
  /** When it was measured (ISO 8601). */
  measuredAt: string;
}

/** Why there is no measurement: the torch engine is not set up, the probe was skipped, or it failed. */
export interface ProbeUnavailable {
  unavailable: string;
  /** The engine that failed in the probe (it could not open or step this model), if one did. */
  failed?: "embedded" | "torch";
}

export type ProbeResult = ProbeMeasurement | ProbeUnavailable;

/**
 * Most responses per probe step: the quickstart's whole step (128 × 4). The probe then takes ≈ 9 s
 * on its model (2-core machine, idle), and measures the step the run takes: at 128 responses the
 * embedded engine's fixed per-call costs weigh more, and the probe said 3.0× where the run's
 * 512-response step measured 2.1× (idle, after the shared-prefix passes).
 */
export const PROBE_MAX_ROWS = 512;
/** `engine: auto` picks torch only when it is at least this many times faster per step (noise margin). */
export const AUTO_MIN_RATIO = 1.1;
/**
 * Bumped when what a probe step does changes, or an engine's speed does (3: the embedded engine's
 * shared-prefix passes), so older cache entries are not used.
 */
const PROBE_VERSION = 3;
/**
 * Untimed steps before the timed ones: the embedded engine still compiles in its second step
 * (AdamW 256-305 ms and sampling 0.6 s on the quickstart's model, against 2-40 ms and 0.2-0.5 s
 * from the third on; loaded 2-core machine).
 */
const WARMUP_STEPS = 2;
/** The probe's shape when the caller knows nothing of the run (32 prompts × 4, 8-token prompts, 16 new tokens). */
export const DEFAULT_PROBE_SHAPE: ProbeShape = { prompts: 32, groupSize: 4, promptTokens: 8, newTokens: 16 };

/**
 * The probe shape of a run: its RL step's prompts × group size (at most PROBE_MAX_ROWS responses,
 * whole groups), its maxNewTokens, and the given prompt length; DEFAULT_PROBE_SHAPE's for what
 * the run does not set (no `rl:` stage).
 * @param rl the run's `rl:` block, or undefined
 * @param promptTokens typical prompt length in tokens, or some of the run's prompts (their median length)
 */
export function probeShapeOf(rl: { promptsPerStep: number; groupSize: number; maxNewTokens: number } | undefined, promptTokens: number | readonly Int32Array[] = DEFAULT_PROBE_SHAPE.promptTokens): ProbeShape {
  if (typeof promptTokens !== "number") {
    const lens = promptTokens.map((p) => p.length).sort((a, b) => a - b);
    promptTokens = lens.length ? lens[Math.floor((lens.length - 1) / 2)]! : DEFAULT_PROBE_SHAPE.promptTokens;
  }
  const groupSize = Math.min(rl?.groupSize ?? DEFAULT_PROBE_SHAPE.groupSize, PROBE_MAX_ROWS);
  const prompts = Math.max(1, Math.min(rl?.promptsPerStep ?? DEFAULT_PROBE_SHAPE.prompts, Math.floor(PROBE_MAX_ROWS / groupSize)));
  return { prompts, groupSize, promptTokens: Math.max(1, Math.round(promptTokens)), newTokens: rl?.maxNewTokens ?? DEFAULT_PROBE_SHAPE.newTokens };
}

/**
 * Whether the torch engine is set up, without starting Python: `python` (model.python) or
 * $RLVR_PYTHON names an existing file, or python/.venv exists (`rlvr setup torch`). Whether that
 * Python really imports torch is found out when the probe starts the worker.
 */
export function torchSetUp(python?: string): { ok: true; python: string } | { ok: false; reason: string } {
  const explicit = python ?? process.env.RLVR_PYTHON;
  const py = resolvePython(python);
  if (explicit) {
    const path = explicit.includes("/") || explicit.includes("\\") ? explicit : null;
    if (path && !existsSync(path)) return { ok: false, reason: `the torch engine's Python ${explicit} does not exist (${python ? "model.python" : "$RLVR_PYTHON"})` };
    return { ok: true, python: py };
  }
  if (py === "python3") return { ok: false, reason: `the torch engine is not set up (no ${DEFAULT_VENV}); run \`rlvr setup torch\`` };
  return { ok: true, python: py };
}

/** RLVR_ENGINE_PROBE: "off" skips probing, "refresh" ignores the cache; anything else: cached probing. */
function probeMode(): "on" | "off" | "refresh" {
  const v = (process.env.RLVR_ENGINE_PROBE ?? "").toLowerCase();
  if (v === "off" || v === "0" || v === "false" || v === "no") return "off";
  if (v === "refresh") return "refresh";
  return "on";
}

/** The folder of rlvr's per-machine cache: $RLVR_CACHE_DIR, $XDG_CACHE_HOME/rlvr or ~/.cache/rlvr. */
export function cacheDir(): string {
  if (process.env.RLVR_CACHE_DIR) return resolve(process.env.RLVR_CACHE_DIR);
  return join(process.env.XDG_CACHE_HOME ? resolve(process.env.XDG_CACHE_HOME) : join(homedir(), ".cache"), "rlvr");
}

/** The probe cache file (JSON: key → measurement). */
export function probeCacheFile(): string {
  return join(cacheDir(), "engine-probe.json");
}

function rlvrVersion(): string {
  try {
    return (JSON.parse(readFileSync(resolve(import.meta.dirname, "..", "..", "package.json"), "utf8")) as { version?: string }).version ?? "?";
  } catch {
    return "?";
  }
}

/**
 * What a probe's result depends on: this machine (host, CPU model and count, platform), the
 * Python, the thread settings, rlvr's version, the model's shape, LoRA and native kernels, and
 * the probe's shape.
 */
export function probeCacheKey(model: ModelSpec, o: { tokenizer: { vocabSize: number }; python: string; shape: ProbeShape; steps: number }): string {
  const c = cpus();
  let modelShape: unknown;
  if (model.path) {
    const cfgFile = join(model.path, "config.json");
    modelShape = { path: resolve(model.path), config: existsSync(cfgFile) ? createHash("sha256").update(readFileSync(cfgFile)).digest("hex").slice(0, 16) : null };
  } else {
    modelShape = { init: model.init, vocab: o.tokenizer.vocabSize };
  }
  const parts = {
    v: PROBE_VERSION,
    rlvr: rlvrVersion(),
    host: hostname(),
    cpu: `${c[0]?.model ?? "?"} x${c.length}`,
    platform: `${process.platform}-${process.arch}`,
    python: o.python,
    device: model.device ?? "auto",
    dtype: model.dtype ?? "auto",
    threads: `${process.env.RLVR_THREADS ?? ""}/${process.env.OMP_NUM_THREADS ?? ""}`,
    jaxPatch: process.env.RLVR_JAX_PATCH ?? "", // the embedded engine's jax-js patch on or off (docs/jax-js-patch.md)
    // The embedded engine's native kernels (docs/engines.md) and LoRA change its speed several-fold.
    native: model.nativeKernels ?? process.env.RLVR_NATIVE_KERNELS ?? "",
    lora: model.lora ?? null,
    model: modelShape,
    shape: o.shape,
    steps: o.steps,
  };
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);
}

function readCache(): Record<string, ProbeMeasurement> {
  try {
    const v = JSON.parse(readFileSync(probeCacheFile(), "utf8")) as unknown;
    return v && typeof v === "object" ? (v as Record<string, ProbeMeasurement>) : {};
  } catch {
    return {}; // missing or unreadable: probe again
  }
}

function writeCache(key: string, m: ProbeMeasurement): void {
  try {
    const file = probeCacheFile();
    mkdirSync(cacheDir(), { recursive: true });
    const all = { ...readCache(), [key]: { ...m, cached: false } };
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all, null, 1) + "\n");
    renameSync(tmp, file);
  } catch {
    // A read-only home: the next run probes again; nothing else depends on the cache.
  }
}

/** Options of probeEngines. */
export interface ProbeOptions extends Pick<EngineKindOptions, "tokenizer"> {
  /** The batch of one step (default DEFAULT_PROBE_SHAPE; see probeShapeOf). */
  shape?: ProbeShape;
  /** Timed steps per engine after two warm-up steps (default 3). */
  steps?: number;
  /** Seed of the probe's models, prompts and sampling (default 0). */
  seed?: number;
  /** Use and fill the cache (default true; RLVR_ENGINE_PROBE=refresh measures again). */
  cache?: boolean;
  /** Opens an engine of a concrete kind (default: openEngine with the torch worker's stderr kept quiet). */
  open?: (model: ModelSpec, kind: "embedded" | "torch") => Promise<Engine>;
}

/**
 * Measure the embedded and the torch engine on `model` (the run's own model: its checkpoint or
 * its random initialisation), `steps` probe steps each (see the module comment), or read the
 * measurement from the cache.
 * @returns seconds per step on each engine and their ratio, or `{unavailable: reason}` when the
 *   torch engine is not set up, RLVR_ENGINE_PROBE=off, or an engine failed (the reason says which).
 */
export async function probeEngines(model: ModelSpec, o: ProbeOptions): Promise<ProbeResult> {
  const mode = probeMode();
  if (mode === "off") return { unavailable: "the engine probe is off (RLVR_ENGINE_PROBE=off)" };
  const ready = torchSetUp(model.python);
  if (!ready.ok) return { unavailable: ready.reason };
  const shape = o.shape ?? DEFAULT_PROBE_SHAPE;
  const steps = o.steps ?? 3;
  const useCache = o.cache !== false;
  const key = probeCacheKey(model, { tokenizer: o.tokenizer, python: ready.python, shape, steps });
  if (useCache && mode !== "refresh") {
    const hit = readCache()[key];
    if (hit && typeof hit.ratio === "number") return { ...hit, cached: true };
  }
  const open = o.open ?? (await defaultOpen(o));
  const t0 = performance.now();
  const failed = (kind: "embedded" | "torch", e: unknown): ProbeUnavailable => ({ unavailable: `the ${kind} engine failed in the probe: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`, failed: kind });
  // The torch worker starts (Python imports torch: seconds) while the embedded engine opens and
  // runs its untimed warm-up steps; it is up and idle before the embedded engine's timed steps.
  const torchOpening = open({ ...model, engine: "torch" }, "torch");
  torchOpening.catch(() => undefined);
  let torch: Engine | null = null;
  let embedded: Engine | null = null;
  let phase: "embedded" | "torch" = "embedded"; // which engine a failure belongs to
  const seconds = { embedded: NaN, torch: NaN };
  try {
    embedded = await open({ ...model, engine: "embedded" }, "embedded");
    seconds.embedded = await timeSteps(embedded, shape, steps, o.seed ?? 0, async () => {
      phase = "torch";
      torch = await torchOpening;
      phase = "embedded";
    });
    await embedded.close();
    embedded = null;
    phase = "torch";
    torch ??= await torchOpening;
    seconds.torch = await timeSteps(torch, shape, steps, o.seed ?? 0);
  } catch (e) {
    return failed(phase, e);
  } finally {
    await embedded?.close().catch(() => undefined);
    const t: Engine | null = torch ?? (await torchOpening.catch(() => null));
    // The torch worker holds nothing worth a graceful exit (3.7 s of interpreter teardown on the loaded 2-core machine).
    if (t && "killWorker" in t && typeof t.killWorker === "function") t.killWorker();
    else await t?.close().catch(() => undefined);
  }
  const m: ProbeMeasurement = {
    embeddedSeconds: seconds.embedded,
    torchSeconds: seconds.torch,
    ratio: seconds.embedded / seconds.torch,
    probeSeconds: (performance.now() - t0) / 1000,
    steps,
    shape,
    cached: false,
    measuredAt: new Date().toISOString(),
  };
  if (useCache) writeCache(key, m);
  return m;
}

async function defaultOpen(o: ProbeOptions): Promise<(model: ModelSpec, kind: "embedded" | "torch") => Promise<Engine>> {
  // The worker's stderr stays quiet; its last lines are in the error when it fails.
  return (model) => openEngineOfKind(model, { tokenizer: o.tokenizer, seed: o.seed, torchStderr: () => {} });
}

/**
 * Seconds per probe step on `engine`: WARMUP_STEPS untimed steps, `afterWarmup`, then the median of `steps` timed ones.
 * The engine's weights and optimizer state change (it trains); close it afterwards.
 */
export async function timeSteps(engine: Engine, shape: ProbeShape, steps: number, seed: number, afterWarmup?: () => Promise<void>): Promise<number> {
  const vocab = engine.info().vocabSize;
  const rng = new Rng(seed);
  const prompts = Array.from({ length: shape.prompts }, () => Int32Array.from({ length: shape.promptTokens }, () => rng.int(0, vocab - 1)));
  await engine.setReference("policy");
  const times: number[] = [];
  for (let i = 0; i < WARMUP_STEPS + steps; i++) {
    const t = performance.now();
    await probeStep(engine, prompts, shape, seed + i);
    if (i >= WARMUP_STEPS) times.push((performance.now() - t) / 1000);
    else if (i === WARMUP_STEPS - 1) await afterWarmup?.();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor((times.length - 1) / 2)]!;
}

/** One probe step: sample, reference scores, forward-backward of a ±1-advantage policy-gradient loss, AdamW. */
async function probeStep(engine: Engine, prompts: Int32Array[], shape: ProbeShape, seed: number): Promise<void> {
  const out = await engine.sample({ prompts, n: shape.groupSize, maxNewTokens: shape.newTokens, temperature: 1, seed, stopTokens: [] });
  const batch = packSequences(out.map((r) => ({ prompt: prompts[r.promptIndex]!, response: r.tokens })));
  const { batchSize: B, seqLen: T } = batch;
  await engine.score(batch, { model: "reference" });
  let n = 0;
  for (const m of batch.lossMask) n += m;
  const loss: TokenLossFn = (scores) => {
    const d = new Float32Array(B * T);
    let l = 0;
    for (let i = 0; i < B * T; i++) {
      if (batch.lossMask[i] === 0) continue;
      d[i] = (Math.floor(i / T) % 2 === 0 ? -1 : 1) / n; // advantage +1 on even rows, -1 on odd ones
      l += d[i]! * scores.logprobs[i]!;
    }
    return { loss: l, dLogprobs: d, metrics: {} };
  };
  await engine.forwardBackward(batch, loss);
  await engine.optimStep({ lr: 1e-4, maxGradNorm: 1 });
}

/** What `model.engine: auto` resolved to, and why (one line). */
export interface EngineChoice {
  engine: "embedded" | "torch";
  reason: string;
  probe: ProbeResult;
}

/**
 * Resolve `engine: auto`: torch when it is set up and the probe (cached) finds it at least
 * AUTO_MIN_RATIO times faster per step on this model, or the embedded engine failed on the model
 * in the probe (e.g. a model too large for its memory); embedded otherwise.
 * @param probe the measurement to decide on (default: probeEngines(model, o)); tests inject one.
 */
export async function chooseEngine(model: ModelSpec, o: ProbeOptions & { probe?: () => Promise<ProbeResult> }): Promise<EngineChoice> {
  const ready = torchSetUp(model.python);
  if (!ready.ok) return { engine: "embedded", reason: `engine: auto → embedded (${ready.reason})`, probe: { unavailable: ready.reason } };
  const p = o.probe ? await o.probe() : await probeEngines(model, o);
  if ("unavailable" in p && p.failed === "embedded") return { engine: "torch", reason: `engine: auto → torch (${p.unavailable})`, probe: p };
  if ("unavailable" in p) return { engine: "embedded", reason: `engine: auto → embedded (${p.unavailable})`, probe: p };
  if (p.ratio >= AUTO_MIN_RATIO) return { engine: "torch", reason: `engine: auto → torch (${ratioText(p)}; ${probeText(p)})`, probe: p };
  return { engine: "embedded", reason: `engine: auto → embedded (torch is not ${AUTO_MIN_RATIO}× faster here: ${ratioText(p)}; ${probeText(p)})`, probe: p };
}

/** "torch 2.8× faster per RL step" / "torch 0.9× as fast per RL step". */
function ratioText(p: ProbeMeasurement): string {
  return p.ratio >= 1 ? `torch ${p.ratio.toFixed(1)}× faster per RL step` : `torch ${p.ratio.toFixed(2)}× as fast per RL step`;
}

/** "embedded 0.61 s, torch 0.22 s a step; 3-step probe of 128 responses took 7.1 s (cached)". */
export function probeText(p: ProbeMeasurement): string {
  const rows = p.shape.prompts * p.shape.groupSize;
  const cost = p.cached ? `cached from ${p.measuredAt.slice(0, 10)}; it took ${p.probeSeconds.toFixed(1)} s` : `took ${p.probeSeconds.toFixed(1)} s`;
  return `embedded ${p.embeddedSeconds.toFixed(2)} s, torch ${p.torchSeconds.toFixed(2)} s a step; ${p.steps}-step probe of ${rows} responses × ${p.shape.newTokens} tokens, ${cost}`;
}

/** How to switch to the torch engine, as the advice line says it. */
export const SWITCH_TO_TORCH = "model.engine: torch (or auto) in the run config, or rlvr train --engine torch";

/**
 * Probe (cached) and pass the advice line to `say` when there is one (see engineAdvice); never
 * throws — a failed probe only means no advice.
 */
export async function adviseEngine(model: ModelSpec, o: ProbeOptions, say: (line: string) => void): Promise<void> {
  try {
    const line = engineAdvice(await probeEngines(model, o), SWITCH_TO_TORCH);
    if (line) say(line);
  } catch {
    // no advice
  }
}

/**
 * The one line a run on the embedded engine prints when the torch engine is set up: how much
 * faster the torch engine measured and how to switch; null when there is no measurement.
 * @param how how to switch, e.g. "model.engine: torch (or rlvr train --engine torch)"
 */
export function engineAdvice(p: ProbeResult, how: string): string | null {
  if ("unavailable" in p) return null;
  if (p.ratio >= AUTO_MIN_RATIO) return `engine: the torch engine is set up and ${p.ratio.toFixed(1)}× faster per RL step on this machine (${probeText(p)}); switch with ${how}`;
  return `engine: the torch engine is set up but not faster here (${ratioText(p)}; ${probeText(p)}); staying on embedded is right`;
}
