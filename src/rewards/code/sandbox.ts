/**
 * Run one untrusted program in a separate, limited process.
 *
 * Every launcher chain starts with `bash -c <close every inherited descriptor but those listed;
 * exec the rest>` (closeFdsArgs), since neither bubblewrap nor Node closes descriptors this process
 * inherited without close-on-exec. With bubblewrap (see probe.ts; the normal case), the rest is
 *   [setpriv --reuid=<random uid>]  bwrap <namespaces> <read-only root> --tmpfs /work …
 *     --seccomp <filter>  prlimit --as --nproc --fsize --nofile --cpu --core --  <interpreter> …
 * and the program sees: its own user (uid 1000 inside, a random unprivileged uid outside when we
 * are root), pid 2 in its own pid namespace with a fresh /proc, no network interface and no way to
 * create a socket, its own IPC objects, a root holding only the interpreter and its libraries
 * (read-only), and size-capped private tmpfs at /work (its working directory, holding read-only
 * copies of the host work dir's files), /tmp and /dev/shm that vanish with the sandbox. The
 * rlimits are set inside the sandbox's own user namespace, so they bind per sandbox, not per
 * host uid (Linux ≥ 5.14 counts RLIMIT_NPROC per user namespace); where we are root with
 * writable cgroup v1 hierarchies, a control group per sandbox also bounds the memory of all its
 * processes together, its task count and its CPU (cgroup.ts).
 *
 * Without bubblewrap (fallback, weaker; a one-time warning says so):
 *   unshare --net [--pid --fork --kill-child --mount --mount-proc]  prlimit …  [setpriv --reuid=<random uid>]  <interpreter>
 * plus Node's permission model and, for Python harness runs, an audit hook (harness.ts).
 *
 * Always: one cap on concurrent sandboxes shared by every thread of the process (slots.ts), a
 * teardown a verifier pool can run for a worker it terminates (abortSandboxes,
 * reclaimThreadSandboxes), a fresh host work dir deleted afterwards, a minimal environment, a wall-clock timeout
 * that SIGKILLs the whole process group, and caps on captured output (exceeding them kills it).
 * Optionally a results channel: file descriptor 3 inside the program, read separately from stdout.
 */
import { spawn } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import { bwrapNamespaces, randomUid, sandboxSupport, setprivArgs, which, type SandboxSupport } from "./probe.ts";
import { rootArgs } from "./rootfs.ts";
import { ownGroups, removeGroupDirs, SandboxGroup } from "./cgroup.ts";
import { acquireSlot, killThreadSandboxes, setSlotLimit, threadSlots } from "./slots.ts";

/** Resource limits of one sandboxed process. */
export interface SandboxLimits {
  /** Wall-clock limit in ms; the process group is SIGKILLed when it passes. Default 5000. */
  timeoutMs: number;
  /** Memory in MiB: RLIMIT_AS for Python; V8 old-space for Node (its RLIMIT_AS gets +768 MiB of
   *  headroom for V8's address-space reservations). Default 256. */
  memoryMb: number;
  /** Bytes of stdout and of stderr kept; more output kills the program. Default 1 MiB. */
  maxOutputBytes: number;
  /** Largest file the program may write (RLIMIT_FSIZE), bytes; also the size of each private
   *  tmpfs (/work, /tmp, /dev/shm) under bubblewrap. Default 8 MiB. */
  maxFileBytes: number;
  /** RLIMIT_NPROC (processes + threads of the sandbox). Default 64. */
  maxProcesses: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  timeoutMs: 5000,
  memoryMb: 256,
  maxOutputBytes: 1 << 20,
  maxFileBytes: 8 << 20,
  maxProcesses: 64,
};

/** Largest results record read from file descriptor 3, bytes. */
const MAX_RESULT_BYTES = 8 << 20;

export type Language = "python" | "javascript";

/** Outcome of one sandboxed process. */
export interface SandboxResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** What the program wrote to file descriptor 3 (only with `spec.resultFd`). */
  results: string;
  timedOut: boolean;
  outputLimitExceeded: boolean;
  durationMs: number;
}

/** A throw-away host directory; `files` are written into it before the run. */
export interface Workdir {
  path: string;
  dispose(): void;
}

/**
 * Create a fresh private directory (under os.tmpdir(), mode 0700) holding `files`. Under
 * bubblewrap its files appear read-only in the program's /work; in the fallback it is the
 * program's working directory. Call dispose() when done (idempotent, never throws).
 */
export function makeWorkdir(files: Record<string, string>): Workdir {
  const path = mkdtempSync(join(tmpdir(), workdirPrefix(threadId)));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  chmodSync(path, 0o700);
  let gone = false;
  return {
    path,
    dispose() {
      if (gone) return;
      gone = true;
      try {
        rmSync(path, { recursive: true, force: true, maxRetries: 2 });
      } catch {
        /* best effort */
      }
    },
  };
}

/**
 * Change how many sandboxed programs may run at once in this process — one cap shared by the
 * main thread and every verifier-pool worker (slots.ts). Default: available cores.
 */
export function setSandboxConcurrency(n: number): void {
  setSlotLimit(n);
}

/** One program to run: interpreter arguments after the interpreter itself. */
export interface SandboxSpec {
  language: Language;
  /** Host work dir (from makeWorkdir). */
  workdir: string;
  /** Script path (relative to the work dir) and its arguments. */
  args: string[];
  stdin?: string;
  env?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
  /** Open a results channel on file descriptor 3 (see SandboxResult.results). */
  resultFd?: boolean;
}

/** Where the work dir appears inside a bubblewrap sandbox. */
export const SANDBOX_WORKDIR = "/work";

function interpreterArgs(spec: SandboxSpec, support: SandboxSupport, workdir: string, lim: SandboxLimits): string[] {
  const argv: string[] = [];
  if (spec.language === "javascript") {
    argv.push(support.node, "--no-warnings", `--max-old-space-size=${Math.max(16, lim.memoryMb)}`, "--stack-size=2048");
    if (support.nodePermissionFlag) argv.push(support.nodePermissionFlag, `--allow-fs-read=${workdir}`, `--allow-fs-write=${workdir}`);
  } else {
    if (!support.python) throw new Error("sandbox: no usable python3 on this machine (run `rlvr doctor`)");
    argv.push(support.python, "-I", "-B");
  }
  return argv;
}

function prlimitArgs(binary: string, spec: SandboxSpec, lim: SandboxLimits): string[] {
  const mem = lim.memoryMb * 1024 * 1024;
  const as = spec.language === "javascript" ? mem + 768 * 1024 * 1024 : mem;
  return [binary, `--as=${as}`, `--nproc=${lim.maxProcesses}`, `--fsize=${lim.maxFileBytes}`, "--nofile=256", "--core=0", `--cpu=${Math.ceil(lim.timeoutMs / 1000) + 1}`, "--"];
}

/**
 * Build the full argv (launcher chain + interpreter). Exposed for tests and `rlvr doctor`.
 * @param uid host uid the program runs as when we are root (random per run by default)
 * Under bubblewrap the seccomp filter is read from file descriptor 4 (runSandboxed supplies it).
 */
export function sandboxCommand(spec: SandboxSpec, support: SandboxSupport = sandboxSupport(), uid: number = randomUid()): string[] {
  const lim = { ...DEFAULT_LIMITS, ...spec.limits };
  const b = support.bwrap;
  if (b) {
    const argv: string[] = [...(b.dropUid ? setprivArgs(uid) : []), b.path, ...bwrapNamespaces(b), ...rootArgs(b.root)];
    const size = String(Math.max(1 << 20, lim.maxFileBytes));
    argv.push("--proc", "/proc", "--dev", "/dev");
    for (const dir of ["/tmp", "/dev/shm", SANDBOX_WORKDIR]) argv.push(...(b.tmpfsSize ? ["--size", size] : []), "--tmpfs", dir);
    let names: string[] = [];
    try {
      names = readdirSync(spec.workdir);
    } catch {
      /* an empty work dir */
    }
    for (const name of names) argv.push("--ro-bind", join(spec.workdir, name), `${SANDBOX_WORKDIR}/${name}`);
    argv.push("--remount-ro", "/", "--chdir", SANDBOX_WORKDIR, "--clearenv");
    for (const [k, v] of Object.entries(sandboxEnv(SANDBOX_WORKDIR, "/tmp", spec.env))) argv.push("--setenv", k, v);
    if (b.seccomp) argv.push("--seccomp", "4");
    // With control groups: bwrap reports its child's pid on fd 5 and waits on fd 6 until that
    // child has been moved into the sandbox's groups (runSandboxed).
    if (Object.keys(b.cgroups).length) argv.push("--info-fd", "5", "--block-fd", "6");
    if (b.prlimit) argv.push(...prlimitArgs(b.prlimit, spec, lim));
    argv.push(...interpreterArgs(spec, support, SANDBOX_WORKDIR, lim), ...spec.args);
    return argv;
  }
  const argv: string[] = [...support.unshareArgs];
  if (support.prlimit) argv.push(...prlimitArgs("prlimit", spec, lim));
  if (support.dropUid) argv.push(...setprivArgs(uid));
  argv.push(...interpreterArgs(spec, support, spec.workdir, lim), ...spec.args);
  return argv;
}

function sandboxEnv(home: string, tmp: string, extra: Record<string, string> | undefined): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    PYTHONIOENCODING: "utf-8",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONHASHSEED: "0",
    ...extra,
  };
}

let warned = false;
/** Print, once per process, that the fallback sandbox is in use and why. */
function warnFallback(support: SandboxSupport): void {
  if (support.bwrap) return;
  if (process.env.RLVR_SANDBOX === "bwrap") throw new Error(`sandbox: RLVR_SANDBOX=bwrap but bubblewrap does not work here: ${support.notes.join("; ")}`);
  if (warned) return;
  warned = true;
  process.stderr.write(
    "warning: code sandbox without bubblewrap: programs see the host's files and processes (weaker isolation; install the `bubblewrap` package, see `rlvr doctor`)\n",
  );
}

/** Hand the work dir to the uid the program runs as (fallback, or bwrap started as that uid). */
function chownWorkdir(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (!lstatSync(p).isSymbolicLink()) chownSync(p, uid, uid);
  }
}

/**
 * Run a program under the sandbox and capture its output.
 * Never rejects for anything the program does (crash, timeout, huge output); rejects only when
 * the launcher itself cannot be started (e.g. no python3 for a Python program).
 */
export async function runSandboxed(spec: SandboxSpec, support: SandboxSupport = sandboxSupport()): Promise<SandboxResult> {
  const lim = { ...DEFAULT_LIMITS, ...spec.limits };
  warnFallback(support);
  if (spec.language === "javascript" && !support.bwrap) {
    // Fallback: a network namespace (if any) does not cover unix sockets bound to host paths, and
    // Node 20's permission model has no network permission, so preload a module that makes
    // sockets and DNS throw (in-process, weaker than bubblewrap's seccomp filter).
    const file = join(spec.workdir, ".rlvr-netblock.cjs");
    writeFileSync(file, NODE_NETBLOCK);
    spec = { ...spec, args: ["--require", file, ...spec.args] };
  }
  if (refusing) throw new Error("sandbox: this thread is being torn down; no new sandboxes");
  const uid = randomUid();
  if (support.bwrap ? support.bwrap.dropUid : support.dropUid) chownWorkdir(spec.workdir, uid);
  const argv = sandboxCommand(spec, support, uid);
  const seccomp = support.bwrap?.seccomp ?? null;
  const cgroups = support.bwrap && Object.keys(support.bwrap.cgroups).length ? support.bwrap.cgroups : null;
  const slot = await acquireSlot();
  if (refusing) {
    slot.release();
    throw new Error("sandbox: this thread is being torn down; no new sandboxes");
  }
  const group = cgroups
    ? new SandboxGroup(cgroups, `${groupPrefix(threadId)}${++groupCount}`, {
        memoryBytes: (2 * lim.memoryMb + 128) * 1024 * 1024 + 3 * Math.max(1 << 20, lim.maxFileBytes),
        pids: lim.maxProcesses + 4,
        cpus: 1,
      })
    : null;
  // Descriptors the launcher chain is handed on purpose (the stdio list below); bash closes the rest.
  const keep = [0, 1, 2, ...(spec.resultFd ? [3] : []), ...(seccomp ? [4] : []), ...(group ? [5, 6] : [])];
  let kill: (() => void) | null = null;
  try {
    return await new Promise<SandboxResult>((resolve, reject) => {
      const started = performance.now();
      let child;
      try {
        const launch = [...closeFdsArgs(keep), ...argv];
        child = spawn(launch[0]!, launch.slice(1), {
          cwd: support.bwrap ? "/" : spec.workdir,
          env: support.bwrap ? { PATH: process.env.PATH ?? "/usr/bin:/bin" } : sandboxEnv(spec.workdir, spec.workdir, spec.env),
          detached: true,
          stdio: ["pipe", "pipe", "pipe", spec.resultFd ? "pipe" : "ignore", seccomp ? "pipe" : "ignore", ...(group ? (["pipe", "pipe"] as const) : [])],
        });
      } catch (e) {
        reject(e);
        return;
      }
      if (child.pid !== undefined) slot.setPid(child.pid);
      kill = () => killTree();
      live.add(kill);
      if (group) {
        const extra = child.stdio as unknown as (NodeJS.ReadableStream & NodeJS.WritableStream)[];
        const info = extra[5]!;
        const unblock = extra[6]!;
        unblock.on("error", () => {});
        info.on("error", () => {});
        let text = "";
        let attached = false;
        info.on("data", (b: Buffer) => {
          text += b.toString("utf8");
          const m = text.match(/"child-pid":\s*(\d+)/);
          if (!m || attached) return;
          attached = true;
          try {
            group.attach(Number(m[1]));
          } catch {
            // Not attached: the program would run without its group; refuse to run it instead.
            killTree();
            return;
          }
          unblock.end("x");
        });
      }
      if (seccomp) {
        const s = child.stdio[4] as NodeJS.WritableStream & { on(e: string, f: () => void): void };
        s.on("error", () => {});
        s.end(seccomp);
      }
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const res: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let resBytes = 0;
      let timedOut = false;
      let outputLimitExceeded = false;
      let done = false;
      let exitCode: number | null = null;
      let signal: string | null = null;

      const killTree = () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          try {
            child.kill("SIGKILL");
          } catch {
            /* already gone */
          }
        }
      };
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(hardStop);
        for (const s of child.stdio) (s as { destroy?: () => void } | null)?.destroy?.();
        resolve({
          exitCode,
          signal,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
          results: Buffer.concat(res).toString("utf8"),
          timedOut,
          outputLimitExceeded,
          durationMs: performance.now() - started,
        });
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killTree();
      }, lim.timeoutMs);
      // If something still holds the pipes after the kill, stop waiting anyway.
      const hardStop = setTimeout(() => {
        timedOut = true;
        killTree();
        finish();
      }, lim.timeoutMs + 2000);

      const capture = (chunks: Buffer[], max: number, count: () => number, add: (n: number) => void) => (b: Buffer) => {
        if (count() + b.length > max) {
          chunks.push(b.subarray(0, Math.max(0, max - count())));
          add(max - count());
          if (!outputLimitExceeded) {
            outputLimitExceeded = true;
            killTree();
          }
          return;
        }
        add(b.length);
        chunks.push(b);
      };
      child.stdout!.on("data", capture(out, lim.maxOutputBytes, () => outBytes, (n) => (outBytes += n)));
      child.stderr!.on("data", capture(err, lim.maxOutputBytes, () => errBytes, (n) => (errBytes += n)));
      if (spec.resultFd) {
        const r = child.stdio[3] as NodeJS.ReadableStream;
        r.on("data", capture(res, MAX_RESULT_BYTES, () => resBytes, (n) => (resBytes += n)));
        r.on("error", () => {});
      }
      child.stdin!.on("error", () => {
        /* program exited without reading its input */
      });
      child.on("error", (e) => {
        if (!done) {
          clearTimeout(timer);
          clearTimeout(hardStop);
          done = true;
          reject(e);
        }
      });
      child.on("exit", (code, sig) => {
        exitCode = code;
        signal = sig;
        // Reaped: its pid may be reused, so another thread must no longer signal that group.
        slot.setPid(0);
        // Kill anything left in the group (a daemonised grandchild), then let the pipes drain:
        // 'close' normally follows at once; a loaded machine may take a while to deliver the
        // last output, and a grandchild that escaped the group would hold them open forever.
        killTree();
        setTimeout(finish, 1500);
      });
      child.on("close", (code, sig) => {
        exitCode ??= code;
        signal ??= sig;
        finish();
      });
      child.stdin!.end(spec.stdin ?? "");
    });
  } finally {
    if (kill) live.delete(kill);
    await group?.dispose();
    slot.release();
  }
}

let groupCount = 0;

/** Kill functions of the sandboxes this thread is running. */
const live = new Set<() => void>();
/** Set once this thread is being torn down: no new sandbox starts. */
let refusing = false;

/**
 * Kill every sandbox this thread is running and refuse new ones. A verifier-pool worker calls it
 * when the pool times it out, so that its own event loop reaps the processes (no zombie) and its
 * runSandboxed calls remove their control groups before the pool terminates it.
 */
export function abortSandboxes(): void {
  refusing = true;
  for (const k of live) k();
}

/** Name prefix of the host work dirs made by thread `tid` of this process. */
function workdirPrefix(tid: number): string {
  return `rlvr-code-${process.pid}-t${tid}-`;
}

/** Name prefix of the control groups made by thread `tid` of this process. */
function groupPrefix(tid: number): string {
  return `rlvr-${process.pid}-t${tid}-`;
}

/**
 * Tear down what thread `tid` (a terminated worker) left behind: SIGKILL the process group of
 * every sandbox it still held and free its slots, then remove its host work dirs and control
 * groups. The verifier pool calls it after terminating a worker, whatever the worker was doing.
 * Processes that thread started and did not reap before it ended stay zombies of this process
 * until it exits (Node cannot wait for another thread's children); abortSandboxes first avoids
 * that whenever the worker's event loop is free. Never throws.
 */
export async function reclaimThreadSandboxes(tid: number): Promise<void> {
  killThreadSandboxes(tid, { free: true });
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  const wd = workdirPrefix(tid);
  for (const name of list(tmpdir())) {
    if (name.startsWith(wd)) rmSync(join(tmpdir(), name), { recursive: true, force: true, maxRetries: 2 });
  }
  const gp = groupPrefix(tid);
  await removeGroupDirs(Object.values(ownGroups()).flatMap((base) => list(base).filter((n) => n.startsWith(gp)).map((n) => join(base, n))));
}

/** Whether thread `tid` still holds sandbox slots (its sandboxes not yet torn down). */
export function threadHoldsSandboxes(tid: number): boolean {
  return threadSlots(tid).length > 0;
}

/**
 * The first link of every launcher chain: bash closes every descriptor but those listed in $1,
 * then execs the rest of the chain. Node marks its own descriptors close-on-exec, but those this
 * process inherited without that flag (a parent's `9<secret`) would otherwise stay open through
 * bubblewrap (which does not close them) into the program.
 */
const CLOSE_FDS = 'keep=" $1 "; shift; for f in /proc/self/fd/*; do n=${f##*/}; case $keep in *" $n "*) ;; *) if [ -e "$f" ]; then exec {n}>&-; fi ;; esac; done; exec "$@"';

let bash: string | null | undefined;
/** `bash -c CLOSE_FDS` keeping descriptors `keep`; throws when this machine has no bash. */
function closeFdsArgs(keep: number[]): string[] {
  bash ??= which("bash");
  if (!bash) throw new Error("sandbox: bash not found; it closes inherited file descriptors before a sandboxed program starts (install bash)");
  return [bash, "--norc", "--noprofile", "--posix", "-c", CLOSE_FDS, "rlvr-close-fds", keep.join(" ")];
}

const NODE_NETBLOCK = `"use strict";
const refuse = () => { throw Object.assign(new Error("sandbox: network access refused"), { code: "EACCES" }); };
const net = require("net");
net.Socket.prototype.connect = refuse;
net.connect = net.createConnection = refuse;
net.Server.prototype.listen = refuse;
const dns = require("dns");
for (const k of ["lookup", "resolve", "resolve4", "resolve6", "resolveAny"]) dns[k] = refuse;
try { require("dgram").createSocket = refuse; } catch {}
globalThis.fetch = async () => refuse();
globalThis.WebSocket = undefined;
`;
