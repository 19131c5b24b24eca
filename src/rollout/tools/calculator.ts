/**
 * A safe calculator tool: exact arithmetic on a tiny expression grammar, parsed by hand (no
 * eval, no Function, no mathjs). Integers and decimals are exact rationals (BigInt numerator and
 * denominator), so `12345678901234567890*3` is exact and `1/3*3` is 1.
 *
 * Grammar (whitespace ignored):
 *   expr   := term (("+" | "-") term)*
 *   term   := unary (("*" | "/" | "%") unary)*
 *   unary  := ("-" | "+") unary | power
 *   power  := atom ("^" unary)?            (right-associative; "**" is accepted for "^")
 *   atom   := number | "(" expr ")"
 *   number := digits ("." digits)?
 * `×` and `÷` are accepted for `*` and `/`; `−` for `-`.
 *
 * Output: an integer prints as digits ("-54"); a non-integer prints as a decimal rounded to 10
 * places with trailing zeros removed ("0.3333333333", "2.5").
 *
 * Limits (each violation throws CalculatorError with the reason; nothing else throws):
 * input ≤ 256 characters, nesting ≤ 64 parentheses, exponent an integer with |e| ≤ 256, any
 * intermediate numerator/denominator ≤ 2,000 digits, division/modulo by zero.
 */

/** Why the calculator rejected an expression (shown to the model as the tool's observation). */
export class CalculatorError extends Error {
  override name = "CalculatorError";
}

const MAX_INPUT = 256;
const MAX_DEPTH = 64;
const MAX_EXP = 256n;
const MAX_DIGITS = 2000;

/** An exact rational n/d with d > 0 and gcd(|n|, d) = 1. */
interface Q {
  n: bigint;
  d: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

function q(n: bigint, d: bigint = 1n): Q {
  if (d === 0n) throw new CalculatorError("division by zero");
  if (d < 0n) (n = -n), (d = -d);
  const g = gcd(n, d) || 1n;
  const r = { n: n / g, d: d / g };
  const digits = (x: bigint) => (x < 0n ? -x : x).toString().length;
  if (digits(r.n) > MAX_DIGITS || digits(r.d) > MAX_DIGITS) throw new CalculatorError(`result too large (more than ${MAX_DIGITS} digits)`);
  return r;
}

const add = (a: Q, b: Q) => q(a.n * b.d + b.n * a.d, a.d * b.d);
const sub = (a: Q, b: Q) => q(a.n * b.d - b.n * a.d, a.d * b.d);
const mul = (a: Q, b: Q) => q(a.n * b.n, a.d * b.d);
function div(a: Q, b: Q): Q {
  if (b.n === 0n) throw new CalculatorError("division by zero");
  return q(a.n * b.d, a.d * b.n);
}
/** Modulo with the sign of the dividend (as in C, JavaScript and Python's math.fmod). */
function mod(a: Q, b: Q): Q {
  if (b.n === 0n) throw new CalculatorError("modulo by zero");
  // a - b * trunc(a / b)
  const t = div(a, b);
  const trunc = t.n / t.d;
  return sub(a, mul(b, q(trunc)));
}
function pow(a: Q, e: Q): Q {
  if (e.d !== 1n) throw new CalculatorError("exponent must be an integer");
  const k = e.n < 0n ? -e.n : e.n;
  if (k > MAX_EXP) throw new CalculatorError(`exponent too large (|e| <= ${MAX_EXP})`);
  if (a.n === 0n && e.n < 0n) throw new CalculatorError("division by zero");
  // Bound the size before computing: digits(a^k) ≈ k * digits(a).
  const digits = Math.max((a.n < 0n ? -a.n : a.n).toString().length, a.d.toString().length);
  if (digits * Number(k) > MAX_DIGITS + 1) throw new CalculatorError(`result too large (more than ${MAX_DIGITS} digits)`);
  const r = q(a.n ** k, a.d ** k);
  return e.n < 0n ? div(q(1n), r) : r;
}

/** Format a rational: integers exactly, others rounded half away from zero to 10 decimals. */
export function formatRational(x: { n: bigint; d: bigint }, places = 10): string {
  if (x.d === 1n) return x.n.toString();
  const neg = x.n < 0n;
  const n = neg ? -x.n : x.n;
  const scale = 10n ** BigInt(places);
  const scaled = (n * scale * 2n + x.d) / (2n * x.d); // round half up on |x|
  const int = scaled / scale;
  const frac = (scaled % scale).toString().padStart(places, "0").replace(/0+$/, "");
  const body = frac ? `${int}.${frac}` : `${int}`;
  return neg && body !== "0" ? `-${body}` : body;
}

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly s: string) {}

  parse(): Q {
    const v = this.expr();
    this.ws();
    if (this.i < this.s.length) throw new CalculatorError(`unexpected ${JSON.stringify(this.s[this.i])} at position ${this.i}`);
    return v;
  }

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }
  private peek(): string | undefined {
    this.ws();
    return this.s[this.i];
  }
  private expr(): Q {
    let v = this.term();
    for (;;) {
      const c = this.peek();
      if (c === "+") (this.i++, (v = add(v, this.term())));
      else if (c === "-" || c === "\u2212") (this.i++, (v = sub(v, this.term())));
      else return v;
    }
  }
  private term(): Q {
    let v = this.unary();
    for (;;) {
      const c = this.peek();
      if ((c === "*" && this.s[this.i + 1] !== "*") || c === "\u00d7") (this.i++, (v = mul(v, this.unary())));
      else if (c === "/" || c === "\u00f7") (this.i++, (v = div(v, this.unary())));
      else if (c === "%") (this.i++, (v = mod(v, this.unary())));
      else return v;
    }
  }
  private unary(): Q {
    const c = this.peek();
    if (c === "-" || c === "\u2212" || c === "+") {
      this.i++;
      this.enter();
      const v = this.unary();
      this.depth--;
      return c === "+" ? v : q(-v.n, v.d);
    }
    return this.power();
  }
  private power(): Q {
    const base = this.atom();
    const c = this.peek();
    if (c === "^" || (c === "*" && this.s[this.i + 1] === "*")) {
      this.i += c === "^" ? 1 : 2;
      this.enter();
      const e = this.unary();
      this.depth--;
      return pow(base, e);
    }
    return base;
  }
  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new CalculatorError(`expression nested too deeply (more than ${MAX_DEPTH} levels)`);
  }
  private atom(): Q {
    const c = this.peek();
    if (c === "(") {
      this.i++;
      this.enter();
      const v = this.expr();
      this.depth--;
      if (this.peek() !== ")") throw new CalculatorError(`missing ")" at position ${this.i}`);
      this.i++;
      return v;
    }
    const m = /^(\d+)(?:\.(\d+))?/.exec(this.s.slice(this.i));
    if (!m) throw new CalculatorError(c === undefined ? "unexpected end of expression" : `unexpected ${JSON.stringify(c)} at position ${this.i}`);
    this.i += m[0].length;
    if (m[0].length > MAX_DIGITS) throw new CalculatorError(`number too long (more than ${MAX_DIGITS} digits)`);
    const frac = m[2] ?? "";
    return q(BigInt(m[1]! + frac), 10n ** BigInt(frac.length));
  }
}

/**
 * Evaluate an arithmetic expression exactly.
 * @param expr  e.g. "12*7-30", "(1+2)^3/4", "-5 % 3".
 * @returns the exact value (numerator n, denominator d > 0, lowest terms).
 * @throws CalculatorError on anything outside the grammar or the limits (never another error).
 */
export function evaluateExpression(expr: string): { n: bigint; d: bigint } {
  if (typeof expr !== "string") throw new CalculatorError("expression must be a string");
  if (expr.length > MAX_INPUT) throw new CalculatorError(`expression too long (${expr.length} > ${MAX_INPUT} characters)`);
  if (!expr.trim()) throw new CalculatorError("empty expression");
  return new Parser(expr).parse();
}

/**
 * The calculator as a string-to-string function (the tool's body).
 * @returns the formatted value, e.g. calculate("12*7-30") === "54", calculate("7/2") === "3.5".
 * @throws CalculatorError on bad input.
 */
export function calculate(expr: string): string {
  return formatRational(evaluateExpression(expr));
}
