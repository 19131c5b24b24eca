/**
 * Equivalence of two structured answers (parse.ts): exact rationals first, then floats with tolerance,
 * then CAS probing for expressions with free variables; structure-aware for equations, tuples,
 * intervals (open/closed matter), sets and lists (order-insensitive), matrices and text.
 */
import type { CasBackend, Complex, CompiledExpr } from "./cas.ts";
import { evalExact, isTerminating, ratEq, ratToNumber, type Rational } from "./exact.ts";
import { isLabelNode, normalizeText, type Answer } from "./parse.ts";
import type { Node } from "./tree.ts";
import type { ResolvedMathOptions } from "./types.ts";

/** A comparison outcome: equal or not, and the rule that decided. */
export interface Decision {
  equal: boolean;
  rule: string;
}

export interface CompareContext {
  o: ResolvedMathOptions;
  cas: CasBackend;
  /** Budget of CAS compilations left (bounds work on huge lists/matrices). */
  budget: { compiles: number };
}

const no = (rule: string): Decision => ({ equal: false, rule });
const yes = (rule: string): Decision => ({ equal: true, rule });

// ---------------------------------------------------------------------------------------------
// helpers on trees

function collectSyms(n: Node, out: Set<string>, depth = 0): Set<string> {
  if (depth > 200) return out;
  switch (n.k) {
    case "sym":
      out.add(n.name);
      break;
    case "op":
      collectSyms(n.a, out, depth + 1);
      collectSyms(n.b, out, depth + 1);
      break;
    case "neg":
    case "fact":
    case "pct":
      collectSyms(n.a, out, depth + 1);
      break;
    case "fn":
      for (const a of n.args) collectSyms(a, out, depth + 1);
      break;
    default:
      break;
  }
  return out;
}

function hasInf(n: Node, depth = 0): boolean {
  if (depth > 200) return false;
  switch (n.k) {
    case "const":
      return n.name === "inf";
    case "op":
      return hasInf(n.a, depth + 1) || hasInf(n.b, depth + 1);
    case "neg":
    case "fact":
    case "pct":
      return hasInf(n.a, depth + 1);
    case "fn":
      return n.args.some((a) => hasInf(a, depth + 1));
    default:
      return false;
  }
}

/** Top-level percent variants of a tree under the percent mode. */
function percentVariants(n: Node, mode: ResolvedMathOptions["percent"]): { node: Node; hundredth: boolean }[] {
  const stripped = n.k === "pct" ? n.a : n.k === "neg" && n.a.k === "pct" ? ({ k: "neg", a: n.a.a } as Node) : null;
  if (mode === "ignore") return [{ node: stripped ?? n, hundredth: false }];
  if (mode === "strict" || stripped === null) return [{ node: n, hundredth: true }];
  return [
    { node: n, hundredth: true },
    { node: stripped, hundredth: true },
  ];
}

/** If `n` is a signed decimal literal, its number of decimals and significant digits. */
function decimalLiteral(n: Node, hundredth = false): { decimals: number; sig: number } | null {
  // 66.7% read as a hundredth is the decimal 0.667: two more places, same significant digits
  const inner = n.k === "neg" ? n.a : n;
  if (inner.k === "pct") {
    if (!hundredth) return null;
    const d = decimalLiteral(inner.a);
    return d && { decimals: d.decimals + 2, sig: d.sig };
  }
  const lit = inner;
  if (lit.k !== "num" || /[eE]/.test(lit.s)) return null;
  const [int, frac = ""] = lit.s.split(".");
  if (frac.length === 0) return null;
  const digits = ((int ?? "") + frac).replace(/^0+/, "");
  return { decimals: frac.length, sig: digits.length };
}

function close(a: number, b: number, o: ResolvedMathOptions): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= Math.max(o.absTol, o.relTol * Math.max(Math.abs(a), Math.abs(b)));
}

function closeC(a: Complex, b: Complex, o: ResolvedMathOptions): boolean {
  const scale = Math.max(Math.hypot(a.re, a.im), Math.hypot(b.re, b.im));
  const tol = Math.max(o.absTol, o.relTol * scale);
  return Math.abs(a.re - b.re) <= tol && Math.abs(a.im - b.im) <= tol;
}

/** A rounded decimal `lit` (with `decimals` places) matches value v when |lit − v| ≤ half a unit in the last place. */
function roundsTo(litValue: number, decimals: number, v: number): boolean {
  const half = 0.5 * Math.pow(10, -decimals);
  return Math.abs(litValue - v) <= half * (1 + 1e-9) + 1e-15;
}

// ---------------------------------------------------------------------------------------------
// scalar expressions

function compileOrNull(ctx: CompareContext, n: Node, vars: readonly string[], hundredth: boolean): CompiledExpr | null {
  if (ctx.budget.compiles <= 0) return null;
  ctx.budget.compiles--;
  try {
    return ctx.cas.compile(n, vars, hundredth);
  } catch {
    return null;
  }
}

/** Deterministic probe value for point p, variable j, in [0.35, 2.65] (avoids 0, 1 and small integers). */
function probeValue(p: number, j: number): number {
  const x = Math.sin(p * 12.9898 + j * 78.233 + 0.5) * 43758.5453;
  return 0.35 + (x - Math.floor(x)) * 2.3;
}

function compareScalarOnce(a: Node, b: Node, ha: boolean, hb: boolean, ctx: CompareContext): Decision {
  const o = ctx.o;
  const syms = [...collectSyms(a, new Set()), ...collectSyms(b, new Set())];
  const vars = [...new Set(syms)].sort();
  if (vars.length === 0) {
    let ra: Rational | null = null;
    let rb: Rational | null = null;
    try {
      ra = evalExact(a, { percentAsHundredth: ha });
      rb = evalExact(b, { percentAsHundredth: hb });
    } catch {
      ra = rb = null;
    }
    const la = decimalLiteral(a, ha);
    const lb = decimalLiteral(b, hb);
    if (ra && rb) {
      if (ratEq(ra, rb)) return yes("exact rational");
      // a rounded decimal against a value with no finite decimal expansion
      if (o.roundedDecimalDigits > 0) {
        if (la && la.sig >= o.roundedDecimalDigits && !isTerminating(rb) && roundsTo(ratToNumber(ra), la.decimals, ratToNumber(rb)))
          return yes(`rounded decimal (${la.decimals} places)`);
        if (lb && lb.sig >= o.roundedDecimalDigits && !isTerminating(ra) && roundsTo(ratToNumber(rb), lb.decimals, ratToNumber(ra)))
          return yes(`rounded decimal (${lb.decimals} places)`);
      }
      return no("different rationals");
    }
    // floats through the CAS
    const fa = ra ? { re: ratToNumber(ra), im: 0 } : evalConst(a, ha, ctx);
    const fb = rb ? { re: ratToNumber(rb), im: 0 } : evalConst(b, hb, ctx);
    if (fa === null || fb === null) return no("cas could not evaluate");
    const finA = Number.isFinite(fa.re) && Number.isFinite(fa.im);
    const finB = Number.isFinite(fb.re) && Number.isFinite(fb.im);
    if (!finA || !finB) {
      // ±∞ written as such compare by sign; overflow (9^9^9) or NaN is undecidable here
      if (hasInf(a) && hasInf(b) && fa.re === fb.re && fa.im === 0 && fb.im === 0 && !Number.isNaN(fa.re)) return yes("infinity");
      return no(finA || finB ? "finite vs non-finite" : "non-finite values (overflow or undefined)");
    }
    // one exact rational against a float: when the tolerance window is not far below the rational's own resolution
    // (1/denominator: 1 for an integer), floats cannot tell it from its neighbours (3141592654 vs 10^9 pi): undecidable
    // (a decimal literal is left to the rounded-decimal rule below: 4.1231056256 is sqrt 17 to its places)
    const exact = ra ?? rb;
    if (exact !== null && (ra === null) !== (rb === null) && (ra ? la : lb) === null) {
      const tol = o.relTol * Math.max(Math.hypot(fa.re, fa.im), Math.hypot(fb.re, fb.im));
      if (tol > 1e-3 / Number(exact.d)) return no("undecidable: float precision cannot separate this rational from its neighbours");
    }
    // the absolute tolerance absorbs float noise where cancellation makes it (sin(pi), e^{i pi} + 1), not a value that is
    // merely tiny (e^{-40} is not 0)
    const noisy = (n: Node) => mayCancel(n);
    if (closeC(fa, fb, noisy(a) || noisy(b) ? o : { ...o, absTol: 0 })) return yes("numeric within tolerance");
    if (o.roundedDecimalDigits > 0 && fa.im === 0 && fb.im === 0) {
      if (la && la.sig >= o.roundedDecimalDigits && !(rb && isTerminating(rb)) && roundsTo(fa.re, la.decimals, fb.re))
        return yes(`rounded decimal (${la.decimals} places)`);
      if (lb && lb.sig >= o.roundedDecimalDigits && !(ra && isTerminating(ra)) && roundsTo(fb.re, lb.decimals, fa.re))
        return yes(`rounded decimal (${lb.decimals} places)`);
    }
    return no("numeric values differ");
  }
  // free variables: probe through the CAS
  const fa = compileOrNull(ctx, a, vars, ha);
  const fb = compileOrNull(ctx, b, vars, hb);
  if (!fa || !fb) return no("cas could not compile");
  let valid = 0;
  const points = Math.max(2, o.probePoints);
  for (let p = 0; p < points; p++) {
    const vals = vars.map((_, j) => probeValue(p + 1, j));
    const va = fa(vals);
    const vb = fb(vals);
    const okA = Number.isFinite(va.re) && Number.isFinite(va.im);
    const okB = Number.isFinite(vb.re) && Number.isFinite(vb.im);
    if (!okA && !okB) continue;
    if (okA !== okB) return no("cas probe: defined on one side only");
    if (!closeC(va, vb, { ...o, relTol: Math.max(o.relTol, 1e-9) })) return no("cas probe: values differ");
    valid++;
  }
  if (valid < 2) return no("cas probe: too few defined points");
  return yes(`cas probe (${valid} points)`);
}

function evalConst(n: Node, hundredth: boolean, ctx: CompareContext): Complex | null {
  const f = compileOrNull(ctx, n, [], hundredth);
  if (!f) return null;
  return f([]);
}

const CANCELLING_FNS = new Set(["sin", "cos", "tan", "sec", "csc", "cot", "log", "ln", "log10", "logb"]);

/** Whether float evaluation of `n` can cancel to noise near zero: a sum or difference, or a trigonometric or log function. */
function mayCancel(n: Node, depth = 0): boolean {
  if (depth > 60) return true;
  switch (n.k) {
    case "op":
      return n.op === "+" || n.op === "-" || mayCancel(n.a, depth + 1) || mayCancel(n.b, depth + 1);
    case "fn":
      return CANCELLING_FNS.has(n.name) || n.args.some((x) => mayCancel(x, depth + 1));
    case "neg":
    case "fact":
    case "pct":
      return mayCancel(n.a, depth + 1);
    default:
      return false;
  }
}

/** Top-level percent node (`12%`, `-12%`). */
function isPercent(n: Node): boolean {
  return n.k === "pct" || (n.k === "neg" && n.a.k === "pct");
}

/** |value| ≤ 1 for a number-only tree (a proportion, which a percentage may express); false otherwise. */
function isProportion(n: Node, ctx: CompareContext): boolean {
  if (collectSyms(n, new Set()).size > 0) return false;
  const r = evalExact(n, { percentAsHundredth: true });
  const v = r ? ratToNumber(r) : evalConst(n, true, ctx)?.re;
  return v !== undefined && Math.abs(v) <= 1;
}

/**
 * `a` (the response side) against `b` (the reference side). Under `percent: "flexible"` a percentage is read one
 * way: a response `x%` against a plain reference `r` means `x` (`12%` for 12; so `1200%` is not 12), or `x/100`
 * only when `r` is a proportion (|r| ≤ 1: `50%` for 0.5); a reference that carries `%` says percent, and a plain
 * response may give it either as the number of percent or as the fraction (`12` or `0.12` for `12%`).
 */
function compareScalar(a: Node, b: Node, ctx: CompareContext): Decision {
  let last: Decision = no("not equal");
  const mode = ctx.o.percent;
  const onlyA = mode === "flexible" && isPercent(a) && !isPercent(b);
  const va0 = percentVariants(a, mode).filter((v) => !onlyA || v.node !== a || isProportion(b, ctx));
  for (const va of va0) {
    for (const vb of percentVariants(b, mode)) {
      const d = compareScalarOnce(va.node, vb.node, va.hundredth, vb.hundredth, ctx);
      if (d.equal) return va.node !== a || vb.node !== b ? yes(d.rule + ", percent") : d;
      last = d;
    }
  }
  return last;
}

// ---------------------------------------------------------------------------------------------
// structure

/** An unknown (or a tuple of unknowns) that an equation can define: `x`, `(p, q, r)`. */
function isUnknown(a: Answer): boolean {
  // x, (p, q, r), labels (AB, |AB|, V_1:V_2, \frac{NO}{BO}), and function definitions f(x), f^{-1}(x), g'(t)
  return (
    isLabel(a) ||
    (a.k === "tuple" && a.items.every(isLabel)) ||
    // a derivative, integral or limit written out: \frac{d}{dx}(x^2), \int_0^1 x\,dx, \lim_{x\to0} …
    /^(?:\\(?:int|iint|oint|lim)(?![a-zA-Z])|\\frac\s*\{\s*(?:d|\\partial)(?:\^\{?\d\}?)?\s*[a-zA-Z]*\s*\}\s*\{\s*(?:d|\\partial)\s*[a-zA-Z])/.test(a.src.trim()) ||
    // a function's value at a point: f(2), P(A), g(-1), f(x, y)
    /^(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?\s*\(\s*-?[\w.\\{}\s,]*\)$/.test(a.src.trim()) ||
    /^[a-zA-Z](?:\^\{?-1\}?|')?\s*\(\s*[a-zA-Z](?:\s*,\s*[a-zA-Z])*\s*\)$/.test(a.src.trim())
  );
}

/** A name rather than a value (see {@link isLabelNode}). */
function isLabel(a: Answer): boolean {
  if (a.k === "expr") return isLabelNode(a.node);
  // geometry names the expression parser reads as words: ABC, \angle ABC, m\angle PQR, \triangle DEF
  return a.k === "text" && /^(?:m\s*)?(?:\\(?:angle|measuredangle|triangle)\s*)?[A-Z]{2,6}$/.test(a.src.trim());
}

function isSymAnswer(a: Answer): a is Extract<Answer, { k: "expr" }> & { node: { k: "sym" } } {
  return a.k === "expr" && a.node.k === "sym";
}

function sub(a: Node, b: Node): Node {
  return { k: "op", op: "-", a, b };
}

/** Equations are equivalent when lhs − rhs of one is a constant non-zero multiple of the other's. */
function proportional(a: Node, b: Node, ctx: CompareContext): Decision {
  const vars = [...new Set([...collectSyms(a, new Set()), ...collectSyms(b, new Set())])].sort();
  if (vars.length === 0) return no("equations without variables");
  const fa = compileOrNull(ctx, a, vars, true);
  const fb = compileOrNull(ctx, b, vars, true);
  if (!fa || !fb) return no("cas could not compile");
  let ratio: Complex | null = null;
  let valid = 0;
  for (let p = 0; p < Math.max(3, ctx.o.probePoints); p++) {
    const vals = vars.map((_, j) => probeValue(p + 1, j));
    const va = fa(vals);
    const vb = fb(vals);
    if (![va.re, va.im, vb.re, vb.im].every(Number.isFinite)) continue;
    const za = Math.hypot(va.re, va.im) < 1e-12;
    const zb = Math.hypot(vb.re, vb.im) < 1e-12;
    if (za !== zb) return no("equations differ");
    if (za) continue;
    const den = vb.re * vb.re + vb.im * vb.im;
    const r = { re: (va.re * vb.re + va.im * vb.im) / den, im: (va.im * vb.re - va.re * vb.im) / den };
    if (ratio === null) ratio = r;
    else if (!closeC(ratio, r, { ...ctx.o, relTol: 1e-8 })) return no("equations differ");
    valid++;
  }
  if (valid < 2) return no("equations: too few defined points");
  return yes("equivalent equations (proportional)");
}

const FLIP: Record<string, string> = { "<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "!=": "!=" };

function compareEquations(a: Extract<Answer, { k: "eq" }>, b: Extract<Answer, { k: "eq" }>, ctx: CompareContext): Decision {
  if (a.rel === b.rel && compareAnswers(a.lhs, b.lhs, ctx).equal && compareAnswers(a.rhs, b.rhs, ctx).equal) return yes("same equation");
  if (FLIP[a.rel] === b.rel && compareAnswers(a.lhs, b.rhs, ctx).equal && compareAnswers(a.rhs, b.lhs, ctx).equal) return yes("same equation, sides swapped");
  if (a.rel !== "=" || b.rel !== "=") return no("relations differ");
  // same variable on the left: compare right-hand sides
  if (isSymAnswer(a.lhs) && isSymAnswer(b.lhs) && a.lhs.node.name === b.lhs.node.name) return compareAnswers(a.rhs, b.rhs, ctx);
  if (isLabel(a.lhs) && isLabel(b.lhs) && normalizeText(a.lhs.src) === normalizeText(b.lhs.src)) return compareAnswers(a.rhs, b.rhs, ctx);
  if (a.lhs.k === "expr" && a.rhs.k === "expr" && b.lhs.k === "expr" && b.rhs.k === "expr")
    return proportional(sub(a.lhs.node, a.rhs.node), sub(b.lhs.node, b.rhs.node), ctx);
  return no("equations differ");
}

/** Unordered matching (equivalence is transitive, so greedy matching is exact). */
function matchUnordered(xs: Answer[], ys: Answer[], ctx: CompareContext): boolean {
  if (xs.length !== ys.length) return false;
  const used = new Array<boolean>(ys.length).fill(false);
  for (const x of xs) {
    let found = false;
    for (let j = 0; j < ys.length; j++) {
      if (used[j]) continue;
      if (compareAnswers(x, ys[j]!, ctx).equal) {
        used[j] = true;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

/** Set equality: every element of each side has an equal element on the other (duplicates ignored). */
function sameSet(xs: Answer[], ys: Answer[], ctx: CompareContext): boolean {
  const covers = (p: Answer[], q: Answer[]) => p.every((x) => q.some((y) => compareAnswers(x, y, ctx).equal));
  return covers(xs, ys) && covers(ys, xs);
}

function matchOrdered(xs: Answer[], ys: Answer[], ctx: CompareContext): boolean {
  return xs.length === ys.length && xs.every((x, i) => compareAnswers(x, ys[i]!, ctx).equal);
}

/** "x = 1, y = 2" as an ordered tuple of values when every item is `symbol = value`. */
function equationValues(a: Answer): Answer[] | null {
  if (a.k !== "list") return null;
  const out: Answer[] = [];
  for (const it of a.items) {
    if (it.k !== "eq" || it.rel !== "=" || !isLabel(it.lhs)) return null;
    out.push(it.rhs);
  }
  return out;
}

/**
 * Compare two structured answers. `a` is the response side, `b` the reference side (the rounding rule is
 * symmetric, so the order matters only for reasons). Never throws.
 */
export function compareAnswers(a: Answer, b: Answer, ctx: CompareContext): Decision {
  try {
    return compareInner(a, b, ctx);
  } catch (e) {
    return no(`comparison error: ${(e as Error)?.message ?? String(e)}`);
  }
}

/**
 * A one-variable linear inequality (`2x + 1 > 5`, `-x >= -1`) as an interval, solved numerically through the CAS.
 * @returns null when the relation is not an inequality, has not exactly one variable, or is not linear.
 */
function inequalityToInterval(e: Extract<Answer, { k: "eq" }>, ctx: CompareContext): Answer | null {
  if (e.rel === "=" || e.rel === "!=" || e.lhs.k !== "expr" || e.rhs.k !== "expr") return null;
  const f = sub(e.lhs.node, e.rhs.node);
  const vars = [...collectSyms(f, new Set())];
  if (vars.length !== 1) return null;
  const fn = compileOrNull(ctx, f, vars, true);
  if (!fn) return null;
  const at = (x: number) => fn([x]);
  const [f0, f1, f2] = [at(0), at(1), at(3.7)];
  if (![f0, f1, f2].every((v) => Number.isFinite(v.re) && v.im === 0)) return null;
  const slope = f1.re - f0.re;
  if (Math.abs(slope) < 1e-12 || !close(f2.re, f0.re + 3.7 * slope, { ...ctx.o, relTol: 1e-9, absTol: 1e-9 })) return null;
  const root = -f0.re / slope;
  const rootAns: Answer = { k: "expr", node: root < 0 ? { k: "neg", a: { k: "num", s: String(-root) } } : { k: "num", s: String(root) }, src: String(root) };
  if (/e/i.test(String(Math.abs(root)))) return null;
  const inf: Answer = { k: "expr", node: { k: "const", name: "inf" }, src: "\\infty" };
  const ninf: Answer = { k: "expr", node: { k: "neg", a: { k: "const", name: "inf" } }, src: "-\\infty" };
  const strict = e.rel === "<" || e.rel === ">";
  // f rel 0 with f increasing (slope > 0): f > 0 ⇔ x > root
  const greater = (e.rel === ">" || e.rel === ">=") === slope > 0;
  return greater
    ? { k: "interval", lo: rootAns, hi: inf, loClosed: !strict, hiClosed: false, src: e.src }
    : { k: "interval", lo: ninf, hi: rootAns, loClosed: false, hiClosed: !strict, src: e.src };
}

function compareInner(a: Answer, b: Answer, ctx: CompareContext): Decision {
  // linear inequalities against intervals (or each other)
  if ((a.k === "eq" && a.rel !== "=" && a.rel !== "!=") || (b.k === "eq" && b.rel !== "=" && b.rel !== "!=")) {
    const ia = a.k === "eq" ? inequalityToInterval(a, ctx) : a;
    const ib = b.k === "eq" ? inequalityToInterval(b, ctx) : b;
    if (ia && ib && (ia !== a || ib !== b) && ia.k === "interval" && ib.k === "interval") {
      const direct = a.k === "eq" && b.k === "eq" ? compareEquations(a, b, ctx) : no("");
      if (direct.equal) return direct;
      return tag(compareInner(ia, ib, ctx), "inequality solved as interval");
    }
  }
  // equations against a bare value: "x = 3" vs "3"
  if (a.k === "eq" && b.k === "eq") return compareEquations(a, b, ctx);
  if (a.k === "eq" && a.rel === "=") {
    if (isUnknown(a.lhs) || (a.rhs.k === "matrix" && a.lhs.k === "expr")) return tag(compareAnswers(a.rhs, b, ctx), "rhs of equation");
    if (isUnknown(a.rhs)) return tag(compareAnswers(a.lhs, b, ctx), "lhs of equation");
    const ia = numericIdentity(a, ctx);
    if (ia) return tag(stated(a, b, ia, ctx, (x, y) => compareAnswers(x, y, ctx)), "result of a numeric computation");
    return no("equation vs value");
  }
  if (b.k === "eq" && b.rel === "=") {
    if (isUnknown(b.lhs) || (b.rhs.k === "matrix" && b.lhs.k === "expr")) return tag(compareAnswers(a, b.rhs, ctx), "rhs of equation");
    if (isUnknown(b.rhs)) return tag(compareAnswers(a, b.lhs, ctx), "lhs of equation");
    const ib = numericIdentity(b, ctx);
    if (ib) return tag(stated(b, a, ib, ctx, (x, y) => compareAnswers(y, x, ctx)), "result of a numeric computation");
    return no("value vs equation");
  }
  switch (a.k) {
    case "expr":
      if (b.k === "expr") return compareScalar(a.node, b.node, ctx);
      if (b.k === "set" && b.items.length === 1) return tag(compareAnswers(a, b.items[0]!, ctx), "singleton set");
      return no(`expression vs ${b.k}`);
    case "tuple":
      if (b.k === "tuple") return matchOrdered(a.items, b.items, ctx) ? yes("same tuple") : no("tuples differ");
      if (b.k === "interval" && !b.loClosed && !b.hiClosed && a.items.length === 2)
        return compareAnswers({ k: "interval", lo: a.items[0]!, hi: a.items[1]!, loClosed: false, hiClosed: false, src: a.src }, b, ctx);
      if (b.k === "list") {
        const vals = equationValues(b);
        return matchOrdered(a.items, vals ?? b.items, ctx) ? yes("tuple vs list, in order") : no("tuple vs list differ");
      }
      return no(`tuple vs ${b.k}`);
    case "interval":
      if (b.k === "interval") {
        if (a.loClosed !== b.loClosed || a.hiClosed !== b.hiClosed) return no("interval ends differ (open/closed)");
        return compareAnswers(a.lo, b.lo, ctx).equal && compareAnswers(a.hi, b.hi, ctx).equal ? yes("same interval") : no("interval endpoints differ");
      }
      if (b.k === "union" && b.parts.length === 1) return compareAnswers(a, b.parts[0]!, ctx);
      if (b.k === "tuple") return compareAnswers(b, a, ctx);
      return no(`interval vs ${b.k}`);
    case "union":
      if (b.k === "union") return matchUnordered(a.parts, b.parts, ctx) ? yes("same union") : no("unions differ");
      if (b.k === "list" && asUnion(b)) return compareInner(a, asUnion(b)!, ctx);
      if (a.parts.length === 1) return compareAnswers(a.parts[0]!, b, ctx);
      return no(`union vs ${b.k}`);
    case "set":
      if (b.k === "set" || b.k === "list") return sameSet(a.items, b.items, ctx) ? yes("same set") : no("sets differ");
      if (a.items.length === 1 && b.k === "expr") return tag(compareAnswers(a.items[0]!, b, ctx), "singleton set");
      return no(`set vs ${b.k}`);
    case "list": {
      // "x < -2 or x > 3": a list of intervals is their union
      if (b.k === "union" && asUnion(a)) return compareInner(asUnion(a)!, b, ctx);
      if (b.k === "list") {
        const va = equationValues(a);
        const vb = equationValues(b);
        if (!ctx.o.unorderedLists) return matchOrdered(a.items, b.items, ctx) ? yes("same list (ordered)") : no("lists differ");
        // multiple answers are a set: order and repeats do not matter ("(1,2),(1,2),(3,4)" is {(1,2),(3,4)})
        if ((va && !vb) || (vb && !va))
          return sameSet(va ?? a.items, vb ?? b.items, ctx) ? yes("equation values (order-insensitive)") : no("lists differ");
        return sameSet(a.items, b.items, ctx) ? yes("same list (order-insensitive)") : no("lists differ");
      }
      if (b.k === "set") return sameSet(a.items, b.items, ctx) ? yes("list vs set") : no("list vs set differ");
      if (b.k === "tuple") {
        const vals = equationValues(a);
        return matchOrdered(vals ?? a.items, b.items, ctx) ? yes("list vs tuple, in order") : no("list vs tuple differ");
      }
      return no(`list vs ${b.k}`);
    }
    case "matrix":
      if (b.k !== "matrix") return no(`matrix vs ${b.k}`);
      if (a.rows.length !== b.rows.length || a.rows.some((r, i) => r.length !== b.rows[i]!.length)) return no("matrix shapes differ");
      return a.rows.every((r, i) => r.every((c, j) => compareAnswers(c, b.rows[i]![j]!, ctx).equal)) ? yes("same matrix") : no("matrix entries differ");
    case "text":
      return normalizeText(a.src) === normalizeText(b.src) ? yes("same text") : no("text differs");
    case "eq":
      return no("relations differ");
  }
}

/**
 * `\frac{16}{4} = 4`, `\sin 60^\circ = \frac{\sqrt3}{2}`: a computation whose left side has no variable states its
 * result, the right side (as in a chain `a = b = c`, the last member is the claim).
 */
/**
 * Whether a number-only equation is true: "exact" (`2+2 = 4`, `\sin 60^\circ = \frac{\sqrt3}{2}` with trigonometry
 * retried in degrees — the degree sign is gone by now), "rounded" (the right side is a decimal that rounds the left to
 * its places: `\frac16 = 0.167`, `\pi \approx 3.14`), or false (`3 = 4`: it states nothing).
 */
function numericIdentity(e: Extract<Answer, { k: "eq" }>, ctx: CompareContext): "exact" | "rounded" | false {
  if (e.lhs.k !== "expr" || e.rhs.k !== "expr") return false;
  if (collectSyms(e.lhs.node, new Set()).size > 0 || collectSyms(e.rhs.node, new Set()).size > 0) return false;
  if (compareScalar(e.lhs.node, e.rhs.node, ctx).equal) return "exact";
  const deg = trigInDegrees(e.lhs.node);
  if (deg !== e.lhs.node && compareScalar(deg, e.rhs.node, ctx).equal) return "exact";
  const lit = decimalLiteral(e.rhs.node);
  if (lit === null) return false;
  const r = evalExact(e.rhs.node, { percentAsHundredth: true });
  const l = evalExact(e.lhs.node, { percentAsHundredth: true });
  const lv = l ? ratToNumber(l) : evalConst(e.lhs.node, true, ctx)?.re;
  return r !== null && lv !== undefined && Number.isFinite(lv) && roundsTo(ratToNumber(r), lit.decimals, lv) ? "rounded" : false;
}

/** What a true numeric equation states: its right side, or for a rounded one (`\pi = 3.14`) either side. */
function stated(e: Extract<Answer, { k: "eq" }>, other: Answer, kind: "exact" | "rounded", _ctx: CompareContext, cmp: (x: Answer, y: Answer) => Decision): Decision {
  const d = cmp(e.rhs, other);
  return d.equal || kind === "exact" ? d : cmp(e.lhs, other);
}

const TRIG = new Set(["sin", "cos", "tan", "sec", "csc", "cot"]);

/** `n` with every trigonometric argument read in degrees (x → x·π/180); `n` itself when it has none. */
function trigInDegrees(n: Node, depth = 0): Node {
  if (depth > 60) return n;
  const r = (m: Node) => trigInDegrees(m, depth + 1);
  switch (n.k) {
    case "fn": {
      const args = n.args.map(r);
      if (TRIG.has(n.name) && args.length === 1) {
        const rad: Node = { k: "op", op: "*", a: args[0]!, b: { k: "op", op: "/", a: { k: "const", name: "pi" }, b: { k: "num", s: "180" } } };
        return { k: "fn", name: n.name, args: [rad] };
      }
      return args.every((a, i) => a === n.args[i]) ? n : { ...n, args };
    }
    case "op": {
      const a = r(n.a);
      const b = r(n.b);
      return a === n.a && b === n.b ? n : { ...n, a, b };
    }
    case "neg":
    case "fact":
    case "pct": {
      const a = r(n.a);
      return a === n.a ? n : { ...n, a };
    }
    default:
      return n;
  }
}

/** A list whose items are all intervals (or unions of them) as one union; null otherwise. */
function asUnion(a: Extract<Answer, { k: "list" }>): Answer | null {
  const parts: Answer[] = [];
  for (const it of a.items) {
    if (it.k === "interval") parts.push(it);
    else if (it.k === "union") parts.push(...it.parts);
    else return null;
  }
  return parts.length > 1 ? { k: "union", parts, src: a.src } : null;
}

function tag(d: Decision, what: string): Decision {
  return { equal: d.equal, rule: `${d.rule} (${what})` };
}
