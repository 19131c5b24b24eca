/**
 * Exact arithmetic expressions: a tokenizer, a recursive-descent parser and rational evaluation
 * over BigInt. No `eval`. Used by the Countdown verifier (and anything else that must check an
 * arithmetic expression written by a model).
 *
 * Grammar (usual precedence, left-associative):
 *   expr    := term (("+" | "-") term)*
 *   term    := unary (("*" | "/") unary)*
 *   unary   := ("-" | "+") unary | primary
 *   primary := integer | "(" expr ")"
 * Accepted spellings: "*", "×", "x"/"X" between operands is NOT accepted (ambiguous), "·", "/", "÷",
 * "-", "−" (U+2212), "–" (en dash). Brackets "[" "]" count as parentheses.
 */

/** An exact rational number num/den with den > 0 and gcd(num, den) = 1. */
export class Rational {
  readonly num: bigint;
  readonly den: bigint;

  constructor(num: bigint, den: bigint = 1n) {
    if (den === 0n) throw new ExprError("division by zero");
    if (den < 0n) {
      num = -num;
      den = -den;
    }
    const g = gcd(num < 0n ? -num : num, den);
    this.num = g > 1n ? num / g : num;
    this.den = g > 1n ? den / g : den;
  }

  static of(n: number | bigint): Rational {
    return new Rational(BigInt(n), 1n);
  }
  add(o: Rational): Rational {
    return new Rational(this.num * o.den + o.num * this.den, this.den * o.den);
  }
  sub(o: Rational): Rational {
    return new Rational(this.num * o.den - o.num * this.den, this.den * o.den);
  }
  mul(o: Rational): Rational {
    return new Rational(this.num * o.num, this.den * o.den);
  }
  /** Throws ExprError("division by zero") when o is 0. */
  div(o: Rational): Rational {
    if (o.num === 0n) throw new ExprError("division by zero");
    return new Rational(this.num * o.den, this.den * o.num);
  }
  equals(o: Rational): boolean {
    return this.num === o.num && this.den === o.den;
  }
  isInteger(): boolean {
    return this.den === 1n;
  }
  toString(): string {
    return this.den === 1n ? String(this.num) : `${this.num}/${this.den}`;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** A malformed or unevaluable expression (the message says why). */
export class ExprError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExprError";
  }
}

type Tok = { kind: "num"; value: bigint; text: string } | { kind: "op"; value: "+" | "-" | "*" | "/" | "(" | ")" };

const OPS: Record<string, "+" | "-" | "*" | "/" | "(" | ")"> = {
  "+": "+",
  "-": "-",
  "\u2212": "-",
  "\u2013": "-",
  "*": "*",
  "\u00d7": "*",
  "\u00b7": "*",
  "/": "/",
  "\u00f7": "/",
  "(": "(",
  ")": ")",
  "[": "(",
  "]": ")",
};

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c >= "0" && c <= "9") {
      let j = i;
      while (j < src.length && src[j]! >= "0" && src[j]! <= "9") j++;
      if (src[j] === "." && /[0-9]/.test(src[j + 1] ?? "")) throw new ExprError(`decimal numbers are not allowed (at "${src.slice(i)}")`);
      out.push({ kind: "num", value: BigInt(src.slice(i, j)), text: src.slice(i, j) });
      i = j;
    } else if (c in OPS) {
      out.push({ kind: "op", value: OPS[c]! });
      i++;
    } else {
      throw new ExprError(`unexpected character "${c}"`);
    }
  }
  return out;
}

/** Result of parsing and evaluating an expression. */
export interface Evaluated {
  /** Exact value. */
  value: Rational;
  /** The integer literals in the order they appear (as numbers). */
  numbers: number[];
}

/**
 * Parse and evaluate an arithmetic expression exactly.
 * @throws ExprError on a syntax error, an empty expression, a non-integer literal or division by zero.
 */
export function evaluateExpression(src: string): Evaluated {
  const toks = tokenize(src);
  if (toks.length === 0) throw new ExprError("empty expression");
  let pos = 0;
  const numbers: number[] = [];
  const peek = (): Tok | undefined => toks[pos];
  const isOp = (t: Tok | undefined, ...ops: string[]): boolean => t !== undefined && t.kind === "op" && ops.includes(t.value);

  function expr(): Rational {
    let v = term();
    while (isOp(peek(), "+", "-")) {
      const op = (toks[pos++] as { value: string }).value;
      const r = term();
      v = op === "+" ? v.add(r) : v.sub(r);
    }
    return v;
  }
  function term(): Rational {
    let v = unary();
    while (isOp(peek(), "*", "/")) {
      const op = (toks[pos++] as { value: string }).value;
      const r = unary();
      v = op === "*" ? v.mul(r) : v.div(r);
    }
    return v;
  }
  function unary(): Rational {
    if (isOp(peek(), "-")) {
      pos++;
      return Rational.of(0).sub(unary());
    }
    if (isOp(peek(), "+")) {
      pos++;
      return unary();
    }
    return primary();
  }
  function primary(): Rational {
    const t = peek();
    if (t === undefined) throw new ExprError("expression ends too early");
    if (t.kind === "num") {
      pos++;
      numbers.push(Number(t.value));
      return new Rational(t.value);
    }
    if (t.value === "(") {
      pos++;
      const v = expr();
      if (!isOp(peek(), ")")) throw new ExprError("missing closing parenthesis");
      pos++;
      return v;
    }
    throw new ExprError(`unexpected "${t.value}"`);
  }

  const value = expr();
  if (pos !== toks.length) {
    const t = toks[pos]!;
    throw new ExprError(`unexpected "${t.kind === "num" ? t.text : t.value}" after the expression`);
  }
  return { value, numbers };
}
