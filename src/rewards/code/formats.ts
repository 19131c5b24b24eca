/**
 * The public code-dataset formats, each read in its published field layout and turned into rlvr's
 * test forms (forms.ts). A row names its format (`format`, or the verifier's `options.format`) or
 * is recognised by the one field only its format has; anything else is an error naming the field.
 *
 * | format          | fields read                                                        | tests made |
 * |-----------------|--------------------------------------------------------------------|------------|
 * | `rlvr`          | `tests` (forms.ts), `language`                                      | as given   |
 * | `mbpp`          | `test_list`, `test_setup_code`, `test_imports`; `challenge_test_list` with `challengeTests` | one assert per string; setup and imports run before the solution |
 * | `humaneval`     | `test` (`def check(candidate)`), `entry_point`, `prompt`            | one assert test: `check(<entry_point>)`; the response completes `prompt`, or follows it when it defines `<entry_point>` itself |
 * | `apps` / `taco` | `input_output` (JSON text or object: `inputs`, `outputs`, `fn_name`?) | stdin/stdout, or calls of `fn_name` (`Solution().fn_name` when the code has a class Solution) with the arguments `inputs[i]`; an `outputs[i]` of one element also accepts that element (APPS's rule) |
 * | `codecontests`  | `public_tests`, `private_tests`, `generated_tests` (`{input: [], output: []}`) | stdin/stdout |
 * | `livecodebench` | `public_test_cases`, `private_test_cases` (JSON text, or base64 + zlib + pickle of it as released), `metadata` (`func_name`) | `testtype` "stdin": stdin/stdout; "functional": calls with one JSON argument per input line |
 *
 * Call-, assert- and function-based formats are Python; stdin/stdout ones run either language.
 * JSON inside fields is parsed losslessly (big integers stay exact, argument numbers keep their
 * text: `2.0` stays a float).
 */
import { inflateSync } from "node:zlib";
import { z } from "zod";
import { parse as parseLossless } from "lossless-json";
import type { Language } from "./sandbox.ts";
import { CodeTestError, checkStdioNotEmpty, parseCodeJson, parseCodeTests, type CodeTest } from "./forms.ts";

export const CODE_FORMATS = ["rlvr", "mbpp", "humaneval", "apps", "taco", "codecontests", "livecodebench"] as const;
export type CodeFormat = (typeof CODE_FORMATS)[number];

/** What the code verifier grades one row with. */
export interface CodeSpec {
  format: CodeFormat;
  language: Language;
  tests: CodeTest[];
  /** Code run before the solution (MBPP's test_setup_code and test_imports). */
  prelude: string;
  /** HumanEval: the function the response must define (else it completes `prompt`). */
  entryPoint?: string;
  prompt?: string;
}

/** The field only each format has (how a row without `format` is recognised). */
const SIGNS: [CodeFormat, string][] = [
  ["rlvr", "tests"],
  ["mbpp", "test_list"],
  ["humaneval", "entry_point"],
  ["apps", "input_output"],
  ["livecodebench", "public_test_cases"],
  ["codecontests", "public_tests"],
];

const err = (field: string, detail: string) => new CodeTestError(field, detail);
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

function str(f: Record<string, unknown>, k: string, optional = false): string | undefined {
  const v = f[k];
  if (v === undefined && optional) return undefined;
  if (typeof v !== "string") throw err(k, `expected a string, got ${v === undefined ? "nothing" : JSON.stringify(v)?.slice(0, 60)}`);
  return v;
}

/** A field holding JSON text (or the parsed value itself). */
function jsonField(f: Record<string, unknown>, k: string): unknown {
  const v = f[k];
  if (typeof v !== "string") return v;
  try {
    return parseCodeJson(v);
  } catch (e) {
    throw err(k, `not valid JSON (${(e as Error).message.slice(0, 80)})`);
  }
}

function python(language: Language, format: CodeFormat): void {
  if (language !== "python") throw err("language", `format ${format} tests Python code, got language ${language}`);
}

/** A JSON number's text kept as written (for call arguments: `2.0` stays a Python float). */
class NumText {
  constructor(readonly text: string) {}
}
const parseArgs = (text: string): unknown => parseLossless(text, null, (s: string) => new NumText(s));

/** A Python literal for a JSON value (numbers as written). */
export function pyLiteral(v: unknown): string {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (v instanceof NumText) return v.text;
  if (typeof v === "number" || typeof v === "bigint") return Number.isNaN(v) ? 'float("nan")' : v === Infinity ? 'float("inf")' : v === -Infinity ? '-float("inf")' : Object.is(v, -0) ? "-0.0" : String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pyLiteral).join(", ")}]`;
  if (typeof v === "object") return `{${Object.entries(v as object).map(([k, x]) => `${JSON.stringify(k)}: ${pyLiteral(x)}`).join(", ")}}`;
  throw new Error(`not JSON data: ${typeof v}`);
}

/** The callee of a function-call test: LeetCode-style `class Solution` method, else a function. */
const callee = (fn: string) => `(Solution().${fn} if "Solution" in globals() else ${fn})`;

/**
 * Read a pickle holding one Python str (protocols 2–5), as LiveCodeBench's releases store their
 * compressed private tests. Nothing else is accepted: no object is ever built or code run.
 * @throws Error naming the unexpected opcode
 */
export function unpickleString(b: Buffer): string {
  let i = 0;
  let s: string | null = null;
  if (b[0] === 0x80) i = 2; // PROTO n
  while (i < b.length) {
    const op = b[i++]!;
    if (op === 0x95) i += 8; // FRAME
    else if (op === 0x94) continue; // MEMOIZE
    else if ((op === 0x8c || op === 0x58 || op === 0x8d) && s === null) {
      const n = op === 0x8c ? b[i]! : op === 0x58 ? b.readUInt32LE(i) : Number(b.readBigUInt64LE(i));
      i += op === 0x8c ? 1 : op === 0x58 ? 4 : 8;
      if (i + n > b.length) throw new Error("truncated pickle");
      s = b.subarray(i, i + n).toString("utf8");
      i += n;
    } else if (op === 0x2e && s !== null) return s; // STOP
    else throw new Error(`not a pickled string (opcode 0x${op.toString(16)})`);
  }
  throw new Error("truncated pickle");
}

/** LiveCodeBench test cases: a list, JSON text of one, or base64(zlib(pickle(JSON text))). */
function lcbCases(f: Record<string, unknown>, k: string): unknown[] {
  const v = f[k];
  let list: unknown = v;
  if (typeof v === "string") {
    try {
      list = parseCodeJson(v);
    } catch {
      try {
        list = parseCodeJson(unpickleString(inflateSync(Buffer.from(v, "base64"))));
      } catch (e) {
        throw err(k, `neither JSON nor LiveCodeBench's base64+zlib+pickle encoding (${(e as Error).message.slice(0, 80)})`);
      }
    }
  }
  if (!Array.isArray(list)) throw err(k, "expected a list of test cases");
  return list;
}

const lcbCase = z.strictObject({ input: z.string(), output: z.string(), testtype: z.enum(["stdin", "functional"]) });

function fromLiveCodeBench(f: Record<string, unknown>): CodeTest[] {
  const meta = f.metadata === undefined ? {} : jsonField(f, "metadata");
  const fn = meta && typeof meta === "object" ? (meta as Record<string, unknown>).func_name : undefined;
  const keys = ["public_test_cases", ...(f.private_test_cases === undefined || f.private_test_cases === "" ? [] : ["private_test_cases"])];
  const tests: CodeTest[] = [];
  for (const k of keys) {
    lcbCases(f, k).forEach((c, i) => {
      const r = lcbCase.safeParse(c);
      if (!r.success) throw err(`${k}[${i}]${r.error.issues[0]!.path.map((p) => `.${String(p)}`).join("")}`, r.error.issues[0]!.message);
      if (r.data.testtype === "stdin") return void tests.push({ input: r.data.input, output: r.data.output });
      if (typeof fn !== "string" || !IDENT.test(fn)) throw err("metadata.func_name", `a functional test needs the function's name, got ${JSON.stringify(fn)}`);
      let args: string[];
      let expected: unknown;
      try {
        args = r.data.input.split("\n").filter((l) => l.trim() !== "").map((l) => pyLiteral(parseArgs(l)));
        expected = parseCodeJson(r.data.output);
      } catch (e) {
        throw err(`${k}[${i}]`, `a functional test's input lines and output must be JSON (${(e as Error).message.slice(0, 80)})`);
      }
      tests.push({ call: `${callee(fn)}(${args.join(", ")})`, expected });
    });
  }
  return tests;
}

function fromApps(f: Record<string, unknown>): CodeTest[] {
  const io = jsonField(f, "input_output");
  if (!io || typeof io !== "object" || Array.isArray(io)) throw err("input_output", 'expected {"inputs": [...], "outputs": [...]} (JSON)');
  const { inputs, outputs, fn_name: fn, ...rest } = io as Record<string, unknown>;
  if (Object.keys(rest).length) throw err(`input_output.${Object.keys(rest)[0]}`, "unknown key (APPS/TACO have inputs, outputs, fn_name)");
  if (!Array.isArray(inputs) || !Array.isArray(outputs) || inputs.length === 0 || inputs.length !== outputs.length) {
    throw err("input_output", `expected non-empty "inputs" and "outputs" lists of the same length`);
  }
  if (fn === undefined) {
    const text = (v: unknown, at: string) => {
      if (typeof v === "string") return v;
      if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join("\n");
      throw err(at, "a stdin/stdout test's input and output are strings (or lists of lines)");
    };
    return inputs.map((x, i) => ({ input: text(x, `input_output.inputs[${i}]`), output: text(outputs[i], `input_output.outputs[${i}]`) }));
  }
  if (typeof fn !== "string" || !IDENT.test(fn)) throw err("input_output.fn_name", `expected a function name, got ${JSON.stringify(fn)}`);
  // Arguments keep their number texts; re-parse the field for them.
  const raw = typeof f.input_output === "string" ? (parseArgs(f.input_output) as { inputs: unknown[] }).inputs : inputs;
  return inputs.map((x, i) => {
    if (!Array.isArray(x)) throw err(`input_output.inputs[${i}]`, "a call-based test's input is the list of arguments");
    const out = outputs[i];
    return { call: `${callee(fn)}(${(raw[i] as unknown[]).map(pyLiteral).join(", ")})`, expected: out, ...(Array.isArray(out) && out.length === 1 ? { alsoExpected: out[0] } : {}) };
  });
}

function fromCodeContests(f: Record<string, unknown>): CodeTest[] {
  const tests: CodeTest[] = [];
  for (const k of ["public_tests", "private_tests", "generated_tests"]) {
    const v = f[k];
    if (v === undefined || v === null) continue;
    const r = z.strictObject({ input: z.array(z.string()), output: z.array(z.string()) }).safeParse(v);
    if (!r.success || r.data.input.length !== r.data.output.length) throw err(k, 'expected {"input": [strings], "output": [strings]} of the same length');
    r.data.input.forEach((input, i) => tests.push({ input, output: r.data.output[i]! }));
  }
  return tests;
}

function fromMbpp(f: Record<string, unknown>, challenge: boolean): { tests: CodeTest[]; prelude: string } {
  const tests: CodeTest[] = [];
  for (const k of challenge ? ["test_list", "challenge_test_list"] : ["test_list"]) {
    const v = f[k];
    if (v === undefined && k === "challenge_test_list") continue;
    if (!Array.isArray(v)) throw err(k, "expected a list of assert strings");
    v.forEach((a, i) => {
      if (typeof a !== "string" || !/^\s*assert\b/.test(a)) throw err(`${k}[${i}]`, `expected an "assert …" string, got ${JSON.stringify(a)?.slice(0, 60)}`);
      tests.push({ assert: a });
    });
  }
  const imports = f.test_imports ?? [];
  if (!Array.isArray(imports) || !imports.every((x) => typeof x === "string")) throw err("test_imports", "expected a list of import statements");
  return { tests, prelude: [...imports, str(f, "test_setup_code", true) ?? ""].join("\n") };
}

/** Which format a row is in: the explicit one, else the one whose sign field it has. */
function formatOf(f: Record<string, unknown>, explicit: unknown): CodeFormat {
  if (explicit !== undefined) {
    if (!(CODE_FORMATS as readonly unknown[]).includes(explicit)) throw err("format", `unknown format ${JSON.stringify(explicit)}; formats: ${CODE_FORMATS.join(", ")}`);
    return explicit as CodeFormat;
  }
  const found = SIGNS.filter(([, k]) => f[k] !== undefined);
  if (found.length === 1) return found[0]![0];
  const signs = SIGNS.map(([n, k]) => `${k} (${n})`).join(", ");
  if (found.length === 0) throw err("tests", `no tests: a code row has one of ${signs}; fields: ${Object.keys(f).join(", ") || "none"}`);
  throw err("format", `the row has fields of several formats (${found.map(([n, k]) => `${k}: ${n}`).join(", ")}); set format`);
}

/**
 * The tests and solution setup of one row, in any supported format.
 * @param fields the row's fields (an example's `meta`, or an `rlvr verify code` line)
 * @param opts.format the format when the row does not name one (`fields.format` wins; they must agree)
 * @param opts.language default language (`fields.language` wins); python unless given
 * @param opts.challengeTests MBPP: also grade `challenge_test_list` (the benchmark grades `test_list` only)
 * @throws CodeTestError naming the field and the fix
 */
export function codeSpecOf(fields: Record<string, unknown>, opts: { format?: unknown; language?: unknown; challengeTests?: boolean } = {}): CodeSpec {
  if (fields.format !== undefined && opts.format !== undefined && fields.format !== opts.format) {
    throw err("format", `the row says ${JSON.stringify(fields.format)} but the verifier's options say ${JSON.stringify(opts.format)}`);
  }
  const format = formatOf(fields, fields.format ?? opts.format);
  const language = fields.language ?? opts.language ?? "python";
  if (language !== "python" && language !== "javascript") throw err("language", `expected "python" or "javascript", got ${JSON.stringify(language)}`);
  const spec: CodeSpec = { format, language, tests: [], prelude: "" };
  switch (format) {
    case "rlvr":
      spec.tests = parseCodeTests(fields.tests, "tests");
      return spec;
    case "mbpp":
      python(language, format);
      Object.assign(spec, fromMbpp(fields, opts.challengeTests === true));
      break;
    case "humaneval": {
      python(language, format);
      const test = str(fields, "test")!;
      const entry = str(fields, "entry_point")!;
      if (!IDENT.test(entry)) throw err("entry_point", `expected a function name, got ${JSON.stringify(entry)}`);
      if (!/^def\s+check\s*\(\s*\w+\s*\)\s*:/m.test(test)) throw err("test", "expected HumanEval's def check(candidate): with asserts");
      spec.tests = [{ assert: `${test}\ncheck(${entry})\n` }];
      spec.entryPoint = entry;
      spec.prompt = str(fields, "prompt", true);
      break;
    }
    case "apps":
    case "taco":
      spec.tests = fromApps(fields);
      if (spec.tests.some((t) => t.call != null)) python(language, format);
      break;
    case "codecontests":
      spec.tests = fromCodeContests(fields);
      break;
    case "livecodebench":
      spec.tests = fromLiveCodeBench(fields);
      if (spec.tests.some((t) => t.call != null)) python(language, format);
      break;
  }
  if (spec.tests.length === 0) throw err(SIGNS.find(([n]) => n === format)?.[1] ?? "tests", "no tests (an empty list would grade nothing)");
  checkStdioNotEmpty(spec.tests, SIGNS.find(([n]) => n === format)?.[1] ?? "tests");
  return spec;
}

/**
 * The program to run for a row: MBPP's setup before the solution; for HumanEval, a response that
 * does not define the entry point is the completion of `prompt` (as the benchmark runs it), and one
 * that does runs after the whole prompt (its imports and helper functions), replacing the stub.
 */
export function solutionCode(spec: CodeSpec, code: string): string {
  let body = code;
  if (spec.entryPoint && spec.prompt) {
    // The prompt is valid Python on its own (its last function holds only a docstring), so a
    // response's own definition after it replaces that stub and keeps the prompt's helpers.
    const defines = new RegExp(`^(?:async\\s+)?def\\s+${spec.entryPoint}\\s*\\(|^${spec.entryPoint}\\s*=`, "m").test(code);
    body = defines ? `${spec.prompt}\n${code}` : spec.prompt + code;
  }
  return spec.prelude ? `${spec.prelude}\n${body}` : body;
}

/**
 * The fields of an example the code verifier reads: `meta`, and for rows without tests there, the
 * tests list kept as JSON in `answer`.
 */
export function codeFieldsOf(e: { meta?: Record<string, unknown>; answer?: unknown }): Record<string, unknown> {
  const m = e.meta ?? {};
  if (m.format !== undefined || SIGNS.some(([, k]) => m[k] !== undefined)) return m;
  let tests: unknown;
  try {
    tests = typeof e.answer === "string" ? parseCodeJson(e.answer) : undefined;
  } catch {
    tests = undefined;
  }
  return Array.isArray(tests) ? { ...m, tests } : m;
}

/**
 * The code verifier's example schema (Verifier.exampleSchema): an example whose fields give tests
 * in a known format (see the table above). Its error message names the field.
 */
export const codeExampleSchema = z.looseObject({ meta: z.record(z.string(), z.unknown()).optional(), answer: z.unknown().optional() }).superRefine((e, ctx) => {
  try {
    codeSpecOf(codeFieldsOf(e as { meta?: Record<string, unknown>; answer?: unknown }));
  } catch (x) {
    ctx.addIssue({ code: "custom", message: (x as Error).message, path: ["meta", ...(x instanceof CodeTestError ? [x.field] : [])] });
  }
});
