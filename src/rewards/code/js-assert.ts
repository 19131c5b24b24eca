/**
 * JavaScript `assert` tests, split outside the sandbox into what the solution computes and what
 * the grader checks.
 *
 * Accepted: one or more statements `assert.<method>(actual[, expected][, message])`,
 * `assert(value[, message])` or `assert.ok(...)`, with the methods of values.ts
 * (equal, strictEqual, deepStrictEqual, notEqual, throws, …), separated by `;` or new lines.
 * Each argument that names something other than a JavaScript global (the solution's functions)
 * is evaluated inside the sandbox; the others (the expected values) are evaluated here in a fresh
 * vm context that never sees the solution; the comparison runs here too (values.ts).
 */
import vm from "node:vm";
import { JS_ENCODER } from "./harness.ts";
import { JS_ASSERT_METHODS, decodeValue, type JsAssertMethod, type Val } from "./values.ts";

const JS_GLOBALS = new Set(
  (
    "Math JSON Number String Boolean Array Object BigInt Set Map WeakMap WeakSet Symbol Date RegExp Error TypeError RangeError " +
    "Infinity NaN undefined null true false parseInt parseFloat isNaN isFinite new typeof void in of instanceof " +
    "let const var function return if else for while do break continue this arguments async await yield class extends super " +
    "Int8Array Uint8Array Int16Array Uint16Array Int32Array Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array " +
    "encodeURIComponent decodeURIComponent structuredClone"
  ).split(" "),
);

/** One assert call: the solution-side pieces and how to check them. */
export interface JsCheck {
  method: JsAssertMethod;
  /** Source of the actual value (evaluated inside the sandbox when it names the solution). */
  actual: Side;
  /** Source of the expected value, for methods that take one. */
  expected?: Side;
}
export type Side = { inside: true; expr: string } | { inside: false; value: Val };

/** Split `src` at top-level occurrences of `sep` characters (outside strings, comments, brackets). */
export function splitTopLevel(src: string, seps: string): string[] {
  return scan(src, seps).parts;
}

function scan(src: string, seps: string): { parts: string[]; balanced: boolean } {
  const parts: string[] = [];
  let depth = 0;
  let balanced = true;
  let start = 0;
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === "'" || c === '"' || c === "`") {
      i++;
      while (i < src.length && src[i] !== c) i += src[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      i = end < 0 ? src.length : end + 2;
      continue;
    }
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) {
      depth--;
      if (depth < 0) balanced = false;
    }
    else if (depth === 0 && seps.includes(c)) {
      parts.push(src.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  parts.push(src.slice(start));
  return { parts: parts.map((p) => p.trim()).filter((p) => p !== ""), balanced: balanced && depth === 0 };
}

/** Identifiers an expression reads that are not JS globals, property names, object keys or arrow parameters. */
export function freeNames(expr: string): string[] {
  const code = expr.replace(/(["'`])(?:\\.|(?!\1)[^\\])*\1/g, '""');
  const params = new Set<string>();
  for (const m of code.matchAll(/\(([^()]*)\)\s*=>/g)) for (const p of m[1]!.split(/[,\s{}[\]=.]+/)) if (p) params.add(p);
  for (const m of code.matchAll(/([A-Za-z_$][\w$]*)\s*=>/g)) params.add(m[1]!);
  const names: string[] = [];
  for (const m of code.matchAll(/[A-Za-z_$][\w$]*/g)) {
    const before = code.slice(0, m.index).trimEnd();
    const after = code.slice(m.index! + m[0].length).trimStart();
    if (before.endsWith(".") && !before.endsWith("..")) continue;
    if (/[{,]$/.test(before) && after.startsWith(":")) continue;
    if (/^\d/.test(m[0]) || JS_GLOBALS.has(m[0]) || params.has(m[0])) continue;
    names.push(m[0]);
  }
  return names;
}

/** Evaluate a test's expected-side expression here, in a fresh context without the solution. */
export function evalExpected(expr: string): Val {
  const ctx = vm.createContext({});
  vm.runInContext(JS_ENCODER, ctx, { timeout: 1000 });
  const json = vm.runInContext(`JSON.stringify(__rlvrEnc((${expr})))`, ctx, { timeout: 1000 }) as string;
  return decodeValue(JSON.parse(json));
}

const TAKES_EXPECTED = new Set<JsAssertMethod>(["equal", "notEqual", "strictEqual", "notStrictEqual", "deepEqual", "notDeepEqual", "deepStrictEqual", "notDeepStrictEqual"]);

function side(expr: string): Side {
  return freeNames(expr).length > 0 ? { inside: true, expr } : { inside: false, value: evalExpected(expr) };
}

/**
 * Parse a JS assert test.
 * @throws Error naming the unsupported form, or an expected value that fails to evaluate
 */
export function parseJsAssert(src: string): JsCheck[] {
  const checks: JsCheck[] = [];
  for (const stmt of splitTopLevel(src, ";\n")) {
    const m = stmt.match(/^assert(?:\s*\.\s*(\w+))?\s*\(([\s\S]*)\)$/);
    const method = (m?.[1] ?? "ok") as JsAssertMethod;
    if (!m || !(JS_ASSERT_METHODS as readonly string[]).includes(method) || !scan(m[2]!, "").balanced) {
      throw new Error(`unsupported assert form: ${JSON.stringify(stmt.slice(0, 120))} (use assert.<${JS_ASSERT_METHODS.join("|")}>(actual, expected))`);
    }
    const args = splitTopLevel(m[2]!, ",");
    if (args.length === 0) throw new Error(`assert without arguments: ${stmt.slice(0, 120)}`);
    if (method === "throws" || method === "doesNotThrow") {
      checks.push({ method, actual: { inside: true, expr: `(() => { try { (${args[0]})(); } catch (e) { return true; } return false; })()` } });
    } else if (TAKES_EXPECTED.has(method)) {
      if (args.length < 2) throw new Error(`assert.${method} needs an actual and an expected value: ${stmt.slice(0, 120)}`);
      checks.push({ method, actual: side(args[0]!), expected: side(args[1]!) });
    } else {
      checks.push({ method, actual: side(args[0]!) });
    }
  }
  if (checks.length === 0) throw new Error("empty assert test");
  return checks;
}
