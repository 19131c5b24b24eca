/**
 * Worker threads for jax-js's Wasm backend on Node (a side-effect module).
 *
 * jax-js 0.1.25 decides at *import time* whether its Wasm backend is multi-threaded: the backend
 * is constructed while `@jax-js/jax` is evaluated, and it only allocates shared Wasm memory and a
 * worker pool when `typeof SharedArrayBuffer !== "undefined" && typeof Worker !== "undefined"`.
 * The pool size is `navigator.hardwareConcurrency` (4 when absent). Every kernel compiled later
 * re-checks the same condition to decide whether it imports shared memory, so `Worker` must be
 * defined before the import and must stay defined.
 *
 * What the pool uses of the Web Worker API (dist/backend-*.js, `WasmWorkerPool`):
 *   new Worker(URL.createObjectURL(new Blob([source])), { type: "module" })
 *   worker.postMessage(msg)            msg carries a shared WebAssembly.Memory, WebAssembly.Module,
 *                                      numbers and plain objects (structured clone, no transfer list)
 *   worker.onmessage = (e) => e.data   reassigned before each dispatch; exactly one reply per message
 *   worker.onerror = (e) => e.message
 * and inside the worker script: `self.onmessage = (e) => …` and a global `postMessage(…)`.
 *
 * This module provides that subset over `node:worker_threads`: the Blob URL's text is read with
 * `resolveObjectURL`, sent to a small bootstrap that defines `self`/`postMessage`/`onmessage`, and
 * evaluated there. Workers are `unref()`ed while idle so they never keep the process alive, and
 * `ref()`ed while a reply is outstanding so an `await x.data()` cannot be cut short.
 *
 * Import it before anything that imports `@jax-js/jax` (every file of src/engines/embedded that
 * imports jax-js imports this module first). Threads: env `RLVR_THREADS` (a count; 0 or 1 =
 * single-threaded, no workers), default the number of cores. Nothing is installed when the host
 * already has a `Worker` global (browsers, Deno) or lacks SharedArrayBuffer.
 */
import { Worker as NodeWorker } from "node:worker_threads";
import { resolveObjectURL } from "node:buffer";
import { availableParallelism } from "node:os";

/** How jax-js's threads were set up in this process. */
export interface JaxThreads {
  /** Worker threads the Wasm backend uses (1 = runs on the main thread, no pool). */
  threads: number;
  /** Whether this module installed the Worker adapter. */
  adapter: boolean;
  /** Why threads are off, when they are. */
  reason?: string;
  /** Worker threads started so far (the pool starts lazily, on the first async dispatch). */
  started: number;
  /** Messages answered by workers so far (kernels and routines run off the main thread). */
  replies: number;
}

const stats: JaxThreads = { threads: 1, adapter: false, started: 0, replies: 0 };
/** Reads of the `Worker` global; jax-js reads it while its module is evaluated. */
let workerReads = 0;

/** Thread setup of this process (live counters; for `info()`, tests and benchmarks). */
export function jaxThreads(): JaxThreads {
  return { ...stats };
}

/** Parses RLVR_THREADS: a non-negative integer, or unset/empty for the number of cores. */
export function requestedThreads(env: string | undefined, cores: number): number {
  if (env === undefined || env.trim() === "") return Math.max(1, cores);
  const n = Number(env);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`RLVR_THREADS must be a non-negative integer (0 or 1 = single-threaded), got ${JSON.stringify(env)}`);
  }
  return Math.max(1, n);
}

/** Runs inside each worker thread: the Web Worker globals the pool's script expects. */
const BOOTSTRAP = `
"use strict";
const { parentPort } = require("node:worker_threads");
globalThis.self = globalThis;
globalThis.postMessage = (data) => parentPort.postMessage(data);
globalThis.onmessage = null;
let loaded = false;
parentPort.on("message", (data) => {
  if (!loaded) {
    loaded = true;
    (0, eval)(data);
    return;
  }
  const handler = globalThis.onmessage;
  if (typeof handler === "function") handler({ data });
});
`;

type MessageHandler = ((e: { data: unknown }) => void) | null;
type ErrorHandler = ((e: { message: string; error?: unknown }) => void) | null;

/** The subset of the Web Worker API that jax-js's WasmWorkerPool uses, over node:worker_threads. */
class WebWorkerAdapter {
  onmessage: MessageHandler = null;
  onerror: ErrorHandler = null;
  private readonly worker: NodeWorker;
  private pending = 0;
  private chain: Promise<void>;
  /** The script was posted; `queued`: posts still waiting on `chain`. */
  private loaded = false;
  private queued = 0;

  constructor(url: string | URL, _opts?: { type?: string }) {
    const href = String(url);
    const blob = href.startsWith("blob:") ? resolveObjectURL(href) : undefined;
    if (!blob) throw new Error(`rlvr node-workers: only Blob URLs are supported (got ${href.slice(0, 40)})`);
    this.worker = new NodeWorker(BOOTSTRAP, { eval: true });
    this.worker.unref();
    stats.started++;
    this.worker.on("message", (data: unknown) => {
      stats.replies++;
      if (--this.pending <= 0) {
        this.pending = 0;
        this.worker.unref();
      }
      this.onmessage?.({ data });
    });
    this.worker.on("error", (error: Error) => {
      this.pending = 0;
      this.worker.unref();
      if (this.onerror) this.onerror({ message: error.message, error });
      else console.error("rlvr node-workers: a jax-js worker thread failed:", error);
    });
    // The script text is read asynchronously; later messages queue behind it, in order.
    this.chain = blob.text().then((source) => {
      this.worker.postMessage(source);
      this.loaded = true;
    });
    this.chain.catch((error: Error) => this.onerror?.({ message: error.message, error }));
  }

  postMessage(data: unknown): void {
    // The patch's synchronous dispatch (docs/jax-js-patch.md) parks a worker in a loop with a
    // "sync" message that gets no reply, and its caller blocks until the worker is there: post it
    // at once (once the script is loaded and nothing is queued before it), and do not wait for a reply.
    const sync = (data as { type?: string } | null)?.type === "sync";
    if (!sync) {
      this.pending++;
      this.worker.ref();
    }
    if (this.loaded && this.queued === 0) {
      this.worker.postMessage(data);
      return;
    }
    this.queued++;
    this.chain = this.chain.then(() => {
      this.queued--;
      this.worker.postMessage(data);
    });
  }

  terminate(): void {
    void this.worker.terminate();
  }
}

function install(): void {
  const g = globalThis as Record<string, unknown>;
  let threads: number;
  try {
    threads = requestedThreads(process.env.RLVR_THREADS, availableParallelism());
  } catch (e) {
    stats.reason = (e as Error).message;
    throw e;
  }
  if (threads <= 1) {
    stats.reason = "RLVR_THREADS asks for one thread";
    return;
  }
  if (typeof SharedArrayBuffer === "undefined") {
    stats.reason = "SharedArrayBuffer is unavailable";
    return;
  }
  if (g.Worker !== undefined) {
    stats.reason = "a Worker global already exists (not installed by rlvr)";
    return;
  }
  // An accessor, so that `settleJaxThreads` can tell whether jax-js looked at it when it loaded.
  Object.defineProperty(globalThis, "Worker", {
    configurable: true,
    enumerable: false,
    get() {
      workerReads++;
      return WebWorkerAdapter;
    },
  });
  // jax-js reads navigator.hardwareConcurrency for the pool size. Node 20 has no navigator;
  // Node ≥ 21 has one whose hardwareConcurrency is the core count.
  const nav = g.navigator as { hardwareConcurrency?: number } | undefined;
  if (nav === undefined) {
    g.navigator = { hardwareConcurrency: threads };
  } else if (nav.hardwareConcurrency !== threads) {
    try {
      Object.defineProperty(nav, "hardwareConcurrency", { value: threads, configurable: true });
    } catch {
      // Read-only navigator: the pool uses its core count.
      threads = nav.hardwareConcurrency ?? threads;
    }
  }
  stats.threads = threads;
  stats.adapter = true;
  delete stats.reason;
}

/**
 * Call once after `@jax-js/jax` has loaded (runtime.ts does). If jax-js was imported before this
 * module, its backend was built without shared memory or a pool while `Worker` now exists, and
 * every kernel compiled from now on would import shared memory that the backend does not have.
 * In that case the adapter is removed (single-threaded, consistent) and a warning is printed.
 */
export function settleJaxThreads(): JaxThreads {
  if (stats.adapter && workerReads === 0) {
    delete (globalThis as Record<string, unknown>).Worker;
    stats.adapter = false;
    stats.threads = 1;
    stats.reason = "@jax-js/jax was imported before src/engines/embedded/node-workers.ts";
    console.warn(`rlvr: jax-js runs single-threaded: ${stats.reason}; import the engine (or node-workers.ts) first`);
  }
  return jaxThreads();
}

if (typeof process !== "undefined" && process.versions?.node) install();
