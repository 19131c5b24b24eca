/**
 * jax-js worker threads on Node (src/engines/embedded/node-workers.ts): a multi-threaded run
 * gives bit-for-bit the results of a single-threaded one, the pool really runs (workers started,
 * kernels answered off the main thread), RLVR_THREADS is parsed strictly, and importing jax-js
 * before the adapter degrades safely to one thread. Each run is its own process because jax-js
 * fixes its thread setup when it is imported.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { requestedThreads } from "../../src/engines/embedded/node-workers.ts";

const helpers = join(import.meta.dirname, "helpers");

function runProbe(script: string, env: Record<string, string>, args: string[] = []): { json: Record<string, unknown>; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(helpers, script), ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
  });
  assert.equal(r.status, 0, `${script} failed:\n${r.stderr}`);
  const lines = r.stdout.trim().split("\n");
  return { json: JSON.parse(lines.at(-1)!) as Record<string, unknown>, stderr: r.stderr };
}

test("two worker threads give bit-for-bit the single-threaded scores, gradients, step and samples", () => {
  const one = runProbe("thread-probe.ts", { RLVR_THREADS: "1" }, ["results"]).json;
  // The worker pool's message path (its replies are counted). The patch's synchronous dispatch gives
  // bit for bit this path's results (test/engines/jax-patch.test.ts), so 1 thread's too.
  const two = runProbe("thread-probe.ts", { RLVR_THREADS: "2", RLVR_JAX_SYNC: "off" }, ["results"]).json;
  const t1 = one.threads as { threads: number; adapter: boolean; started: number };
  const t2 = two.threads as { threads: number; adapter: boolean; started: number; replies: number };
  assert.equal(t1.threads, 1);
  assert.equal(t1.adapter, false);
  assert.equal(t1.started, 0);
  assert.equal(t2.threads, 2);
  assert.equal(t2.adapter, true);
  assert.equal(t2.started, 2, "jax-js started two worker threads");
  assert.ok(t2.replies > 100, `kernels ran on the workers (${t2.replies} replies)`);
  for (const key of ["logprobs", "entropy", "grads", "gradNorm", "samples", "after"]) {
    assert.deepEqual(two[key], one[key], `${key} differs between 2 threads and 1`);
  }
});

test("RLVR_THREADS: unset means the core count, 0 and 1 mean one thread, junk is an error", () => {
  assert.equal(requestedThreads(undefined, 8), 8);
  assert.equal(requestedThreads("", 8), 8);
  assert.equal(requestedThreads("0", 8), 1);
  assert.equal(requestedThreads("1", 8), 1);
  assert.equal(requestedThreads("3", 8), 3);
  assert.throws(() => requestedThreads("two", 8), /RLVR_THREADS must be a non-negative integer/);
  assert.throws(() => requestedThreads("-1", 8), /RLVR_THREADS/);
  assert.throws(() => requestedThreads("1.5", 8), /RLVR_THREADS/);
});

test("importing @jax-js/jax before the engine falls back to one thread and still computes", () => {
  const { json, stderr } = runProbe("late-import-probe.ts", { RLVR_THREADS: "2" });
  const threads = json.threads as { threads: number; adapter: boolean; reason?: string };
  assert.equal(threads.threads, 1);
  assert.equal(threads.adapter, false);
  assert.match(threads.reason ?? "", /imported before/);
  assert.match(stderr, /single-threaded/);
  assert.equal(json.finite, true);
  assert.equal(json.nonzero, true);
  assert.equal(json.x, 4094);
});
