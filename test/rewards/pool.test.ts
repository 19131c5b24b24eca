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
  assert.deepEqual((e as { value: unknown }).value, { reward: 0.25, echoed: 0.25 });
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

// Load failures: each of these hung forever before the pool failed every call on a load error
// (pump() resolved one queued call per worker) and had a load timeout (a looping module kept
// the calls waiting; an exiting one was respawned about twice a second).
const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).href;

async function allFailFast(modules: string[], opts: { size: number; loadTimeoutMs?: number }, pattern: RegExp): Promise<void> {
  const p = createVerifierPool({ size: opts.size, timeoutMs: 5000, modules, preloadMath: false, loadTimeoutMs: opts.loadTimeoutMs });
  try {
    const outs = await Promise.all([0, 1, 2, 3, 4].map((i) => p.run("test/echo", [i])));
    for (const o of outs) {
      assert.equal(o.ok, false);
      assert.equal((o as { kind: string }).kind, "error");
      assert.match((o as { message: string }).message, pattern);
    }
    assert.match(p.loadError ?? "", pattern);
    // Later calls fail at once, and no worker is respawned.
    const later = await p.run("test/echo", [9]);
    assert.match((later as { message: string }).message, pattern);
    assert.equal(p.stats.restarts, 0);
    await p.ready(); // settles instead of waiting for workers that will never be ready
  } finally {
    await p.close();
  }
}

test("a module that cannot be found fails every queued call, naming it", { timeout: 30_000 }, async () => {
  const missing = fixture("no-such-module.ts");
  await allFailFast([missing], { size: 1 }, /cannot load verifier module .*no-such-module\.ts/);
  await allFailFast([missing], { size: 2 }, /no-such-module\.ts/);
});

test("a module that throws while loading fails every call with its error", { timeout: 30_000 }, async () => {
  await allFailFast([fixture("throws-at-load.ts")], { size: 2 }, /throws-at-load\.ts: this module refuses to load/);
});

test("a module that never finishes loading fails every call at the load timeout, naming it", { timeout: 30_000 }, async () => {
  const t0 = performance.now();
  await allFailFast([hostile, fixture("loops-at-load.ts")], { size: 2, loadTimeoutMs: 3000 }, /loops-at-load\.ts did not finish loading within 3000 ms/);
  assert.ok(performance.now() - t0 < 20_000);
});

test("a module that exits while loading fails every call; its worker is not respawned", { timeout: 30_000 }, async () => {
  await allFailFast([fixture("exits-at-load.ts")], { size: 2 }, /died while loading .*exits-at-load\.ts \(worker exited with code 7\)/);
});

test("loadVerifierModules: imports the modules here; refuses bad ones with one line naming them", { timeout: 60_000 }, async () => {
  const { loadVerifierModules } = await import("../../src/rewards/pool/modules.ts");
  const { hasTask } = await import("../../src/tasks/index.ts");
  const { UserError } = await import("../../src/util/errors.ts");
  const { fileURLToPath } = await import("node:url");
  const { relative } = await import("node:path");
  // A relative path resolves against the working directory.
  const rel = relative(process.cwd(), fileURLToPath(new URL("../trainer/fixtures/hanging-task.ts", import.meta.url)));
  assert.equal(hasTask("hanging-maximum"), false);
  await loadVerifierModules([`./${rel}`]);
  assert.equal(hasTask("hanging-maximum"), true, "the task the module registers exists in the main process");
  for (const [name, pattern] of [
    ["no-such-module.ts", /^config error at rl\.verifierPool\.modules: cannot load verifier module .*no-such-module\.ts/],
    ["exits-at-load.ts", /^config error at rl\.verifierPool\.modules: a verifier pool worker died while loading .*exits-at-load\.ts/],
    ["loops-at-load.ts", /^config error at rl\.verifierPool\.modules: verifier module .*loops-at-load\.ts did not finish loading within 2000 ms/],
  ] as const) {
    await assert.rejects(loadVerifierModules([fixture(name)], { loadTimeoutMs: 2000 }), (e: Error) => {
      assert.ok(e instanceof UserError);
      assert.match(e.message, pattern);
      assert.equal(e.message.includes("\n"), false);
      return true;
    });
  }
});
