/**
 * The run-directory lock: one process at a time writes a run directory.
 *
 * `<run>/.rlvr.lock` holds `{pid, host, since, purpose}` of the process that owns the directory.
 * It is created atomically (a hard link of a fully written temporary file, which fails when the
 * lock exists; `O_EXCL` where links are not supported), before anything else is written there.
 *
 * - A second start, or a `--resume`, of a directory whose lock belongs to a live process is
 *   refused with a RunLockError naming the holder (pid, host, since).
 * - A lock whose process is gone (same host, the pid is not running, or the pid now belongs to a
 *   process that started after the lock was taken) is stale: it is taken over, with a notice.
 *   Only one process can take a stale lock over (`.rlvr.lock.takeover` is itself an O_EXCL lock).
 * - A lock held on another host cannot be checked: it is refused; the message says how to clear it.
 * - `release()` removes the lock if it is still ours; it also runs at process exit (normal exit,
 *   `process.exit` after an error or a second Ctrl-C).
 */
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "../util/errors.ts";

/** File name of the lock inside a run directory. */
export const LOCK_FILE = ".rlvr.lock";

/** What a lock file says about its holder. */
export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
  /** "start" or "resume". */
  purpose: string;
}

/** A held lock. */
export interface RunLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Remove the lock if this process still holds it (idempotent). */
  release(): void;
}

/** The run directory is in use by another live process (or one on another host). */
export class RunLockError extends UserError {
  override name = "RunLockError";
  constructor(
    message: string,
    readonly holder: LockHolder | null,
  ) {
    super(message);
  }
}

export interface LockOptions {
  /** "start" (a fresh run) or "resume"; recorded in the lock and used in messages. */
  purpose?: "start" | "resume";
  /** Receives the one-line notice when a stale lock is taken over (default: stderr). */
  notice?: (message: string) => void;
}

/** Locks this process holds, by path: released at exit. */
const held = new Map<string, RunLock>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const l of [...held.values()]) l.release();
  });
}

/** Parse a lock file's text; null when it is not a lock written by acquireRunLock. */
function parseHolder(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.pid === "number" && Number.isInteger(h.pid) && h.pid > 0 && typeof h.host === "string" && typeof h.since === "string") {
      return { pid: h.pid, host: h.host, since: h.since, purpose: String(h.purpose ?? "start") };
    }
  } catch {
    /* not JSON */
  }
  return null;
}

function readHolder(path: string): { text: string; holder: LockHolder | null } | null {
  try {
    const text = readFileSync(path, "utf8");
    return { text, holder: parseHolder(text) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** Start time of a process (ms since the epoch) from /proc, or null where /proc does not tell. */
function processStartMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]); // field 22 of stat: starttime, in clock ticks after boot
    const btime = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    if (!Number.isFinite(ticks) || !btime) return null;
    return Number(btime[1]) * 1000 + (ticks / 100) * 1000; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** Whether the holder's process is still running (only answerable on the same host). */
function holderAlive(h: LockHolder): boolean {
  if (h.pid === process.pid) return [...held.values()].some((l) => l.holder.since === h.since);
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  // The pid is in use; if that process started after the lock was taken, the pid was reused.
  const started = processStartMs(h.pid);
  const since = Date.parse(h.since);
  return !(started !== null && Number.isFinite(since) && started > since + 2000);
}

function describeHolder(h: LockHolder): string {
  return `pid ${h.pid} on ${h.host} since ${h.since}`;
}

/**
 * Create `path` holding `text` only if it does not exist; the file appears with its whole text.
 * @returns false when the file exists.
 */
function createExclusive(path: string, text: string): boolean {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, text);
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EXDEV") throw e;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
  // File systems without hard links: O_EXCL (a reader may briefly see an empty file; readers retry).
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Take the lock of run directory `dir` (created if missing) for this process.
 * @returns the held lock; call `release()` when the run ends (it also runs at process exit).
 * @throws RunLockError when a live process holds it, e.g.
 *   `run directory runs/a is in use by pid 4242 on host1 since 2026-01-01T10:00:00.000Z (lock runs/a/.rlvr.lock); wait for that run to end or stop it, or set another out (--out)`
 */
export function acquireRunLock(dir: string, opts: LockOptions = {}): RunLock {
  const purpose = opts.purpose ?? "start";
  const notice = opts.notice ?? ((m: string) => process.stderr.write(m + "\n"));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const mine: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), purpose };
  const text = JSON.stringify(mine) + "\n";
  const refuse = (h: LockHolder | null, why: string): never => {
    const fix =
      purpose === "resume"
        ? "stop that run before resuming it (Ctrl-C writes a checkpoint)"
        : "wait for that run to end or stop it, or set another out (--out)";
    throw new RunLockError(`run directory ${dir} is in use by ${why} (lock ${path}); ${fix}`, h);
  };

  for (let attempt = 0; attempt < 50; attempt++) {
    if (createExclusive(path, text)) return hold(path, mine);
    const seen = readHolder(path);
    if (seen === null) continue; // released meanwhile: try again
    const h = seen.holder;
    if (h === null) {
      // Being written (O_EXCL fallback) or not a lock of ours: give a writer a moment, then refuse.
      if (attempt < 20) {
        sleep(50);
        continue;
      }
      refuse(null, `an unreadable lock file (${JSON.stringify(seen.text.slice(0, 80))}); delete it if no run is using ${dir}`);
    }
    if (h!.host !== mine.host) refuse(h, `${describeHolder(h!)}, another host, which this host cannot check; if that run has ended, delete the lock file`);
    if (holderAlive(h!)) refuse(h, describeHolder(h!));
    // Stale: take it over, one process at a time.
    if (takeOver(path, seen.text)) {
      notice(`run lock: taking over the stale lock of ${dir} left by ${describeHolder(h!)}, which is no longer running`);
    }
  }
  throw new RunLockError(`run directory ${dir}: could not take the lock ${path} after 50 attempts; another process keeps taking it`, null);
}

/** Remove the stale lock whose text is `staleText`, under the takeover lock. @returns whether it was removed by us. */
function takeOver(path: string, staleText: string): boolean {
  const guard = `${path}.takeover`;
  const guardText = JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), purpose: "takeover" }) + "\n";
  for (let i = 0; i < 40; i++) {
    if (createExclusive(guard, guardText)) {
      try {
        const now = readHolder(path);
        if (now === null || now.text !== staleText) return false; // someone else took it over meanwhile
        unlinkSync(path);
        return true;
      } finally {
        unlinkSync(guard);
      }
    }
    const g = readHolder(guard);
    if (g?.holder && g.holder.host === hostname() && !holderAlive(g.holder)) {
      try {
        if (readFileSync(guard, "utf8") === g.text) unlinkSync(guard);
      } catch {
        /* gone */
      }
      continue;
    }
    sleep(50);
  }
  return false;
}

function hold(path: string, holder: LockHolder): RunLock {
  installExitHook();
  const lock: RunLock = {
    path,
    holder,
    release() {
      if (held.get(resolve(path)) !== lock) return;
      held.delete(resolve(path));
      try {
        const now = readHolder(path);
        if (now?.holder && now.holder.pid === holder.pid && now.holder.since === holder.since) unlinkSync(path);
      } catch {
        /* the directory went away: nothing to release */
      }
    },
  };
  held.set(resolve(path), lock);
  return lock;
}

/** The holder recorded in `<dir>/.rlvr.lock`, or null when the directory is not locked. */
export function runLockHolder(dir: string): LockHolder | null {
  const p = join(dir, LOCK_FILE);
  return existsSync(p) ? (readHolder(p)?.holder ?? null) : null;
}
