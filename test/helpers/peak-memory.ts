/**
 * Measure a run's peak memory: `node --import tsx test/helpers/peak-memory.ts <config.json>` trains
 * the config (parsed with parseRunConfig) and prints one JSON line {self, workers}: this process's
 * peak resident set (bytes, process.resourceUsage().maxRSS) and the largest peak resident set
 * (VmHWM of /proc/<pid>/status) of its child processes (the torch worker, with colocated vLLM
 * inside it), sampled after every RL step while they run. Linux only.
 */
import { readFileSync } from "node:fs";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

/** Child pids of `pid` (all threads' children). */
function children(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const line of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)) if (line) out.push(Number(line));
  } catch {
    // gone
  }
  return out;
}

/** VmHWM of `pid` in bytes (0 when gone). */
function peakOf(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

let workers = 0;
const sample = () => {
  for (const c of children(process.pid)) workers = Math.max(workers, peakOf(c));
};
const cfg = parseRunConfig(JSON.parse(readFileSync(process.argv[2]!, "utf8")) as unknown, process.argv[2]);
await train(cfg, { quiet: true, onEvent: (e) => void (e.type === "metrics" && sample()) });
console.log(JSON.stringify({ self: process.resourceUsage().maxRSS * 1024, workers }));
