/**
 * Exact rational evaluation (BigInt) of number-only expressions: integers, decimals, scientific notation,
 * fractions, percentages, integer powers, perfect-square roots and small factorials.
 * Anything else (symbols, π, irrational roots, huge powers) yields null and is left to the float/CAS path.
 */
import type { Node } from "./tree.ts";

/** A rational number n/d with d > 0 and gcd(|n|, d) = 1. */
export interface Rational {
  n: bigint;
  d: bigint;
}

/** Largest power result (in bits) evaluated exactly; beyond it the exact path gives up (guards 9^9^9^9). */
const MAX_BITS = 20000n;

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** Build a normalised rational. @throws RangeError when d is 0. */
export function rat(n: bigint, d: bigint = 1n): Rational {
  if (d === 0n) throw new RangeError("zero denominator");
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}

function bitLen(x: bigint): bigint {
  return BigInt((x < 0n ? -x : x).toString(2).length);
}

/** Parse an unsigned decimal literal with optional exponent ("1.25", "3e-4", ".5"). */
export function parseDecimal(s: string): Rational | null {
  const m = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(s);
  if (!m || (m[1] === "" && (m[2] ?? "") === "")) return null;
  const int = m[1] || "0";
  const frac = m[2] ?? "";
  const exp = m[3] ? Number(m[3]) : 0;
  if (!Number.isFinite(exp) || Math.abs(exp) > 400) return null;
  let n = BigInt(int + frac);
  let d = 10n ** BigInt(frac.length);
  if (exp >= 0) n *= 10n ** BigInt(exp);
  else d *= 10n ** BigInt(-exp);
  return rat(n, d);
}

function isqrt(x: bigint): bigint | null {
  if (x < 0n) return null;
  if (x < 2n) return x;
  let r = BigInt(Math.floor(Math.sqrt(Number(x))));
  // Newton refinement for big values
  for (let k = 0; k < 200; k++) {
    const next = (r + x / r) >> 1n;
    if (next >= r && r * r <= x) break;
    r = next;
    if (r === 0n) break;
  }
  while (r * r > x) r--;
  while ((r + 1n) * (r + 1n) <= x) r++;
  return r * r === x ? r : null;
}

/** Options of the exact evaluator: `percent` "strict"/"flexible" read x% as x/100, "ignore" as x. */
export interface ExactOptions {
  percentAsHundredth: boolean;
}

/**
 * Evaluate a number-only expression exactly.
 * @returns the rational value, or null when the expression is not an exact rational we can compute cheaply
 * (it has symbols, π, e, i, ∞, irrational roots, division by zero, or a power beyond {@link MAX_BITS}).
 */
export function evalExact(node: Node, o: ExactOptions, depth = 0): Rational | null {
  if (depth > 80) return null;
  switch (node.k) {
    case "num":
      return parseDecimal(node.s);
    case "sym":
    case "const":
      return null;
    case "neg": {
      const a = evalExact(node.a, o, depth + 1);
      return a && { n: -a.n, d: a.d };
    }
    case "pct": {
      const a = evalExact(node.a, o, depth + 1);
      if (!a) return null;
      return o.percentAsHundredth ? rat(a.n, a.d * 100n) : a;
    }
    case "fact": {
      const a = evalExact(node.a, o, depth + 1);
      if (!a || a.d !== 1n || a.n < 0n || a.n > 300n) return null;
      let r = 1n;
      for (let k = 2n; k <= a.n; k++) r *= k;
      return rat(r);
    }
    case "fn": {
      if (node.name === "sqrt" && node.args.length === 1) {
        const a = evalExact(node.args[0]!, o, depth + 1);
        if (!a || a.n < 0n) return null;
        const rn = isqrt(a.n);
        const rd = isqrt(a.d);
        return rn !== null && rd !== null ? rat(rn, rd) : null;
      }
      if (node.name === "abs" && node.args.length === 1) {
        const a = evalExact(node.args[0]!, o, depth + 1);
        return a && { n: a.n < 0n ? -a.n : a.n, d: a.d };
      }
      if ((node.name === "floor" || node.name === "ceil") && node.args.length === 1) {
        const a = evalExact(node.args[0]!, o, depth + 1);
        return a && rat(node.name === "floor" ? floorDiv(a.n, a.d) : -floorDiv(-a.n, a.d));
      }
      if (node.name === "mod" && node.args.length === 2) {
        // a mod b = a − b·⌊a/b⌋ (the sign of b, as in mathematics and mathjs)
        const a = evalExact(node.args[0]!, o, depth + 1);
        const b = evalExact(node.args[1]!, o, depth + 1);
        if (!a || !b || b.n === 0n) return null;
        const q = floorDiv(a.n * b.d, a.d * b.n);
        return rat(a.n * b.d - q * b.n * a.d, a.d * b.d);
      }
      if (node.name === "binom" && node.args.length === 2) {
        const n = evalExact(node.args[0]!, o, depth + 1);
        const k = evalExact(node.args[1]!, o, depth + 1);
        if (!n || !k || n.d !== 1n || k.d !== 1n || n.n < 0n || k.n < 0n || n.n > 5000n) return null;
        if (k.n > n.n) return rat(0n);
        let r = 1n;
        const kk = k.n < n.n - k.n ? k.n : n.n - k.n;
        for (let j = 0n; j < kk; j++) r = (r * (n.n - j)) / (j + 1n);
        return rat(r);
      }
      return null;
    }
    case "op": {
      const a = evalExact(node.a, o, depth + 1);
      if (!a) return null;
      const b = evalExact(node.b, o, depth + 1);
      if (!b) return null;
      switch (node.op) {
        case "+":
          return rat(a.n * b.d + b.n * a.d, a.d * b.d);
        case "-":
          return rat(a.n * b.d - b.n * a.d, a.d * b.d);
        case "*":
          return rat(a.n * b.n, a.d * b.d);
        case "/":
          return b.n === 0n ? null : rat(a.n * b.d, a.d * b.n);
        case "^": {
          if (b.d !== 1n) return null;
          const e = b.n < 0n ? -b.n : b.n;
          if (a.n === 0n) return b.n < 0n ? null : e === 0n ? rat(1n) : rat(0n);
          const bits = (bitLen(a.n) + bitLen(a.d)) * e;
          const trivial = (a.n === 1n || a.n === -1n) && a.d === 1n;
          if (!trivial && bits > MAX_BITS) return null;
          const ee = trivial ? e % 2n : e;
          const pn = a.n ** ee;
          const pd = a.d ** ee;
          return b.n < 0n ? rat(pd, pn) : rat(pn, pd);
        }
      }
    }
  }
}

/** ⌊n/d⌋ for BigInts (d ≠ 0). */
function floorDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return (n % d !== 0n && (n < 0n) !== (d < 0n)) ? q - 1n : q;
}

/** Float value of a rational (±Infinity when out of range). */
export function ratToNumber(r: Rational): number {
  const n = Number(r.n);
  const d = Number(r.d);
  if (Number.isFinite(n) && Number.isFinite(d)) return n / d;
  // scale down huge values keeping the ratio
  const ln = bitLen(r.n);
  const ld = bitLen(r.d);
  const excess = (ln > ld ? ln : ld) - 1000n;
  const shift = excess > 0n ? excess : 0n;
  return Number(r.n >> shift) / Number(r.d >> shift);
}

export function ratEq(a: Rational, b: Rational): boolean {
  return a.n === b.n && a.d === b.d;
}

/** True when the rational has a finite decimal expansion (denominator 2^a 5^b). */
export function isTerminating(r: Rational): boolean {
  let d = r.d;
  while (d % 2n === 0n) d /= 2n;
  while (d % 5n === 0n) d /= 5n;
  return d === 1n;
}
