/**
 * Resumable checkpoints of a run directory, written atomically and verified on resume.
 *
 * Layout (under `<run>/checkpoints/`):
 *   step-N/            one complete checkpoint after global optimizer step N (SFT steps, then RL)
 *     config.json, model.safetensors, optimizer.safetensors, tokenizer files   (engine.save)
 *     reference/       the reference model's weights (hard links to checkpoints/reference/)
 *     trainer.json     the trainer's state (stage, step, data cursor, controllers, log sizes, ...)
 *     manifest.json    written last: every file above with its size and SHA-256
 *   reference/         the current reference model (rewritten at each reference reset)
 *   latest             the name of the newest complete checkpoint ("step-N"), for people and tools
 *   final/             the model at the end of the run (no optimizer state)
 *
 * Atomicity: a checkpoint is written into `.tmp-step-N-<pid>/` and renamed to `step-N/` only
 * after its manifest is on disk, so `step-N/` either is complete or was damaged later. Resume
 * does not trust names: it scans `step-*` newest first and takes the first whose manifest
 * verifies (every file present with the recorded size and hash); the rest are reported and skipped.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, copyFileSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Format tag of manifest.json. */
export const CHECKPOINT_FORMAT = "rlvr-checkpoint/1";

export interface ManifestFile {
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: string;
  /** Global optimizer step of the checkpoint. */
  step: number;
  created: string;
  /** Relative path (forward slashes) → size and hash. */
  files: Record<string, ManifestFile>;
}

/** One `step-N` directory found by `scanCheckpoints`. */
export interface CheckpointEntry {
  name: string;
  dir: string;
  step: number;
  /** Why it cannot be used, or null when its manifest verifies. */
  problem: string | null;
}

/** `<run>/checkpoints`. */
export function checkpointsDir(runDir: string): string {
  return join(runDir, "checkpoints");
}

/** Files under `dir`, recursively, as sorted relative paths with forward slashes. */
function listFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p, base));
    else if (e.isFile()) out.push(relative(base, p).split("\\").join("/"));
  }
  return out.sort();
}

/** SHA-256 and size of a file, read in 4 MiB chunks; fsyncs it when `sync`. */
function hashFile(path: string, sync = false): ManifestFile {
  const h = createHash("sha256");
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(4 << 20);
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      bytes += n;
    }
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { bytes, sha256: h.digest("hex") };
}

/** Write `text` to `path` atomically (temporary file, fsync, rename). */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  const fd = openSync(tmp, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Write manifest.json for every file now in `dir` (fsyncing each). Call last. */
export function writeManifest(dir: string, step: number): Manifest {
  const files: Record<string, ManifestFile> = {};
  for (const f of listFiles(dir)) if (f !== "manifest.json") files[f] = hashFile(join(dir, f), true);
  const manifest: Manifest = { format: CHECKPOINT_FORMAT, step, created: new Date().toISOString(), files };
  writeFileAtomic(join(dir, "manifest.json"), JSON.stringify(manifest, null, 1) + "\n");
  return manifest;
}

/**
 * Check a checkpoint directory against its manifest.
 * @returns null when complete, else a short reason ("missing manifest.json", "model.safetensors
 *          has 1200 bytes, the manifest says 5408", ...).
 */
export function verifyCheckpoint(dir: string, opts: { hashes?: boolean } = {}): string | null {
  const mpath = join(dir, "manifest.json");
  if (!existsSync(mpath)) return "missing manifest.json (the write did not finish)";
  let m: Manifest;
  try {
    m = JSON.parse(readFileSync(mpath, "utf8")) as Manifest;
  } catch (e) {
    return `unreadable manifest.json (${(e as Error).message})`;
  }
  if (m.format !== CHECKPOINT_FORMAT || typeof m.files !== "object" || m.files === null) return `manifest.json is not an ${CHECKPOINT_FORMAT} manifest`;
  for (const [name, want] of Object.entries(m.files)) {
    const p = join(dir, name);
    if (!existsSync(p)) return `missing ${name}`;
    const size = statSync(p).size;
    if (size !== want.bytes) return `${name} has ${size} bytes, the manifest says ${want.bytes}`;
    if (opts.hashes !== false && hashFile(p).sha256 !== want.sha256) return `${name} does not match its SHA-256 in the manifest`;
  }
  return null;
}

/** Every `step-N` directory under `<run>/checkpoints`, newest first, each verified. */
export function scanCheckpoints(runDir: string, opts: { hashes?: boolean } = {}): CheckpointEntry[] {
  const root = checkpointsDir(runDir);
  if (!existsSync(root)) return [];
  const out: CheckpointEntry[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    const m = /^step-(\d+)$/.exec(e.name);
    if (!m || !e.isDirectory()) continue;
    out.push({ name: e.name, dir: join(root, e.name), step: Number(m[1]), problem: null });
  }
  out.sort((a, b) => b.step - a.step);
  for (const c of out) c.problem = verifyCheckpoint(c.dir, opts);
  return out;
}

/**
 * The newest complete checkpoint, and the newer ones that were skipped (with reasons).
 * @returns `latest` null when there is none.
 */
export function findLatestCheckpoint(runDir: string): { latest: CheckpointEntry | null; skipped: CheckpointEntry[] } {
  const all = scanCheckpoints(runDir);
  const i = all.findIndex((c) => c.problem === null);
  return i < 0 ? { latest: null, skipped: all } : { latest: all[i]!, skipped: all.slice(0, i) };
}

/** Hard-link (or, where links fail, copy) every file of `from` into `to` (created). */
export function linkTree(from: string, to: string): void {
  for (const f of listFiles(from)) {
    const dst = join(to, f);
    mkdirSync(join(dst, ".."), { recursive: true });
    try {
      linkSync(join(from, f), dst);
    } catch {
      copyFileSync(join(from, f), dst);
    }
  }
}

/**
 * Publish a fully written temporary directory as `final` (a sibling): rename over it, moving an
 * existing `final` aside first (rename cannot replace a non-empty directory) and removing it after.
 */
export function publishDir(tmp: string, final: string): void {
  if (existsSync(final)) {
    const old = `${final}.old-${process.pid}`;
    rmSync(old, { recursive: true, force: true });
    renameSync(final, old);
    renameSync(tmp, final);
    rmSync(old, { recursive: true, force: true });
  } else renameSync(tmp, final);
}

/** A fresh temporary directory beside `final` (`.tmp-<name>-<pid>`). */
export function tempDirFor(final: string): string {
  const parts = final.split(/[\\/]/);
  const name = parts.pop()!;
  const tmp = join(parts.join("/") || ".", `.tmp-${name}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  return tmp;
}

/**
 * Write checkpoint `step-N` atomically: `fill(tmp)` writes its files into a temporary directory,
 * then the manifest is written, the directory renamed to `step-N`, `latest` updated and old
 * checkpoints pruned to the newest `keepLast` complete ones.
 * @returns the checkpoint directory.
 */
export async function writeCheckpoint(runDir: string, step: number, keepLast: number, fill: (tmp: string) => Promise<void>): Promise<string> {
  const root = checkpointsDir(runDir);
  mkdirSync(root, { recursive: true });
  const final = join(root, `step-${step}`);
  const tmp = tempDirFor(final);
  await fill(tmp);
  writeManifest(tmp, step);
  publishDir(tmp, final);
  writeFileAtomic(join(root, "latest"), `step-${step}\n`);
  pruneCheckpoints(runDir, keepLast);
  return final;
}

/**
 * Keep the newest `keepLast` complete checkpoints; remove older ones, incomplete `step-N`
 * directories older than the newest complete one, and leftover temporary directories.
 * Checks sizes only (hashes were checked when a checkpoint was resumed or just written).
 */
export function pruneCheckpoints(runDir: string, keepLast: number): void {
  const root = checkpointsDir(runDir);
  if (!existsSync(root)) return;
  for (const e of readdirSync(root)) if (/^\.tmp-|\.old-\d+$/.test(e)) rmSync(join(root, e), { recursive: true, force: true });
  const all = scanCheckpoints(runDir, { hashes: false });
  let kept = 0;
  let seenComplete = false;
  for (const c of all) {
    if (c.problem === null) {
      seenComplete = true;
      if (++kept <= keepLast) continue;
      rmSync(c.dir, { recursive: true, force: true });
    } else if (seenComplete) rmSync(c.dir, { recursive: true, force: true });
  }
}

/** Remove every `step-N` newer than `step` (after resuming from step N: they are not part of this history). */
export function removeCheckpointsAfter(runDir: string, step: number): string[] {
  const removed: string[] = [];
  for (const c of scanCheckpoints(runDir, { hashes: false })) {
    if (c.step > step) {
      rmSync(c.dir, { recursive: true, force: true });
      removed.push(c.name);
    }
  }
  return removed;
}
