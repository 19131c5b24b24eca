/**
 * Errors caused by what a user gave rlvr (a config, a dataset, a file, a flag) and how the CLI
 * prints them: one line that names the file / line / field and the fix, never a stack trace
 * (`RLVR_DEBUG=1` prints the stack as well).
 *
 * Every command's errors pass through `formatError` in src/cli/main.ts. A message that already
 * starts with its kind ("config error in run.yaml at rl.groupSize: …", "dataset error at …",
 * "I/O error …") is printed as it is; any other gets the prefix "error: ". Errors that look like
 * bugs in rlvr (TypeError, ReferenceError, …) say so and point to RLVR_DEBUG.
 */
import { resolve, sep } from "node:path";

/** A problem with the user's input; the message is the whole story (no stack needed). */
export class UserError extends Error {
  override name = "UserError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Node's system-error shape (fs, child_process, net). */
interface SystemError extends Error {
  code?: string;
  syscall?: string;
  path?: string;
  dest?: string;
}

/** Plain-words meaning of common system error codes. */
const CODES: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  EEXIST: "already exists",
  EMFILE: "too many open files",
  EIO: "input/output error",
};

/** True for an error raised by the operating system (has a string `code` like "ENOSPC"). */
export function isSystemError(e: unknown): e is SystemError {
  return e instanceof Error && typeof (e as SystemError).code === "string" && /^E[A-Z0-9]+$/.test((e as SystemError).code!);
}

/**
 * Turn an I/O failure into a UserError naming the path and what was kept (a failure on a file
 * outside `path`, such as an input that cannot be read, names that file only).
 * @param e      the error thrown by fs (ENOSPC, EACCES, …); anything else is returned unchanged
 * @param path   the file or directory being written or read
 * @param saved  what is safe on disk, e.g. "the last complete checkpoint is runs/a/checkpoints/step-20"
 */
export function ioError(e: unknown, path: string, saved?: string): unknown {
  if (!isSystemError(e)) return e;
  const code = e.code!;
  const what = CODES[code] ?? e.message.replace(/^E[A-Z0-9]+: /, "").split(",")[0];
  // A file outside `path` (an input that cannot be read): name it alone.
  if (e.path && !isInside(e.path, path)) return new UserError(`I/O error at ${e.path}: ${code} (${what})`, { cause: e });
  const where = e.path && e.path !== path ? `${path} (${e.syscall ?? "access"} ${e.path})` : path;
  return new UserError(`I/O error at ${where}: ${code} (${what})${saved ? `; ${saved}` : ""}`, { cause: e });
}

/** Whether `p` is `dir` or lies under it (after resolving both). */
function isInside(p: string, dir: string): boolean {
  const a = resolve(p);
  const b = resolve(dir);
  return a === b || a.startsWith(b.endsWith(sep) ? b : b + sep);
}

/** Error names that mean a bug in rlvr (or a library), not in the input. (RangeError is not one: rlvr throws it for out-of-range options.) */
const BUG_NAMES = new Set(["TypeError", "ReferenceError", "EvalError", "AssertionError", "InternalError"]);
/** V8's own RangeErrors: a size or recursion past the engine's limits. */
const V8_LIMITS = /^(?:Invalid (?:typed )?array length|Maximum call stack size exceeded|Array buffer allocation failed|Invalid string length)/;
/** A message that starts with its kind: "config error …", "dataset error at …", "error: …", "I/O error …". */
const KIND_PREFIX = /^(?:[A-Za-z][\w-]*(?: [\w-]+){0,2} error\b|error:|I\/O error)/;

/**
 * True when `e` reads as a problem with the input rather than a bug: UserError and every named
 * error class of rlvr (ConfigError, DatasetError, ResumeError, …), system errors, and plain Errors
 * (rlvr throws those for bad input, with messages that name the fix); false for TypeError,
 * ReferenceError and V8's own RangeErrors ("Invalid array length", …), which mean a bug or a size
 * past V8's limits.
 */
export function isUserError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e instanceof UserError || isSystemError(e)) return true;
  if (e.name === "RangeError" && V8_LIMITS.test(e.message)) return false;
  return !BUG_NAMES.has(e.name) || KIND_PREFIX.test(e.message);
}

/**
 * The text the CLI prints for an error.
 * @param e      anything thrown
 * @param debug  include the stack trace (and causes); default: `RLVR_DEBUG` is set to a non-empty value other than "0"
 * @returns without debug, one line per problem and no stack frames: the message as it is when it
 *   starts with its kind ("config error …"), else prefixed "error: "; system errors name their
 *   code and path; errors that look like bugs add "(a bug in rlvr? RLVR_DEBUG=1 shows the stack trace)".
 */
export function formatError(e: unknown, debug = isDebug()): string {
  if (!(e instanceof Error)) return `error: ${String(e)}`;
  if (debug) {
    let out = e.stack ?? `${e.name}: ${e.message}`;
    for (let c = e.cause, n = 0; c instanceof Error && n < 5; c = c.cause, n++) out += `\ncaused by: ${c.stack ?? c.message}`;
    return out;
  }
  // Keep the message's own lines (a config error lists one problem per line), drop stack-like ones.
  let msg = e.message
    .split("\n")
    .filter((l) => !/^\s+at /.test(l))
    .map((l) => l.trimEnd())
    .filter((l) => l !== "")
    .join("\n");
  if (msg === "") msg = e.name;
  if (isSystemError(e) && !msg.startsWith("I/O error")) {
    const what = CODES[e.code!];
    msg = `I/O error${e.path ? ` at ${e.path}` : ""}: ${msg}${what && !msg.includes(what) ? ` (${what})` : ""}`;
  }
  if (!KIND_PREFIX.test(msg)) msg = `error: ${msg}`;
  if (!isUserError(e)) msg += ` (${e.name}; a bug in rlvr? RLVR_DEBUG=1 shows the stack trace)`;
  return msg;
}

/** True when RLVR_DEBUG asks for stack traces. */
export function isDebug(): boolean {
  const v = process.env.RLVR_DEBUG;
  return v !== undefined && v !== "" && v !== "0";
}
