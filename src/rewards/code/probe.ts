/**
 * Detects, once per process, which isolation layers this machine offers for the code sandbox.
 *
 * Preferred: bubblewrap (`bwrap`, Debian package `bubblewrap`), which gives each program its own
 * user, mount, pid, network, IPC, UTS and cgroup namespaces, a read-only root holding only the
 * interpreter and its libraries (rootfs.ts), private size-capped tmpfs for the work dir, /tmp and
 * /dev/shm, a fresh /proc, no further user namespaces, and a seccomp filter refusing sockets
 * (seccomp.ts). As root, bwrap itself runs under a random unprivileged uid (setpriv), so no two
 * sandboxes share a uid on the host either.
 *
 * Fallback when bwrap is missing or cannot create namespaces here (weaker; `rlvr doctor` and a
 * one-time warning say so):
 * - `unshare --net [--pid --fork --kill-child --mount --mount-proc]` (util-linux): no network, the
 *   tree dies with the launcher, and /proc shows only the program's own processes;
 * - `prlimit` (util-linux): RLIMIT_AS, NPROC, FSIZE, NOFILE, CPU, CORE;
 * - `setpriv` (util-linux, root only): a random uid per program, so RLIMIT_NPROC is not shared;
 * - Node's permission model (`--permission` / `--experimental-permission`);
 * - a Python audit hook (harness.ts), which a determined program can bypass.
 * In both modes grading happens outside the program (run-tests.ts).
 *
 * `RLVR_SANDBOX=fallback` forces the fallback; `RLVR_SANDBOX=bwrap` makes a machine without a
 * working bwrap an error instead of a warning.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { probeCgroups, type CgroupBases } from "./cgroup.ts";
import { RootBuilder, rootArgs, type RootPlan } from "./rootfs.ts";
import { seccompFilter } from "./seccomp.ts";

/** How bubblewrap is run here (null fields: that layer is missing). */
export interface BwrapSupport {
  /** Path of the bwrap binary. */
  path: string;
  /** Run bwrap under `setpriv` with a random uid (we are root and that works). */
  dropUid: boolean;
  /** The read-only root. */
  root: RootPlan;
  /** Real path of prlimit, bound into the sandbox to set rlimits from inside; null: none. */
  prlimit: string | null;
  /** The seccomp filter (null: unsupported architecture). */
  seccomp: Buffer | null;
  /** `--disable-userns` works (bubblewrap ≥ 0.8): no nested user namespaces. */
  disableUserns: boolean;
  /** `--size` works (bubblewrap ≥ 0.5): the private tmpfs are size-capped. */
  tmpfsSize: boolean;
  /** cgroup v1 hierarchies a per-sandbox group can be made in (root only; cgroup.ts). */
  cgroups: CgroupBases;
}

export interface SandboxSupport {
  /** bubblewrap, when it works here; then the fields below only matter for the fallback. */
  bwrap: BwrapSupport | null;
  /** Arguments of the `unshare` prefix ([] when unavailable) — fallback only. */
  unshareArgs: string[];
  /** Network namespace in effect (no network at the OS level). */
  netns: boolean;
  /** PID namespace in effect (whole tree dies with the launcher). */
  pidns: boolean;
  /** `prlimit` binary available. */
  prlimit: boolean;
  /** Programs run under a random non-root uid (we are root and setpriv works) — fallback only. */
  dropUid: boolean;
  /** Node permission flag that works here, or null. */
  nodePermissionFlag: string | null;
  /** Absolute real path of a python3 that runs inside the sandbox, or null (Python unsupported). */
  python: string | null;
  /** Absolute real path of node. */
  node: string;
  /** Human-readable notes on what is missing. */
  notes: string[];
}

let cached: SandboxSupport | undefined;

function ok(cmd: string, args: string[], env?: NodeJS.ProcessEnv): boolean {
  try {
    const r = spawnSync(cmd, args, { stdio: "ignore", timeout: 15_000, env });
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

/** First executable named `name` on PATH (or in /usr/bin, /bin), or null. */
export function which(name: string): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/local/bin", "/usr/bin", "/bin"].filter(Boolean);
  for (const d of dirs) {
    try {
      accessSync(join(d, name), constants.X_OK);
      return join(d, name);
    } catch {
      /* next */
    }
  }
  return null;
}

/** A uid no other sandbox is using (random in [2^20, 2^30); collisions have odds ~1e-9). */
export function randomUid(): number {
  return 0x100000 + Math.floor(Math.random() * (0x40000000 - 0x100000));
}

/** Node's permission-model flag: `--permission` from Node 22.13/23.5, `--experimental-permission` before. */
function nodePermission(): string | null {
  const [maj, min] = process.versions.node.split(".").map(Number) as [number, number];
  const flag = maj > 23 || (maj === 23 && min >= 5) || (maj === 22 && min >= 13) ? "--permission" : "--experimental-permission";
  return ok(process.execPath, [flag, "--allow-fs-read=*", "-e", "0"]) ? flag : null;
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** The setpriv prefix dropping to `uid` (gid alike, no groups, no new privileges). */
export function setprivArgs(uid: number): string[] {
  return ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--no-new-privs", "--"];
}

/** Python interpreters to try, system ones first (pyenv installs under /root are not readable). */
function pythonCandidates(): string[] {
  const c: string[] = [];
  for (const p of ["/usr/bin/python3", "/usr/local/bin/python3"]) {
    try {
      accessSync(p, constants.X_OK);
      c.push(p);
    } catch {
      /* absent */
    }
  }
  if (c.length === 0) {
    const resolved = out("python3", ["-c", "import sys; print(sys.executable)"]);
    if (resolved) c.push(resolved);
  }
  return c;
}

/** The real path and standard library of a python3 that starts here, or null. */
function pythonInfo(candidates: string[]): { exe: string; stdlib: string } | null {
  for (const cand of candidates) {
    const info = out(cand, ["-I", "-c", "import sys, sysconfig, json, resource, ast; print(sys.executable); print(sysconfig.get_paths()['stdlib'])"]);
    const [exe, stdlib] = info?.split("\n") ?? [];
    if (exe && stdlib) return { exe: realpathSync(exe), stdlib };
  }
  return null;
}

/**
 * Namespace arguments common to every bwrap run (the root and work dir are added per run).
 * `--disable-userns` needs bubblewrap ≥ 0.8; older ones run without it (reported by doctor).
 */
export function bwrapNamespaces(b: { disableUserns: boolean }): string[] {
  return ["--unshare-all", "--unshare-user", ...(b.disableUserns ? ["--disable-userns"] : []), "--die-with-parent", "--new-session", "--uid", "1000", "--gid", "1000"];
}

function probeBwrap(py: { exe: string; stdlib: string } | null, notes: string[]): { bwrap: BwrapSupport | null; python: string | null } {
  const path = which("bwrap");
  if (!path) {
    notes.push("bubblewrap (bwrap) not found: install the Debian package `bubblewrap` for full isolation");
    return { bwrap: null, python: null };
  }
  const node = realpathSync(process.execPath);
  const prlimitPath = which("prlimit");
  const prlimit = prlimitPath ? realpathSync(prlimitPath) : null;
  const seccomp = seccompFilter();
  if (!seccomp) notes.push(`no seccomp filter for architecture ${process.arch}: sockets inside the sandbox are limited by the namespaces only`);
  const root = new RootBuilder().binary(node);
  if (prlimit) root.binary(prlimit);
  if (py) root.binary(py.exe).pythonStdlib(py.stdlib);
  const plan = root.plan();
  const help = spawnSync(path, ["--help"], { encoding: "utf8", timeout: 10_000 }).stdout ?? "";
  const tmpfsSize = help.includes("--size");
  if (!tmpfsSize) notes.push("bubblewrap older than 0.5: the private /tmp, /dev/shm and /work are not size-capped");
  const attempts: [boolean, boolean][] = [];
  for (const dropUid of isRoot() && which("setpriv") ? [true, false] : [false]) for (const disableUserns of help.includes("--disable-userns") ? [true, false] : [false]) attempts.push([dropUid, disableUserns]);
  for (const [dropUid, disableUserns] of attempts) {
    const prefix = [...(dropUid ? setprivArgs(randomUid()) : []), path, ...bwrapNamespaces({ disableUserns }), ...rootArgs(plan), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp", "--clearenv"];
    const runs = (cmd: string[]) => ok(prefix[0]!, [...prefix.slice(1), ...(prlimit ? [prlimit, "--nproc=64", "--"] : []), ...cmd]);
    if (!runs([node, "-e", "0"])) continue;
    let python: string | null = py?.exe ?? null;
    if (python && !runs([python, "-I", "-B", "-c", "import json, resource, ast, math, collections"])) {
      notes.push(`python3 at ${python} does not start inside bubblewrap: Python solutions cannot be run`);
      python = null;
    }
    if (!disableUserns) notes.push("bubblewrap cannot disable nested user namespaces here (needs bubblewrap ≥ 0.8)");
    const cgroups = process.env.RLVR_SANDBOX_CGROUPS === "0" ? {} : probeCgroups();
    if (!cgroups.memory) notes.push("no writable memory cgroup (not root, or cgroup v2 only): a sandbox's memory is bounded per process, not in total");
    return { bwrap: { path, dropUid, root: plan, prlimit, seccomp, disableUserns, tmpfsSize, cgroups }, python };
  }
  notes.push(`bwrap at ${path} cannot create its namespaces here (user namespaces disabled?): using the weaker fallback layers`);
  return { bwrap: null, python: null };
}

/**
 * Probe the machine (spawns a handful of tiny processes, ~0.2–1 s, once per process).
 * @returns the layers that work here; never throws.
 */
export function sandboxSupport(): SandboxSupport {
  if (cached) return cached;
  const notes: string[] = [];
  const mode = process.env.RLVR_SANDBOX ?? "auto";

  const py = pythonInfo(pythonCandidates());
  let python: string | null = py?.exe ?? null;

  let bwrap: BwrapSupport | null = null;
  if (mode !== "fallback") {
    const b = probeBwrap(py, notes);
    bwrap = b.bwrap;
    if (bwrap) python = b.python;
  } else {
    notes.push("RLVR_SANDBOX=fallback: bubblewrap not used");
  }
  if (bwrap) {
    // The fallback layers are not probed when bubblewrap works.
    const nodePermissionFlag = nodePermission();
    if (!python) notes.push("no usable python3: Python solutions cannot be run");
    cached = { bwrap, unshareArgs: [], netns: true, pidns: true, prlimit: bwrap.prlimit !== null, dropUid: bwrap.dropUid, nodePermissionFlag, python, node: realpathSync(process.execPath), notes };
    return cached;
  }

  let unshareArgs: string[] = [];
  let netns = false;
  let pidns = false;
  const candidates: string[][] = isRoot()
    ? [["--net", "--pid", "--fork", "--kill-child", "--mount", "--mount-proc"], ["--net", "--pid", "--fork", "--kill-child"], ["--net"]]
    : [
        ["--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child", "--mount", "--mount-proc"],
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
  const prlimit = ok("prlimit", ["--nproc=4096", "true"]);
  const dropUid = isRoot() && ok("setpriv", [...setprivArgs(randomUid()), "true"]);
  if (!bwrap) {
    if (!netns) notes.push("unshare --net unavailable: network is blocked only in-process (Python audit hook; Node has no network permission on v20)");
    if (!pidns) notes.push("no PID namespace: cleanup relies on killing the process group");
    if (!prlimit) notes.push("prlimit unavailable: Node programs get only --max-old-space-size; Python sets its own rlimits");
    if (isRoot() && !dropUid) notes.push("running as root without setpriv: RLIMIT_NPROC does not bind root");
  }

  const nodePermissionFlag = nodePermission();
  if (!nodePermissionFlag) notes.push("Node permission model unavailable: JS programs may write files and spawn processes");

  if (python) {
    // The fallback runs python as a random uid: it must still find its standard library.
    const prefix = [...unshareArgs, ...(dropUid ? setprivArgs(randomUid()) : [])];
    const probe = [python, "-I", "-c", "import sys, os, json, resource; assert os.path.isdir(os.path.join(sys.base_prefix, 'lib'))"];
    const cmd = [...prefix, ...probe];
    if (!ok(cmd[0]!, cmd.slice(1))) python = null;
  }
  if (!python) notes.push("no usable python3: Python solutions cannot be run");
  else python = realpathSync(python);

  cached = { bwrap, unshareArgs, netns, pidns, prlimit, dropUid, nodePermissionFlag, python, node: realpathSync(process.execPath), notes };
  return cached;
}

/** One line per isolation layer and whether this machine has it (for `rlvr doctor`). */
export function describeLayers(s: SandboxSupport = sandboxSupport()): { layer: string; present: boolean; detail: string }[] {
  const b = s.bwrap;
  const rows: { layer: string; present: boolean; detail: string }[] = [];
  rows.push({ layer: "bubblewrap", present: b !== null, detail: b ? `${b.path}${b.dropUid ? ", run as a random uid per program" : ""}` : "missing or not working: fallback layers below" });
  if (b) {
    rows.push({ layer: "namespaces", present: true, detail: `user, mount, pid, network, ipc, uts, cgroup${b.disableUserns ? "; no nested user namespaces" : "; nested user namespaces possible"}` });
    rows.push({ layer: "minimal root", present: true, detail: `read-only: ${b.root.binds.join(", ")}` });
    rows.push({ layer: "private tmpfs", present: true, detail: `/work, /tmp, /dev/shm (${b.tmpfsSize ? "size-capped" : "not size-capped"}), fresh /proc and /dev` });
    rows.push({ layer: "seccomp", present: b.seccomp !== null, detail: b.seccomp ? "socket, socketpair, io_uring, keyrings, bpf, perf, userfaultfd refused" : `no filter for ${process.arch}` });
    const cg = Object.keys(b.cgroups);
    rows.push({ layer: "control groups", present: cg.length > 0, detail: cg.length ? `per sandbox: ${cg.join(", ")} (total memory, processes, one CPU)` : "none: memory bounded per process only; CPU shared" });
    rows.push({ layer: "rlimits per sandbox", present: b.prlimit !== null, detail: b.prlimit ? "prlimit inside the sandbox's own user namespace" : "prlimit missing: Python sets its own limits, Node only its heap" });
  } else {
    rows.push({ layer: "network namespace", present: s.netns, detail: s.unshareArgs.join(" ") || "none: in-process blocks only" });
    rows.push({ layer: "pid namespace", present: s.pidns, detail: s.pidns ? `tree dies with the launcher${s.unshareArgs.includes("--mount-proc") ? "; own /proc" : "; host /proc visible"}` : "process-group kill only" });
    rows.push({ layer: "rlimits", present: s.prlimit, detail: "prlimit" });
    rows.push({ layer: "uid per program", present: s.dropUid, detail: s.dropUid ? "setpriv to a random uid" : "all programs share this process's uid" });
    rows.push({ layer: "file system", present: false, detail: "host files visible (read) and /tmp writable by Python; other writes refused only by Node's permission model and a bypassable Python audit hook" });
  }
  rows.push({ layer: "node permission model", present: s.nodePermissionFlag !== null, detail: s.nodePermissionFlag ?? "unavailable" });
  rows.push({ layer: "python3", present: s.python !== null, detail: s.python ?? "missing: Python solutions score 0" });
  return rows;
}
