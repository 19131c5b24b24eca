/**
 * Parse a normalised answer into structure (equation, tuple, interval, set, list, matrix, scalar expression)
 * and scalar expressions into a small AST. Hand-written recursive descent with implicit multiplication;
 * recursion depth and token count are bounded, and every failure is a {@link ParseError}.
 */

import { evalExact, ratEq, ratToNumber, type Rational } from "./exact.ts";
import { evalMatrixExpression } from "./matrix.ts";
import { balanced, isLabelNode, substitute, type Node } from "./tree.ts";

export { isLabelNode } from "./tree.ts";

/** A structured answer. */
export type Answer =
  | { k: "expr"; node: Node; src: string }
  | { k: "eq"; lhs: Answer; rhs: Answer; rel: "=" | "<" | ">" | "<=" | ">=" | "!="; src: string }
  | { k: "tuple"; items: Answer[]; src: string } // (a, b, ...) : ordered
  | { k: "interval"; lo: Answer; hi: Answer; loClosed: boolean; hiClosed: boolean; src: string }
  | { k: "union"; parts: Answer[]; src: string }
  | { k: "set"; items: Answer[]; src: string } // \{a, b\} : unordered
  | { k: "list"; items: Answer[]; src: string } // a, b : unordered when options say so
  | { k: "matrix"; rows: Answer[][]; src: string }
  | { k: "text"; text: string; src: string };

export class ParseError extends Error {}

const MAX_TOKENS = 2000;
const MAX_DEPTH = 60;

/** Function names recognised after a backslash or as plain words. */
const FUNCS = new Set([
  "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "asin", "acos", "atan",
  "sinh", "cosh", "tanh", "log", "ln", "lg", "exp", "sqrt", "abs", "floor", "ceil",
]);
/** Named quantities written as LaTeX commands only, with no numeric evaluation here: they label values (`\det A = 0`). */
const LATEX_ONLY_FUNCS = new Set(["det", "tr", "rank", "deg"]);
const GREEK = new Set([
  "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota", "kappa",
  "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega",
  "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega",
]);

type Tok =
  | { t: "num"; v: string }
  | { t: "sym"; v: string }
  | { t: "word"; v: string }
  | { t: "fn"; v: string }
  | { t: "const"; v: "pi" | "e" | "i" | "inf" }
  | { t: "cmd"; v: string }
  | { t: "p"; v: string }; // punctuation: + - * / ^ _ ( ) [ ] { } \{ \} , ! % | = < > <= >= != & \\

/** Split a normalised answer into tokens. @throws ParseError on an unknown character or too many tokens. */
export function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    if (out.length > MAX_TOKENS) throw new ParseError("too many tokens");
    const c = s[i]!;
    if (c === " " || c === "\t" || c === "\n") {
      i++;
      continue;
    }
    if (/[0-9.]/.test(c)) {
      const m = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+(?![a-zA-Z]))?/.exec(s.slice(i, i + 400));
      if (!m) throw new ParseError(`stray '${c}'`);
      if (m[0] === ".") throw new ParseError("stray '.'");
      out.push({ t: "num", v: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === "\\") {
      const m = /^\\([a-zA-Z]+|.)/.exec(s.slice(i, i + 40));
      if (!m) throw new ParseError("dangling backslash");
      const name = m[1]!;
      i += m[0].length;
      if (name === "{" || name === "}") out.push({ t: "p", v: "\\" + name });
      else if (name === "\\") out.push({ t: "p", v: "\\\\" });
      else if (name === "pi") out.push({ t: "const", v: "pi" });
      else if (name === "infty") out.push({ t: "const", v: "inf" });
      else if (name === "cdot" || name === "times" || name === "ast") out.push({ t: "p", v: "*" });
      else if (name === "div") out.push({ t: "p", v: "/" });
      else if (name === "pm" || name === "mp") out.push({ t: "p", v: "\\pm" });
      else if (name === "bmod" || name === "mod") out.push({ t: "p", v: "mod" });
      else if (FUNCS.has(name) || LATEX_ONLY_FUNCS.has(name)) out.push({ t: "fn", v: name });
      else if (GREEK.has(name)) out.push({ t: "sym", v: name });
      else if (name === "|") out.push({ t: "p", v: "|" });
      else if (name === "angle" || name === "measuredangle" || name === "triangle") out.push({ t: "sym", v: name }); // part of a label
      else out.push({ t: "cmd", v: name });
      continue;
    }
    if (/[a-zA-Z]/.test(c)) {
      const m = /^[a-zA-Z]+/.exec(s.slice(i, i + 200))!;
      const w = m[0];
      i += w.length;
      const lw = w.toLowerCase();
      if (lw === "mod" && w === lw) out.push({ t: "p", v: "mod" });
      else if (FUNCS.has(lw) && w === lw) out.push({ t: "fn", v: lw });
      else if (lw === "pi") out.push({ t: "const", v: "pi" });
      else if (lw === "inf" || lw === "infinity" || lw === "infty") out.push({ t: "const", v: "inf" });
      else if (w.length >= 3) out.push({ t: "word", v: w });
      else for (const ch of w) out.push(ch === "e" ? { t: "const", v: "e" } : ch === "i" ? { t: "const", v: "i" } : { t: "sym", v: ch });
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === "<=" || two === ">=" || two === "!=") {
      out.push({ t: "p", v: two });
      i += 2;
      continue;
    }
    if ("+-*/^_()[]{},!%|=<>&:'".includes(c)) {
      out.push({ t: "p", v: c === ":" ? "/" : c });
      i++;
      continue;
    }
    throw new ParseError(`unexpected '${c}'`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scalar expressions

class ExprParser {
  private i = 0;
  private depth = 0;
  constructor(private readonly toks: Tok[]) {}

  parseAll(): Node {
    const n = this.expr();
    if (this.i < this.toks.length) throw new ParseError(`unexpected '${this.toks[this.i]!.v}'`);
    return n;
  }
  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private isP(v: string): boolean {
    const t = this.toks[this.i];
    return t !== undefined && t.t === "p" && t.v === v;
  }
  private expect(v: string): void {
    if (!this.isP(v)) throw new ParseError(`expected '${v}'`);
    this.i++;
  }
  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new ParseError("nesting too deep");
  }

  expr(): Node {
    this.enter();
    let n = this.term();
    for (;;) {
      if (this.isP("+")) {
        this.i++;
        n = { k: "op", op: "+", a: n, b: this.term() };
      } else if (this.isP("-")) {
        this.i++;
        n = { k: "op", op: "-", a: n, b: this.term() };
      } else break;
    }
    this.depth--;
    return n;
  }

  private startsAtom(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.t === "num" || t.t === "sym" || t.t === "const" || t.t === "fn") return true;
    if (t.t === "cmd") return t.v === "frac" || t.v === "sqrt" || t.v === "binom" || t.v === "sum" || t.v === "prod" || t.v === "lfloor" || t.v === "lceil";
    if (t.t === "p") return t.v === "(" || t.v === "{" || t.v === "[";
    return false;
  }

  private term(): Node {
    let n = this.unary();
    for (;;) {
      if (this.isP("*")) {
        this.i++;
        n = { k: "op", op: "*", a: n, b: this.unary() };
      } else if (this.isP("/")) {
        this.i++;
        n = { k: "op", op: "/", a: n, b: this.unary() };
      } else if (this.isP("mod")) {
        this.i++;
        n = { k: "fn", name: "mod", args: [n, this.unary()] };
      } else if (this.startsAtom()) {
        n = { k: "op", op: "*", a: n, b: this.power() };
      } else break;
    }
    return n;
  }

  private unary(): Node {
    if (this.isP("-")) {
      this.i++;
      return { k: "neg", a: this.unary() };
    }
    if (this.isP("+")) {
      this.i++;
      return this.unary();
    }
    return this.power();
  }

  private power(): Node {
    const base = this.postfix(this.atom());
    if (this.isP("^")) {
      this.i++;
      const ex = this.exponent();
      return this.postfix({ k: "op", op: "^", a: base, b: ex });
    }
    return base;
  }

  /** Exponent after `^`: a brace group, or one signed atom (plain-text style: `x^23` is x^{23}). */
  private exponent(): Node {
    this.enter();
    let r: Node;
    if (this.isP("{")) r = this.group("{", "}");
    else if (this.isP("-")) {
      this.i++;
      r = { k: "neg", a: this.exponent() };
    } else {
      const a = this.atom();
      // right associative chains: 9^9^9
      if (this.isP("^")) {
        this.i++;
        r = { k: "op", op: "^", a, b: this.exponent() };
      } else r = a;
    }
    this.depth--;
    return r;
  }

  private postfix(n: Node): Node {
    let r = n;
    for (;;) {
      if (this.isP("!")) {
        this.i++;
        r = { k: "fact", a: r };
      } else if (this.isP("%")) {
        this.i++;
        r = { k: "pct", a: r };
      } else if (this.isP("'")) throw new ParseError("prime notation");
      else return r;
    }
  }

  private group(open: string, close: string): Node {
    this.expect(open);
    const n = this.expr();
    this.expect(close);
    return n;
  }

  /** A LaTeX argument: a brace group or a single token (`\frac12` was expanded by the normaliser). */
  private arg(): Node {
    if (this.isP("{")) return this.group("{", "}");
    return this.atom();
  }

  private atom(): Node {
    this.enter();
    const r = this.atomInner();
    this.depth--;
    return r;
  }

  private atomInner(): Node {
    const t = this.peek();
    if (!t) throw new ParseError("unexpected end");
    this.i++;
    switch (t.t) {
      case "num":
        return { k: "num", s: t.v };
      case "const":
        return { k: "const", name: t.v };
      case "sym": {
        let name = t.v;
        if (this.isP("_")) {
          this.i++;
          name += "_" + this.subscript();
        }
        return { k: "sym", name };
      }
      case "word":
        throw new ParseError(`word '${t.v}'`);
      case "fn":
        return this.func(t.v);
      case "cmd":
        if (t.v === "frac") {
          const a = this.arg();
          const b = this.arg();
          return { k: "op", op: "/", a, b };
        }
        if (t.v === "binom") {
          const a = this.arg();
          const b = this.arg();
          return { k: "fn", name: "binom", args: [a, b] };
        }
        if (t.v === "sum" || t.v === "prod") return this.bigOperator(t.v);
        if (t.v === "lfloor" || t.v === "lceil") {
          const n = this.expr();
          const close = this.peek();
          if (close?.t !== "cmd" || close.v !== (t.v === "lfloor" ? "rfloor" : "rceil")) throw new ParseError(`\\${t.v} without its closing bracket`);
          this.i++;
          return { k: "fn", name: t.v === "lfloor" ? "floor" : "ceil", args: [n] };
        }
        if (t.v === "sqrt") {
          if (this.isP("[")) {
            const idx = this.group("[", "]");
            return { k: "fn", name: "root", args: [this.arg(), idx] };
          }
          return { k: "fn", name: "sqrt", args: [this.arg()] };
        }
        throw new ParseError(`unknown command \\${t.v}`);
      case "p":
        if (t.v === "(") {
          const n = this.expr();
          this.expect(")");
          return n;
        }
        if (t.v === "{") {
          const n = this.expr();
          this.expect("}");
          return n;
        }
        if (t.v === "[") {
          const n = this.expr();
          this.expect("]");
          return n;
        }
        if (t.v === "|") {
          const n = this.expr();
          this.expect("|");
          return { k: "fn", name: "abs", args: [n] };
        }
        throw new ParseError(`unexpected '${t.v}'`);
    }
  }

  /**
   * `\sum_{k=a}^{b} body` / `\prod_{k=a}^{b} body`. With integer bounds and at most {@link MAX_TERMS} terms the
   * index is substituted and the terms are joined in a balanced tree (so exact and CAS evaluation see a plain
   * expression); otherwise the operator stays symbolic (`fn sum`), which only an identical answer matches.
   * The body is an implicit product of powers (`\sum_{k=1}^{n} 2k + 1` is `(\sum 2k) + 1`).
   */
  private bigOperator(kind: "sum" | "prod"): Node {
    this.expect("_");
    this.expect("{");
    const idx = this.peek();
    // the index may be a letter the tokenizer took for a constant (i, e)
    if (!idx || (idx.t !== "sym" && !(idx.t === "const" && (idx.v === "i" || idx.v === "e")))) throw new ParseError(`\\${kind} without an index`);
    this.i++;
    this.expect("=");
    const lo = this.expr();
    this.expect("}");
    this.expect("^");
    const hi = this.exponent();
    let body = this.power();
    while (this.startsAtom() && this.peek()?.t !== "fn") body = { k: "op", op: "*", a: body, b: this.power() };
    const a = evalExact(lo, { percentAsHundredth: true });
    const b = evalExact(hi, { percentAsHundredth: true });
    if (a && b && a.d === 1n && b.d === 1n && b.n - a.n < BigInt(MAX_TERMS)) {
      const terms: Node[] = [];
      for (let k = a.n; k <= b.n; k++) terms.push(substitute(body, idx.v, idx.t === "const", k < 0n ? { k: "neg", a: { k: "num", s: String(-k) } } : { k: "num", s: String(k) }));
      if (terms.length === 0) return { k: "num", s: kind === "sum" ? "0" : "1" };
      return balanced(terms, kind === "sum" ? "+" : "*");
    }
    return { k: "fn", name: kind, args: [body, { k: "sym", name: idx.v }, lo, hi] };
  }

  private subscript(): string {
    const t = this.peek();
    if (!t) throw new ParseError("empty subscript");
    if (t.t === "p" && t.v === "{") {
      let depth = 0;
      let s = "";
      for (;;) {
        const u = this.toks[this.i++];
        if (!u) throw new ParseError("unclosed subscript");
        if (u.t === "p" && u.v === "{") depth++;
        else if (u.t === "p" && u.v === "}") {
          depth--;
          if (depth === 0) return s;
        } else s += u.v;
      }
    }
    this.i++;
    return t.v;
  }

  private func(name: string): Node {
    const fname = name === "asin" ? "arcsin" : name === "acos" ? "arccos" : name === "atan" ? "arctan" : name === "lg" ? "log10" : name;
    let base: Node | null = null;
    let pow: Node | null = null;
    if ((fname === "log" || fname === "log10") && this.isP("_")) {
      this.i++;
      base = this.arg();
    }
    if (this.isP("^") && fname !== "sqrt") {
      this.i++;
      pow = this.exponent();
    }
    let arg: Node;
    if (fname === "sqrt" && this.isP("[")) {
      const idx = this.group("[", "]");
      return { k: "fn", name: "root", args: [this.arg(), idx] };
    }
    if (this.isP("(")) arg = this.group("(", ")");
    else if (this.isP("{")) arg = this.group("{", "}");
    else {
      // \sin 2x: an implicit product of atoms, stopping at + - and explicit operators
      arg = this.power();
      while (this.startsAtom() && !this.isP("(") && this.peek()?.t !== "fn") arg = { k: "op", op: "*", a: arg, b: this.power() };
    }
    let n: Node = base !== null ? { k: "fn", name: "logb", args: [arg, base] } : { k: "fn", name: fname, args: [arg] };
    if (pow !== null) {
      // \sin^{-1} x is arcsin, \sin^2 x is (sin x)^2
      if (pow.k === "neg" && pow.a.k === "num" && pow.a.s === "1" && /^(sin|cos|tan)$/.test(fname))
        n = { k: "fn", name: "arc" + fname, args: [arg] };
      else n = { k: "op", op: "^", a: n, b: pow };
    }
    return n;
  }
}

/** Most terms a `\sum` / `\prod` with numeric bounds is expanded into. */
const MAX_TERMS = 1000;

/** Parse a scalar expression. @throws ParseError. */
export function parseExpr(s: string): Node {
  return new ExprParser(tokenize(s)).parseAll();
}

// ---------------------------------------------------------------------------------------------
// Structure

/** Split at top-level occurrences of `sep` (a string), outside (), [], {}, \{\}. */
export function splitTop(s: string, seps: readonly string[]): { parts: string[]; seps: string[] } {
  const parts: string[] = [];
  const found: string[] = [];
  let depth = 0;
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\") {
      if (s[i + 1] === "{") depth++;
      else if (s[i + 1] === "}") depth--;
      else {
        const hit = depth === 0 ? seps.find((x) => x.startsWith("\\") && s.startsWith(x, i) && !/[a-zA-Z]/.test(s[i + x.length] ?? "")) : undefined;
        if (hit) {
          parts.push(s.slice(last, i));
          found.push(hit);
          i += hit.length - 1;
          last = i + 1;
          continue;
        }
      }
      i++;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (depth === 0) {
      const hit = seps.find((x) => !x.startsWith("\\") && s.startsWith(x, i));
      if (hit) {
        parts.push(s.slice(last, i));
        found.push(hit);
        i += hit.length - 1;
        last = i + 1;
      }
    }
  }
  parts.push(s.slice(last));
  return { parts, seps: found };
}

/** Index of the bracket closing the one at `open`, or -1. Any of ( [ close with any of ) ] (intervals mix them). */
function matchingClose(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function matchingSetClose(s: string): boolean {
  // s starts with "\{" and ends with "\}": check that the first \{ closes at the end
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && (s[i + 1] === "{" || s[i + 1] === "}")) {
      depth += s[i + 1] === "{" ? 1 : -1;
      if (depth === 0) return i === s.length - 2;
      i++;
    }
  }
  return false;
}

const MATRIX_RE = /^\\begin\{([pbBvV]?matrix|array|smallmatrix)\}(?:\{[^{}]*\})?([\s\S]*)\\end\{\1\}$/;

/**
 * Parse a normalised answer into an {@link Answer}. Unparseable scalars become `text`.
 * @param s normalised answer (see normalize.ts).
 * @param depth recursion guard.
 */
export function parseAnswer(s: string, depth = 0): Answer {
  const src = s.trim();
  if (depth > 8) return { k: "text", text: src, src };
  if (src.length === 0) return { k: "text", text: "", src };

  // arithmetic on matrices: sums, differences, products, scalar multiples
  if (src.includes("\\begin{")) {
    const rows = evalMatrixExpression(src, parseExpr);
    if (rows !== null) return { k: "matrix", rows: rows.map((r) => r.map((node): Answer => ({ k: "expr", node, src: "" }))), src };
  }

  // matrix (possibly inside \left[ ... \right] brackets)
  const bracketed = /^[[(]\s*(\\begin\{[\s\S]*\\end\{[a-zA-Z]+\})\s*[\])]$/.exec(src);
  const mm = MATRIX_RE.exec(bracketed ? bracketed[1]! : src);
  if (mm) {
    const body = mm[2]!.trim().replace(/\\\\\s*$/, "");
    const rows = body.split(/\\\\/).map((r) => r.split("&").map((c) => parseAnswer(c.trim(), depth + 1)));
    return { k: "matrix", rows, src };
  }


  // mixed numbers: 2\frac{1}{2}, 2 1/2 (a proper fraction right after an integer)
  const mixed = /^(-?)(\d+)\s*(?:\\frac\{(\d+)\}\{(\d+)\}|\s(\d+)\s*\/\s*(\d+))(%?)$/.exec(src);
  if (mixed) {
    const num = mixed[3] ?? mixed[5]!;
    const den = mixed[4] ?? mixed[6]!;
    if (BigInt(num) < BigInt(den) && BigInt(den) > 0n) {
      const frac: Node = { k: "op", op: "+", a: { k: "num", s: mixed[2]! }, b: { k: "op", op: "/", a: { k: "num", s: num }, b: { k: "num", s: den } } };
      const value: Node = mixed[7] === "%" ? { k: "pct", a: frac } : frac;
      return { k: "expr", node: mixed[1] === "-" ? { k: "neg", a: value } : value, src };
    }
  }

  // words joining multiple answers ("1 and 2", "(11,7)or(7,11)")
  const joined = src.replace(/\s+(?:and|or)\s+/g, ", ").replace(/(?<=[)\]}])\s*(?:and|or)\s*(?=[([{\\])/g, ", ");
  if (joined !== src) return parseAnswer(joined, depth + 1);

  // groups separated by ";" ("p=5,q=2;p=7,q=2"): a list of answers
  if (src.includes(";")) {
    const g = splitTop(src, [";"]).parts.map((p) => p.trim());
    if (g.length > 1 && g.every((p) => p.length > 0) && g.some((p) => p.includes(",") || p.includes("=")))
      return { k: "list", items: g.map((p) => parseAnswer(p, depth + 1)), src };
  }

  // unions of intervals / sets
  const u = splitTop(src, ["\\cup", " U "]);
  if (u.parts.length > 1) return { k: "union", parts: u.parts.map((p) => asIntervalish(parseAnswer(p.trim(), depth + 1))), src };

  // a set \{ ... \}
  if (src.startsWith("\\{") && src.endsWith("\\}") && matchingSetClose(src)) {
    const inner = src.slice(2, -2).trim();
    if (inner.length === 0) return { k: "set", items: [], src };
    // set-builder notation {x | x > 2}, {x : 1 <= x < 3}: the condition's interval
    const builder = /^([a-zA-Z])\s*(?:\\mid|\||:)\s*(.+)$/.exec(inner);
    if (builder && /[<>]/.test(builder[2]!)) {
      const cond = parseAnswer(builder[2]!.trim(), depth + 1);
      if (cond.k === "interval" || cond.k === "union") return cond;
    }
    return { k: "set", items: expandPm(splitTop(inner, [","]).parts).map((p) => parseAnswer(p, depth + 1)), src };
  }
  if (src === "\\emptyset") return { k: "set", items: [], src };

  // top-level relations (equations, inequalities)
  const rel = splitTop(src, ["<=", ">=", "!=", "=", "<", ">"]);
  if (rel.parts.length > 1 && rel.parts.every((p) => p.trim().length > 0)) {
    // the comma binds looser than "=": "x = 1, y = 2" is a list of equations
    const commas = splitTop(src, [","]);
    if (commas.parts.length > 1) {
      const items = commas.parts.map((p) => parseAnswer(p.trim(), depth + 1));
      // "n = 1, 2, 3": one label given several values
      const [first, ...rest] = items;
      if (first && first.k === "eq" && first.rel === "=" && first.lhs.k === "expr" && isLabelNode(first.lhs.node) && rest.every((x) => x.k !== "eq"))
        return { k: "eq", lhs: first.lhs, rhs: { k: "list", items: [first.rhs, ...rest], src: commas.parts.slice(1).join(",") }, rel: "=", src };
      return { k: "list", items, src };
    }
    return parseRelation(rel.parts.map((p) => p.trim()), rel.seps, src, depth);
  }

  // a bracketed tuple / interval spanning the whole answer
  if ((src[0] === "(" || src[0] === "[") && matchingClose(src, 0) === src.length - 1) {
    const inner = src.slice(1, -1);
    let items = splitTop(inner, [","]).parts.map((p) => p.trim());
    if (items.length === 1) items = splitTop(inner, [";"]).parts.map((p) => p.trim()); // (0;-2;6)
    if (items.length >= 2 && items.every((p) => p.length > 0)) {
      const parsed = items.map((p) => parseAnswer(p, depth + 1));
      const open = src[0]!;
      const close = src[src.length - 1]!;
      if (items.length === 2 && (open === "[" || close === "]" || parsed.some(isInfinite)))
        return { k: "interval", lo: parsed[0]!, hi: parsed[1]!, loClosed: open === "[", hiClosed: close === "]", src };
      return { k: "tuple", items: parsed, src };
    }
  }

  // bare comma list
  const c = splitTop(src, [",", ";"]);
  if (c.parts.length > 1) {
    const items = expandPm(c.parts.filter((p) => p.trim().length > 0));
    if (items.length > 1) return { k: "list", items: items.map((p) => parseAnswer(p, depth + 1)), src };
  }

  // a ± b: both answers
  if (src.includes("\\pm")) {
    const items = expandPm([src]);
    return { k: "list", items: items.map((p) => parseAnswer(p, depth + 1)), src };
  }

  // scalar
  try {
    return { k: "expr", node: parseExpr(src), src };
  } catch {
    return { k: "text", text: normalizeText(src), src };
  }
}

/**
 * Whether the number-only members of an equation chain have one value (exactly, or a decimal literal rounding it:
 * `\\frac13 = 0.333`). Members with variables, or that are not exact rationals, are not checked.
 */
function sameNumbers(sides: Answer[]): boolean {
  const vals: { v: Rational; places: number | null }[] = [];
  for (const s of sides) {
    if (s.k !== "expr") continue;
    const v = evalExact(s.node, { percentAsHundredth: true });
    if (v === null) continue;
    const lit = /^-?\d*\.(\d+)$/.exec(s.src.trim());
    vals.push({ v, places: lit ? lit[1]!.length : null });
  }
  return vals.every((a) => vals.every((b) => {
    if (ratEq(a.v, b.v)) return true;
    const places = a.places ?? b.places;
    return places !== null && Math.abs(ratToNumber(a.v) - ratToNumber(b.v)) <= 0.5 * 10 ** -places * (1 + 1e-9);
  }));
}

function isInfinite(a: Answer): boolean {
  if (a.k !== "expr") return false;
  const n = a.node;
  return (n.k === "const" && n.name === "inf") || (n.k === "neg" && n.a.k === "const" && n.a.name === "inf");
}

/** A two-item tuple inside a union is an open interval. */
function asIntervalish(a: Answer): Answer {
  if (a.k === "tuple" && a.items.length === 2) return { k: "interval", lo: a.items[0]!, hi: a.items[1]!, loClosed: false, hiClosed: false, src: a.src };
  return a;
}

function parseRelation(parts: string[], seps: string[], src: string, depth: number): Answer {
  const sides = parts.map((p) => parseAnswer(p, depth + 1));
  if (seps.every((x) => x === "=")) {
    // a chain a = b = c: the claim is its first and last member (x = 4/2 = 2) — if every number in it is the same
    // (x = 3 = 4 claims nothing)
    if (sides.length > 2 && !sameNumbers(sides)) return { k: "text", text: normalizeText(src), src };
    return { k: "eq", lhs: sides[0]!, rhs: sides[sides.length - 1]!, rel: "=", src };
  }
  // a < x < b  →  interval (x any label: 0 < f(x) < 1);  a <= |x| <= b with 0 < a  →  [-b, -a] ∪ [a, b]
  const mid = sides[1];
  if (sides.length === 3 && mid && mid.k === "expr" && isLabelNode(mid.node)) {
    const up = seps.every((x) => x === "<" || x === "<=");
    const down = seps.every((x) => x === ">" || x === ">=");
    if (up || down) {
      const lo = up ? sides[0]! : sides[2]!;
      const hi = up ? sides[2]! : sides[0]!;
      const loClosed = up ? seps[0] === "<=" : seps[1] === ">=";
      const hiClosed = up ? seps[1] === "<=" : seps[0] === ">=";
      const loVal = lo.k === "expr" ? evalExact(lo.node, { percentAsHundredth: true }) : null;
      if (mid.node.k === "fn" && mid.node.name === "abs" && lo.k === "expr" && hi.k === "expr" && loVal !== null && loVal.n > 0n) {
        const neg = (a: Extract<Answer, { k: "expr" }>): Answer => ({ k: "expr", node: { k: "neg", a: a.node }, src: `-(${a.src})` });
        return {
          k: "union",
          parts: [
            { k: "interval", lo: neg(hi), hi: neg(lo), loClosed: hiClosed, hiClosed: loClosed, src },
            { k: "interval", lo, hi, loClosed, hiClosed, src },
          ],
          src,
        };
      }
      return { k: "interval", lo, hi, loClosed, hiClosed, src };
    }
  }
  if (sides.length === 2) {
    let rel = seps[0] as "<" | ">" | "<=" | ">=" | "!=";
    // 5 >= x  →  x <= 5
    if (sides[1]!.k === "expr" && isLabelNode(sides[1]!.node) && !(sides[0]!.k === "expr" && isLabelNode(sides[0]!.node))) {
      sides.reverse();
      rel = ({ "<": ">", ">": "<", "<=": ">=", ">=": "<=", "!=": "!=" } as const)[rel];
    }
    const inf: Answer = { k: "expr", node: { k: "const", name: "inf" }, src: "\\infty" };
    const ninf: Answer = { k: "expr", node: { k: "neg", a: { k: "const", name: "inf" } }, src: "-\\infty" };
    const lhsVar = sides[0]!.k === "expr" && isLabelNode(sides[0]!.node) && !(sides[0]!.node.k === "fn" && sides[0]!.node.name === "abs");
    const rhs = sides[1]!;
    // x != a  →  (-∞, a) ∪ (a, ∞)
    if (lhsVar && rel === "!=")
      return {
        k: "union",
        parts: [
          { k: "interval", lo: ninf, hi: rhs, loClosed: false, hiClosed: false, src },
          { k: "interval", lo: rhs, hi: inf, loClosed: false, hiClosed: false, src },
        ],
        src,
      };
    // |x| < a  →  (-a, a);  |x| > a  →  (-∞, -a) ∪ (a, ∞)
    const lhs0 = sides[0]!;
    if (lhs0.k === "expr" && lhs0.node.k === "fn" && lhs0.node.name === "abs" && lhs0.node.args[0]!.k === "sym" && rhs.k === "expr" && rel !== "!=") {
      const neg: Answer = { k: "expr", node: { k: "neg", a: rhs.node }, src: `-(${rhs.src})` };
      const closed = rel === "<=" || rel === ">=";
      if (rel === "<" || rel === "<=") return { k: "interval", lo: neg, hi: rhs, loClosed: closed, hiClosed: closed, src };
      return {
        k: "union",
        parts: [
          { k: "interval", lo: ninf, hi: neg, loClosed: false, hiClosed: closed, src },
          { k: "interval", lo: rhs, hi: inf, loClosed: closed, hiClosed: false, src },
        ],
        src,
      };
    }
    if (lhsVar && rel !== "!=") {
      // x > a  →  (a, ∞);  x <= a  →  (-∞, a]
      if (rel === ">" || rel === ">=") return { k: "interval", lo: sides[1]!, hi: inf, loClosed: rel === ">=", hiClosed: false, src };
      return { k: "interval", lo: ninf, hi: sides[1]!, loClosed: false, hiClosed: rel === "<=", src };
    }
    return { k: "eq", lhs: sides[0]!, rhs: sides[1]!, rel, src };
  }
  return { k: "text", text: normalizeText(src), src };
}

/** Trim items and expand each one containing `\pm` into its `+` and `-` versions. */
function expandPm(items: string[]): string[] {
  const out: string[] = [];
  for (const raw of items) {
    const it = raw.trim();
    if (it.includes("\\pm")) out.push(it.replace(/\\pm/g, "+"), it.replace(/\\pm/g, "-"));
    else out.push(it);
  }
  return out;
}

/** Text comparison form: lower case, no spaces, no braces or backslashes. */
export function normalizeText(s: string): string {
  return s.toLowerCase().replace(/[\s{}\\]/g, "").replace(/[.!]+$/, "");
}
