/**
 * Score a code solution by running it against test cases in the sandbox.
 *
 * Two kinds of test case (mix freely):
 * - stdio:    `{input, output}` — the program runs once per case with `input` on stdin; its stdout
 *             is compared with `output` (see `compare`). One process per case.
 * - function: `{call, expected}` — `call` is an expression in the solution's language evaluated
 *             after the solution is loaded (e.g. `add(2, 3)`); its value, converted through JSON
 *             (tuples → arrays), must deep-equal `expected` (numbers within `tolerance` relative
 *             error when given). `{assert}` — a statement that must not throw (Python `assert …`,
 *             JS `assert.deepStrictEqual(…)`). All function cases share one process.
 */
import { makeWorkdir, nonce, runSandboxed, type Language, type SandboxLimits, type SandboxResult } from "./sandbox.ts";
import { NODE_HARNESS, PYTHON_HARNESS } from "./harness.ts";
import type { VerifierResult } from "../types.ts";

export interface CodeTest {
  name?: string;
  input?: string;
  output?: string;
  call?: string;
  expected?: unknown;
  assert?: string;
  tolerance?: number;
}

export interface CodeRunOptions {
  language: Language;
  /** Per-process limits (timeoutMs applies to each stdio case and to the function-case batch). */
  limits?: Partial<SandboxLimits>;
  /** "fraction" (default): passed/total. "all": 1 only when every case passes. */
  scoring?: "fraction" | "all";
  /** stdout comparison for stdio cases: "lines" (default; trailing spaces and blank lines
   *  ignored), "tokens" (whitespace-separated tokens), "exact". */
  compare?: "lines" | "tokens" | "exact";
  /** Pull the last fenced code block out of a model response first (default true). */
  extractCode?: boolean;
}

export interface CodeCaseResult {
  index: number;
  passed: boolean;
  reason: string;
}

export interface CodeResult extends VerifierResult {
  passed: number;
  total: number;
  cases: CodeCaseResult[];
}

const FENCE = /```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)```/g;
const LANG_TAGS: Record<Language, string[]> = {
  python: ["python", "py", "python3"],
  javascript: ["javascript", "js", "node", "mjs", "cjs"],
};

/**
 * The code to run from a model response: the last fenced block tagged with the language, else the
 * last fenced block, else the whole response.
 */
export function extractCode(response: string, language: Language): string {
  let lastTagged: string | null = null;
  let last: string | null = null;
  for (const m of response.matchAll(FENCE)) {
    last = m[2]!;
    if (LANG_TAGS[language].includes(m[1]!.toLowerCase())) lastTagged = m[2]!;
  }
  return lastTagged ?? last ?? response;
}

function normalizeOutput(s: string, mode: "lines" | "tokens" | "exact"): string {
  if (mode === "exact") return s;
  if (mode === "tokens") return s.split(/\s+/).filter(Boolean).join(" ");
  const lines = s.replace(/\r\n?/g, "\n").split("\n").map((l) => l.trimEnd());
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines.join("\n");
}

function failureReason(r: SandboxResult): string | null {
  if (r.timedOut) return "timeout";
  if (r.outputLimitExceeded) return "output limit exceeded";
  if (r.signal) return `killed by ${r.signal}`;
  if (r.exitCode !== 0) {
    const tail = r.stderr.trim().split("\n").slice(-1)[0] ?? "";
    return `exit code ${r.exitCode}${tail ? `: ${tail.slice(0, 200)}` : ""}`;
  }
  return null;
}

/** The harness's settings (env RLVR_HARNESS): where it runs, what to call, and its own limits. */
function harnessEnv(nonceTag: string, workdir: string, mode: "stdio" | "function", entry: string, lim: NonNullable<CodeRunOptions["limits"]>): string {
  return JSON.stringify({
    nonce: nonceTag,
    workdir,
    mode,
    entry,
    memBytes: (lim.memoryMb ?? 256) * 1024 * 1024,
    fileBytes: lim.maxFileBytes ?? 8 << 20,
    nproc: lim.maxProcesses ?? 64,
  });
}

const isESM = (code: string) => /^\s*(import\s[^(]|export\s)/m.test(code);

async function runStdioCase(code: string, test: CodeTest, opts: CodeRunOptions): Promise<CodeCaseResult & { index: -1 }> {
  const js = opts.language === "javascript";
  const entry = js ? (isESM(code) ? "solution.mjs" : "solution.js") : "solution.py";
  const files: Record<string, string> = { [entry]: code };
  if (!js) files["harness.py"] = PYTHON_HARNESS;
  const wd = makeWorkdir(files);
  try {
    const lim = opts.limits ?? {};
    const env: Record<string, string> = {};
    if (!js) env.RLVR_HARNESS = harnessEnv("", wd.path, "stdio", entry, lim);
    const r = await runSandboxed({
      language: opts.language,
      workdir: wd.path,
      args: js ? [entry] : ["harness.py"],
      stdin: test.input ?? "",
      env,
      limits: lim,
    });
    const fail = failureReason(r);
    if (fail) return { index: -1, passed: false, reason: fail };
    const mode = opts.compare ?? "lines";
    const ok = normalizeOutput(r.stdout, mode) === normalizeOutput(test.output ?? "", mode);
    return { index: -1, passed: ok, reason: ok ? "output matches" : `wrong output: ${JSON.stringify(r.stdout.slice(0, 120))}` };
  } finally {
    wd.dispose();
  }
}

async function runFunctionCases(code: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeCaseResult[]> {
  const js = opts.language === "javascript";
  const entry = js ? "solution.js" : "solution.py";
  const harness = js ? "harness.cjs" : "harness.py";
  const payload = tests.map((t) => ({ call: t.call ?? null, expected: t.expected ?? null, assert: t.assert ?? null, tolerance: t.tolerance ?? null }));
  const wd = makeWorkdir({ [entry]: code, [harness]: js ? NODE_HARNESS : PYTHON_HARNESS, "tests.json": JSON.stringify(payload) });
  try {
    const lim = opts.limits ?? {};
    const tag = nonce();
    const r = await runSandboxed({
      language: opts.language,
      workdir: wd.path,
      args: [harness],
      env: { RLVR_HARNESS: harnessEnv(tag, wd.path, "function", entry, lim) },
      limits: lim,
    });
    const seen = new Map<number, CodeCaseResult>();
    for (const line of r.stdout.split("\n")) {
      const at = line.indexOf(tag);
      if (at < 0) continue;
      try {
        const o = JSON.parse(line.slice(at + tag.length)) as { i: number; ok: boolean; error?: string; got?: string | null };
        if (typeof o.i !== "number" || o.i < 0 || o.i >= tests.length || seen.has(o.i)) continue;
        seen.set(o.i, {
          index: o.i,
          passed: o.ok === true,
          reason: o.ok ? "passed" : o.error ? o.error : `wrong value: ${o.got ?? "?"}`,
        });
      } catch {
        /* a garbled line: ignore */
      }
    }
    const fail = failureReason(r) ?? "no result (program ended early)";
    return tests.map((_, i) => seen.get(i) ?? { index: i, passed: false, reason: fail });
  } finally {
    wd.dispose();
  }
}

/**
 * Run `response`'s code against `tests` in the sandbox and score it.
 * @param response model output (code is extracted from fenced blocks unless extractCode=false)
 * @param tests    stdio and/or function cases (see module doc); an empty list scores 0
 * @returns score = passed/total ("fraction") or 0/1 ("all"); correct = every case passed;
 *          per-case results with reasons ("timeout", "exit code 1: …", "wrong output: …").
 * Never throws for anything the program does; a missing interpreter gives score 0 with a reason.
 */
export async function runCodeTests(response: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeResult> {
  const code = opts.extractCode === false ? response : extractCode(response, opts.language);
  if (!Array.isArray(tests) || tests.length === 0) {
    return { correct: false, score: 0, extracted: code, reason: "no test cases", passed: 0, total: 0, cases: [] };
  }
  const cases: CodeCaseResult[] = new Array(tests.length);
  try {
    const fnIdx = tests.map((t, i) => (t.call != null || t.assert != null ? i : -1)).filter((i) => i >= 0);
    const ioIdx = tests.map((_, i) => i).filter((i) => !fnIdx.includes(i));
    const jobs: Promise<void>[] = [];
    if (fnIdx.length) {
      jobs.push(
        runFunctionCases(code, fnIdx.map((i) => tests[i]!), opts).then((rs) => {
          rs.forEach((r, k) => (cases[fnIdx[k]!] = { ...r, index: fnIdx[k]! }));
        }),
      );
    }
    for (const i of ioIdx) {
      jobs.push(runStdioCase(code, tests[i]!, opts).then((r) => void (cases[i] = { ...r, index: i })));
    }
    await Promise.all(jobs);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { correct: false, score: 0, extracted: code, reason: `sandbox error: ${msg}`, passed: 0, total: tests.length, cases: [] };
  }
  const passed = cases.filter((c) => c.passed).length;
  const all = passed === tests.length;
  const score = opts.scoring === "all" ? (all ? 1 : 0) : passed / tests.length;
  const firstFail = cases.find((c) => !c.passed);
  return {
    correct: all,
    score,
    extracted: code,
    reason: all ? `all ${tests.length} tests passed` : `${passed}/${tests.length} tests passed; first failure (#${firstFail!.index}): ${firstFail!.reason}`,
    passed,
    total: tests.length,
    cases,
  };
}
