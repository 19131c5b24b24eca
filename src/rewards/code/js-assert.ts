/**
 * JavaScript `assert` tests, split outside the sandbox into what the solution computes and what
 * the grader checks.
 *
 * Accepted: one or more statements `assert.<method>(actual[, expected][, message])`,
 * `assert(value[, message])` or `assert.ok(...)`, with the methods of values.ts
 * (equal, strictEqual, deepStrictEqual, notEqual, throws, …), separated by `;` or new lines;
 * `const assert = require("assert")` lines and "use strict" are skipped, and
 * `require("node:assert/strict")` or `assert.strict.<method>` make the loose methods strict.
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

/** One assert call: what the solution computes (pieces) and what is checked here. */
export interface JsCheck {
  method: JsAssertMethod;
  actual: Side;
  /** For methods that take an expected value. */
  expected?: Side;
}

/**
 * One argument of an assert call: `pieces` are the solution's calls (evaluated inside the
 * sandbox); `expr` is the argument with each piece replaced by `__rlvr_v[k]`, evaluated here.
 */
export interface Side {
  pieces: string[];
  expr: string;
}

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

const IDENT = /[A-Za-z_$][\w$]*/y;

/** Index just past the bracket group opening at `i` (strings and comments skipped). */
function skipGroup(src: string, i: number): number {
  let depth = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === "'" || c === '"' || c === "`") {
      i++;
      while (i < src.length && src[i] !== c) i += src[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return src.length;
}

/** Parameter names of the arrow functions in `src` (their uses are not the solution's). */
function arrowParams(src: string): Set<string> {
  const params = new Set<string>();
  for (const m of src.matchAll(/\(([^()]*)\)\s*=>/g)) for (const p of m[1]!.split(/[,\s{}[\]=.]+/)) if (p) params.add(p);
  for (const m of src.matchAll(/([A-Za-z_$][\w$]*)\s*=>/g)) params.add(m[1]!);
  return params;
}

/**
 * Split one argument into the solution's pieces and a check expression. A piece starts at a name
 * that is not a JavaScript global, a property name, an object key or an arrow parameter (so: the
 * solution's functions and values) and runs over its calls, indexing and member accesses.
 * @throws Error when a piece uses an arrow function's parameter (not supported)
 */
export function splitSide(expr: string): Side {
  const params = arrowParams(expr);
  const pieces: string[] = [];
  let out = "";
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === "'" || c === '"' || c === "`") {
      const start = i;
      i++;
      while (i < expr.length && expr[i] !== c) i += expr[i] === "\\" ? 2 : 1;
      i++;
      out += expr.slice(start, i);
      continue;
    }
    IDENT.lastIndex = i;
    const m = IDENT.exec(expr);
    if (!m || /[\w$]/.test(expr[i - 1] ?? "")) {
      out += c;
      i++;
      continue;
    }
    const name = m[0];
    const before = expr.slice(0, i).trimEnd();
    const afterName = expr.slice(i + name.length).trimStart();
    const property = before.endsWith(".") && !before.endsWith("..");
    const key = /[{,]$/.test(before) && afterName.startsWith(":") && !afterName.startsWith("::");
    if (property || key || JS_GLOBALS.has(name) || params.has(name)) {
      out += name;
      i += name.length;
      continue;
    }
    // A piece: `[new] name` followed by (…), […] and .prop / ?.prop accesses.
    let start = i;
    if (/\bnew\s*$/.test(out)) {
      const kw = out.match(/new\s*$/)!;
      out = out.slice(0, out.length - kw[0].length);
      start = i - kw[0].length;
    }
    let j = i + name.length;
    for (;;) {
      let k = j;
      while (k < expr.length && /\s/.test(expr[k]!)) k++;
      const d = expr[k];
      if (d === "(" || d === "[") j = skipGroup(expr, k);
      else if ((d === "." && expr[k + 1] !== ".") || (d === "?" && expr[k + 1] === ".")) {
        k += d === "?" ? 2 : 1;
        while (k < expr.length && /\s/.test(expr[k]!)) k++;
        IDENT.lastIndex = k;
        const p = IDENT.exec(expr);
        if (p) j = k + p[0].length;
        else if (expr[k] === "(" || expr[k] === "[") j = skipGroup(expr, k);
        else break;
      } else break;
    }
    const piece = expr.slice(start, j).trim();
    for (const p of params) if (new RegExp(`(^|[^\\w$.])${p.replace(/\$/g, "\\$")}([^\\w$]|$)`).test(piece)) throw new Error(`a call inside an arrow function is not supported: ${piece.slice(0, 80)} (write one test per call)`);
    out += `__rlvr_v[${pieces.length}]`;
    pieces.push(piece);
    i = j;
  }
  return { pieces, expr: out };
}

/** Rebuilds typed wire values as plain JavaScript values inside the judging context. */
const JS_DECODER = String.raw`
function __rlvrDec(x) {
  if (x === null || typeof x !== "object") return x;
  if (Array.isArray(x)) return x.map(__rlvrDec);
  switch (x.$) {
    case "int": return BigInt(x.v);
    case "float": return x.v === "nan" ? NaN : x.v === "inf" ? Infinity : -Infinity;
    case "undefined": return undefined;
    case "tuple": return x.v.map(__rlvrDec);
    case "set": case "frozenset": return new Set(x.v.map(__rlvrDec));
    case "dict": { const o = {}; for (const [k, v] of x.v) o[String(__rlvrDec(k))] = __rlvrDec(v); return o; }
    default: throw new Error("returned a " + (x.type || x.$) + ", which is not plain data");
  }
}
`;

/**
 * Evaluate a side here, in a fresh vm context that never sees the solution, with the pieces'
 * values (wire format) bound to `__rlvr_v`.
 * @throws Error when the expression throws, or a value is not plain data
 */
export function evalSide(side: Side, values: unknown[]): Val {
  const ctx = vm.createContext({ __rlvrWire: JSON.stringify(values) });
  vm.runInContext(JS_ENCODER + JS_DECODER + "var __rlvr_v = JSON.parse(__rlvrWire).map(__rlvrDec);", ctx, { timeout: 1000 });
  const json = vm.runInContext(`JSON.stringify(__rlvrEnc((${side.expr})))`, ctx, { timeout: 1000 }) as string;
  return decodeValue(JSON.parse(json));
}

const LOOSE_TO_STRICT: Partial<Record<JsAssertMethod, JsAssertMethod>> = {
  equal: "strictEqual",
  notEqual: "notStrictEqual",
  deepEqual: "deepStrictEqual",
  notDeepEqual: "notDeepStrictEqual",
};

const TAKES_EXPECTED = new Set<JsAssertMethod>(["equal", "notEqual", "strictEqual", "notStrictEqual", "deepEqual", "notDeepEqual", "deepStrictEqual", "notDeepStrictEqual"]);

/**
 * Parse a JS assert test.
 * @throws Error naming the unsupported form
 */
export function parseJsAssert(src: string): JsCheck[] {
  const checks: JsCheck[] = [];
  let strictModule = false;
  for (const stmt of splitTopLevel(src, ";\n")) {
    // `const assert = require("assert")` (or its strict mode) and "use strict" are accepted.
    const req = stmt.match(/^(?:const|let|var)\s+assert\s*=\s*require\(\s*["'](?:node:)?assert(\/strict)?["']\s*\)(\.strict)?$/);
    if (req) {
      strictModule ||= Boolean(req[1] || req[2]);
      continue;
    }
    if (/^["']use strict["']$/.test(stmt)) continue;
    const m = stmt.match(/^assert(\s*\.\s*strict)?(?:\s*\.\s*(\w+))?\s*\(([\s\S]*)\)$/);
    let method = (m?.[2] ?? "ok") as JsAssertMethod;
    // In strict mode (node:assert/strict, assert.strict) the loose methods are the strict ones.
    if (m && (strictModule || m[1])) method = LOOSE_TO_STRICT[method] ?? method;
    if (!m || !(JS_ASSERT_METHODS as readonly string[]).includes(method) || !scan(m[3]!, "").balanced) {
      throw new Error(`unsupported assert form: ${JSON.stringify(stmt.slice(0, 120))} (use assert.<${JS_ASSERT_METHODS.join("|")}>(actual, expected))`);
    }
    const args = splitTopLevel(m[3]!, ",");
    if (args.length === 0) throw new Error(`assert without arguments: ${stmt.slice(0, 120)}`);
    if (method === "throws" || method === "doesNotThrow") {
      checks.push({ method, actual: { pieces: [`(() => { try { (${args[0]})(); } catch (e) { return true; } return false; })()`], expr: "__rlvr_v[0]" } });
    } else if (TAKES_EXPECTED.has(method)) {
      if (args.length < 2) throw new Error(`assert.${method} needs an actual and an expected value: ${stmt.slice(0, 120)}`);
      checks.push({ method, actual: splitSide(args[0]!), expected: splitSide(args[1]!) });
    } else {
      checks.push({ method, actual: splitSide(args[0]!) });
    }
  }
  if (checks.length === 0) throw new Error("empty assert test");
  return checks;
}
