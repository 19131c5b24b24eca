/**
 * Matrix arithmetic on literals inside an answer (`\begin{pmatrix}…\end{pmatrix} + …`): the result is one matrix
 * of expression trees, so `A + B`, `AB`, `2A`, `A^2`, `A^T` compare with the evaluated matrix entry by entry.
 */
import { balanced, type Node } from "./tree.ts";

type MVal = { m: Node[][] } | { s: Node };

/**
 * Evaluate a sum / difference / product / scalar multiple / power / transpose of matrix literals (`A + B`,
 * `A \cdot B`, `2A`, `-A`, `A^2`, `A^T`) into one matrix whose entries are expression trees (compared entry by entry
 * later, exactly or through the CAS).
 * @param src a normalised answer containing `\begin{…matrix}` literals.
 * @param parseExpr the scalar parser (parse.ts), for entries and scalar factors.
 * @returns the rows of the result, or null when `src` is not such an expression (a single literal, a shape
 *   mismatch, a matrix inside other structure, an entry that does not parse).
 */
export function evalMatrixExpression(src: string, parseExpr: (s: string) => Node): Node[][] | null {
  // split into literals and the text between them
  const items: (string | Node[][])[] = [];
  let i = 0;
  let literals = 0;
  const re = /\\begin\{([pbBvV]?matrix|smallmatrix)\}/g;
  for (let m = re.exec(src); m !== null; m = re.exec(src)) {
    const endTag = `\\end{${m[1]}}`;
    const close = src.indexOf(endTag, m.index);
    if (close < 0) return null;
    items.push(src.slice(i, m.index));
    const body = src.slice(m.index + m[0].length, close).trim().replace(/\\\\\s*$/, "");
    const rows = body.split(/\\\\/).map((r) => r.split("&").map((c) => c.trim()));
    try {
      items.push(rows.map((r) => r.map((c) => parseExpr(c))));
    } catch {
      return null;
    }
    literals++;
    i = close + endTag.length;
    // a power or transpose right after the literal: A^2, A^{3}, A^T
    const pw = /^\s*\^\s*\{?\s*(\d{1,2}|T|\\top)\s*\}?/.exec(src.slice(i, i + 20));
    if (pw) {
      const lit = items.pop() as Node[][];
      const p = pw[1]!;
      if (p === "T" || p === "\\top") items.push(lit[0]!.map((_, j) => lit.map((r) => r[j]!)));
      else {
        const e = Number(p);
        if (e < 1 || lit.length !== lit[0]!.length) return null;
        let acc: MVal = { m: lit };
        for (let k = 1; k < e; k++) acc = mMul(acc, { m: lit }) ?? acc;
        items.push((acc as { m: Node[][] }).m);
        literals++; // a power is arithmetic even on one literal
      }
      if (p === "T" || p === "\\top") literals++;
      i += pw[0].length;
    }
    re.lastIndex = i;
  }
  items.push(src.slice(i));
  const textParts = items.filter((x): x is string => typeof x === "string");
  if (literals < 2 && textParts.every((t) => /^[\s()[\]]*$/.test(t))) return null; // a single literal: the usual path
  // tokens: matrices, scalars, operators
  type T = { v: MVal } | { op: "+" | "-" | "*" };
  const toks: T[] = [];
  for (const it of items) {
    if (typeof it !== "string") {
      toks.push({ v: { m: it } });
      continue;
    }
    let rest = it.replace(/[()[\]]/g, " ").trim();
    while (rest.length > 0) {
      const op = /^(\+|-|\*|\\cdot(?![a-zA-Z])|\\times(?![a-zA-Z]))\s*/.exec(rest);
      if (op) {
        toks.push({ op: op[1] === "+" ? "+" : op[1] === "-" ? "-" : "*" });
        rest = rest.slice(op[0].length);
        continue;
      }
      const sc = /^[^+\-*\\]+|^\\(?!cdot|times)[a-zA-Z]+(?:\{[^{}]*\})*/.exec(rest);
      if (!sc) return null;
      try {
        toks.push({ v: { s: parseExpr(sc[0]) } });
      } catch {
        return null;
      }
      rest = rest.slice(sc[0].length).trim();
    }
  }
  // evaluate: terms joined by + / -, factors by * or juxtaposition; a leading - negates the term
  let acc: MVal | null = null;
  let k = 0;
  while (k < toks.length) {
    let sign = 1;
    if (acc !== null) {
      const t = toks[k++];
      if (!t || !("op" in t) || t.op === "*") return null;
      sign = t.op === "-" ? -1 : 1;
    }
    while (k < toks.length && "op" in toks[k]! && (toks[k] as { op: string }).op === "-") {
      sign = -sign;
      k++;
    }
    let term: MVal | null = null;
    while (k < toks.length) {
      const t = toks[k]!;
      if ("op" in t) {
        if (t.op !== "*" || term === null) break;
        k++;
        continue;
      }
      term = term === null ? t.v : mMul(term, t.v);
      if (term === null) return null;
      k++;
    }
    if (term === null) return null;
    if (sign < 0) term = mMul({ s: { k: "neg", a: { k: "num", s: "1" } } }, term)!;
    acc = acc === null ? term : mAdd(acc, term);
    if (acc === null) return null;
  }
  if (acc === null || !("m" in acc)) return null;
  return acc.m;
}

function mAdd(a: MVal, b: MVal): MVal | null {
  if ("s" in a && "s" in b) return { s: { k: "op", op: "+", a: a.s, b: b.s } };
  if (!("m" in a) || !("m" in b)) return null;
  if (a.m.length !== b.m.length || a.m.some((r, i) => r.length !== b.m[i]!.length)) return null;
  return { m: a.m.map((r, i) => r.map((x, j) => ({ k: "op", op: "+", a: x, b: b.m[i]![j]! }) as Node)) };
}

function mMul(a: MVal, b: MVal): MVal | null {
  if ("s" in a && "s" in b) return { s: { k: "op", op: "*", a: a.s, b: b.s } };
  if ("s" in a && "m" in b) return { m: b.m.map((r) => r.map((x) => ({ k: "op", op: "*", a: a.s, b: x }) as Node)) };
  if ("m" in a && "s" in b) return { m: a.m.map((r) => r.map((x) => ({ k: "op", op: "*", a: x, b: b.s }) as Node)) };
  if (!("m" in a) || !("m" in b)) return null;
  const n = a.m[0]!.length;
  if (a.m.some((r) => r.length !== n) || b.m.length !== n) return null;
  const cols = b.m[0]!.length;
  if (b.m.some((r) => r.length !== cols)) return null;
  return {
    m: a.m.map((r) => Array.from({ length: cols }, (_, j) => balanced(r.map((x, t) => ({ k: "op", op: "*", a: x, b: b.m[t]![j]! }) as Node), "+"))),
  };
}
