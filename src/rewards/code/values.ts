/**
 * Values returned by a sandboxed solution, decoded and compared in the trusted process.
 *
 * The wire format is described in harness.ts. Decoding is strict: anything malformed becomes an
 * opaque value, and an opaque value (a user object, a function, a class instance) never equals
 * anything and fails every check, including the negated ones (`notEqual`, `!=`).
 */

export type Val =
  | null
  | boolean
  | number
  | string
  | Val[]
  | { t: "int"; v: bigint }
  /** A float that JSON would confuse with an int (integral, or -0): Python's repr kept. */
  | { t: "float"; v: number; repr: string }
  | { t: "undefined" }
  | { t: "tuple" | "set" | "frozenset"; v: Val[] }
  | { t: "dict"; v: [Val, Val][] }
  | { t: "bytes" | "bytearray"; v: string }
  | { t: "complex"; v: [Val, Val] }
  | { t: "opaque"; type: string };

const opaque = (type: string): Val => ({ t: "opaque", type });
const FLOAT_TEXT = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** Decode one typed value from the wire (never throws; malformed input is opaque). */
export function decodeValue(x: unknown, depth = 0): Val {
  if (depth > 220) return opaque("nested too deeply");
  if (x === null || typeof x === "boolean" || typeof x === "string") return x;
  if (typeof x === "number") return Number.isFinite(x) ? x : opaque("malformed number");
  if (Array.isArray(x)) return x.map((e) => decodeValue(e, depth + 1));
  if (typeof x !== "object") return opaque("malformed");
  const o = x as { $?: unknown; v?: unknown; type?: unknown };
  switch (o.$) {
    case "int":
      return typeof o.v === "string" && /^-?\d{1,5000}$/.test(o.v) ? { t: "int", v: BigInt(o.v) } : opaque("malformed int");
    case "float":
      if (o.v === "nan" || o.v === "inf" || o.v === "-inf") return o.v === "nan" ? NaN : o.v === "inf" ? Infinity : -Infinity;
      return typeof o.v === "string" && FLOAT_TEXT.test(o.v) ? { t: "float", v: Number(o.v), repr: o.v } : opaque("malformed float");
    case "undefined":
      return { t: "undefined" };
    case "tuple":
    case "set":
    case "frozenset":
      return Array.isArray(o.v) ? { t: o.$, v: o.v.map((e) => decodeValue(e, depth + 1)) } : opaque("malformed");
    case "dict":
      if (!Array.isArray(o.v) || !o.v.every((p) => Array.isArray(p) && p.length === 2)) return opaque("malformed dict");
      return { t: "dict", v: (o.v as unknown[][]).map((p) => [decodeValue(p[0], depth + 1), decodeValue(p[1], depth + 1)] as [Val, Val]) };
    case "bytes":
    case "bytearray":
      return typeof o.v === "string" && /^[0-9a-f]*$/.test(o.v) ? { t: o.$, v: o.v } : opaque("malformed");
    case "complex":
      return Array.isArray(o.v) && o.v.length === 2 ? { t: "complex", v: [decodeValue(o.v[0], depth + 1), decodeValue(o.v[1], depth + 1)] } : opaque("malformed");
    case "opaque":
      return opaque(typeof o.type === "string" ? o.type.slice(0, 80) : "?");
    default:
      return opaque("malformed");
  }
}

const isTagged = (v: Val): v is Extract<Val, { t: string }> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The first opaque type inside `v`, or null when `v` is plain data throughout. */
export function findOpaque(v: Val): string | null {
  if (Array.isArray(v)) {
    for (const e of v) {
      const o = findOpaque(e);
      if (o !== null) return o;
    }
    return null;
  }
  if (!isTagged(v)) return null;
  if (v.t === "opaque") return v.type;
  if (v.t === "tuple" || v.t === "set" || v.t === "frozenset") return findOpaque(v.v);
  if (v.t === "dict") return findOpaque(v.v.flat());
  if (v.t === "complex") return findOpaque(v.v);
  return null;
}

/** Short text of a value for failure reasons. */
export function showValue(v: Val): string {
  const s = JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));
  return (s ?? String(v)).slice(0, 200);
}

/** The key json.dumps would write for a Python dict key (null when it cannot). */
function jsonKey(k: Val): string | null {
  if (typeof k === "string") return k;
  if (k === null) return "null";
  if (typeof k === "boolean") return String(k);
  if (typeof k === "number") return Number.isInteger(k) ? String(k) : String(k);
  if (isTagged(k) && k.t === "int") return k.v.toString();
  if (isTagged(k) && k.t === "float") return k.repr;
  return null;
}

/** How close numbers must be: `rel` × |expected| (relative) or `abs` (absolute), whichever is larger. */
export interface Tolerance {
  rel?: number | null;
  abs?: number | null;
}

/** The number a value holds when it is one (ints beyond 2^53 as bigint), else null. */
function numeric(v: Val): number | bigint | null {
  if (typeof v === "number") return v;
  if (isTagged(v) && (v.t === "int" || v.t === "float")) return v.v;
  return null;
}

/** Python `==` between two numbers (int vs float compared exactly), or closeness under `tol`. */
function numbersEqual(got: number | bigint, exp: number | bigint, tol: Tolerance): boolean {
  if (tol.rel != null || tol.abs != null) {
    const g = Number(got);
    const e = Number(exp);
    if (g === e) return true;
    const d = Math.abs(g - e);
    return d <= (tol.rel ?? 0) * Math.abs(e) || d <= (tol.abs ?? 0);
  }
  if (typeof got === "number" && typeof exp === "number") return got === exp;
  const big = (x: number | bigint) => (typeof x === "bigint" ? x : Number.isInteger(x) ? BigInt(x) : null);
  const g = big(got);
  const e = big(exp);
  return g !== null && e !== null && g === e;
}

/**
 * Does a returned value equal a test's `expected` (parsed JSON; integers beyond 2^53 as bigint)?
 * Tuples compare as arrays and dict keys as json.dumps writes them; booleans only equal booleans;
 * numbers as Python's `==` (exactly: an int and a float compare by value, big integers digit for
 * digit), or within `tolerance` — relative to |expected| (no absolute floor) or the explicit
 * absolute `abs`; a JS `undefined` equals null; sets, bytes, complex numbers and opaque values
 * equal nothing.
 */
export function equalsExpected(got: Val, exp: unknown, tolerance?: number | null | Tolerance): boolean {
  const tol: Tolerance = typeof tolerance === "object" && tolerance !== null ? tolerance : { rel: tolerance ?? null };
  if (exp === null || exp === undefined) return got === null || (isTagged(got) && got.t === "undefined");
  if (typeof exp === "boolean") return got === exp;
  if (typeof exp === "string") return got === exp;
  if (typeof exp === "number" || typeof exp === "bigint") {
    const g = numeric(got);
    return g !== null && typeof got !== "boolean" && numbersEqual(g, exp, tol);
  }
  if (Array.isArray(exp)) {
    const items = Array.isArray(got) ? got : isTagged(got) && got.t === "tuple" ? got.v : null;
    return items !== null && items.length === exp.length && items.every((g, i) => equalsExpected(g, exp[i], tol));
  }
  if (typeof exp === "object") {
    if (!isTagged(got) || got.t !== "dict") return false;
    const want = exp as Record<string, unknown>;
    const seen = new Map<string, Val>();
    for (const [k, v] of got.v) {
      if (isTagged(v) && v.t === "undefined") continue; // JSON.stringify drops undefined members
      const key = jsonKey(k);
      if (key === null || seen.has(key)) return false;
      seen.set(key, v);
    }
    const keys = Object.keys(want);
    return keys.length === seen.size && keys.every((k) => seen.has(k) && equalsExpected(seen.get(k)!, want[k], tol));
  }
  return false;
}

// ---- JavaScript assert semantics (node:assert), on decoded values ----

type Prim = null | undefined | boolean | number | string | bigint;

function primitive(v: Val): { ok: true; p: Prim } | { ok: false } {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string") return { ok: true, p: v };
  if (isTagged(v) && v.t === "undefined") return { ok: true, p: undefined };
  if (isTagged(v) && v.t === "int") return { ok: true, p: v.v };
  if (isTagged(v) && v.t === "float") return { ok: true, p: v.v };
  return { ok: false };
}

function deepEq(a: Val, b: Val, strict: boolean): boolean {
  const pa = primitive(a);
  const pb = primitive(b);
  if (pa.ok || pb.ok) {
    if (!pa.ok || !pb.ok) return false;
    // eslint-disable-next-line eqeqeq
    return strict ? Object.is(pa.p, pb.p) || (typeof pa.p === "bigint" && pa.p === pb.p) : pa.p == pb.p || (Number.isNaN(pa.p) && Number.isNaN(pb.p));
  }
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEq(x, b[i]!, strict));
  if (isTagged(a) && isTagged(b) && a.t === "dict" && b.t === "dict") {
    const ma = new Map(a.v.map(([k, v]) => [String(k), v]));
    const mb = new Map(b.v.map(([k, v]) => [String(k), v]));
    return ma.size === mb.size && [...ma].every(([k, v]) => mb.has(k) && deepEq(v, mb.get(k)!, strict));
  }
  return false;
}

function truthy(v: Val): boolean {
  const p = primitive(v);
  return p.ok ? Boolean(p.p) : true;
}

/** node:assert methods the JS judge implements. */
export const JS_ASSERT_METHODS = [
  "ok",
  "equal",
  "notEqual",
  "strictEqual",
  "notStrictEqual",
  "deepEqual",
  "notDeepEqual",
  "deepStrictEqual",
  "notDeepStrictEqual",
  "throws",
  "doesNotThrow",
  "rejects",
  "doesNotReject",
] as const;
export type JsAssertMethod = (typeof JS_ASSERT_METHODS)[number];

/**
 * Apply a node:assert method to decoded values (the actual, and the expected where it takes one).
 * For `throws`/`doesNotThrow`, `actual` is whether the call threw. Opaque values fail every method.
 */
export function jsAssertHolds(method: JsAssertMethod, actual: Val, expected: Val | undefined): boolean {
  if (findOpaque(actual) !== null || (expected !== undefined && findOpaque(expected) !== null)) return false;
  const e = expected ?? null;
  switch (method) {
    case "ok":
      return truthy(actual);
    case "throws":
    case "rejects":
      return actual === true;
    case "doesNotThrow":
    case "doesNotReject":
      return actual === false;
    case "equal":
    case "notEqual":
    case "strictEqual":
    case "notStrictEqual": {
      const pa = primitive(actual);
      const pb = primitive(e);
      const strict = /strict/i.test(method);
      // Two separately serialised objects are never the same object: (strict)equal is false.
      // eslint-disable-next-line eqeqeq
      const same = pa.ok && pb.ok ? (strict ? Object.is(pa.p, pb.p) : pa.p == pb.p || (Number.isNaN(pa.p) && Number.isNaN(pb.p))) : false;
      return method.startsWith("not") ? !same : same;
    }
    case "deepEqual":
    case "notDeepEqual":
    case "deepStrictEqual":
    case "notDeepStrictEqual": {
      const same = deepEq(actual, e, /strict/i.test(method));
      return method.startsWith("not") ? !same : same;
    }
  }
}
