/**
 * The scalar expression tree (`Node`, built by parse.ts) and small pure helpers on it: substitution,
 * balanced joins and the "label" test (does an expression name a quantity rather than give a value).
 */

/** Scalar expression tree. `num` holds an unsigned decimal literal (possibly with an exponent: "1.2e3"). */
export type Node =
  | { k: "num"; s: string }
  | { k: "sym"; name: string }
  | { k: "const"; name: "pi" | "e" | "i" | "inf" }
  | { k: "op"; op: "+" | "-" | "*" | "/" | "^"; a: Node; b: Node }
  | { k: "neg"; a: Node }
  | { k: "fn"; name: string; args: Node[] }
  | { k: "fact"; a: Node }
  | { k: "pct"; a: Node };

/** `n` with every symbol `name` (or the constant `name`, for an index written `i` or `e`) replaced by `value`. */
export function substitute(n: Node, name: string, isConst: boolean, value: Node): Node {
  switch (n.k) {
    case "sym":
      return !isConst && n.name === name ? value : n;
    case "const":
      return isConst && n.name === name ? value : n;
    case "op":
      return { k: "op", op: n.op, a: substitute(n.a, name, isConst, value), b: substitute(n.b, name, isConst, value) };
    case "neg":
    case "fact":
    case "pct":
      return { k: n.k, a: substitute(n.a, name, isConst, value) };
    case "fn":
      return { k: "fn", name: n.name, args: n.args.map((x) => substitute(x, name, isConst, value)) };
    default:
      return n;
  }
}

/** Join terms with a commutative operator in a balanced tree (depth log2 of the count). */
export function balanced(terms: Node[], op: "+" | "*"): Node {
  if (terms.length === 1) return terms[0]!;
  const mid = terms.length >> 1;
  return { k: "op", op, a: balanced(terms.slice(0, mid), op), b: balanced(terms.slice(mid), op) };
}

/**
 * True when `n` names a quantity instead of giving a value: built from letters, subscripts, products, ratios and
 * `|…|` of names, with no number and no π or ∞ (`AB`, `V_1:V_2`, `|AB|`, `\frac{NO}{BO}`, `f(x)`, `x+y`).
 * A label on one side of `=` lets the other side be compared with a bare value (`AB = 4` vs `4`).
 */
export function isLabelNode(n: Node, depth = 0): boolean {
  const walk = (m: Node, d: number): { ok: boolean; sym: boolean } => {
    if (d > 40) return { ok: false, sym: false };
    switch (m.k) {
      case "sym":
        return { ok: true, sym: true };
      case "const":
        return { ok: m.name === "e" || m.name === "i", sym: false };
      case "op": {
        if (m.op === "^") return { ok: false, sym: false };
        const a = walk(m.a, d + 1);
        const b = walk(m.b, d + 1);
        return { ok: a.ok && b.ok, sym: a.sym || b.sym };
      }
      case "fn": {
        // |AB|, \cos\theta, \sin A: a function of names is a name
        const args = m.args.map((x) => walk(x, d + 1));
        return { ok: args.every((x) => x.ok), sym: args.some((x) => x.sym) };
      }
      default:
        return { ok: false, sym: false };
    }
  };
  const r = walk(n, depth);
  return r.ok && r.sym;
}
