/**
 * A fresh start needs an empty run directory: `rlvr train` / `train()` into an `out` that already
 * holds a run (finished, interrupted or failed) would append its logs to the old ones and
 * overwrite its config and checkpoints, mixing two runs. So a fresh start is refused unless the
 * caller asks for `overwrite`, which deletes exactly the files a run writes (RUN_FILES) and
 * nothing else in the directory. A directory holding only the config.yaml of a start that failed in
 * its setup is reused. A live run is refused earlier, by the run lock (./lock.ts).
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../util/errors.ts";

/** What a run writes into its directory (docs/runs.md); `overwrite` deletes these and only these. */
export const RUN_FILES = ["config.yaml", "metrics.jsonl", "samples.jsonl", "eval.jsonl", "report.md", "checkpoints"] as const;
/**
 * What shows that a run got past its setup. A directory with only a config.yaml holds a start
 * that failed before its first log line (a config or data error): a fresh start may reuse it.
 */
const STARTED = RUN_FILES.filter((f) => f !== "config.yaml");

/** Whether a run file holds something a second run would mix with: checkpoints, or a log with content (an empty or special file — e.g. a test's /dev/full — holds nothing). */
function holdsData(path: string): boolean {
  if (!existsSync(path)) return false;
  const st = statSync(path);
  return st.isDirectory() || (st.isFile() && st.size > 0);
}

/** A fresh start into a directory that holds a run. */
export class RunDirError extends UserError {
  override name = "RunDirError";
}

/** The run files present in `dir` (directories with a trailing "/"). */
export function runFilesIn(dir: string): string[] {
  return RUN_FILES.filter((f) => existsSync(join(dir, f))).map((f) => (f === "checkpoints" ? "checkpoints/" : f));
}

/**
 * Make `dir` ready for a fresh run.
 * @param overwrite delete the run files already there (RUN_FILES) instead of refusing
 * @param notice receives one line naming what `overwrite` deleted
 * @throws RunDirError when `dir` holds run files and `overwrite` is not set, e.g.
 *   `run directory runs/a already holds a run (config.yaml, metrics.jsonl, checkpoints/); continue it with --resume runs/a, set a new out (--out), or pass --overwrite to delete those files`
 */
export function prepareFreshRunDir(dir: string, overwrite: boolean, notice: (line: string) => void): void {
  const found = runFilesIn(dir);
  if (!STARTED.some((f) => holdsData(join(dir, f)))) return; // empty, only a failed start's config.yaml (rewritten next), or empty logs
  if (!overwrite) {
    throw new RunDirError(
      `run directory ${dir} already holds a run (${found.join(", ")}); continue it with --resume ${dir}, set a new out (--out), or pass --overwrite (overwrite: true in train()) to delete those files`,
    );
  }
  for (const f of found) rmSync(join(dir, f), { recursive: true, force: true });
  notice(`overwrite: deleted ${found.map((f) => join(dir, f)).join(", ")}`);
}
