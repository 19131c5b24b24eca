/**
 * A jax-js program (a traced `Jaxpr`, e.g. of `grad(f)`) translated to an ONNX graph, so that the
 * embedded engine's full-weight training step — forward and backward — runs on onnxruntime's
 * native kernels (ort-runtime.ts `OrtProgram`) where native kernels are on. The model and its
 * derivative stay written once, in model.ts, differentiated by jax-js; only the kernels change.
 *
 * The translation is op for op (ONNX opset 17). jax-js's `dot` is `sum(x * y, axis = −1)` over
 * broadcast operands; it becomes one Gemm (or batched MatMul) after classifying each output axis
 * as batch (both operands), rows (x only) or columns (y only). Broadcasts stay lazy: a `broadcast`
 * only inserts size-1 axes (ONNX's elementwise ops broadcast like jax-js's), and a tensor is
 * expanded to its full shape only where an op needs it (reshape across axes, pad, concatenate,
 * outputs), so a matmul's operand broadcast to [M, N, K] is never materialised. A sum over a
 * broadcast axis multiplies by its length instead of reading it.
 *
 * Primitives: the elementwise arithmetic, comparison and transcendental ones, cast, where, reduce
 * (sum, max, min), dot, broadcast, reshape, transpose, shrink (slice), pad, concatenate, split,
 * stop_gradient. Anything else (gather, scatter, random bits, sort, linear algebra, nested jit
 * that `flatten` leaves) is an error naming the primitive: the caller keeps jax-js for it.
 */
import type { ClosedJaxpr } from "@jax-js/jax";
import { encodeModel, Graph, ONNX_TYPE } from "./ort-graph.ts";

/** A tensor of the translated graph: its ONNX name and its shape there, with 1 on a lazily broadcast axis. */
type Value = { readonly name: string; dims: number[]; mem?: Memory };
/**
 * Where a value's data already lies: tensor `name` holds the value's axes of length > 1 in the
 * order `order`, row-major. A transpose or an inserted axis changes only this bookkeeping, and is
 * emitted only where something reads the value's `name`; a matmul operand laid out in
 * memory as it needs (or transposed: Gemm's trans flags) takes the tensor as it is.
 */
type Memory = { name: string; order: number[] };

/** A value whose node is emitted on first read of `name` (`emit`), readable before that through `mem`. */
function lazy(dims: number[], mem: Memory, emit: () => string): Value {
  let name: string | undefined;
  return {
    dims,
    mem,
    get name() {
      return (name ??= emit());
    },
  };
}

/** `v`'s memory layout (an emitted value: its own tensor, axes in order). */
function memoryOf(v: Value): Memory {
  return v.mem ?? { name: v.name, order: v.dims.map((_, i) => i).filter((i) => v.dims[i] !== 1) };
}
/** The jax-js atoms the translation reads (structural view of Var / Lit). */
type Atom = { aval: { shape: number[]; dtype: string; weakType?: boolean }; value?: number };
type Eqn = { primitive: string; inputs: Atom[]; params: Record<string, unknown>; outBinders: Atom[] };

/** A translated program: the model bytes and the logical shapes/dtypes of its inputs and outputs, in order. */
export interface OnnxProgram {
  model: Uint8Array;
  /** Graph inputs `in.i` (the jaxpr's inputs), then `const.j` (its traced constants). */
  inputs: { name: string; shape: number[]; dtype: string }[];
  outputs: { name: string; shape: number[]; dtype: string }[];
}

const UNARY: Record<string, string> = {
  neg: "Neg",
  reciprocal: "Reciprocal",
  exp: "Exp",
  log: "Log",
  sqrt: "Sqrt",
  sin: "Sin",
  cos: "Cos",
  asin: "Asin",
  atan: "Atan",
  floor: "Floor",
  ceil: "Ceil",
  erf: "Erf",
};
const BINARY: Record<string, string> = { add: "Add", mul: "Mul", min: "Min", max: "Max" };
const COMPARE: Record<string, string> = { less: "Less", equal: "Equal", less_equal: "LessOrEqual" };

function elemType(dtype: string): number {
  const t = (ONNX_TYPE as Record<string, number>)[dtype];
  if (t === undefined || dtype === "float16") throw new Error(`native training: dtype ${dtype} has no ONNX translation here`);
  return t;
}

/** Reshape attributes: a 0 in the target shape is a zero-length axis, not "keep this axis". */
const Z = { allowzero: 1 };
const prod = (a: number[]) => a.reduce((x, y) => x * y, 1);
/** NumPy broadcast of shapes (right-aligned, as ONNX's elementwise ops broadcast). */
const broadcastDims = (shapes: number[][]) => {
  const r = Math.max(...shapes.map((s) => s.length));
  return Array.from({ length: r }, (_, i) => Math.max(...shapes.map((s) => s[i - (r - s.length)] ?? 1)));
};

/**
 * Translates `closed` (from jax-js `makeJaxpr`; flattened and simplified here) to an ONNX model.
 * @throws Error naming the first primitive or parameter without a translation
 */
export function jaxprToOnnx(closed: ClosedJaxpr): OnnxProgram {
  const jaxpr = closed.jaxpr.flatten().simplify();
  const g = new Graph();
  const env = new Map<Atom, Value>();
  const ints = (v: number[]) => g.ints(v);
  const inputs: OnnxProgram["inputs"] = [];
  const addInput = (v: Atom, name: string) => {
    const { shape, dtype } = v.aval;
    g.input(name, shape, elemType(dtype));
    inputs.push({ name, shape: [...shape], dtype });
    env.set(v, { name, dims: [...shape] });
  };
  // makeJaxpr's closed form binds the traced constants first, then the function's arguments.
  const nConst = closed.consts.length;
  jaxpr.inBinders.forEach((v, i) => addInput(v as unknown as Atom, i < nConst ? `const.${i}` : `in.${i - nConst}`));
  /** A bound value, or a literal as a scalar constant (a weakly typed one takes `peer`'s dtype, as jax-js promotes it). */
  const read = (a: Atom, peer?: string): Value => {
    const v = env.get(a);
    if (v) return v;
    if (a.value === undefined) throw new Error("native training: an unbound variable in the jaxpr");
    return { name: g.typedScalar(a.value, elemType(a.aval.weakType && peer ? peer : a.aval.dtype)), dims: [] };
  };
  /** `v` expanded to the full shape `shape` (a no-op when nothing is lazily broadcast). */
  const full = (v: Value, shape: number[]): Value => {
    if (v.dims.length === shape.length && v.dims.every((d, i) => d === shape[i])) return v;
    return { name: g.op("Expand", [v.name, ints(shape)]), dims: [...shape] };
  };
  const bind = (a: Atom, v: Value) => {
    const s = a.aval.shape;
    if (v.dims.length !== s.length || v.dims.some((d, i) => d !== s[i] && d !== 1)) throw new Error(`native training: internal shape error at ${prim}: [${v.dims}] for [${s}]`);
    env.set(a, v);
  };
  let prim = "";

  for (const e of jaxpr.eqns as unknown as Eqn[]) {
    const out = e.outBinders[0]!;
    const shape = out.aval.shape;
    prim = e.primitive;
    // The dtype a weakly typed literal takes: its operation's other operand's (where's: the branches').
    const peer = e.inputs.find((a, k) => a.value === undefined && !(prim === "where" && k === 0))?.aval.dtype;
    const ins = e.inputs.map((a) => read(a, peer));
    const p = e.params;
    if (prim in UNARY) bind(out, { name: g.op(UNARY[prim]!, [ins[0]!.name]), dims: ins[0]!.dims });
    else if (prim === "stop_gradient") bind(out, ins[0]!);
    else if (prim in BINARY) {
      // On booleans jax-js's add/max are "or" and mul/min are "and" (ONNX's arithmetic takes no bool).
      const op = peer === "bool" ? { add: "Or", max: "Or", mul: "And", min: "And" }[prim]! : BINARY[prim]!;
      bind(out, { name: g.op(op, ins.map((v) => v.name)), dims: broadcastDims(ins.map((v) => v.dims)) });
    }
    else if (prim === "compare") {
      const op = p["op"] as string;
      const dims = broadcastDims(ins.map((v) => v.dims));
      if (op === "not_equal") bind(out, { name: g.op("Not", [g.op("Equal", [ins[0]!.name, ins[1]!.name])]), dims });
      else if (op in COMPARE) bind(out, { name: g.op(COMPARE[op]!, [ins[0]!.name, ins[1]!.name]), dims });
      else throw new Error(`native training: compare op ${op} has no ONNX translation`);
    } else if (prim === "where") bind(out, { name: g.op("Where", ins.map((v) => v.name)), dims: broadcastDims(ins.map((v) => v.dims)) });
    else if (prim === "cast") bind(out, { name: g.op("Cast", [ins[0]!.name], { to: elemType(p["dtype"] as string) }), dims: ins[0]!.dims });
    else if (prim === "broadcast") {
      const axes = p["axis"] as number[];
      const x = ins[0]!;
      const dims = [...x.dims];
      for (const a of [...axes].sort((u, v) => u - v)) dims.splice(a, 0, 1);
      const at = dims.map((_, j) => j).filter((j) => !axes.includes(j)); // x's axis i is axis at[i]
      const m = memoryOf(x);
      bind(out, axes.length ? lazy(dims, { name: m.name, order: m.order.map((a) => at[a]!) }, () => g.op("Unsqueeze", [x.name, ints(axes)])) : x);
    } else if (prim === "reshape") bind(out, reshape(g, ins[0]!, e.inputs[0]!.aval.shape, shape, full));
    else if (prim === "transpose") {
      const perm = p["perm"] as number[];
      const x = ins[0]!;
      const m = memoryOf(x);
      bind(out, lazy(perm.map((i) => x.dims[i]!), { name: m.name, order: m.order.map((a) => perm.indexOf(a)) }, () => transpose(g, x.name, x.dims, perm)));
    } else if (prim === "reduce") bind(out, reduce(g, ins[0]!, e.inputs[0]!.aval.shape, p["op"] as string, p["axis"] as number[]));
    else if (prim === "dot") {
      // Operands of different ranks line up from the right (leading 1s), as jax-js broadcasts them.
      const r = Math.max(...e.inputs.map((a) => a.aval.shape.length));
      const [x, y] = ins.map((v, k) => {
        const pad = Array<number>(r - e.inputs[k]!.aval.shape.length).fill(1);
        return pad.length ? { name: g.op("Reshape", [v.name, ints([...pad, ...v.dims])], Z), dims: [...pad, ...v.dims] } : v;
      });
      const shapes = e.inputs.map((a) => [...Array<number>(r - a.aval.shape.length).fill(1), ...a.aval.shape]);
      bind(out, dot(g, x!, y!, shapes, full, out.aval.dtype.startsWith("float")));
    }
    else if (prim === "shrink") {
      const slice = p["slice"] as [number, number][];
      const logical = e.inputs[0]!.aval.shape;
      const x = ins[0]!;
      const axes = slice.map((_, i) => i).filter((i) => x.dims[i] !== 1 && (slice[i]![0] !== 0 || slice[i]![1] !== logical[i]));
      const dims = x.dims.map((d, i) => (d === 1 ? 1 : slice[i]![1] - slice[i]![0]));
      bind(out, axes.length ? { name: g.op("Slice", [x.name, ints(axes.map((i) => slice[i]![0])), ints(axes.map((i) => slice[i]![1])), ints(axes)]), dims } : x);
    } else if (prim === "pad") {
      const width = p["width"] as [number, number][];
      const x = full(ins[0]!, e.inputs[0]!.aval.shape);
      bind(out, { name: g.op("Pad", [x.name, ints([...width.map((w) => w[0]), ...width.map((w) => w[1])])], { mode: "constant" }), dims: [...shape] });
    } else if (prim === "concatenate") {
      const xs = ins.map((v, i) => full(v, e.inputs[i]!.aval.shape));
      bind(out, { name: g.op("Concat", xs.map((v) => v.name), { axis: p["axis"] as number }), dims: [...shape] });
    } else if (prim === "split") {
      const axis = p["axis"] as number;
      const sizes = p["sizes"] as number[];
      const x = ins[0]!;
      if (x.dims[axis] === 1 && sizes.length > 1) e.outBinders.forEach((o) => bind(o, x));
      else {
        const names = g.opN("Split", [x.name, ints(sizes)], sizes.length, { axis });
        e.outBinders.forEach((o, i) => bind(o, { name: names[i]!, dims: x.dims.map((d, j) => (j === axis ? sizes[i]! : d)) }));
      }
    } else throw new Error(`native training: jax-js primitive "${prim}" has no ONNX translation`);
  }
  const outputs: OnnxProgram["outputs"] = [];
  (jaxpr.outs as unknown as Atom[]).forEach((a, i) => {
    const name = `out.${i}`;
    const v = full(read(a), a.aval.shape);
    g.op("Identity", [v.name], {}, name);
    g.output(name, a.aval.shape, elemType(a.aval.dtype));
    outputs.push({ name, shape: [...a.aval.shape], dtype: a.aval.dtype });
  });
  return { model: encodeModel(g), inputs, outputs };
}

/**
 * jax-js `reshape` of `x` (logical shape `from`) to `to`. Lazily broadcast axes stay lazy when
 * each maps to one target axis of its length and the axes between them regroup among themselves
 * (a weight gradient's [D_out, 1→D_in, B, T] → [D_out, 1→D_in, B·T]); otherwise `x` is expanded first.
 */
function reshape(g: Graph, x: Value, from: number[], to: number[], full: (v: Value, s: number[]) => Value): Value {
  const broadcast = from.map((d, i) => x.dims[i] === 1 && d > 1);
  const dims = broadcast.some(Boolean) ? lazyReshape(from, to, broadcast) : [...to];
  if (!dims) {
    const v = full(x, from);
    return { name: g.op("Reshape", [v.name, g.ints(to)], Z), dims: [...to] };
  }
  const mem = reshapeMemory(memoryOf(x), x.dims, dims);
  const emit = () => g.op("Reshape", [x.name, g.ints(dims)], Z);
  return mem ? lazy(dims, mem, emit) : { name: emit(), dims };
}

/**
 * The memory layout of a reshape from `from` to `to` (both without lazy axes) of a value laid out as
 * `m`: where every axis of `to` merges source axes, or splits one, that lie together in memory in
 * their order; else null (the reshape needs the value in its own order).
 */
function reshapeMemory(m: Memory, from: number[], to: number[]): Memory | null {
  const src = from.map((_, i) => i).filter((i) => from[i] !== 1);
  const tgt = to.map((_, i) => i).filter((i) => to[i] !== 1);
  const groups: { s: number[]; t: number[] }[] = [];
  let [i, j] = [0, 0];
  while (i < src.length && j < tgt.length) {
    const grp = { s: [src[i++]!], t: [tgt[j++]!] };
    let [ps, pt] = [from[grp.s[0]!]!, to[grp.t[0]!]!];
    while (ps !== pt) {
      if (ps < pt && i < src.length) ps *= from[grp.s[grp.s.push(src[i++]!) - 1]!]!;
      else if (pt < ps && j < tgt.length) pt *= to[grp.t[grp.t.push(tgt[j++]!) - 1]!]!;
      else return null;
    }
    if (grp.s.length > 1 && grp.t.length > 1) return null;
    groups.push(grp);
  }
  if (i < src.length || j < tgt.length) return null;
  const order: number[] = [];
  for (let k = 0; k < m.order.length; ) {
    const grp = groups.find((q) => q.s[0] === m.order[k]);
    if (!grp || grp.s.some((a, n) => m.order[k + n] !== a)) return null;
    order.push(...grp.t);
    k += grp.s.length;
  }
  return { name: m.name, order };
}

/** The target dims of `reshape` with the lazy axes of `from` kept lazy (1), or null where they cannot be. */
function lazyReshape(from: number[], to: number[], lazy: boolean[]): number[] | null {
  if (from.includes(0)) return null;
  const dims: number[] = [];
  let j = 0;
  // Consumes target axes whose product is P (the non-lazy axes since the last lazy one).
  const take = (P: number) => {
    let p = 1;
    while (p < P && j < to.length) p *= dims[dims.push(to[j++]!) - 1]!;
    return p === P;
  };
  let seg = 1;
  for (let i = 0; i < from.length; i++) {
    if (!lazy[i]) {
      seg *= from[i]!;
      continue;
    }
    if (!take(seg)) return null;
    seg = 1;
    while (j < to.length && to[j] === 1) dims.push(to[j++]!);
    if (to[j] !== from[i]) return null;
    dims.push(1);
    j++;
  }
  if (!take(seg)) return null;
  while (j < to.length) if (dims.push(to[j++]!) && to[j - 1] !== 1) return null;
  return dims;
}

/**
 * Transpose of `x` (dims `dims`) by `perm`, emitted in its simplest form: size-1 axes dropped and
 * axes that stay adjacent merged, so [T, B, D, 1] → [D, 1, T, B] runs as onnxruntime's fast 2-D
 * transpose of [T·B, D] (its N-D path measured ~5× slower), and a permutation that moves only
 * size-1 axes is a Reshape.
 * @returns the name of the result, dims `perm.map(i => dims[i])`
 */
function transpose(g: Graph, x: string, dims: number[], perm: number[]): string {
  const outDims = perm.map((i) => dims[i]!);
  const kept = perm.filter((i) => dims[i] !== 1);
  // Runs of consecutive source axes in the output order become one axis each.
  const runs: number[][] = [];
  for (const i of kept) {
    const last = runs.at(-1);
    if (last && last.at(-1)! + 1 === i) last.push(i);
    else runs.push([i]);
  }
  const bySource = [...runs].sort((a, b) => a[0]! - b[0]!);
  const size = (r: number[]) => prod(r.map((i) => dims[i]!));
  if (runs.length <= 1 || runs.every((r, i) => r === bySource[i])) {
    return outDims.every((d, i) => d === dims[i]) ? x : g.op("Reshape", [x, g.ints(outDims)], Z);
  }
  const merged = g.op("Reshape", [x, g.ints(bySource.map(size))], Z);
  const t = g.op("Transpose", [merged], { perm: runs.map((r) => bySource.indexOf(r)) });
  return g.op("Reshape", [t, g.ints(outDims)], Z);
}

/** jax-js `reduce` (op Add, Max or Min) over `axis`; a sum over a lazily broadcast axis is a product by its length. */
function reduce(g: Graph, x: Value, logical: number[], op: string, axis: number[]): Value {
  const dims = x.dims.filter((_, i) => !axis.includes(i));
  if (axis.length === 0) return x;
  const type = { Add: "ReduceSum", Max: "ReduceMax", Min: "ReduceMin" }[op];
  if (!type) throw new Error(`native training: reduce op ${op} has no ONNX translation`);
  // opset 17: ReduceSum takes its axes as an input, ReduceMax/ReduceMin as an attribute.
  const r = type === "ReduceSum" ? g.op(type, [x.name, g.ints(axis)], { keepdims: 0 }) : g.op(type, [x.name], { axes: axis, keepdims: 0 });
  const factor = op === "Add" ? prod(axis.map((i) => (x.dims[i] === 1 ? logical[i]! : 1))) : 1;
  return { name: factor === 1 ? r : g.op("Mul", [r, g.scalar(factor)]), dims };
}

/**
 * One operand of `dot` as a matrix (or a batch of them) [(Bn,) R, K] whose rows are the axes
 * `rows` and batch the axes `batch` of `v`, the contracted axis last: without a copy when `v`'s
 * memory already runs batch, rows, K (a reshape), or batch, K, rows (`trans`: the product reads it
 * transposed); else through a transpose.
 */
function operand(g: Graph, v: Value, batch: number[], rows: number[], [Bn, R, K]: number[]): { name: string; trans: boolean } {
  const r = v.dims.length;
  const big = (axes: number[]) => axes.filter((i) => v.dims[i] !== 1);
  const { name, order } = memoryOf(v);
  const same = (a: number[]) => a.length === order.length && a.every((d, i) => d === order[i]);
  const shape = (trans: boolean) => g.ints(Bn === 1 ? (trans ? [K, R] : [R, K]) : trans ? [Bn, K, R] : [Bn, R, K]);
  if (same(big([...batch, ...rows, r - 1]))) return { name: g.op("Reshape", [name, shape(false)], Z), trans: false };
  if (same(big([...batch, r - 1, ...rows]))) return { name: g.op("Reshape", [name, shape(true)], Z), trans: true };
  const perm = [...batch, ...rows, ...v.dims.map((_, i) => i).filter((i) => i !== r - 1 && !batch.includes(i) && !rows.includes(i)), r - 1];
  return { name: g.op("Reshape", [transpose(g, v.name, v.dims, perm), shape(false)], Z), trans: false };
}

/**
 * jax-js `dot`: out[...] = Σ_k x[..., k] · y[..., k] over broadcast leading axes, as one Gemm
 * (no batch axis) or a batched MatMul. Each leading axis is batch (both operands > 1), row (x
 * only), column (y only) or neither (size 1 in both; stays lazily broadcast in the result).
 */
function dot(g: Graph, x0: Value, y0: Value, [sx, sy]: number[][], full: (v: Value, s: number[]) => Value, float: boolean): Value {
  const r = sx!.length;
  // A contracted axis that is lazily broadcast in one operand is expanded (rare).
  const x = x0.dims[r - 1] === sx![r - 1] ? x0 : full(x0, sx!);
  const y = y0.dims[r - 1] === sy![r - 1] ? y0 : full(y0, sy!);
  if (x.dims.length !== r || y.dims.length !== r) throw new Error("native training: dot operands of different rank");
  const lead = Array.from({ length: r - 1 }, (_, i) => i);
  const batch = lead.filter((i) => x.dims[i]! > 1 && y.dims[i]! > 1);
  const rows = lead.filter((i) => x.dims[i]! > 1 && y.dims[i] === 1);
  const cols = lead.filter((i) => x.dims[i] === 1 && y.dims[i]! > 1);
  const none = lead.filter((i) => x.dims[i] === 1 && y.dims[i] === 1);
  for (const i of batch) if (x.dims[i] !== y.dims[i]) throw new Error("native training: dot batch axes disagree");
  const K = x.dims[r - 1]!;
  const [Bn, M, N] = [prod(batch.map((i) => x.dims[i]!)), prod(rows.map((i) => x.dims[i]!)), prod(cols.map((i) => y.dims[i]!))];
  const a = operand(g, x, batch, rows, [Bn, M, K]);
  const b = operand(g, y, batch, cols, [Bn, N, K]);
  // a: [(Bn,) M, K], or [(Bn,) K, M] with a.trans; b likewise with N — the transposes fold into the product.
  let prodName: string;
  const swap = Bn === 1 ? [1, 0] : [0, 2, 1];
  // Integers: onnxruntime's Gemm and FusedMatMul are float-only; MatMul of explicit transposes.
  if (!float) prodName = g.op("MatMul", [a.trans ? g.op("Transpose", [a.name], { perm: swap }) : a.name, b.trans ? b.name : g.op("Transpose", [b.name], { perm: swap })]);
  else if (Bn === 1) prodName = g.op("Gemm", [a.name, b.name], { transA: Number(a.trans), transB: Number(!b.trans) });
  else {
    prodName = g.op("FusedMatMul", [a.name, b.name], { transA: Number(a.trans), transB: Number(!b.trans), alpha: { f: 1 } });
    g.nodes.at(-1)!.domain = "com.microsoft";
  }
  // [batch…, rows…, cols…] then the output's axis order, size-1 axes where neither operand has one.
  const size = (i: number) => (none.includes(i) ? 1 : cols.includes(i) ? y.dims[i]! : x.dims[i]!);
  const positions = [...batch, ...rows, ...cols, ...none];
  const shaped = g.op("Reshape", [prodName, g.ints(positions.map(size))], Z);
  const perm = lead.map((i) => positions.indexOf(i));
  return { name: transpose(g, shaped, positions.map(size), perm), dims: lead.map(size) };
}
