/**
 * The read-only root a bubblewrap sandbox sees: only the interpreters, their shared libraries and
 * (for Python) the standard library, each at its host path, plus the symlinks on the way there
 * (`/lib64 -> usr/lib64` on merged-/usr systems).
 *
 * The libraries come from `ldd` (glibc's, in Debian's libc-bin) on each binary and, for Python,
 * on every extension module of `lib-dynload`; their directories are bound whole (they hold
 * libraries, not data), the binaries file by file.
 */
import { spawnSync } from "node:child_process";
import { lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";

/** bwrap arguments building the root: `--symlink T P` and `--ro-bind P P` pairs, in order. */
export interface RootPlan {
  symlinks: [target: string, path: string][];
  binds: string[];
}

/** Shared libraries some binaries load, as the paths `ldd` prints (one ldd run; empty when it fails). */
export function sharedLibraries(...binaries: string[]): string[] {
  if (binaries.length === 0) return [];
  const r = spawnSync("ldd", binaries, { encoding: "utf8", timeout: 20_000 });
  if (typeof r.stdout !== "string") return [];
  const libs: string[] = [];
  for (const line of r.stdout.split("\n")) {
    const arrow = line.match(/=>\s*(\/\S+)/);
    const bare = line.match(/^\s*(\/\S+)\s+\(/);
    const p = arrow?.[1] ?? bare?.[1];
    if (p) libs.push(p);
  }
  return libs;
}

/** Collects the symlinks and bind mounts that make a set of host paths resolve inside. */
export class RootBuilder {
  private links = new Map<string, string>();
  private bound = new Set<string>();

  /** Walk `path` component by component, recording symlinks; returns the real path. */
  private walk(path: string, depth = 0): string {
    if (depth > 16) return realpathSync(path);
    let cur: string = sep;
    const parts = resolve(path).split(sep).filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const next = join(cur, parts[i]!);
      let st;
      try {
        st = lstatSync(next);
      } catch {
        return join(next, ...parts.slice(i + 1));
      }
      if (st.isSymbolicLink()) {
        const target = readlinkSync(next);
        if (!this.insideBound(next)) this.links.set(next, target);
        const abs = isAbsolute(target) ? target : join(cur, target);
        return this.walk(join(abs, ...parts.slice(i + 1)), depth + 1);
      }
      cur = next;
    }
    return cur;
  }

  private insideBound(p: string): boolean {
    for (const b of this.bound) if (p === b || p.startsWith(b + sep)) return true;
    return false;
  }

  /** Make a single file visible (its real path bound, symlinks on the way recreated). */
  file(path: string): this {
    const real = this.walk(path);
    if (!this.insideBound(real)) this.bound.add(real);
    return this;
  }

  /** Make a whole directory visible. */
  dir(path: string): this {
    const real = this.walk(path);
    if (!this.insideBound(real)) {
      for (const b of [...this.bound]) if (b.startsWith(real + sep)) this.bound.delete(b);
      this.bound.add(real);
    }
    return this;
  }

  /** Make a library visible by binding its directory, then follow it if it is a symlink. */
  library(path: string, depth = 0): this {
    const realDir = this.walk(dirname(path));
    this.dir(realDir);
    const inDir = join(realDir, path.split(sep).pop()!);
    try {
      if (depth < 8 && lstatSync(inDir).isSymbolicLink()) {
        const t = readlinkSync(inDir);
        this.library(isAbsolute(t) ? t : join(realDir, t), depth + 1);
      }
    } catch {
      /* missing library: the probe run will fail and report it */
    }
    return this;
  }

  /** A binary and every library it loads. */
  binary(path: string): this {
    this.file(path);
    for (const lib of sharedLibraries(path)) this.library(lib);
    return this;
  }

  /** Python's standard library directory and the libraries its extension modules load. */
  pythonStdlib(stdlib: string): this {
    this.dir(stdlib);
    const dyn = join(stdlib, "lib-dynload");
    let mods: string[] = [];
    try {
      mods = readdirSync(dyn).filter((f) => f.endsWith(".so"));
    } catch {
      /* no lib-dynload (static build) */
    }
    for (const lib of sharedLibraries(...mods.map((m) => join(dyn, m)))) this.library(lib);
    return this;
  }

  plan(): RootPlan {
    const symlinks = [...this.links.entries()]
      .filter(([p]) => !this.insideBound(p))
      .map(([p, t]) => [t, p] as [string, string])
      .sort((a, b) => a[1].length - b[1].length);
    const binds = [...this.bound].sort();
    return { symlinks, binds };
  }
}

/** The plan as bwrap arguments (symlinks first: they may be parents of bind targets). */
export function rootArgs(plan: RootPlan): string[] {
  const args: string[] = [];
  for (const [target, path] of plan.symlinks) args.push("--symlink", target, path);
  for (const b of plan.binds) args.push("--ro-bind", b, b);
  return args;
}
