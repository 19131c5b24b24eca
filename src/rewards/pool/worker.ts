/**
 * Body of a verifier-pool worker thread. Loads the built-in verifiers and the extra modules named
 * in workerData.modules (each registers verifiers on import), then answers
 * `{id, name, args}` messages with `{id, ok: true, value}` or `{id, ok: false, error}`.
 * Before each import it posts `{loading: module}`; a module that fails to import is reported as
 * `{ready: false, error}` naming it. Uncaught errors end the thread; the pool counts that as a
 * crash and replaces the worker (or, before the worker was ready, fails every call).
 */
import { parentPort, workerData } from "node:worker_threads";
import { getVerifier, verifierNames } from "./registry.ts";
import { addVerifierSource } from "../registry.ts";
import { loadMath } from "../math-bridge.ts";
import { adoptSandboxSlots } from "../code/slots.ts";
import { abortSandboxes } from "../code/sandbox.ts";

interface Job {
  id: number;
  name: string;
  args: unknown[];
}

const data = workerData as { modules: string[]; sources: string[]; preloadMath: boolean; sandboxSlots?: SharedArrayBuffer };
const port = parentPort!;
// Modules that register more verifiers (the procedural tasks), imported on the first unknown name (./registry.ts).
for (const source of data.sources) addVerifierSource(source);
// One cap on concurrent sandboxes for the whole process (code/slots.ts).
if (data.sandboxSlots) adoptSandboxSlots(data.sandboxSlots);

// Report each module before importing it, so that a module that loops or exits while loading
// can be named by the pool (which enforces the load timeout).
let loading = "the built-in verifiers";
try {
  port.postMessage({ loading });
  await import("./builtins.ts");
  for (const m of data.modules) {
    loading = m;
    port.postMessage({ loading });
    await import(m);
  }
  // Load the math verifier (and its CAS) now, so its first call is not charged the load time.
  if (data.preloadMath) {
    loading = "the math verifier";
    port.postMessage({ loading });
    await loadMath().catch(() => undefined);
  }
  port.postMessage({ ready: true, names: verifierNames() });
} catch (e) {
  const msg = e instanceof Error ? e.message.split("\n")[0] : String(e);
  port.postMessage({ ready: false, error: `cannot load verifier module ${loading}: ${msg}` });
}

port.on("message", async (job: Job | { abortSandboxes: true }) => {
  // The pool timed this worker out: kill and reap its sandboxes before it is terminated.
  if ("abortSandboxes" in job) return abortSandboxes();
  const fn = getVerifier(job.name);
  if (!fn) {
    port.postMessage({ id: job.id, ok: false, error: `unknown verifier "${job.name}" (registered: ${verifierNames().join(", ")})` });
    return;
  }
  try {
    const value = await fn(...job.args);
    port.postMessage({ id: job.id, ok: true, value });
  } catch (e) {
    port.postMessage({ id: job.id, ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
});
