// Worker-thread entry of the verifier pool (plain JS so that Node can start it without a loader).
// From the sources (pool.ts names worker.ts) it registers the tsx loader in this thread, then loads
// the TypeScript worker body. From the compiled package (dist/, no worker.ts beside it) it loads
// worker.js with plain node, and registers tsx only when a listed verifier module is TypeScript.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { workerData } from "node:worker_threads";

let entry = workerData.entry;
if (entry.endsWith(".ts") && !existsSync(fileURLToPath(entry))) entry = entry.slice(0, -3) + ".js";
const tsModules = (workerData.modules ?? []).filter((m) => /\.[cm]?tsx?$/.test(m));
if (entry.endsWith(".ts") || tsModules.length > 0) {
  let api;
  try {
    api = await import("tsx/esm/api");
  } catch {
    throw new Error(`verifier module ${tsModules[0] ?? entry} is TypeScript, which needs tsx: run "npm install tsx" (or list its compiled .js)`);
  }
  api.register();
}
await import(entry);
