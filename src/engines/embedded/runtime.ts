/**
 * Starts jax-js once per process on the Wasm backend (the only backend jax-js offers on Node).
 * Node 20 has no `navigator`, so `init()` must be told the device explicitly (JAXJS-NOTES.md).
 */
import { init, defaultDevice } from "@jax-js/jax";

let ready: Promise<void> | null = null;

/** Idempotent: resolves when the Wasm backend is initialised and set as default. */
export function ensureJax(): Promise<void> {
  if (!ready) {
    ready = (async () => {
      const devices = await init("wasm");
      if (!devices.includes("wasm")) throw new Error("jax-js: the wasm backend failed to initialise");
      defaultDevice("wasm");
    })();
  }
  return ready;
}
