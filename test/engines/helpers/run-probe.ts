/** Runs a probe script of test/engines/helpers in its own process (jax-js fixes its threads when it loads) and parses its last stdout line as JSON. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export function runProbe(script: string, env: Record<string, string>, args: string[] = []): Record<string, unknown> {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, script), ...args], { env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  assert.equal(r.status, 0, `${script} failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
}
