/**
 * Run one untrusted program in a separate, limited process.
 *
 * Layers, outermost first (each used when sandboxSupport() found it working):
 *   unshare --net [--pid --fork --kill-child]   no network; the tree dies with the launcher
 *   prlimit --as --nproc --fsize --nofile --cpu --core
 *   setpriv --reuid=65534 (when we are root)   RLIMIT_NPROC binds; project files are read-only
 *   node --permission/--experimental-permission --allow-fs-read/write=<workdir>   (JavaScript)
 *   python3 -I -B harness.py (audit hook + resource limits)                        (Python)
 * plus, always: a fresh temporary working directory deleted afterwards, a minimal environment,
 * a wall-clock timeout that SIGKILLs the whole process group, and caps on captured output
 * (exceeding them kills the program).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxSupport, type SandboxSupport } from "./probe.ts";

/** Resource limits of one sandboxed process. */
export interface SandboxLimits {
  /** Wall-clock limit in ms; the process group is SIGKILLed when it passes. Default 5000. */
  timeoutMs: number;
  /** Memory in MiB: RLIMIT_AS for Python; V8 old-space for Node (its RLIMIT_AS gets +768 MiB of
   *  headroom for V8's address-space reservations). Default 256. */
  memoryMb: number;
  /** Bytes of stdout and of stderr kept; more output kills the program. Default 1 MiB. */
  maxOutputBytes: number;
  /** Largest file the program may write (RLIMIT_FSIZE), bytes. Default 8 MiB. */
  maxFileBytes: number;
  /** RLIMIT_NPROC (processes + threads of the sandbox user). Default 64. */
  maxProcesses: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  timeoutMs: 5000,
  memoryMb: 256,
  maxOutputBytes: 1 << 20,
  maxFileBytes: 8 << 20,
  maxProcesses: 64,
};

export type Language = "python" | "javascript";

/** Outcome of one sandboxed process. */
export interface SandboxResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  outputLimitExceeded: boolean;
  durationMs: number;
}

/** A throw-away working directory; `files` are written into it before the run. */
export interface Workdir {
  path: string;
  dispose(): void;
}

/**
 * Create a fresh private directory (under os.tmpdir()) holding `files`, readable and writable by
 * the sandbox user. Call dispose() when done (idempotent, never throws).
 */
export function makeWorkdir(files: Record<string, string>, support: SandboxSupport = sandboxSupport()): Workdir {
  const path = mkdtempSync(join(tmpdir(), "rlvr-code-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  if (support.dropTo !== null) {
    for (const name of Object.keys(files)) chownSync(join(path, name), support.dropTo, support.dropTo);
    chownSync(path, support.dropTo, support.dropTo);
  }
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

/** Process-wide limit on concurrently running sandboxes (default: available cores). */
class Semaphore {
  private queue: (() => void)[] = [];
  private active = 0;
  constructor(public limit: number) {}
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.queue.shift()?.();
    };
  }
}
const slots = new Semaphore(Math.max(1, availableParallelism()));

/** Change how many sandboxed programs may run at once in this process. */
export function setSandboxConcurrency(n: number): void {
  slots.limit = Math.max(1, Math.floor(n));
}

/** One program to run: interpreter arguments after the interpreter itself. */
export interface SandboxSpec {
  language: Language;
  workdir: string;
  /** Script path (relative to workdir) and its arguments. */
  args: string[];
  stdin?: string;
  env?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
}

/** Build the full argv (launcher chain + interpreter). Exposed for tests and docs. */
export function sandboxCommand(spec: SandboxSpec, support: SandboxSupport = sandboxSupport()): string[] {
  const lim = { ...DEFAULT_LIMITS, ...spec.limits };
  const mem = lim.memoryMb * 1024 * 1024;
  const argv: string[] = [...support.unshareArgs];
  if (support.prlimit) {
    const as = spec.language === "javascript" ? mem + 768 * 1024 * 1024 : mem;
    argv.push(
      "prlimit",
      `--as=${as}`,
      `--nproc=${lim.maxProcesses}`,
      `--fsize=${lim.maxFileBytes}`,
      "--nofile=256",
      "--core=0",
      `--cpu=${Math.ceil(lim.timeoutMs / 1000) + 1}`,
      "--",
    );
  }
  if (support.dropTo !== null) {
    argv.push("setpriv", `--reuid=${support.dropTo}`, `--regid=${support.dropTo}`, "--clear-groups", "--no-new-privs", "--");
  }
  if (spec.language === "javascript") {
    argv.push(support.node, "--no-warnings", `--max-old-space-size=${Math.max(16, lim.memoryMb)}`, "--stack-size=2048");
    if (support.nodePermissionFlag) {
      argv.push(support.nodePermissionFlag, `--allow-fs-read=${spec.workdir}`, `--allow-fs-write=${spec.workdir}`);
    }
  } else {
    if (!support.python) throw new Error("sandbox: no usable python3 on this machine (see sandboxSupport().notes)");
    argv.push(support.python, "-I", "-B");
  }
  argv.push(...spec.args);
  return argv;
}

/**
 * Run a program under the sandbox and capture its output.
 * Never rejects for anything the program does (crash, timeout, huge output); rejects only when
 * the launcher itself cannot be started (e.g. no python3 for a Python program).
 */
export async function runSandboxed(spec: SandboxSpec, support: SandboxSupport = sandboxSupport()): Promise<SandboxResult> {
  const lim = { ...DEFAULT_LIMITS, ...spec.limits };
  if (spec.language === "javascript" && !support.netns) {
    // No network namespace: Node 20's permission model has no network permission, so preload a
    // module that makes sockets and DNS throw (in-process, weaker than a namespace).
    const file = join(spec.workdir, ".rlvr-netblock.cjs");
    writeFileSync(file, NODE_NETBLOCK);
    if (support.dropTo !== null) chownSync(file, support.dropTo, support.dropTo);
    spec = { ...spec, args: ["--require", file, ...spec.args] };
  }
  const argv = sandboxCommand(spec, support);
  const release = await slots.acquire();
  try {
    return await new Promise<SandboxResult>((resolve, reject) => {
      const started = performance.now();
      const env: Record<string, string> = {
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: spec.workdir,
        TMPDIR: spec.workdir,
        LANG: "C.UTF-8",
        PYTHONIOENCODING: "utf-8",
        PYTHONDONTWRITEBYTECODE: "1",
        PYTHONHASHSEED: "0",
        ...spec.env,
      };
      let child;
      try {
        child = spawn(argv[0]!, argv.slice(1), { cwd: spec.workdir, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
      } catch (e) {
        reject(e);
        return;
      }
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
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
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.stdin?.destroy();
        resolve({
          exitCode,
          signal,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
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

      child.stdout!.on("data", (b: Buffer) => {
        if (outBytes + b.length > lim.maxOutputBytes) {
          out.push(b.subarray(0, Math.max(0, lim.maxOutputBytes - outBytes)));
          outBytes = lim.maxOutputBytes;
          if (!outputLimitExceeded) {
            outputLimitExceeded = true;
            killTree();
          }
          return;
        }
        outBytes += b.length;
        out.push(b);
      });
      child.stderr!.on("data", (b: Buffer) => {
        if (errBytes + b.length > lim.maxOutputBytes) {
          err.push(b.subarray(0, Math.max(0, lim.maxOutputBytes - errBytes)));
          errBytes = lim.maxOutputBytes;
          if (!outputLimitExceeded) {
            outputLimitExceeded = true;
            killTree();
          }
          return;
        }
        errBytes += b.length;
        err.push(b);
      });
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
        // Kill anything left in the group (a daemonised grandchild), then give the pipes a
        // moment to drain before resolving.
        killTree();
        setTimeout(finish, 50);
      });
      child.on("close", (code, sig) => {
        exitCode ??= code;
        signal ??= sig;
        finish();
      });
      child.stdin!.end(spec.stdin ?? "");
    });
  } finally {
    release();
  }
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

/** A random token that marks harness result lines. */
export function nonce(): string {
  return "@@rlvr-" + randomBytes(12).toString("hex") + "@@";
}
