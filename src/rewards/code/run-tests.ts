/**
 * Score a code solution by running it against test cases in the sandbox.
 *
 * Tests are validated first (forms.ts): a test of no known form is an error naming the field,
 * never an empty test. Dataset formats (MBPP, HumanEval, APPS, LiveCodeBench, …) are converted
 * by formats.ts and graded with `runCodeSpec`. Kinds of test case (mix freely):
 * - stdio:    `{input, output}` — the program runs once per case with `input` on stdin; its stdout
 *             is compared with `output` (see `compare`). One process per case.
 * - function: `{call, expected}` — `call` is an expression in the solution's language evaluated
 *             after the solution is loaded (e.g. `add(2, 3)`); its value, converted through JSON
 *             (tuples → arrays), must equal `expected` as Python's `==` would (integers exact,
 *             numbers within `tolerance` relative error or `absTolerance` when given). A JS
 *             Promise is not awaited unless the call says `await`. `{assert}` — a statement that must not throw (Python `assert …`,
 *             JS `assert.deepStrictEqual(…)`). All function cases share one process.
 */
import { DEFAULT_LIMITS, makeWorkdir, runSandboxed, type Language, type SandboxLimits, type SandboxResult } from "./sandbox.ts";
import { NODE_RUNNER, PYTHON_RUNNER, PYTHON_STDIO_GUARD } from "./harness.ts";
import { PYTHON_JUDGE } from "./judge.ts";
import { evalSide, jsNames, parseJsAssert, throwsHolds, type Piece, type Side } from "./js-assert.ts";
import { sandboxSupport } from "./probe.ts";
import { decodeValue, equalsExpected, findOpaque, jsAssertHolds, showValue, type Val } from "./values.ts";
import { parseCodeTests, type CodeTest } from "./forms.ts";
import { solutionCode, type CodeSpec } from "./formats.ts";
import type { Verdict } from "../types.ts";

export type { CodeTest } from "./forms.ts";

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

export interface CodeResult extends Verdict {
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

const isESM = (code: string) => /^\s*(import\s[^(]|export\s)/m.test(code);

/** The fallback's in-process guard settings (null under bubblewrap, which needs none). */
function guardConfig(workdir: string, lim: Partial<SandboxLimits>): { work: string; mem: number; fbytes: number; nproc: number } | null {
  if (sandboxSupport().bwrap) return null;
  return { work: workdir, mem: (lim.memoryMb ?? DEFAULT_LIMITS.memoryMb) * 1024 * 1024, fbytes: lim.maxFileBytes ?? DEFAULT_LIMITS.maxFileBytes, nproc: lim.maxProcesses ?? DEFAULT_LIMITS.maxProcesses };
}

async function runStdioCase(code: string, test: CodeTest, opts: CodeRunOptions): Promise<CodeCaseResult & { index: -1 }> {
  const js = opts.language === "javascript";
  const entry = js ? (isESM(code) ? "solution.mjs" : "solution.js") : "solution.py";
  const files: Record<string, string> = { [entry]: code };
  const lim = opts.limits ?? {};
  const guard = js ? null : guardConfig("", lim);
  if (guard) files["guard.py"] = PYTHON_STDIO_GUARD;
  const wd = makeWorkdir(files);
  try {
    const args = guard ? ["guard.py", JSON.stringify({ ...guard, work: wd.path }), entry] : [entry];
    const r = await runSandboxed({ language: opts.language, workdir: wd.path, args, stdin: test.input!, limits: lim });
    const fail = failureReason(r);
    if (fail) return { index: -1, passed: false, reason: fail };
    const mode = opts.compare ?? "lines";
    const ok = normalizeOutput(r.stdout, mode) === normalizeOutput(test.output!, mode);
    return { index: -1, passed: ok, reason: ok ? "output matches" : `wrong output: ${JSON.stringify(r.stdout.slice(0, 120))}` };
  } finally {
    wd.dispose();
  }
}

const PY_KEYWORDS = new Set("and or not in is lambda if else for async await None True False".split(" "));
const PY_TOKENS = /[rRbBuUfF]{0,2}("""[\s\S]*?"""|'\'\'[\s\S]*?'\'\'|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\.\s*)?([A-Za-z_]\w*)|#[^\n]*/g;

/** The names a Python call expression uses (not attributes, keywords or the insides of strings). */
export function pyNames(src: string): string[] {
  const out = new Set<string>();
  for (const m of src.matchAll(PY_TOKENS)) if (m[3] && !m[2] && !PY_KEYWORDS.has(m[3])) out.add(m[3]);
  return [...out];
}

/** What the solution's process answered for each expression (value, error, or nothing). */
type Answer = { v: Val } | { error: string };

/**
 * Load the solution in the sandbox and evaluate `exprs` there; only typed values come back.
 * @returns one answer per expression, or a reason shared by all when none came back
 */
async function evaluateInside(code: string, exprs: Piece[], opts: CodeRunOptions): Promise<{ answers: (Answer | undefined)[]; missing: string }> {
  const js = opts.language === "javascript";
  const entry = js ? "solution.js" : "solution.py";
  const runner = js ? "runner.cjs" : "runner.py";
  const lim = opts.limits ?? {};
  const wd = makeWorkdir({ [entry]: code, [runner]: js ? NODE_RUNNER : PYTHON_RUNNER });
  try {
    const guard = js ? null : guardConfig(wd.path, lim);
    const r = await runSandboxed({ language: opts.language, workdir: wd.path, args: [runner], stdin: JSON.stringify({ entry, exprs, guard }), limits: lim, resultFd: true });
    const answers: (Answer | undefined)[] = new Array(exprs.length);
    let load: string | null = null;
    for (const line of r.results.split("\n")) {
      if (!line) continue;
      let o: { i?: unknown; v?: unknown; error?: unknown; load?: unknown };
      try {
        o = JSON.parse(line);
      } catch {
        continue;
      }
      if (!o || typeof o !== "object") continue;
      if (typeof o.load === "string" && load === null) load = o.load;
      const i = o.i;
      if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= exprs.length || answers[i] !== undefined) continue;
      answers[i] = typeof o.error === "string" ? { error: o.error.slice(0, 300) } : "v" in o ? { v: decodeValue(o.v) } : { error: "malformed result" };
    }
    const missing = load !== null ? `solution failed to load: ${load}` : (failureReason(r) ?? "no result (program ended early)");
    return { answers, missing };
  } finally {
    wd.dispose();
  }
}

/** Run the trusted Python judge (judge.ts) on one request; it never sees the solution's process. */
async function runJudge<T>(request: object, opts: CodeRunOptions): Promise<T> {
  const wd = makeWorkdir({ "judge.py": PYTHON_JUDGE });
  try {
    const r = await runSandboxed({
      language: "python",
      workdir: wd.path,
      args: ["judge.py"],
      stdin: JSON.stringify(request),
      limits: { timeoutMs: Math.max(10_000, opts.limits?.timeoutMs ?? 0), memoryMb: 512, maxOutputBytes: 16 << 20 },
    });
    const fail = failureReason(r);
    if (fail) throw new Error(`judge: ${fail}`);
    return JSON.parse(r.stdout) as T;
  } finally {
    wd.dispose();
  }
}

type PyPlan = { pieces: Piece[]; prelude: string[]; checks: string[]; shown: string[] } | { error: string };

/** Plans by assert text: a plan depends only on the test, and RL grades each test many times. */
const planCache = new Map<string, PyPlan>();
const PLAN_CACHE_SIZE = 4096;

/** The judge's plan for each assert test (cached; one judge run for the ones not seen yet). */
async function planAsserts(asserts: readonly (readonly [number, string])[], opts: CodeRunOptions): Promise<Map<number, PyPlan>> {
  const missing = [...new Set(asserts.map(([, a]) => a).filter((a) => !planCache.has(a)))];
  if (missing.length) {
    const { plans } = await runJudge<{ plans: PyPlan[] }>({ op: "plan", asserts: missing }, opts);
    missing.forEach((a, k) => {
      if (planCache.size >= PLAN_CACHE_SIZE) planCache.delete(planCache.keys().next().value!);
      planCache.set(a, plans[k]!);
    });
  }
  return new Map(asserts.map(([i, a]) => [i, planCache.get(a)!]));
}

async function runPythonFunctionCases(code: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeCaseResult[]> {
  const asserts = tests.map((t, i) => (t.assert != null ? i : -1)).filter((i) => i >= 0);
  const planOf = await planAsserts(asserts.map((i) => [i, String(tests[i]!.assert)] as const), opts);
  // One expression list: each call test's call, then each assert's pieces.
  const exprs: Piece[] = [];
  const slots: number[][] = tests.map((t, i) => {
    if (t.assert == null) return [exprs.push({ x: String(t.call), anyOwn: pyNames(String(t.call)) }) - 1];
    const p = planOf.get(i)!;
    return "error" in p ? [] : p.pieces.map((x) => exprs.push(x) - 1);
  });
  const { answers, missing } = exprs.length ? await evaluateInside(code, exprs, opts) : { answers: [], missing: "" };
  const results: (CodeCaseResult | null)[] = tests.map((t, i) => {
    if (t.assert != null) return null;
    return compareCall(i, answers[slots[i]![0]!], t, missing);
  });
  const items = asserts.filter((i) => !("error" in planOf.get(i)!));
  if (items.length) {
    const verdicts = (
      await runJudge<{ verdicts: { ok: boolean; reason: string }[] }>(
        {
          op: "judge",
          items: items.map((i) => {
            const p = planOf.get(i) as Exclude<PyPlan, { error: string }>;
            return { prelude: p.prelude, checks: p.checks, shown: p.shown, values: slots[i]!.map((k) => wireAnswer(answers[k], missing)) };
          }),
        },
        opts,
      )
    ).verdicts;
    items.forEach((i, k) => (results[i] = { index: i, passed: verdicts[k]?.ok === true, reason: verdicts[k]?.reason ?? "no verdict" }));
  }
  for (const i of asserts) {
    const p = planOf.get(i)!;
    if ("error" in p) results[i] = { index: i, passed: false, reason: `unsupported assert test: ${p.error}` };
  }
  return results.map((r, i) => r ?? { index: i, passed: false, reason: "no verdict" });
}

/** An answer back on the wire for the judge (errors as {error}). */
function wireAnswer(a: Answer | undefined, missing: string): unknown {
  if (a === undefined) return { error: missing };
  if ("error" in a) return { error: a.error };
  return toWire(a.v);
}

function toWire(v: Val): unknown {
  if (v === null || typeof v !== "object") {
    if (typeof v === "number" && !Number.isFinite(v)) return { $: "float", v: Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf" };
    return v;
  }
  if (Array.isArray(v)) return v.map(toWire);
  switch (v.t) {
    case "int":
      return { $: "int", v: v.v.toString() };
    case "float":
      return { $: "float", v: v.repr };
    case "dict":
      return { $: "dict", v: v.v.map(([k, x]) => [toWire(k), toWire(x)]) };
    case "tuple":
    case "set":
    case "frozenset":
      return { $: v.t, v: v.v.map(toWire) };
    case "complex":
      return { $: "complex", v: v.v.map(toWire) };
    case "opaque":
      return { $: "opaque", type: v.type };
    default:
      return { $: v.t, v: (v as { v?: unknown }).v };
  }
}

function compareCall(index: number, a: Answer | undefined, t: CodeTest, missing: string): CodeCaseResult {
  if (a === undefined) return { index, passed: false, reason: missing };
  if ("error" in a) return { index, passed: false, reason: a.error };
  const op = findOpaque(a.v);
  if (op !== null) return { index, passed: false, reason: `returned a ${op}, which is not plain data` };
  const tol = { rel: t.tolerance, abs: t.absTolerance };
  const ok = equalsExpected(a.v, t.expected ?? null, tol) || ("alsoExpected" in t && equalsExpected(a.v, t.alsoExpected, tol));
  return { index, passed: ok, reason: ok ? "passed" : `wrong value: ${showValue(a.v)}` };
}

const THROWS_LIKE = new Set(["throws", "doesNotThrow", "rejects", "doesNotReject"]);
const isThrowsLike = (m: string): m is "throws" | "doesNotThrow" | "rejects" | "doesNotReject" => THROWS_LIKE.has(m);

async function runJsFunctionCases(code: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeCaseResult[]> {
  const exprs: Piece[] = [];
  // A piece's root name must be the solution's own: a JS global (encodeURI, Reflect, …) that the
  // solution never defined does not answer for it.
  const rooted = (p: Piece): Piece => {
    const o = typeof p === "string" ? { x: p } : p;
    const root = jsNames(o.x)[0];
    return o.own || !root ? o : { ...o, anyOwn: [root] };
  };
  const place = (side: Side, throwsLike = false) => side.pieces.map((p) => exprs.push(throwsLike ? p : rooted(p)) - 1);
  const plans = tests.map((t) => {
    if (t.assert == null) {
      const aw = /^\s*await\s+([\s\S]+)$/.exec(String(t.call));
      const x = aw ? aw[1]! : String(t.call);
      return { call: exprs.push({ x, anyOwn: jsNames(x), ...(aw ? { await: true } : {}) }) - 1 };
    }
    try {
      return { checks: parseJsAssert(String(t.assert)).map((c) => ({ c, actual: place(c.actual, isThrowsLike(c.method)), expected: c.expected ? place(c.expected) : [] })) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  });
  const { answers, missing } = exprs.length ? await evaluateInside(code, exprs, opts) : { answers: [], missing: "" };
  return tests.map((t, i): CodeCaseResult => {
    const p = plans[i]!;
    if ("error" in p) return { index: i, passed: false, reason: `unsupported assert test: ${p.error}` };
    if ("call" in p) return compareCall(i, answers[p.call!], t, missing);
    for (const { c, actual, expected } of p.checks!) {
      if (isThrowsLike(c.method)) {
        const a = answers[actual[0]!];
        if (a === undefined) return { index: i, passed: false, reason: missing };
        if ("error" in a) return { index: i, passed: false, reason: a.error };
        let r: { ok: boolean; reason: string };
        try {
          r = throwsHolds(c.method, a.v, c.validator);
        } catch (e) {
          r = { ok: false, reason: `unsupported assert test: ${String((e as Error).message ?? e).slice(0, 200)}` };
        }
        if (!r.ok) return { index: i, passed: false, reason: r.reason };
        continue;
      }
      const judged: Val[] = [];
      for (const [side, slots] of [[c.actual, actual], [c.expected, expected]] as const) {
        if (!side) continue;
        const values: unknown[] = [];
        for (const k of slots) {
          const a = answers[k];
          if (a === undefined) return { index: i, passed: false, reason: missing };
          if ("error" in a) return { index: i, passed: false, reason: a.error };
          const op = findOpaque(a.v);
          if (op !== null) return { index: i, passed: false, reason: `returned a ${op}, which is not plain data` };
          values.push(toWire(a.v));
        }
        try {
          judged.push(evalSide(side, values));
        } catch (e) {
          return { index: i, passed: false, reason: `test expression failed: ${String((e as Error).message ?? e).slice(0, 200)}` };
        }
      }
      if (!jsAssertHolds(c.method, judged[0]!, judged[1])) return { index: i, passed: false, reason: `assert.${c.method} failed: got ${showValue(judged[0]!)}` };
    }
    return { index: i, passed: true, reason: "passed" };
  });
}

async function runFunctionCases(code: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeCaseResult[]> {
  return opts.language === "javascript" ? runJsFunctionCases(code, tests, opts) : runPythonFunctionCases(code, tests, opts);
}

/**
 * Run `response`'s code against `tests` in the sandbox and score it.
 * @param response model output (code is extracted from fenced blocks unless extractCode=false)
 * @param tests    stdio and/or function cases of rlvr's forms (see forms.ts)
 * @returns reward = passed/total ("fraction") or 0/1 ("all"); correct = every case passed;
 *          per-case results with reasons ("timeout", "exit code 1: …", "wrong output: …").
 * @throws CodeTestError when a test is of no known form (naming the field: "tests[2]: …") or the
 *         list is empty — a broken example, never a score. Never throws for anything the program
 *         does; a missing interpreter gives reward 0 with a reason.
 */
export async function runCodeTests(response: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeResult> {
  const checked = parseCodeTests(tests);
  const code = opts.extractCode === false ? response : extractCode(response, opts.language);
  return gradeCode(code, checked, opts);
}

/**
 * Score a response against a dataset row converted by `codeSpecOf` (formats.ts): the solution
 * runs after the row's setup code (MBPP) or completes its prompt (HumanEval).
 */
export async function runCodeSpec(response: string, spec: CodeSpec, opts: Omit<CodeRunOptions, "language">): Promise<CodeResult> {
  const code = opts.extractCode === false ? response : extractCode(response, spec.language);
  const r = await gradeCode(solutionCode(spec, code), spec.tests, { ...opts, language: spec.language });
  return { ...r, extracted: code };
}

async function gradeCode(code: string, tests: CodeTest[], opts: CodeRunOptions): Promise<CodeResult> {
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
    return { correct: false, reward: 0, extracted: code, reason: `sandbox error: ${msg}`, passed: 0, total: tests.length, cases: [] };
  }
  const passed = cases.filter((c) => c.passed).length;
  const all = passed === tests.length;
  const score = opts.scoring === "all" ? (all ? 1 : 0) : passed / tests.length;
  const firstFail = cases.find((c) => !c.passed);
  return {
    correct: all,
    reward: score,
    extracted: code,
    reason: all ? `all ${tests.length} tests passed` : `${passed}/${tests.length} tests passed; first failure (#${firstFail!.index}): ${firstFail!.reason}`,
    passed,
    total: tests.length,
    cases,
  };
}
