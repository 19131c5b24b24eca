// The run-directory lock: two fresh starts on one `out` and a `--resume` of a live run are refused
// with one line naming the holder, and cannot interleave steps in metrics.jsonl; a refused start
// leaves the live run's config.yaml alone; a dead process's lock is taken over with a notice.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { acquireRunLock, LOCK_FILE, RunLockError, runLockHolder } from "../../src/trainer/lock.ts";
import { configYaml, hasCheckpoint, lines, rlvr, tinyConfig, waitFor, type Exit } from "./helpers.ts";

process.env.RLVR_FROM_SOURCE = "1"; // the CLI children run the current sources
const root = mkdtempSync(join(tmpdir(), "rlvr-lock-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** pid of a process that has exited (so it is not running). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

/** Every (stage, step) of metrics.jsonl's step lines appears once, in order: no two writers. */
function assertOneWriter(dir: string, sft: number, rl: number): void {
  const recs = lines(join(dir, "metrics.jsonl"))
    .map((l) => JSON.parse(l) as { stage: string; step: number; loss?: number; "reward/mean"?: number })
    .filter((r) => (r.stage === "sft" && r.loss !== undefined) || (r.stage === "rl" && r["reward/mean"] !== undefined));
  const steps = (stage: string) => recs.filter((r) => r.stage === stage).map((r) => r.step);
  assert.deepEqual(steps("sft"), Array.from({ length: sft }, (_, i) => i + 1), "sft steps once each");
  assert.deepEqual(steps("rl"), Array.from({ length: rl }, (_, i) => i + 1), "rl steps once each");
}

function assertRefusedLine(e: Exit, dir: string): void {
  assert.equal(e.code, 1, e.stderr);
  const err = e.stderr.trim();
  assert.equal(err.split("\n").length, 1, `one line: ${err}`);
  assert.match(err, new RegExp(`^error: run directory ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is in use by pid \\d+ on ${hostname()} since \\d{4}-\\d\\d-\\d\\dT`));
  assert.doesNotMatch(err, /\n\s+at /);
}

test("in-process: a held lock refuses a second holder, naming it; released, it can be taken again", () => {
  const dir = join(root, "unit");
  const a = acquireRunLock(dir);
  const h = runLockHolder(dir)!;
  assert.equal(h.pid, process.pid);
  assert.equal(h.host, hostname());
  assert.throws(
    () => acquireRunLock(dir, { purpose: "resume" }),
    (e: Error) => e instanceof RunLockError && e.message === `run directory ${dir} is in use by pid ${process.pid} on ${hostname()} since ${h.since} (lock ${join(dir, LOCK_FILE)}); stop that run before resuming it (Ctrl-C writes a checkpoint)`,
  );
  a.release();
  assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  acquireRunLock(dir).release();
});

test("in-process: a dead process's lock is taken over with a notice; another host's is refused", () => {
  const dir = join(root, "stale");
  acquireRunLock(dir).release();
  const pid = deadPid();
  const since = new Date(Date.now() - 60_000).toISOString();
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, host: hostname(), since, purpose: "start" }));
  const notices: string[] = [];
  const l = acquireRunLock(dir, { notice: (m) => notices.push(m) });
  assert.deepEqual(notices, [`run lock: taking over the stale lock of ${dir} left by pid ${pid} on ${hostname()} since ${since}, which is no longer running`]);
  assert.equal(runLockHolder(dir)!.pid, process.pid);
  l.release();
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, host: "elsewhere.example", since, purpose: "start" }));
  assert.throws(() => acquireRunLock(dir), /is in use by pid \d+ on elsewhere\.example since .*another host, which this host cannot check; if that run has ended, delete the lock file/);
});

test("the lock is released when a run fails and when the process exits while holding it", { timeout: 120_000 }, async () => {
  const { train } = await import("../../src/trainer/run.ts");
  const { parseRunConfig } = await import("../../src/config/schema.ts");
  const out = join(root, "fails");
  const cfg = parseRunConfig({ ...tinyConfig(out), data: { task: "no-such-task" } });
  await assert.rejects(train(cfg, { quiet: true }), /unknown task "no-such-task"/);
  assert.equal(existsSync(join(out, LOCK_FILE)), false, "released after an error");
  // process.exit with the lock held (a second Ctrl-C, a fatal error in the CLI): the exit hook removes it.
  const dir = join(root, "exits");
  const script = `import { acquireRunLock } from ${JSON.stringify(new URL("../../src/trainer/lock.ts", import.meta.url).href)}; acquireRunLock(${JSON.stringify(dir)}); process.exit(3);`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 3, r.stderr);
  assert.equal(existsSync(dir), true);
  assert.equal(existsSync(join(dir, LOCK_FILE)), false, "released at exit");
});

test("two fresh starts on one out: one is refused at once, the other's metrics have each step once", { timeout: 300_000 }, async () => {
  const out = join(root, "race-start");
  const cfg = join(root, "race-start.yaml");
  writeFileSync(cfg, configYaml(tinyConfig(out, { checkpoint: { every: 0, keepLast: 1 } })));
  const [a, b] = await Promise.all([rlvr(["train", cfg]).done, rlvr(["train", cfg]).done]);
  const [won, lost] = a.code === 0 ? [a, b] : [b, a];
  assert.equal(won.code, 0, won.stderr);
  assertRefusedLine(lost, out);
  assertOneWriter(out, 6, 6);
  assert.equal(existsSync(join(out, LOCK_FILE)), false, "the lock is released at the end");
});

test("--resume of a live run and a second start on it are refused; the live run's config.yaml is kept", { timeout: 300_000 }, async () => {
  const out = join(root, "race-resume");
  const cfg = join(root, "race-resume.yaml");
  const other = join(root, "other.yaml");
  // 40 RL steps: the live run must outlast the start-up of the two refused processes.
  const long = (o: Partial<Parameters<typeof tinyConfig>[1]> = {}) => {
    const c = tinyConfig(out, o);
    return { ...c, rl: { ...c.rl!, steps: 40 }, eval: { every: 0 } };
  };
  writeFileSync(cfg, configYaml(long()));
  writeFileSync(other, configYaml(long({ seed: 99 })));
  const live = rlvr(["train", cfg]);
  await waitFor(() => hasCheckpoint(out, 2), live.done, "checkpoint step-2");
  const config = readFileSync(join(out, "config.yaml"), "utf8");
  const [resumed, second] = await Promise.all([rlvr(["train", "--resume", out]).done, rlvr(["train", other]).done]);
  assertRefusedLine(resumed, out);
  assert.match(resumed.stderr, /stop that run before resuming it/);
  assertRefusedLine(second, out);
  assert.equal(readFileSync(join(out, "config.yaml"), "utf8"), config, "a refused start does not write config.yaml");
  const e = await live.done;
  assert.equal(e.code, 0, e.stderr);
  assertOneWriter(out, 6, 40);
});

test("a run killed with SIGKILL leaves a stale lock; --resume takes it over with a notice", { timeout: 300_000 }, async () => {
  const out = join(root, "killed");
  const cfg = join(root, "killed.yaml");
  writeFileSync(cfg, configYaml(tinyConfig(out)));
  const k = rlvr(["train", cfg]);
  await waitFor(() => hasCheckpoint(out, 2), k.done, "checkpoint step-2");
  k.child.kill("SIGKILL");
  await k.done;
  assert.equal(runLockHolder(out)?.pid, k.child.pid, "the killed run's lock is left behind");
  const r = await rlvr(["train", "--resume", out]).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`run lock: taking over the stale lock of .* left by pid ${k.child.pid} on ${hostname()} since .*, which is no longer running`));
  assert.equal(existsSync(join(out, LOCK_FILE)), false);
});
