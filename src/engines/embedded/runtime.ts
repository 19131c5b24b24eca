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
import { init, defaultDevice } from "@jax-js/jax";

/** The jax-js backends the embedded engine runs on: "webgpu" only in browsers that offer it. */
export type JaxBackend = "wasm" | "webgpu";

let ready: Promise<void> | null = null;
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
      const devices = await init(backend);
      if (!devices.includes(backend)) throw new Error(`jax-js: the ${backend} backend failed to initialise${backend === "webgpu" ? " (this browser offers no WebGPU adapter; use wasm)" : ""}`);
      defaultDevice(backend);
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
