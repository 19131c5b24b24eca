// The sandbox against the host it runs on: descriptors the grader holds, teardown when a pool
// times a worker out mid-sandbox, and one cap on concurrent sandboxes for all pool workers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createVerifierPool } from "../../src/rewards/pool/pool.ts";
import { setSandboxConcurrency } from "../../src/rewards/code/sandbox.ts";
import { slotsInUse } from "../../src/rewards/code/slots.ts";
import { ownGroups } from "../../src/rewards/code/cgroup.ts";
import { sandboxSupport } from "../../src/rewards/code/probe.ts";

const support = sandboxSupport();
const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);
const sandboxVerifiers = fixture("sandbox-verifiers.ts").href;

// Descriptors 70 and 71 of the grader: a host secret (read) and a host file (append).
const PY_THIEF = `import os
got = []
for fd in (70, 71):
    try:
        got.append(os.read(fd, 100).decode())
    except OSError:
        pass
    try:
        os.write(fd, b"PWNED")
        got.append("wrote")
    except OSError:
        pass
for fd in range(3, 1024):
    try:
        os.fstat(fd)
        got.append("open fd %d" % fd)
    except OSError:
        pass
print(got)
`;
const JS_THIEF = `const fs = require("fs");
const got = [];
for (const fd of [70, 71]) {
  try { const b = Buffer.alloc(100); const n = fs.readSync(fd, b); got.push(b.subarray(0, n).toString()); } catch {}
  try { fs.writeSync(fd, "PWNED"); got.push("wrote"); } catch {}
}
console.log(JSON.stringify(got));
`;

function runGrader(programs: [string, string][]): { language: string; stdout: string; stderr: string; exitCode: number | null }[] {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-fd-test-"));
  try {
    writeFileSync(join(dir, "secret"), "TOP-SECRET-HOST-DATA");
    writeFileSync(join(dir, "log"), "");
    const grader = fileURLToPath(fixture("grade-with-fds.ts"));
    // bash opens the two descriptors without close-on-exec, as a parent process would hand them down.
    const r = spawnSync("bash", ["-c", `s="$1"; l="$2"; shift 2; exec "$0" --import tsx "$@" 70<"$s" 71>>"$l"`, process.execPath, join(dir, "secret"), join(dir, "log"), grader, ...programs.flat()], {
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(dir, "log"), "utf8"), "", "the program wrote to a host file through an inherited descriptor");
    return r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("exploit: a program cannot read or write through descriptors the grader inherited", { skip: !support.python, timeout: 90_000 }, () => {
  // With controls: ordinary programs under the same grader still run and answer.
  const [py, js, pyOk, jsOk] = runGrader([["python", PY_THIEF], ["javascript", JS_THIEF], ["python", "print(6 * 7)"], ["javascript", "console.log(6 * 7)"]]);
  assert.equal(py!.stdout.trim(), "[]", `python saw: ${py!.stdout} ${py!.stderr}`);
  assert.equal(js!.stdout.trim(), "[]", `javascript saw: ${js!.stdout} ${js!.stderr}`);
  assert.equal(pyOk!.stdout, "42\n");
  assert.equal(jsOk!.stdout, "42\n");
});

/** Everything the sandboxes of this process could leave behind, per kind. */
function leftovers(marker: string): string[] {
  const out: string[] = [];
  for (const p of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // (tsx's esbuild service, started by each worker thread, is left a zombie by any terminated worker.)
      if (Number(ppid) === process.pid && state === "Z" && !stat.includes("(esbuild)")) out.push(`zombie ${p} ${stat.slice(0, stat.lastIndexOf(")") + 1)}`);
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker)) out.push(`process ${p}`);
    } catch {
      /* gone */
    }
  }
  for (const n of readdirSync(tmpdir())) if (n.startsWith(`rlvr-code-${process.pid}-`)) out.push(`work dir ${n}`);
  for (const base of Object.values(ownGroups())) {
    try {
      for (const n of readdirSync(base)) if (n.startsWith(`rlvr-${process.pid}-`)) out.push(`cgroup ${join(base, n)}`);
    } catch {
      /* not readable */
    }
  }
  if (slotsInUse() > 0) out.push(`${slotsInUse()} sandbox slots still taken`);
  return out;
}

async function settle(marker: string): Promise<string[]> {
  const until = performance.now() + 10_000;
  let left = leftovers(marker);
  while (left.length && performance.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    left = leftovers(marker);
  }
  return left;
}

/** Whether the program whose command line holds `marker` is seen running within 4.5 s. */
async function started(marker: string): Promise<boolean> {
  const until = performance.now() + 4500;
  while (performance.now() < until) {
    if (leftovers(marker).some((l) => l.startsWith("process"))) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

test("a pool timeout, or closing the pool, mid-sandbox tears the sandbox down: no process, zombie, work dir, cgroup or slot left", { timeout: 120_000 }, async () => {
  const pool = createVerifierPool({ size: 1, timeoutMs: 60_000, modules: [sandboxVerifiers], preloadMath: false });
  try {
    await pool.ready();
    const marker = `hang-${process.pid}-${Date.now()}`;
    const pending = pool.run("test/sandbox-hang", [marker], { timeoutMs: 5000 });
    assert.ok(await started(marker), "the sandbox runs before the pool times out");
    assert.equal(((await pending) as { kind?: string }).kind, "timeout");
    assert.deepEqual(await settle(marker), []);
    // Control: the replacement worker runs sandboxes normally.
    const ok = await pool.run("test/sandbox-sleepers", [1, 10]);
    assert.equal(ok.ok, true, JSON.stringify(ok));
    // Closing the pool while a sandbox runs.
    const closing = `close-${process.pid}-${Date.now()}`;
    const left = pool.run("test/sandbox-hang", [closing]);
    assert.ok(await started(closing), "the sandbox runs before the pool is closed");
    await pool.close();
    assert.equal(((await left) as { kind?: string }).kind, "closed");
    assert.deepEqual(await settle(closing), []);
  } finally {
    await pool.close();
  }
});

/** Most programs running at the same moment, from their [start, end] times. */
function maxOverlap(spans: [number, number][]): number {
  const events = spans.flatMap(([a, b]) => [[a, 1], [b, -1]] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of events) most = Math.max(most, (now += d));
  return most;
}

test("one cap on concurrent sandboxes holds across all pool workers", { timeout: 120_000 }, async () => {
  const pool = createVerifierPool({ size: 3, timeoutMs: 60_000, modules: [sandboxVerifiers], preloadMath: false });
  /** Three workers each start two sandboxes at once; the most that ran together. */
  const peak = async (cap: number, ms: number) => {
    setSandboxConcurrency(cap);
    const outs = await Promise.all([0, 1, 2].map(() => pool.run("test/sandbox-sleepers", [2, ms])));
    const spans = outs.flatMap((o) => {
      assert.equal(o.ok, true, JSON.stringify(o));
      return (o as { value: [number, number][] }).value;
    });
    assert.equal(spans.length, 6);
    return maxOverlap(spans);
  };
  try {
    await pool.ready();
    // With a cap of 2 for the process, at most two run, whichever workers started them.
    assert.ok((await peak(2, 500)) <= 2);
    // Control: with room for six they do overlap (so the measure can see a broken cap).
    assert.ok((await peak(6, 1500)) >= 3);
  } finally {
    await pool.close();
    setSandboxConcurrency(2);
  }
});
