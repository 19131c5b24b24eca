/**
 * The code-runner tool: runs the call's text as a program in the rewards layer's sandbox
 * (src/rewards/code/sandbox.ts: no network, resource limits, throw-away work dir, wall-clock
 * kill) and returns what it printed.
 */
import { makeWorkdir, runSandboxed, type Language } from "../../rewards/code/sandbox.ts";

/** Most characters of output kept in the observation. */
export const CODE_TOOL_MAX_OUTPUT = 2000;

/**
 * Run `code` once in the sandbox.
 * @returns stdout (trimmed, at most CODE_TOOL_MAX_OUTPUT characters); on failure the last line of
 *   stderr prefixed "error: ", or "error: timeout".
 * Never throws for anything the program does; rejects only when the interpreter is missing.
 */
export async function runCodeTool(code: string, language: Language, opts: { timeoutMs?: number } = {}): Promise<string> {
  const file = language === "python" ? "main.py" : "main.js";
  const wd = makeWorkdir({ [file]: code });
  try {
    const r = await runSandboxed({ language, workdir: wd.path, args: [file], limits: { timeoutMs: opts.timeoutMs ?? 5000, maxOutputBytes: 64 * 1024 } });
    if (r.timedOut) return "error: timeout";
    if (r.exitCode !== 0) {
      const last = r.stderr.trim().split("\n").pop() ?? "";
      return `error: ${last || `exit code ${r.exitCode ?? r.signal}`}`.slice(0, CODE_TOOL_MAX_OUTPUT);
    }
    return r.stdout.trim().slice(0, CODE_TOOL_MAX_OUTPUT);
  } finally {
    wd.dispose();
  }
}
