/**
 * `rlvr dashboard <run-dir>...`: a local web page with live curves, a sample browser and the
 * evaluation tables of one or more runs (dashboard/). Serves on 127.0.0.1 at a free port (or
 * --port) and prints the URL; builds the page with Vite on first use.
 */
import type { Command } from "commander";
import { ensureDashboardBuilt } from "../../dashboard/build.ts";
import { findRuns, startDashboardServer, type DashboardServer } from "../../dashboard/server.ts";

export interface DashboardOptions {
  port?: number;
  poll?: number;
  log?: (msg: string) => void;
}

/** Build (if needed) and serve the dashboard for `paths`; resolves once it is listening. */
export async function startDashboard(paths: readonly string[], o: DashboardOptions = {}): Promise<DashboardServer> {
  const runs = findRuns(paths);
  const dist = await ensureDashboardBuilt({ log: o.log });
  return startDashboardServer(runs, dist, { port: o.port, poll: o.poll });
}

export function register(program: Command): void {
  program
    .command("dashboard")
    .description("serve a local web page with live curves, samples and evaluations of runs")
    .argument("<run-dir...>", "run directories (or folders of run directories)")
    .option("--port <port>", "port on 127.0.0.1 (default: a free one)", (v) => parseInt(v, 10))
    .option("--poll <ms>", "how often the page re-reads metrics.jsonl", (v) => parseInt(v, 10), 2000)
    .action(async (paths: string[], o: { port?: number; poll: number }) => {
      const log = (m: string) => process.stderr.write(m + "\n");
      const d = await startDashboard(paths, { port: o.port, poll: o.poll, log });
      for (const r of d.runs) log(`  run ${r.id}: ${r.name}  (${r.dir})`);
      process.stdout.write(`rlvr dashboard: ${d.url}\n`);
      log("press Ctrl+C to stop");
      const stop = () => {
        void d.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
