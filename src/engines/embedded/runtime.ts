/**
 * Starts jax-js once per process on the Wasm backend (the only backend jax-js offers on Node).
 * Node 20 has no `navigator`, so `init()` must be told the device explicitly (JAXJS-NOTES.md).
 *
 * Threads: `./node-workers.ts` must be evaluated before `@jax-js/jax` (jax-js decides at import
 * time whether to use worker threads), so it is the first import here and in every file of this
 * folder that imports jax-js. `RLVR_THREADS` (0 or 1 = single-threaded) overrides the core count.
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { settleJaxThreads, jaxThreads } from "./node-workers.ts";
import { init, defaultDevice } from "@jax-js/jax";

let ready: Promise<void> | null = null;

/** Idempotent: resolves when the Wasm backend is initialised and set as default. */
export function ensureJax(): Promise<void> {
  if (!ready) {
    ready = (async () => {
      settleJaxThreads();
      const devices = await init("wasm");
      if (!devices.includes("wasm")) throw new Error("jax-js: the wasm backend failed to initialise");
      defaultDevice("wasm");
    })();
  }
  return ready;
}

/** Human-readable device of the embedded engine, e.g. "cpu (jax-js wasm, 2 threads)". */
export function jaxDevice(): string {
  const n = jaxThreads().threads;
  return `cpu (jax-js wasm, ${n} thread${n === 1 ? "" : "s"})`;
}

export { jaxThreads };
