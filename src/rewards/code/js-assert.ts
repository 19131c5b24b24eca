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
 * Regular-expression literals are data, never the solution's names. `await f()` in a test awaits
 * f's Promise explicitly (a Promise not awaited is not plain data and fails). A test that names
 * nothing of the solution tests a function named like a JS global (`function parseInt`): its
 * calls of such globals become pieces the solution must define itself.
 * `assert.throws(fn[, validator])` (and `rejects`, whose fn or Promise is awaited) runs fn inside; only a description of what it threw comes back
 * (constructor chain, String(err), primitive own properties), and the validator — an error class,
 * a RegExp, an object of expected properties or a validation function — is applied here. Without
 * a validator a ReferenceError does not count, and each of the solution's names fn uses must be
 * defined (a function where fn calls it): missing code never passes as "threw".
 */
import vm from "node:vm";
import { JS_ENCODER } from "./harness.ts";
import { JS_ASSERT_METHODS, decodeValue, type JsAssertMethod, type Val } from "./values.ts";

const JS_GLOBALS = new Set(
  (
    "Math JSON Number String Boolean Array Object BigInt Set Map WeakMap WeakSet Symbol Date RegExp Error TypeError RangeError " +
    "Infinity NaN undefined null true false parseInt parseFloat isNaN isFinite new typeof void in of instanceof " +
    "let const var function return if else for while do break continue this arguments async await yield class extends super " +
    "throw try catch finally switch case default delete " +
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
  /** throws: the validator's source (error class, RegExp, object or function), when given. */
  validator?: string;
}

/**
 * What the sandbox evaluates for a test: an expression, or one that must be the solution's own
 * definition of a name (`own`) or is awaited explicitly (`await`). See harness.ts.
 */
export type Piece = string | { x: string; own?: string[]; anyOwn?: string[]; await?: boolean };

/**
 * One argument of an assert call: `pieces` are the solution's calls (evaluated inside the
 * sandbox); `expr` is the argument with each piece replaced by `__rlvr_v[k]`, evaluated here.
 */
export interface Side {
  pieces: Piece[];
  expr: string;
}

/** Split `src` at top-level occurrences of `sep` characters (outside strings, comments, brackets). */
export function splitTopLevel(src: string, seps: string): string[] {
  return scan(src, seps).parts;
}

/** Before a `/`, these end an expression's operand position: the `/` starts a RegExp literal. */
const REGEX_BEFORE = /(^|[(,=:[!&|?{};+\-*%<>~^]|\b(?:return|typeof|case|in|of|new|delete|void|throw|await|yield))\s*$/;

/**
 * Index just past the string, template, comment or RegExp literal starting at `i`, or -1 when none
 * starts there (a `/` after an operand is division).
 */
export function literalEnd(src: string, i: number): number {
  const c = src[i];
  if (c === "'" || c === '"' || c === "`") {
    let j = i + 1;
    while (j < src.length && src[j] !== c) j += src[j] === "\\" ? 2 : 1;
    return Math.min(j + 1, src.length);
  }
  if (c !== "/") return -1;
  if (src[i + 1] === "/") {
    const e = src.indexOf("\n", i);
    return e < 0 ? src.length : e;
  }
  if (src[i + 1] === "*") {
    const e = src.indexOf("*/", i + 2);
    return e < 0 ? src.length : e + 2;
  }
  if (!REGEX_BEFORE.test(src.slice(0, i))) return -1;
  let cls = false;
  for (let j = i + 1; j < src.length && src[j] !== "\n"; j++) {
    const d = src[j];
    if (d === "\\") j++;
    else if (d === "[") cls = true;
    else if (d === "]") cls = false;
    else if (d === "/" && !cls) {
      j++;
      while (j < src.length && /[a-z]/i.test(src[j]!)) j++;
      return j;
    }
  }
  return -1;
}

function scan(src: string, seps: string): { parts: string[]; balanced: boolean } {
  const parts: string[] = [];
  let depth = 0;
  let balanced = true;
  let start = 0;
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    const end = literalEnd(src, i);
    if (end >= 0) {
      i = end;
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

/** Index just past the bracket group opening at `i` (strings, comments and RegExps skipped). */
function skipGroup(src: string, i: number): number {
  let depth = 0;
  while (i < src.length) {
    const c = src[i]!;
    const end = literalEnd(src, i);
    if (end >= 0) {
      i = end;
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

/** JS globals a solution may define itself and a test may call (`function parseInt(s) {…}`). */
const isOwnable = (name: string) => (JS_GLOBALS.has(name) || name === "escape" || name === "unescape" || name === "encodeURI" || name === "decodeURI") && !JS_KEYWORDS.has(name);

/** One name in an expression that is not a property, an object key or a literal's content. */
interface Ident {
  name: string;
  start: number;
  /** The arrow-function parameters of the expression it sits in. */
  param: boolean;
}

/** The names of `expr` outside strings, comments and RegExps that are not properties or object keys. */
function identifiers(expr: string): Ident[] {
  const params = arrowParams(expr);
  const out: Ident[] = [];
  let i = 0;
  while (i < expr.length) {
    const end = literalEnd(expr, i);
    if (end >= 0) {
      i = end;
      continue;
    }
    IDENT.lastIndex = i;
    const m = IDENT.exec(expr);
    if (!m || /[\w$]/.test(expr[i - 1] ?? "")) {
      i++;
      continue;
    }
    const name = m[0];
    const before = expr.slice(0, i).trimEnd();
    const afterName = expr.slice(i + name.length).trimStart();
    const property = before.endsWith(".") && !before.endsWith("..");
    const key = /[{,]$/.test(before) && afterName.startsWith(":") && !afterName.startsWith("::");
    if (!property && !key) out.push({ name, start: i, param: params.has(name) });
    i += name.length;
  }
  return out;
}

/** Index just past the calls, indexing and member accesses that follow a name ending at `j`. */
function accessEnd(expr: string, j: number): number {
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
      else return j;
    } else return j;
  }
}

/** Whether a name is the solution's: not a JS global or keyword, not an arrow parameter. */
const isSolutionName = (id: Ident) => !JS_GLOBALS.has(id.name) && !id.param;

const JS_KEYWORDS = new Set(
  "new typeof void in of instanceof let const var function return if else for while do break continue this arguments async await yield class extends super throw try catch finally switch case default delete null true false undefined".split(" "),
);

/** Every name `expr` uses (globals included; keywords, properties, keys and literals not). */
export function jsNames(expr: string): string[] {
  return [...new Set(identifiers(expr).filter((id) => !id.param && !JS_KEYWORDS.has(id.name)).map((id) => id.name))];
}

/** The solution's names `expr` uses, and whether each is called (`name(` or `new name`). */
export function solutionNames(expr: string): { name: string; called: boolean }[] {
  return identifiers(expr)
    .filter(isSolutionName)
    .map((id) => ({ name: id.name, called: /^\s*\(/.test(expr.slice(id.start + id.name.length)) || /\bnew\s*$/.test(expr.slice(0, id.start)) }));
}

/**
 * Split one argument into the solution's pieces and a check expression. A piece starts at a name
 * that is not a JavaScript global, a property name, an object key or an arrow parameter (so: the
 * solution's functions and values) and runs over its calls, indexing and member accesses; `await`
 * before it makes it awaited inside. With `own`, the pieces are instead the calls of the JS
 * globals a solution may define (innermost ones), to be answered by the solution's own definition.
 * @throws Error when a piece uses an arrow function's parameter (not supported)
 */
export function splitSide(expr: string, own = false): Side {
  const params = arrowParams(expr);
  const pieces: Piece[] = [];
  let out = "";
  let at = 0;
  for (const id of identifiers(expr)) {
    if (id.start < at) continue;
    const called = /^\s*\(/.test(expr.slice(id.start + id.name.length));
    if (own ? !(isOwnable(id.name) && called && !id.param) : !isSolutionName(id)) continue;
    const end = accessEnd(expr, id.start + id.name.length);
    // Own mode takes the innermost calls: `String(parseInt(s))` tests parseInt, String wraps it.
    const inner = expr.slice(id.start + id.name.length, end);
    if (own && identifiers(inner).some((q) => isOwnable(q.name) && /^\s*\(/.test(inner.slice(q.start + q.name.length)))) continue;
    out += expr.slice(at, id.start);
    // A piece: `[await] [new] name` followed by (…), […] and .prop / ?.prop accesses.
    let start = id.start;
    const kw = out.match(/\bnew\s*$/);
    if (kw) {
      out = out.slice(0, out.length - kw[0].length);
      start -= kw[0].length;
    }
    const aw = out.match(/\bawait\s*$/);
    if (aw) out = out.slice(0, out.length - aw[0].length);
    const piece = expr.slice(start, end).trim();
    if (identifiers(piece).some((p) => params.has(p.name))) throw new Error(`a call inside an arrow function is not supported: ${piece.slice(0, 80)} (write one test per call)`);
    out += `__rlvr_v[${pieces.length}]`;
    pieces.push(own ? { x: piece, own: [id.name] } : aw ? { x: piece, await: true } : piece);
    at = end;
  }
  out += expr.slice(at);
  return { pieces, expr: out };
}

/** Rebuilds typed wire values as plain JavaScript values inside the judging context. */
const JS_DECODER = String.raw`
function __rlvrDec(x) {
  if (x === null || typeof x !== "object") return x;
  if (Array.isArray(x)) return x.map(__rlvrDec);
  switch (x.$) {
    case "int": return BigInt(x.v);
    case "float": return x.v === "nan" ? NaN : x.v === "inf" ? Infinity : x.v === "-inf" ? -Infinity : Number(x.v);
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

/** JS error classes a `throws` validator may name (compared by constructor name). */
const ERROR_CLASSES = new Set(["Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError"]);

/**
 * The piece run inside for `assert.throws(fn)` / `doesNotThrow`: checks that the solution's names
 * fn uses exist, calls fn, and returns `{missing}` or `{threw: false}` or `{threw: true, chain,
 * str, props}` (constructor names up the prototype chain, String(err), primitive own properties).
 */
function throwsPiece(fn: string, async = false): string {
  const guards = solutionNames(fn).map(({ name, called }) =>
    called ? `if (typeof ${name} !== "function") return { missing: ${JSON.stringify(name)} };` : `if (typeof ${name} === "undefined") return { missing: ${JSON.stringify(name)} };`,
  );
  // rejects: fn is a function returning a Promise, or the Promise itself; it is awaited.
  const run = async ? `const p = (${fn}); await (typeof p === "function" ? p() : p);` : `(${fn})();`;
  return `(${async ? "async " : ""}() => { ${guards.join(" ")} try { ${run} } catch (e) { const d = { threw: true, chain: [], str: "", props: {} };
    try { let p = e; for (let k = 0; k < 20 && p !== null && (typeof p === "object" || typeof p === "function"); k++) { p = Object.getPrototypeOf(p); const n = p && Object.getOwnPropertyDescriptor(p, "constructor"); if (n && typeof n.value === "function") d.chain.push(String(n.value.name)); } } catch (x) {}
    try { d.str = String(e); } catch (x) {}
    try { if (e !== null && typeof e === "object") { for (const k of Object.getOwnPropertyNames(e)) { if (k === "stack") continue; const v = e[k]; if (v === null || ["string", "number", "boolean"].includes(typeof v)) d.props[k] = v; } const n = e.name; if (typeof n === "string") d.props.name = n; } } catch (x) {}
    return d; } return { threw: false }; })()`;
}

/** Plain JS view of a decoded `throwsPiece` answer. */
function describeThrow(v: Val): { missing?: string; threw: boolean; chain: string[]; str: string; props: Record<string, unknown> } | null {
  if (v === null || typeof v !== "object" || Array.isArray(v) || v.t !== "dict") return null;
  const o = new Map(v.v.map(([k, x]) => [String(k), x]));
  const props = o.get("props");
  const chain = o.get("chain");
  const missing = o.get("missing");
  return {
    missing: typeof missing === "string" ? missing : undefined,
    threw: o.get("threw") === true,
    chain: Array.isArray(chain) ? chain.filter((c): c is string => typeof c === "string") : [],
    str: typeof o.get("str") === "string" ? (o.get("str") as string) : "",
    props: props && typeof props === "object" && !Array.isArray(props) && props.t === "dict" ? Object.fromEntries(props.v.filter(([, x]) => x === null || typeof x !== "object").map(([k, x]) => [String(k), x])) : {},
  };
}

/** Checks a `throws`/`doesNotThrow` answer against node:assert's rules (the validator applied here). */
export function throwsHolds(method: "throws" | "doesNotThrow" | "rejects" | "doesNotReject", answer: Val, validator?: string): { ok: boolean; reason: string } {
  const d = describeThrow(answer);
  if (d === null) return { ok: false, reason: "malformed throws answer" };
  if (d.missing) return { ok: false, reason: `the solution does not define ${d.missing} (as the test uses it)` };
  if (method === "doesNotThrow" || method === "doesNotReject") return d.threw ? { ok: false, reason: `threw ${d.str.slice(0, 120)}` } : { ok: true, reason: "passed" };
  if (!d.threw) return { ok: false, reason: `assert.${method}: the function did not ${method === "rejects" ? "reject" : "throw"}` };
  const v = validator?.trim();
  if (!v || /^(["'`])[\s\S]*\1$/.test(v)) {
    // No validator (a string second argument is node's failure message).
    return d.chain.includes("ReferenceError") ? { ok: false, reason: `threw a ReferenceError (missing code, not the expected error): ${d.str.slice(0, 120)}` } : { ok: true, reason: "passed" };
  }
  if (/^[A-Za-z_$][\w$]*$/.test(v) && !(v in globalThis && !ERROR_CLASSES.has(v))) {
    return d.chain.includes(v) ? { ok: true, reason: "passed" } : { ok: false, reason: `assert.throws: expected a ${v}, got ${d.str.slice(0, 120)}` };
  }
  if (solutionNames(v).length) throw new Error(`a throws validator may not use the solution's names: ${v.slice(0, 80)}`);
  const ctx = vm.createContext({ __rlvrErr: JSON.stringify(d) });
  const ok = vm.runInContext(
    `(() => { const d = JSON.parse(__rlvrErr); const v = (${v});
      const isClass = (f) => f === Error || (f.prototype instanceof Error);
      if (v instanceof RegExp) return v.test(d.str);
      if (typeof v === "function" && isClass(v)) return d.chain.includes(v.name);
      if (typeof v === "function") { const C = globalThis[d.chain[0]]; const e = typeof C === "function" && isClass(C) ? new C(String(d.props.message ?? "")) : new Error(String(d.props.message ?? ""));
        for (const k of Object.keys(d.props)) if (k !== "message" && k !== "name") e[k] = d.props[k];
        return v(e) === true; }
      if (v !== null && typeof v === "object") return Object.keys(v).every((k) => { const w = v[k], a = d.props[k]; return w instanceof RegExp ? typeof a === "string" && w.test(a) : Object.is(a, w); });
      throw new Error("unsupported validator"); })()`,
    ctx,
    { timeout: 1000 },
  );
  return ok === true ? { ok: true, reason: "passed" } : { ok: false, reason: `assert.throws: the error did not match ${v.slice(0, 80)}: ${d.str.slice(0, 120)}` };
}

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
    if (method === "throws" || method === "doesNotThrow" || method === "rejects" || method === "doesNotReject") {
      if (solutionNames(args[0]!).length === 0) throw new Error(`assert.${method} on a function that uses nothing of the solution: ${stmt.slice(0, 120)}`);
      const async = method === "rejects" || method === "doesNotReject";
      const piece: Piece = async ? { x: throwsPiece(args[0]!, true), await: true } : throwsPiece(args[0]!);
      checks.push({ method, actual: { pieces: [piece], expr: "__rlvr_v[0]" }, ...((method === "throws" || method === "rejects") && args[1] ? { validator: args[1] } : {}) });
    } else if (TAKES_EXPECTED.has(method)) {
      if (args.length < 2) throw new Error(`assert.${method} needs an actual and an expected value: ${stmt.slice(0, 120)}`);
      checks.push({ method, actual: splitSide(args[0]!), expected: splitSide(args[1]!) });
    } else {
      checks.push({ method, actual: splitSide(args[0]!) });
    }
  }
  if (checks.length === 0) throw new Error("empty assert test");
  const count = () => checks.reduce((n, c) => n + c.actual.pieces.length + (c.expected?.pieces.length ?? 0), 0);
  if (count() === 0) {
    // Nothing of the solution named: the test is of a function named like a JS global.
    for (const c of checks) {
      c.actual = splitSide(c.actual.expr, true);
      if (c.expected) c.expected = splitSide(c.expected.expr, true);
    }
    if (count() === 0) throw new Error(`the test calls nothing of the solution: ${src.slice(0, 120)}`);
  }
  return checks;
}
