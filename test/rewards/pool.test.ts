import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createVerifierPool } from "../../src/rewards/pool/pool.ts";
import { composeRewards, countEvents } from "../../src/rewards/compose.ts";
import { poolComponent } from "../../src/rewards/components.ts";

const hostile = new URL("./fixtures/hostile-verifiers.ts", import.meta.url).href;
const pool = createVerifierPool({ size: 2, timeoutMs: 800, modules: [hostile], preloadMath: false });
after(() => pool.close());

test("runs built-in and registered verifiers by name", async () => {
  const r = await pool.run("choice", ["The answer is (C).", "C"]);
  assert.equal(r.ok, true);
  assert.equal((r as { value: { correct: boolean } }).value.correct, true);
  const e = await pool.run("test/echo", [0.25]);
  assert.deepEqual((e as { value: unknown }).value, { score: 0.25, echoed: 0.25 });
  const u = await pool.run("nope", []);
  assert.equal(u.ok, false);
  assert.match((u as { message: string }).message, /unknown verifier "nope"/);
});

test("a spinning verifier is stopped at the timeout and its worker replaced", async () => {
  const before = pool.stats.restarts;
  const t0 = performance.now();
  const r = await pool.run("test/spin", [], { timeoutMs: 300 });
  assert.equal(r.ok, false);
  assert.equal((r as { kind: string }).kind, "timeout");
  assert.ok(performance.now() - t0 < 2000);
  assert.equal(pool.stats.restarts, before + 1);
  const again = await pool.run("test/echo", [1]);
  assert.equal(again.ok, true, "the pool keeps working after a timeout");
});

test("crashes (uncaught async error, process.exit) resolve as crashes; throws as errors", async () => {
  const c = await pool.run("test/crash-async", []);
  assert.equal((c as { kind: string }).kind, "crash");
  const x = await pool.run("test/exit", []);
  assert.equal((x as { kind: string }).kind, "crash");
  const restarts = pool.stats.restarts;
  const t = await pool.run("test/throw", []);
  assert.equal((t as { kind: string }).kind, "error");
  assert.equal(pool.stats.restarts, restarts, "a throwing verifier does not cost a worker");
  assert.ok(pool.stats.crashes >= 2);
});

test("many concurrent calls, some hostile, all resolve", async () => {
  const names = ["test/echo", "test/spin", "test/echo", "test/throw", "test/sleep", "test/echo"];
  const outs = await Promise.all(names.map((n, i) => pool.run(n, n === "test/sleep" ? [20] : [i], { timeoutMs: 400 })));
  assert.deepEqual(outs.map((o) => (o.ok ? "ok" : o.kind)), ["ok", "timeout", "ok", "error", "ok", "ok"]);
});

test("poolComponent: timeouts and crashes give the fallback reward and counted events", async () => {
  const fn = composeRewards({
    components: [
      poolComponent(pool, {
        name: "v",
        verifier: "test/echo",
        args: (s) => [Number(s.response)],
      }),
      poolComponent(pool, {
        name: "hostile",
        verifier: "test/spin",
        args: () => [],
        timeoutMs: 200,
        fallback: -1,
        weight: 0,
      }),
      poolComponent(pool, { name: "crashy", verifier: "test/crash-async", args: () => [], weight: 0 }),
    ],
  });
  const out = await fn({ prompt: "p", responses: ["0.5", "1"], example: null });
  assert.deepEqual(out.total, [0.5, 1]);
  assert.deepEqual(out.components.hostile, [-1, -1]);
  assert.deepEqual(out.components.crashy, [0, 0]);
  const counts = countEvents(out.events);
  assert.equal(counts["verifier/timeouts"], 2);
  assert.equal(counts["verifier/crashes"], 2);
});

test("close() settles pending calls and later calls", async () => {
  const p2 = createVerifierPool({ size: 1, timeoutMs: 5000, modules: [hostile], preloadMath: false });
  const pending = p2.run("test/sleep", [3000]);
  await new Promise((r) => setTimeout(r, 50));
  await p2.close();
  const r = await pending;
  assert.equal((r as { kind: string }).kind, "closed");
  assert.equal(((await p2.run("test/echo", [1])) as { kind: string }).kind, "closed");
});
