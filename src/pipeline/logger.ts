/**
 * The run directory's logs: metrics.jsonl (one line per step), samples.jsonl (a few rollouts per
 * step), and a one-line console summary.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export class RunLogger {
  constructor(readonly dir: string, private readonly quiet = false) {
    mkdirSync(dir, { recursive: true });
  }

  /** Append one metrics record: {stage, step, ...numbers}. */
  metrics(record: Record<string, unknown>): void {
    appendFileSync(join(this.dir, "metrics.jsonl"), JSON.stringify({ time: new Date().toISOString(), ...record }) + "\n");
  }

  /** Append rollout samples (prompt, response, reward, ...). */
  samples(records: Record<string, unknown>[]): void {
    if (records.length === 0) return;
    appendFileSync(join(this.dir, "samples.jsonl"), records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  }

  /** A console line (suppressed when quiet). */
  info(msg: string): void {
    if (!this.quiet) process.stderr.write(msg + "\n");
  }
}
