/**
 * Per-sandbox control groups (cgroup v1: memory, pids, cpu), when we are root and the hierarchies
 * are writable: they bound what rlimits cannot — the memory of all a sandbox's processes together
 * (RLIMIT_AS is per process, so 64 processes could each hold `memoryMb`), including its tmpfs
 * pages — and keep a busy sandbox to one CPU's worth of time so it cannot starve its siblings.
 *
 * A sandbox's group is created under this process's own group in each hierarchy
 * (`/proc/self/cgroup` + `/proc/self/mountinfo`), bubblewrap's first child is moved into it while
 * bubblewrap waits on `--block-fd` (so the program and everything it forks start inside), and the
 * group is removed once the sandbox is gone. cgroup v2 (a single unified hierarchy) is not used:
 * delegating controllers below our own group needs a layout this code does not assume.
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type Controller = "memory" | "pids" | "cpu";
const CONTROLLERS: Controller[] = ["memory", "pids", "cpu"];

/** Where this process's group lies in each usable v1 hierarchy. */
export type CgroupBases = Partial<Record<Controller, string>>;

/** This process's group directory per v1 controller (read from /proc; empty when none). */
export function ownGroups(): CgroupBases {
  const out: CgroupBases = {};
  let mountinfo = "";
  let self = "";
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
    self = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return out;
  }
  for (const c of CONTROLLERS) {
    const line = self.split("\n").find((l) => l.split(":")[1]?.split(",").includes(c));
    const path = line?.split(":").slice(2).join(":");
    if (path === undefined) continue;
    for (const m of mountinfo.split("\n")) {
      const [pre, post] = m.split(" - ");
      if (!pre || !post) continue;
      const f = pre.split(" ");
      const [fstype, , opts] = post.split(" ");
      if (fstype !== "cgroup" || !opts?.split(",").includes(c)) continue;
      const root = f[3]!;
      const mnt = f[4]!;
      if (path !== root && !path.startsWith(root.endsWith("/") ? root : root + "/")) continue;
      out[c] = join(mnt, root === "/" ? path : path.slice(root.length));
      break;
    }
  }
  return out;
}

/**
 * The controllers under which a child group can be created here (tries mkdir/rmdir once).
 * @returns bases per working controller; empty when not root or nothing is writable
 */
export function probeCgroups(): CgroupBases {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return {};
  const usable: CgroupBases = {};
  for (const [c, base] of Object.entries(ownGroups()) as [Controller, string][]) {
    const dir = join(base, `rlvr-probe-${process.pid}`);
    try {
      mkdirSync(dir);
      rmdirSync(dir);
      usable[c] = base;
    } catch {
      /* not writable */
    }
  }
  return usable;
}

/** Limits of one sandbox's group. */
export interface GroupLimits {
  /** All processes' memory together, tmpfs included, bytes. */
  memoryBytes: number;
  /** Processes and threads. */
  pids: number;
  /** CPUs' worth of time per period (1 = one core). */
  cpus: number;
}

/** One sandbox's groups; attach() a pid, dispose() when the sandbox is gone. */
export class SandboxGroup {
  private dirs: string[] = [];

  constructor(bases: CgroupBases, name: string, lim: GroupLimits) {
    const settings: Record<Controller, [string, string][]> = {
      memory: [
        ["memory.limit_in_bytes", String(lim.memoryBytes)],
        ["memory.memsw.limit_in_bytes", String(lim.memoryBytes)],
      ],
      pids: [["pids.max", String(lim.pids)]],
      cpu: [
        ["cpu.cfs_period_us", "100000"],
        ["cpu.cfs_quota_us", String(Math.round(100000 * lim.cpus))],
      ],
    };
    for (const [c, base] of Object.entries(bases) as [Controller, string][]) {
      const dir = join(base, name);
      try {
        mkdirSync(dir);
      } catch {
        continue;
      }
      this.dirs.push(dir);
      for (const [file, value] of settings[c]) {
        try {
          writeFileSync(join(dir, file), value);
        } catch {
          /* e.g. memsw without swap accounting */
        }
      }
    }
  }

  /** Move a process (and so everything it forks afterwards) into every group. */
  attach(pid: number): void {
    for (const d of this.dirs) writeFileSync(join(d, "cgroup.procs"), String(pid));
  }

  /** Remove the groups (retrying while the last processes exit); never throws. */
  async dispose(): Promise<void> {
    const dirs = this.dirs;
    this.dirs = [];
    await removeGroupDirs(dirs);
  }
}

/** Remove group directories, retrying for 2 s while their last processes exit; never throws. */
export async function removeGroupDirs(dirs: string[]): Promise<void> {
  for (let attempt = 0; attempt < 40 && dirs.length; attempt++) {
    dirs = dirs.filter((d) => {
      try {
        rmdirSync(d);
        return false;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === "EBUSY";
      }
    });
    if (dirs.length) await new Promise((r) => setTimeout(r, 50));
  }
}
