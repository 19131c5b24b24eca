/**
 * The computer-algebra backend used for expressions that are not exact rationals (π, roots, functions, variables).
 * The verifier compiles each side once and probes it numerically (complex-valued) at seeded random points;
 * agreement at every point is taken as symbolic equivalence (polynomial-identity testing, Schwartz–Zippel).
 *
 * Default backend: mathjs (chosen by the measured comparison in docs/rewards-math.md; the harness that
 * measured it, test/rewards/math/cas-compare.ts, plugs in @cortex-js/compute-engine through the same interface).
 */
import { compile } from "mathjs";
import type { Node } from "./tree.ts";

/** A complex value; NaN parts mean "undefined here". */
export interface Complex {
  re: number;
  im: number;
}

/** A compiled expression: the values of the variables (in the order given to `compile`) → value. */
export type CompiledExpr = (values: readonly number[]) => Complex;

/** A CAS backend. Implementations must not throw from `compile` or from the returned function. */
export interface CasBackend {
  readonly name: string;
  /**
   * @param node expression tree from parse.ts.
   * @param vars free variable names (the order of the values later passed in).
   * @param percentAsHundredth read `x%` as x/100 (else as x).
   * @returns the compiled function, or null when the backend cannot represent or parse the tree.
   */
  compile(node: Node, vars: readonly string[], percentAsHundredth: boolean): CompiledExpr | null;
}

const NAN: Complex = { re: NaN, im: NaN };

/** Real factorial through a bounded product / Stirling-free overflow: n > 170 is +∞; non-integers are NaN. */
function safeFactorial(x: unknown): number {
  if (typeof x !== "number" || !Number.isInteger(x) || x < 0) return NaN;
  if (x > 170) return Infinity;
  let r = 1;
  for (let k = 2; k <= x; k++) r *= k;
  return r;
}

function safeBinom(n: unknown, k: unknown): number {
  if (typeof n !== "number" || typeof k !== "number" || !Number.isInteger(k) || k < 0) return NaN;
  if (k > 1000) return NaN;
  let r = 1;
  for (let j = 0; j < k; j++) r = (r * (n - j)) / (j + 1);
  return r;
}

/** Real n-th root (odd roots of negatives are negative). */
function safeRoot(x: unknown, n: unknown): number {
  if (typeof x !== "number" || typeof n !== "number" || n === 0) return NaN;
  if (x < 0 && Number.isInteger(n) && Math.abs(n) % 2 === 1) return -Math.pow(-x, 1 / n);
  return Math.pow(x, 1 / n);
}

const MATHJS_FN: Record<string, string> = {
  sin: "sin", cos: "cos", tan: "tan", sec: "sec", csc: "csc", cot: "cot",
  arcsin: "asin", arccos: "acos", arctan: "atan", sinh: "sinh", cosh: "cosh", tanh: "tanh",
  log: "log10", ln: "log", log10: "log10", exp: "exp", sqrt: "sqrt", abs: "abs",
  logb: "log", root: "__root", binom: "__binom", floor: "floor", ceil: "ceil", mod: "mod",
};

/** Serialise a tree to fully parenthesised mathjs syntax. Variables become `__v0`, `__v1`, ... @returns null if unsupported. */
export function toMathjs(node: Node, vars: readonly string[], pct: boolean, depth = 0): string | null {
  if (depth > 120) return null;
  const r = (n: Node) => toMathjs(n, vars, pct, depth + 1);
  switch (node.k) {
    case "num":
      return node.s.startsWith(".") ? "0" + node.s : node.s.endsWith(".") ? node.s + "0" : node.s;
    case "sym": {
      const i = vars.indexOf(node.name);
      return i < 0 ? null : `__v${i}`;
    }
    case "const":
      return node.name === "inf" ? "Infinity" : node.name;
    case "neg": {
      const a = r(node.a);
      return a === null ? null : `(-(${a}))`;
    }
    case "pct": {
      const a = r(node.a);
      return a === null ? null : pct ? `((${a})/100)` : `(${a})`;
    }
    case "fact": {
      const a = r(node.a);
      return a === null ? null : `__fact(${a})`;
    }
    case "op": {
      const a = r(node.a);
      const b = r(node.b);
      return a === null || b === null ? null : `((${a})${node.op}(${b}))`;
    }
    case "fn": {
      const f = MATHJS_FN[node.name];
      if (!f) return null;
      const args = node.args.map(r);
      if (args.some((x) => x === null)) return null;
      return `${f}(${args.join(",")})`;
    }
  }
}

function toComplex(v: unknown): Complex {
  if (typeof v === "number") return { re: v, im: 0 };
  if (v !== null && typeof v === "object" && "re" in v && "im" in v) {
    const c = v as { re: unknown; im: unknown };
    if (typeof c.re === "number" && typeof c.im === "number") return { re: c.re, im: c.im };
  }
  return NAN;
}

/** The mathjs backend (mathjs ≥ 15, number mode; complex results supported). */
export const mathjsBackend: CasBackend = {
  name: "mathjs",
  compile(node, vars, percentAsHundredth) {
    const src = toMathjs(node, vars, percentAsHundredth);
    if (src === null || src.length > 20000) return null;
    let code: { evaluate(scope?: Record<string, unknown>): unknown };
    try {
      code = compile(src);
    } catch {
      return null;
    }
    return (values) => {
      const scope: Record<string, unknown> = { __fact: safeFactorial, __binom: safeBinom, __root: safeRoot };
      for (let i = 0; i < values.length; i++) scope[`__v${i}`] = values[i];
      try {
        return toComplex(code.evaluate(scope));
      } catch {
        return NAN;
      }
    };
  },
};
