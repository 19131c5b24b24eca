/**
 * Detects, once per process, which isolation layers this machine offers for the code sandbox.
 *
 * Layers (each optional; the sandbox uses every one that works and records which):
 * - `unshare --net` (util-linux): a fresh network namespace with no interfaces up → no network.
 *   As root it works directly; as a normal user it needs unprivileged user namespaces
 *   (`--user --map-root-user`).
 * - `unshare --pid --fork --kill-child`: the program is PID 1 of its own namespace, so killing
 *   the launcher kills every descendant, even ones that called setsid().
 * - `prlimit` (util-linux): RLIMIT_AS, RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CPU, RLIMIT_CORE.
 * - `setpriv` (util-linux, root only): drop to uid/gid 65534 (nobody) before exec, because
 *   RLIMIT_NPROC does not bind root and nobody cannot write the project's files.
 * - Node's permission model (`--permission` on Node ≥ 22.13/23.5, `--experimental-permission` on
 *   Node 20): file writes only inside the work dir, no child processes, no worker threads.
 * Python programs additionally run under an audit hook (see harness.ts) that refuses sockets,
 * fork/exec/subprocess, ctypes and writes outside the work dir, and set their own rlimits through
 * `resource`, so a machine with none of the tools above still gets a (weaker) sandbox.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";

export interface SandboxSupport {
  /** Arguments of the `unshare` prefix ([] when unavailable). */
  unshareArgs: string[];
  /** Network namespace in effect (no network at the OS level). */
  netns: boolean;
  /** PID namespace in effect (whole tree dies with the launcher). */
  pidns: boolean;
  /** `prlimit` binary available. */
  prlimit: boolean;
  /** uid/gid the program runs as after `setpriv`, or null when privileges are not dropped. */
  dropTo: number | null;
  /** Node permission flag that works here, or null. */
  nodePermissionFlag: string | null;
  /** Absolute path of a python3 that runs inside the sandbox, or null (Python unsupported). */
  python: string | null;
  /** Absolute path of node. */
  node: string;
  /** Human-readable notes on what is missing. */
  notes: string[];
}

let cached: SandboxSupport | undefined;

function ok(cmd: string, args: string[]): boolean {
  try {
    const r = spawnSync(cmd, args, { stdio: "ignore", timeout: 10_000 });
    return r.status === 0;
  } catch {
    return false;
  }
}

function out(cmd: string, args: string[]): string | null {
  try {
    const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 10_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    return r.status === 0 ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}

const NOBODY = 65534;

/**
 * Probe the machine (spawns a handful of tiny processes, ~100–300 ms, once per process).
 * @returns the layers that work here; never throws.
 */
export function sandboxSupport(): SandboxSupport {
  if (cached) return cached;
  const notes: string[] = [];
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

  let unshareArgs: string[] = [];
  let netns = false;
  let pidns = false;
  const candidates: string[][] = isRoot
    ? [["--net", "--pid", "--fork", "--kill-child"], ["--net"]]
    : [
        ["--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"],
        ["--user", "--map-root-user", "--net"],
      ];
  for (const c of candidates) {
    if (ok("unshare", [...c, "true"])) {
      unshareArgs = ["unshare", ...c];
      netns = true;
      pidns = c.includes("--pid");
      break;
    }
  }
  if (!netns) notes.push("unshare --net unavailable: network is blocked only in-process (Python audit hook; Node has no network permission on v20)");
  if (!pidns) notes.push("no PID namespace: cleanup relies on killing the process group");

  const prlimit = ok("prlimit", ["--nproc=4096", "true"]);
  if (!prlimit) notes.push("prlimit unavailable: Node programs get only --max-old-space-size; Python sets its own rlimits");

  let dropTo: number | null = null;
  if (isRoot) {
    if (ok("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "true"])) dropTo = NOBODY;
    else notes.push("running as root without setpriv: RLIMIT_NPROC does not bind root");
  }

  let nodePermissionFlag: string | null = null;
  for (const flag of ["--permission", "--experimental-permission"]) {
    if (ok(process.execPath, [flag, "--allow-fs-read=*", "-e", "0"])) {
      nodePermissionFlag = flag;
      break;
    }
  }
  if (!nodePermissionFlag) notes.push("Node permission model unavailable: JS programs may write files and spawn processes");

  // A python3 that still works after the privilege drop (pyenv installs under /root are not
  // reachable by nobody, so prefer the system interpreter when we drop privileges).
  const pyCandidates: string[] = [];
  for (const p of ["/usr/bin/python3", "/usr/local/bin/python3"]) {
    try {
      accessSync(p, constants.X_OK);
      pyCandidates.push(p);
    } catch {
      /* absent */
    }
  }
  const resolved = out("python3", ["-c", "import sys; print(sys.executable)"]);
  if (resolved) pyCandidates.push(resolved);
  let python: string | null = null;
  const prefix = [...unshareArgs, ...(dropTo !== null ? ["setpriv", `--reuid=${dropTo}`, `--regid=${dropTo}`, "--clear-groups", "--"] : [])];
  for (const p of pyCandidates) {
    const cmd = prefix.length ? prefix[0]! : p;
    const args = prefix.length ? [...prefix.slice(1), p, "-I", "-c", "import json, resource, socket, sys; assert sys.prefix != '/nonexistent'"] : ["-I", "-c", "import json, resource, socket"];
    if (ok(cmd, args)) {
      // Reject interpreters that silently fell back to a different stdlib (prefix not readable).
      const prefixOut = prefix.length ? out(prefix[0]!, [...prefix.slice(1), p, "-I", "-c", "import sys, os; print(os.path.isdir(os.path.join(sys.base_prefix, 'lib')))"]) : "True";
      if (prefixOut === "True") {
        python = p;
        break;
      }
    }
  }
  if (!python) notes.push("no usable python3: Python solutions cannot be run");

  cached = { unshareArgs, netns, pidns, prlimit, dropTo, nodePermissionFlag, python, node: process.execPath, notes };
  return cached;
}
