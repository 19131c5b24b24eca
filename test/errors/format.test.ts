/** How the CLI prints errors (src/util/errors.ts): one line, the kind first, no stack unless RLVR_DEBUG. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatError, ioError, isDebug, isUserError, UserError } from "../../src/util/errors.ts";

const sys = (code: string, message: string, extra: Record<string, string> = {}) => Object.assign(new Error(message), { code, ...extra });

test("messages that start with their kind are kept; others get 'error: '", () => {
  assert.equal(formatError(new UserError("config error in a.yaml at rl.groupSize: Too big"), false), "config error in a.yaml at rl.groupSize: Too big");
  assert.equal(formatError(new Error("dataset error at x.jsonl line 3: missing field"), false), "dataset error at x.jsonl line 3: missing field");
  assert.equal(formatError(new Error('unknown task "x"; known tasks: a, b'), false), 'error: unknown task "x"; known tasks: a, b');
  assert.equal(formatError(new RangeError("task addition: difficulty must be an integer in [1, 18], got 99"), false), "error: task addition: difficulty must be an integer in [1, 18], got 99");
  assert.equal(formatError("a string", false), "error: a string");
  // A config error listing several problems keeps one line per problem; stack-like lines are dropped.
  assert.equal(formatError(new Error("config error at a: x\nconfig error at b: y\n    at f (file.ts:1:1)"), false), "config error at a: x\nconfig error at b: y");
});

test("bugs say so and point to RLVR_DEBUG; RLVR_DEBUG prints the stack and causes", () => {
  const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
  assert.equal(formatError(bug, false), "error: Cannot read properties of undefined (reading 'x') (TypeError; a bug in rlvr? RLVR_DEBUG=1 shows the stack trace)");
  assert.equal(isUserError(bug), false);
  assert.equal(isUserError(new RangeError("Invalid array length")), false);
  assert.equal(isUserError(new RangeError("--n must be >= 1")), true);
  const withCause = new UserError("I/O error at runs/a: ENOSPC", { cause: new Error("inner") });
  const debug = formatError(withCause, true);
  assert.match(debug, /^UserError: I\/O error at runs\/a: ENOSPC\n\s+at /);
  assert.match(debug, /\ncaused by: Error: inner\n\s+at /);
  const env = process.env.RLVR_DEBUG;
  try {
    for (const [v, want] of [["1", true], ["0", false], ["", false]] as const) {
      process.env.RLVR_DEBUG = v;
      assert.equal(isDebug(), want);
    }
  } finally {
    if (env === undefined) delete process.env.RLVR_DEBUG;
    else process.env.RLVR_DEBUG = env;
  }
});

test("system errors name the path and the code in words; ioError adds what was saved", () => {
  assert.equal(formatError(sys("ENOENT", "ENOENT: no such file or directory, open 'd.jsonl'", { path: "d.jsonl", syscall: "open" }), false), "I/O error at d.jsonl: ENOENT: no such file or directory, open 'd.jsonl'");
  assert.equal(formatError(sys("ENOSPC", "ENOSPC: no space left on device, write", { syscall: "write" }), false), "I/O error: ENOSPC: no space left on device, write (no space left on the device)");
  const wrapped = ioError(sys("ENOSPC", "ENOSPC: no space left on device, write", { syscall: "write" }), "runs/a", "the newest complete checkpoint is runs/a/checkpoints/step-4") as Error;
  assert.ok(wrapped instanceof UserError);
  assert.equal(wrapped.message, "I/O error at runs/a: ENOSPC (no space left on the device); the newest complete checkpoint is runs/a/checkpoints/step-4");
  const other = ioError(sys("EACCES", "EACCES: permission denied, open 'runs/a/metrics.jsonl'", { path: "runs/a/metrics.jsonl", syscall: "open" }), "runs/a") as Error;
  assert.equal(other.message, "I/O error at runs/a (open runs/a/metrics.jsonl): EACCES (permission denied)");
  // An input outside the run directory that cannot be read is named alone.
  const input = ioError(sys("ENOENT", "ENOENT: no such file or directory, open '/data/t.jsonl'", { path: "/data/t.jsonl", syscall: "open" }), "runs/a", "saved") as Error;
  assert.equal(input.message, "I/O error at /data/t.jsonl: ENOENT (no such file or directory)");
  const notIo = new Error("plain");
  assert.equal(ioError(notIo, "runs/a"), notIo, "other errors pass through unchanged");
});
