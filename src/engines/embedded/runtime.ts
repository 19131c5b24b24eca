/**
 * Starts jax-js once per process (or browser tab) on one backend: Wasm by default (the only
 * backend jax-js offers on Node); a browser may pick WebGPU first with `useJaxBackend("webgpu")`
 * (src/browser/). Node 20 has no `navigator`, so `init()` must be told the device explicitly
 * (JAXJS-NOTES.md).
 *
 * Threads: `./node-workers.ts` must be evaluated before `@jax-js/jax` (jax-js decides at import
 * time whether to use worker threads), so it is the first import here and in every file of this
 * folder that imports jax-js. `RLVR_THREADS` (0 or 1 = single-threaded) overrides the core count.
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { settleJaxThreads, jaxThreads } from "./node-workers.ts";
import * as jax from "@jax-js/jax";
import { init, defaultDevice } from "@jax-js/jax";

/** The jax-js backends the embedded engine runs on: "webgpu" only in browsers that offer it. */
export type JaxBackend = "wasm" | "webgpu";

let ready: Promise<void> | null = null;
/** Whether jax-js's Wasm kernels may use relaxed SIMD (fused multiply-add) in this process. */
let relaxedSimd = false;
/** Whether jax-js's worker pool has been started (synchronous dispatch needs it running). */
let poolStarted = false;
let backend: JaxBackend = "wasm";

/**
 * Choose the backend every engine of this process/tab runs on; call before the first engine starts.
 * @throws Error when jax-js already started on another backend (it starts once per process).
 */
export function useJaxBackend(b: JaxBackend): void {
  if (ready && b !== backend) throw new Error(`jax-js already started on ${backend}; choose the backend (useJaxBackend("${b}")) before the first engine is created`);
  backend = b;
}

/** The backend chosen (or in use): "wasm" unless `useJaxBackend("webgpu")` was called. */
export function jaxBackend(): JaxBackend {
  return backend;
}

/** Idempotent: resolves when the chosen backend (Wasm by default) is initialised and set as default. */
export function ensureJax(): Promise<void> {
  if (!ready) {
    ready = (async () => {
      settleJaxThreads();
      relaxedSimd = backend === "wasm" && (await applyRelaxedSimd());
      applyJaxPatchSwitch();
      const devices = await init(backend);
      if (!devices.includes(backend)) throw new Error(`jax-js: the ${backend} backend failed to initialise${backend === "webgpu" ? " (this browser offers no WebGPU adapter; use wasm)" : ""}`);
      defaultDevice(backend);
      if (syncWanted()) {
        // Synchronous dispatch needs the workers started, which only an async dispatch does.
        setWasmDispatch!({ sync: false });
        await jax.numpy.ones([1 << 16]).add(1).data();
        poolStarted = true;
        setWasmDispatch!({ sync: true });
      }
    })();
  }
  return ready;
}

/** Human-readable device of the embedded engine, e.g. "cpu (jax-js wasm, 2 threads)" or "gpu (jax-js webgpu)". */
export function jaxDevice(): string {
  if (backend === "webgpu") return "gpu (jax-js webgpu)";
  const n = wasmThreads();
  return `cpu (jax-js wasm, ${n} thread${n === 1 ? "" : "s"})`;
}

/**
 * Threads of jax-js's Wasm backend: on Node as node-workers.ts set them up; in a browser, one per
 * core when the page is cross-origin isolated (jax-js needs SharedArrayBuffer and Worker), else 1.
 */
function wasmThreads(): number {
  const g = globalThis as { Worker?: unknown; SharedArrayBuffer?: unknown; navigator?: { hardwareConcurrency?: number } };
  const t = jaxThreads();
  if (t.adapter || g.Worker === undefined) return t.threads;
  return g.SharedArrayBuffer !== undefined ? (g.navigator?.hardwareConcurrency ?? 4) : 1;
}

export { jaxThreads };

/**
 * The settings of rlvr's jax-js patch (patches/@jax-js+jax+0.1.25.patch, docs/jax-js-patch.md),
 * which adds `setWasmDispatch` to jax-js: `inline` runs kernels on the calling thread instead of
 * the worker pool; `smallRowTile` (rows) gives matmuls with at most that many output rows one row
 * tile split by columns across workers, so each weight is streamed once per call.
 */
export interface WasmDispatch {
  /** Whether the installed jax-js carries the patch (`npm install` applies it; a package consumer's copy may not). */
  patched: boolean;
  /** Whether the patch's paths are on: patched and not switched off by `RLVR_JAX_PATCH=off`. */
  enabled: boolean;
  inline: boolean;
  /** Wasm relaxed SIMD (fused multiply-add in matmuls) is on: RLVR_RELAXED_SIMD, runtime.ts `applyRelaxedSimd`. */
  relaxedSimd: boolean;
  /** Kernels run synchronously, split between the calling thread and the workers (patch item 4). */
  sync: boolean;
  smallRowTile: number;
}

type Settings = { inline: boolean; sync: boolean; smallRowTile: number };
type SetWasmDispatch = (s?: Partial<Settings>) => Settings;
/** The patch's setter, or undefined on an unpatched jax-js (read through the namespace: the export may be absent). */
const setWasmDispatch = (jax as unknown as { setWasmDispatch?: SetWasmDispatch }).setWasmDispatch;

/** Parses RLVR_JAX_PATCH: unset, "" or "on" = use the patch's paths; "off" = the plain 0.1.25 paths (for A/B runs). */
export function jaxPatchRequested(env: string | undefined): boolean {
  if (env === undefined || env.trim() === "" || env === "on") return true;
  if (env === "off") return false;
  throw new Error(`RLVR_JAX_PATCH must be "on" or "off", got ${JSON.stringify(env)}`);
}

let patchEnabled = false;

/** Rows up to which the patch's one-row-tile, column-split matmuls apply (its default). */
const SMALL_ROW_TILE = 32;

/** Parses RLVR_JAX_SYNC: unset, "" or "on" = synchronous dispatch where it applies; "off" = the worker pool's message round trips (for A/B runs). */
export function jaxSyncRequested(env: string | undefined): boolean {
  if (env === undefined || env.trim() === "" || env === "on") return true;
  if (env === "off") return false;
  throw new Error(`RLVR_JAX_SYNC must be "on" or "off", got ${JSON.stringify(env)}`);
}

/**
 * Whether kernels dispatch synchronously (patch item 4): the patch on, RLVR_JAX_SYNC not off, the
 * Wasm backend with a worker pool, on Node (a browser's main thread cannot block; it would spin).
 */
function syncWanted(): boolean {
  const node = globalThis.process?.versions?.node !== undefined;
  return patchEnabled && node && backend === "wasm" && jaxThreads().threads > 1 && jaxSyncRequested(globalThis.process?.env?.RLVR_JAX_SYNC);
}

/** Applies RLVR_JAX_PATCH once, before the first kernel is compiled. */
function applyJaxPatchSwitch(): void {
  useJaxPatch(jaxPatchRequested(globalThis.process?.env?.RLVR_JAX_PATCH));
}

/**
 * Parses RLVR_RELAXED_SIMD: "on" = turn Wasm relaxed SIMD (fused multiply-add) on where Node 20
 * has it behind a flag; unset, "" or "off" = leave the host as it is. Off by default: it changes
 * float32 rounding, and two seeded learning tests (test:slow) then follow other trajectories and
 * miss their thresholds; a host that has it on already (browsers, Node ≥ 22) keeps it.
 */
export function relaxedSimdRequested(env: string | undefined): boolean {
  if (env === undefined || env.trim() === "" || env === "off") return false;
  if (env === "on") return true;
  throw new Error(`RLVR_RELAXED_SIMD must be "on" or "off", got ${JSON.stringify(env)}`);
}

/** A Wasm module using f32x4.relaxed_madd (jax-js's own feature probe). */
const RELAXED_PROBE = "0061736d0100000001080160037b7b7b017b030201000a0d010b00200020012002fd85020b";

/**
 * Wasm relaxed SIMD lets jax-js's matmul kernels use fused multiply-add (`f32x4.relaxed_madd`):
 * browsers and Node ≥ 22 ship it on; Node 20 has it behind a V8 flag, set here before the first
 * kernel is compiled (jax-js probes the feature once) when RLVR_RELAXED_SIMD=on. Measured: ~10–20%
 * on large matmuls (docs/benchmarks.md). Numerics: a fused multiply-add rounds once instead of
 * twice, so results move by float32 rounding (tested).
 * @returns whether relaxed SIMD is available now
 */
async function applyRelaxedSimd(): Promise<boolean> {
  const bytes = new Uint8Array(RELAXED_PROBE.match(/../g)!.map((h) => parseInt(h, 16)));
  if (WebAssembly.validate(bytes)) return true;
  const proc = globalThis.process;
  if (!proc?.versions?.node || !relaxedSimdRequested(proc.env?.RLVR_RELAXED_SIMD)) return false;
  const v8 = await import("node:v8");
  v8.setFlagsFromString("--experimental-wasm-relaxed-simd");
  return WebAssembly.validate(bytes);
}

/**
 * Turns the patch's paths on or off at run time (RLVR_JAX_PATCH sets the start), for A/B runs in
 * one process; the tiling applies to kernels prepared afterwards. A no-op without the patch.
 */
export function useJaxPatch(on: boolean): WasmDispatch {
  if (setWasmDispatch) {
    patchEnabled = on;
    setWasmDispatch(on ? { smallRowTile: SMALL_ROW_TILE, sync: poolStarted && syncWanted() } : { inline: false, sync: false, smallRowTile: 0 });
  }
  return wasmDispatch();
}

/** The patch's state in this process (`patched: false` on a jax-js without it: nothing changes then). */
export function wasmDispatch(): WasmDispatch {
  const s = setWasmDispatch?.() ?? { inline: false, sync: false, smallRowTile: 0 };
  return { patched: setWasmDispatch !== undefined, enabled: patchEnabled, relaxedSimd, ...s };
}

let inlineDepth = 0;

/**
 * Runs `fn` with jax-js's kernels on the calling thread (no worker round trip per kernel), then
 * restores the worker pool; nests. A no-op without the patch, with RLVR_JAX_PATCH=off, on
 * WebGPU or with one thread. Kernels of other work that overlaps `fn` run inline too (correct,
 * only slower). Numerics: the same kernels, so results are bit-identical either way.
 */
export async function withInlineKernels<T>(fn: () => Promise<T>): Promise<T> {
  if (!patchEnabled || !setWasmDispatch || backend !== "wasm" || jaxThreads().threads <= 1) return fn();
  if (inlineDepth++ === 0) setWasmDispatch({ inline: true });
  try {
    return await fn();
  } finally {
    if (--inlineDepth === 0) setWasmDispatch({ inline: false });
  }
}
