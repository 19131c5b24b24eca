/**
 * The test forms the code verifier grades (rlvr's own), as strict zod schemas, and the checks that
 * turn anything else into an error naming the field — never an empty test.
 *
 * - stdio:    `{input, output, name?}` — both strings; the program's stdout must match `output`.
 * - function: `{call, expected, tolerance?, absTolerance?, name?}` — `expected` must be present
 *             (`null` when the call returns nothing); JSON data, integers beyond ±2^53 as bigint
 *             (parse rows with `parseCodeJson`, which keeps them exact).
 * - assert:   `{assert, name?}` — Python `assert …` statements, or JS `assert.<method>(…)` calls.
 *
 * Refused with a hint: plain strings (MBPP's `test_list` needs `format: mbpp`), `{test}`
 * (HumanEval's needs `format: humaneval`), `{input, expected_output}`, `{stdin, stdout}`,
 * `{call, output}`, unknown keys, a list of stdio tests that all expect empty output (a program
 * printing nothing would pass), an empty list.
 */
import { z } from "zod";
import { isInteger, isSafeNumber, parse as parseLossless } from "lossless-json";

/** A test as the sandbox runner takes it (validated by `parseCodeTests`). */
export interface CodeTest {
  name?: string;
  input?: string;
  output?: string;
  call?: string;
  expected?: unknown;
  /** Dataset converters only (APPS call tests): a second accepted value. */
  alsoExpected?: unknown;
  assert?: string;
  /** Relative tolerance: |got − expected| ≤ tolerance × |expected| (no absolute floor). */
  tolerance?: number;
  /** Absolute tolerance: |got − expected| ≤ absTolerance (either one suffices). */
  absTolerance?: number;
}

/** Why a value cannot be an `expected` (null when it can). */
function expectedProblem(v: unknown, depth = 0): string | null {
  if (depth > 200) return "nested too deeply";
  if (v === undefined && depth === 0) return 'a call test needs "expected" (null when the call returns nothing)';
  if (v === null || typeof v === "boolean" || typeof v === "string" || typeof v === "bigint") return null;
  if (typeof v === "number") {
    if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
      return `${v} is an integer beyond ±2^53 that JSON.parse has rounded; write the check as an assert ({"assert": "assert f(…) == <digits>"}) or load the rows with parseCodeJson (lossless; rlvr verify does)`;
    }
    return null;
  }
  if (Array.isArray(v)) {
    for (const x of v) {
      const p = expectedProblem(x, depth + 1);
      if (p) return p;
    }
    return null;
  }
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    for (const x of Object.values(v as object)) {
      const p = expectedProblem(x, depth + 1);
      if (p) return p;
    }
    return null;
  }
  return `not JSON data (${typeof v})`;
}

const expectedValue = z.unknown().superRefine((v, ctx) => {
  const p = expectedProblem(v);
  if (p) ctx.addIssue({ code: "custom", message: p });
});
const tolerance = z.number().finite().nonnegative();

/** `{input, output}`: stdin in, stdout compared. */
export const stdioTestSchema = z.strictObject({ name: z.string().optional(), input: z.string(), output: z.string() });
/** `{call, expected}`: an expression's value compared with `expected`. */
export const callTestSchema = z
  .strictObject({ name: z.string().optional(), call: z.string().min(1), expected: expectedValue, tolerance: tolerance.optional(), absTolerance: tolerance.optional() })
  .refine((o) => "expected" in o, { message: 'a call test needs "expected" (null when the call returns nothing)', path: ["expected"] });
/** `{assert}`: statements that must hold. */
export const assertTestSchema = z.strictObject({ name: z.string().optional(), assert: z.string().min(1) });

/** The three forms, told apart by their key (call / assert / input+output). */
export const codeTestSchema = z.union([callTestSchema, assertTestSchema, stdioTestSchema]);

/** Hints for keys of other formats that look like test fields. */
const KEY_HINTS: Record<string, string> = {
  expected_output: 'stdin/stdout tests are {"input", "output"}',
  stdout: 'stdin/stdout tests are {"input", "output"}',
  stdin: 'stdin/stdout tests are {"input", "output"}',
  test: 'HumanEval\'s "test" (def check(candidate)) needs format: humaneval with "entry_point"; an assert test is {"assert": "…"}',
  inputs: 'APPS/TACO\'s {"inputs", "outputs"} go in "input_output" with format: apps',
  outputs: 'APPS/TACO\'s {"inputs", "outputs"} go in "input_output" with format: apps',
  fn_name: 'APPS/TACO\'s fn_name goes in "input_output" with format: apps',
  testtype: "LiveCodeBench's test cases go in public_test_cases with format: livecodebench",
};

/** Error for one test, naming the field (`at` like "tests[0]"). */
export class CodeTestError extends Error {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`${field}: ${detail}`);
  }
}

/**
 * Validate one test of rlvr's forms.
 * @throws CodeTestError naming the field and the fix
 */
export function parseCodeTest(t: unknown, at: string): CodeTest {
  if (typeof t === "string") {
    throw new CodeTestError(at, 'a string is not a test form this verifier knows (MBPP asserts need format: mbpp, with the strings under "test_list"; else write {"assert": "…"})');
  }
  if (t === null || typeof t !== "object" || Array.isArray(t)) {
    throw new CodeTestError(at, `expected a test object ({"input", "output"}, {"call", "expected"} or {"assert"}), got ${Array.isArray(t) ? "an array" : t === null ? "null" : typeof t}`);
  }
  const o = t as Record<string, unknown>;
  const keys = Object.keys(o);
  const form = "call" in o ? "call" : "assert" in o ? "assert" : "input" in o || "output" in o ? "stdio" : null;
  const allowed = { call: ["name", "call", "expected", "tolerance", "absTolerance"], assert: ["name", "assert"], stdio: ["name", "input", "output"] };
  const unknown = keys.filter((k) => !(form ? allowed[form] : []).includes(k));
  if (form === null || unknown.length) {
    const k = unknown.find((x) => KEY_HINTS[x]) ?? unknown[0];
    const hint = k && KEY_HINTS[k] ? KEY_HINTS[k] : form === "call" && k === "output" ? 'a call test\'s value is "expected" ("output" is for stdin/stdout tests)' : null;
    const what = form ? `unknown key "${k}" in a ${form} test` : `no test form has the keys ${keys.map((x) => `"${x}"`).join(", ") || "(none)"}`;
    throw new CodeTestError(form ? `${at}.${k}` : at, `${what} (${hint ?? 'forms: {"input", "output"}, {"call", "expected"}, {"assert"}'})`);
  }
  const schema = form === "call" ? callTestSchema : form === "assert" ? assertTestSchema : stdioTestSchema;
  const r = schema.safeParse(o);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const path = issue.path.length ? `${at}.${issue.path.join(".")}` : at;
    const missing = issue.code === "invalid_type" && (o as Record<string, unknown>)[String(issue.path[0])] === undefined;
    throw new CodeTestError(path, missing ? `missing (a ${form} test needs ${allowed[form].filter((x) => !["name", "tolerance", "absTolerance"].includes(x)).join(" and ")})` : issue.message);
  }
  return r.data as CodeTest;
}

/**
 * Validate a list of tests of rlvr's forms.
 * @param at the field's name in messages (default "tests")
 * @throws CodeTestError naming the first bad test and field
 */
export function parseCodeTests(tests: unknown, at = "tests"): CodeTest[] {
  if (!Array.isArray(tests)) throw new CodeTestError(at, `expected a list of tests, got ${tests === null ? "null" : typeof tests}`);
  if (tests.length === 0) throw new CodeTestError(at, "no tests (an empty list would grade nothing)");
  const out = tests.map((t, i) => parseCodeTest(t, `${at}[${i}]`));
  checkStdioNotEmpty(out, at);
  return out;
}

/** A program that prints nothing must not pass: refuse stdio tests that all expect no output. */
export function checkStdioNotEmpty(tests: CodeTest[], at: string): void {
  const stdio = tests.filter((t) => t.call == null && t.assert == null);
  if (stdio.length && stdio.length === tests.length && stdio.every((t) => (t.output ?? "").trim() === "")) {
    throw new CodeTestError(at, "every stdin/stdout test expects empty output, so a program printing nothing would pass; give the expected output");
  }
}

/**
 * Parse JSON keeping integers exact (lossless-json): integers beyond ±2^53 become bigint, every
 * other number a JS number (as Python's json.loads reads them).
 * @throws SyntaxError for invalid JSON
 */
export function parseCodeJson(text: string): unknown {
  return parseLossless(text, null, (s: string) => (isInteger(s) && !isSafeNumber(s) ? BigInt(s) : Number(s)));
}
