/**
 * Body of a verifier-pool worker thread. Loads the built-in verifiers and the extra modules named
 * in workerData.modules (each registers verifiers on import), then answers
 * `{id, name, args}` messages with `{id, ok: true, value}` or `{id, ok: false, error}`.
 * Uncaught errors end the thread; the pool counts that as a crash and replaces the worker.
 */
import { parentPort, workerData } from "node:worker_threads";
import { getVerifier, verifierNames } from "./registry.ts";
import { loadMath } from "../math-bridge.ts";

interface Job {
  id: number;
  name: string;
  args: unknown[];
}

const data = workerData as { modules: string[]; preloadMath: boolean };
const port = parentPort!;

try {
  await import("./builtins.ts");
  for (const m of data.modules) await import(m);
  // Load the math verifier (and its CAS) now, so its first call is not charged the load time.
  if (data.preloadMath) await loadMath().catch(() => undefined);
  port.postMessage({ ready: true, names: verifierNames() });
} catch (e) {
  port.postMessage({ ready: false, error: `worker failed to load verifiers: ${(e as Error).message}` });
}

port.on("message", async (job: Job) => {
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
