/**
 * `rlvr play`: serves the training page (dashboard/train/, built with Vite on first use) on
 * 127.0.0.1 and prints its URL. The page trains the quickstart's run in the browser tab — jax-js
 * on WebGPU when the browser offers an adapter, else on Wasm — with live curves, held-out
 * evaluations and samples, and downloads the trained model as a Hugging Face checkpoint (zip).
 * The page is static: any web server can host dashboard/train/dist, ideally with the two headers
 * below (they let jax-js's Wasm backend use one worker thread per core).
 */
import type { Command } from "commander";
import { ensurePlayPageBuilt } from "../../browser/build.ts";
import { startDashboardServer, type DashboardServer } from "../../dashboard/server.ts";

/**
 * Cross-origin isolation: without it a page has no SharedArrayBuffer, and jax-js's Wasm backend
 * runs single-threaded. The page loads nothing from other origins, so these cost nothing.
 */
export const ISOLATION_HEADERS = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };

/** Build (if needed) and serve the training page; resolves once it is listening. */
export async function startPlay(o: { port?: number; log?: (msg: string) => void; isolate?: boolean } = {}): Promise<DashboardServer> {
  const dist = await ensurePlayPageBuilt({ log: o.log });
  return startDashboardServer([], dist, { port: o.port, headers: o.isolate === false ? {} : ISOLATION_HEADERS });
}

export function register(program: Command): void {
  program
    .command("play")
    .description("serve a page that trains the quickstart's model in your browser (WebGPU or Wasm) and downloads the checkpoint")
    .option("--port <port>", "port on 127.0.0.1 (default: a free one)", (v) => parseInt(v, 10))
    .action(async (o: { port?: number }) => {
      const log = (m: string) => process.stderr.write(m + "\n");
      const d = await startPlay({ port: o.port, log });
      process.stdout.write(`rlvr play: ${d.url}\n`);
      log("open it in a browser and press Train; Ctrl+C stops the server");
      const stop = () => void d.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
