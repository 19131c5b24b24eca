/**
 * The jax-js → ONNX translation (ort-jaxpr.ts `jaxprToOnnx`, run by ort-runtime.ts `nativeJit`)
 * primitive by primitive against jax-js itself: each small function's outputs under `nativeJit`
 * on onnxruntime equal `jit(f)`'s on jax-js — the same pytree, shapes and dtypes, floats within
 * 1e-5 of the output's scale (max |value|, at least 1), integers, booleans and pure data movement
 * exactly. The native full-weight training step is only as right as this op-for-op mapping, and
 * the lazy broadcasts (a `broadcast` kept as size-1 axes until an op needs the full tensor; a sum
 * over such an axis as a product by its length; reshapes and transposes that keep them lazy) are
 * where a mapping goes quietly wrong, so each has cases that read a broadcast tensor: sums, dots,
 * reshapes that stay lazy and ones that must expand, transposes, slices, pads, concatenations,
 * splits, and a small MLP's gradient. Also: a primitive without a translation (sort, argsort,
 * gather, random bits) rejects with an error naming it, and a dot of a broadcast operand (and a
 * weight gradient's) translates without materialising the broadcast (no Expand node). Skipped
 * where onnxruntime-node is not installed, unless RLVR_REQUIRE_ORT=1 (CI), which makes its
 * absence a failure.
 */
import "../../src/engines/embedded/node-workers.ts"; // must precede @jax-js/jax
import { describe, test, before } from "node:test";
import assert from "node:assert/strict";
import { ensureJax } from "../../src/engines/embedded/runtime.ts";
import { loadOrt, nativeJit } from "../../src/engines/embedded/ort-runtime.ts";
import { jaxprToOnnx } from "../../src/engines/embedded/ort-jaxpr.ts";
import { numpy as np, grad, jit, lax, makeJaxpr, random, tree, type JsTree } from "@jax-js/jax";
import onnxProto from "onnx-proto";

const ort = await loadOrt();
if (!ort && process.env.RLVR_REQUIRE_ORT === "1") throw new Error("RLVR_REQUIRE_ORT=1 but onnxruntime-node does not load");
const skip = ort ? false : "onnxruntime-node is not installed";

type A = np.Array;
/** A case's function: jax-js arrays or pytrees of them in and out. */
type Fn = (...args: any[]) => JsTree<A>;

/** Deterministic values in [lo, hi]: a sine sequence (no two neighbours alike, no seeded state). */
function values(n: number, seed: number, lo = -2, hi = 2): number[] {
  return Array.from({ length: n }, (_, i) => lo + ((Math.sin(1.37 * i + 2.1 * seed) + 1) / 2) * (hi - lo));
}
const prodOf = (s: number[]) => s.reduce((a, b) => a * b, 1);
/** A float32 array of `shape` with values in [lo, hi]. */
const f32 = (shape: number[], seed: number, lo = -2, hi = 2): A => np.array(Float32Array.from(values(prodOf(shape), seed, lo, hi)), { shape });
/** A float32 array of small whole numbers (−3 … 3): ties for the comparisons, exact zeros for casts. */
const whole = (shape: number[], seed: number): A => np.array(Float32Array.from(values(prodOf(shape), seed, -3, 3), Math.round), { shape });
/** An int32 array of `shape` with values in −20 … 20. */
const i32 = (shape: number[], seed: number): A => np.array(Int32Array.from(values(prodOf(shape), seed, -20, 20), Math.round), { shape, dtype: np.int32 });

interface Case {
  name: string;
  f: Fn;
  /** Fresh arguments (each run consumes its own). */
  args: () => unknown[];
  /** Floats compared exactly (pure data movement, selection, rounding). */
  exact?: boolean;
}

/** `f` on jax-js (`jit`) and on onnxruntime (`nativeJit`); asserts they agree, returns both results' leaves' data. */
async function agree({ name, f, args, exact }: Case): Promise<{ want: number[][]; got: number[][] }> {
  const jf = jit(f);
  const nf = nativeJit(f, 1);
  try {
    const [wl, wd] = tree.flatten(jf(...(args() as never[])) as JsTree<A>);
    const [gl, gd] = tree.flatten((await nf(...(args() as never[]))) as JsTree<A>);
    assert.equal(gd.toString(), wd.toString(), `${name}: output structure`);
    assert.equal(gl.length, wl.length, `${name}: output count`);
    const want: number[][] = [];
    const got: number[][] = [];
    for (let i = 0; i < wl.length; i++) {
      const [w, g] = [wl[i]!, gl[i]!];
      assert.deepEqual(g.shape, w.shape, `${name}: output ${i} shape`);
      assert.equal(g.dtype, w.dtype, `${name}: output ${i} dtype`);
      const dtype = w.dtype;
      const wv = Array.from(await w.data(), Number);
      const gv = Array.from(await g.data(), Number);
      assert.equal(gv.length, wv.length, `${name}: output ${i} size`);
      if (exact || dtype !== "float32") {
        const bad = wv.findIndex((v, j) => !Object.is(v, gv[j]) && !(v === 0 && gv[j] === 0));
        assert.equal(bad, -1, `${name}: output ${i} (${dtype}) at ${bad}: native ${gv[bad]}, jax-js ${wv[bad]}`);
      } else {
        const scale = Math.max(1, ...wv.map(Math.abs));
        let worst = 0;
        let at = -1;
        wv.forEach((v, j) => {
          const d = Math.abs(v - gv[j]!);
          if (!(d <= worst)) [worst, at] = [d, j];
        });
        assert.ok(worst <= 1e-5 * scale, `${name}: output ${i} max |Δ| ${worst} at ${at} (native ${gv[at]}, jax-js ${wv[at]}) over scale ${scale}`);
      }
      want.push(wv);
      got.push(gv);
    }
    return { want, got };
  } finally {
    jf.dispose();
    await nf.dispose();
  }
}

/** Registers one test per case. */
function cases(list: Case[]): void {
  for (const c of list) test(c.name, async () => void (await agree(c)));
}

const S = [3, 5, 7];

describe("ort-jaxpr: jax-js programs on onnxruntime equal jax-js", { skip }, () => {
  before(async () => {
    await ensureJax();
    closed = np.array(Float32Array.from(values(7, 95)), { shape: [7] });
  });

  describe("elementwise", () => {
    cases([
      { name: "neg, reciprocal, exp, log, sqrt", f: (x: A) => [x.ref.neg(), np.reciprocal(x.ref), np.exp(x.ref), np.log(x.ref), np.sqrt(x)], args: () => [f32(S, 1, 0.1, 3)] },
      { name: "sin, cos, arcsin, arctan, erf", f: (x: A) => [np.sin(x.ref.mul(3)), np.cos(x.ref.mul(3)), np.arcsin(x.ref.mul(0.45)), np.arctan(x.ref.mul(2)), lax.erf(x)], args: () => [f32(S, 2)] },
      { name: "floor, ceil (exact)", f: (x: A) => [np.floor(x.ref), np.ceil(x)], args: () => [f32(S, 3, -4, 4)], exact: true },
      { name: "add, mul, sub (add + neg), div, minimum, maximum of equal shapes", f: (x: A, y: A) => [x.ref.add(y.ref), x.ref.mul(y.ref), x.ref.sub(y.ref), x.ref.div(y.ref.add(3)), np.minimum(x.ref, y.ref), np.maximum(x, y)], args: () => [f32(S, 4), f32(S, 5)] },
      { name: "broadcasting [3,5,7] with [7], [5,1] and scalar literals", f: (x: A, v: A, c: A) => [x.ref.add(v.ref), v.ref.sub(x.ref), x.ref.mul(c.ref), np.minimum(x.ref, v.ref), np.maximum(c, x.ref.mul(2).add(-0.5)), x.sub(1.25).mul(v)], args: () => [f32(S, 6), f32([7], 7), f32([5, 1], 8)] },
      { name: "composites: abs, tanh, sigmoid, softmax, square, mean", f: (x: A) => [np.abs(x.ref), np.tanh(x.ref), np.reciprocal(np.exp(x.ref.neg()).add(1)), softmax(x.ref), np.square(x.ref), x.mean([0, 2])], args: () => [f32(S, 9, -3, 3)] },
      { name: "int32 add, mul, sub, neg, minimum, maximum of arrays, broadcast [3,5,7] with [7] (exact)", f: (x: A, y: A) => [x.ref.add(y.ref), x.ref.mul(y.ref), x.ref.neg(), np.minimum(x.ref, y.ref), np.maximum(x.ref, y.ref), x.sub(y)], args: () => [i32(S, 10), i32([7], 11)] },
      { name: "int32 with scalar literals: x + 2, x · −3, maximum(x, 3), where(x == 3, y, x) (exact)", f: (x: A, y: A) => [x.ref.add(2), x.ref.mul(-3), np.maximum(x.ref, 3), np.where(np.equal(x.ref, 3), y, x)], args: () => [i32(S, 96), i32(S, 97)] },
      { name: "traced constants (a closed-over array, an arange) are graph inputs", f: (x: A) => x.mul(closed.ref).add(np.arange(7).astype(np.float32)), args: () => [f32(S, 12)] },
    ]);
  });

  describe("comparisons, where, cast", () => {
    cases([
      {
        name: "less, equal, not_equal, less_equal, greater, greater_equal feeding where and cast to float32 (exact)",
        f: (x: A, y: A) => {
          const out = [
            np.where(np.less(x.ref, y.ref), x.ref, y.ref),
            np.where(np.equal(x.ref, y.ref), 10, x.ref),
            np.where(np.notEqual(x.ref, 0), y.ref, -1),
            np.where(np.lessEqual(x.ref, y.ref), x.ref.mul(2), 0.5),
            np.where(np.greater(x.ref, 1), y.ref, 7),
            np.where(np.greaterEqual(x.ref, y.ref), x.ref, y.ref),
            ...[np.less, np.equal, np.notEqual, np.lessEqual, np.greater, np.greaterEqual].map((op) => op(x.ref, y.ref).astype(np.float32)),
          ];
          x.dispose();
          y.dispose();
          return out;
        },
        args: () => [whole(S, 13), whole([7], 14)],
        exact: true,
      },
      { name: "comparisons returned as bool arrays (exact)", f: (x: A, y: A) => [np.less(x.ref, y.ref), np.equal(x.ref, y.ref), np.notEqual(x.ref, y.ref), np.lessEqual(x.ref, y.ref), np.greater(x.ref, y.ref), np.greaterEqual(x, y)], args: () => [whole(S, 98), whole([7], 99)] },
      { name: "int32 comparisons feeding where and casts (exact)", f: (x: A, y: A) => [np.where(np.greaterEqual(x.ref, y.ref), x.ref, y.ref), np.less(x.ref, y.ref).astype(np.int32), np.equal(x.ref, y.ref).astype(np.float32), np.notEqual(x, y).astype(np.int32)], args: () => [i32(S, 15), i32([5, 7], 16)] },
      { name: "a bool argument selects (where)", f: (c: A, x: A, y: A) => np.where(c, x, y), args: () => [f32(S, 17).greater(0), f32(S, 18), f32([7], 19)], exact: true },
      {
        name: "astype float32 → int32 (truncation toward 0), int32 → float32, float32 → bool → float32, int32 → bool → int32, bool → int32 (exact)",
        f: (x: A, k: A) => [x.ref.astype(np.int32), k.ref.astype(np.float32), x.ref.astype(np.bool).astype(np.float32), k.ref.astype(np.bool).astype(np.int32), np.less(x, k.astype(np.float32)).astype(np.int32)],
        args: () => [f32(S, 20, -4, 4).mul(np.array(Float32Array.from(values(105, 21), (v) => (v > 1 ? 0 : 1)), { shape: S })), i32(S, 22)],
      },
      { name: "argmax (reduce max, compare, cast, integer arithmetic, a constant; exact)", f: (x: A) => [np.argmax(x.ref, 0), np.argmax(x, 2)], args: () => [whole(S, 23)] },
      { name: "logical and / or of bools (mul and add on bool), cast to float32 (exact)", f: (x: A, y: A) => [np.logicalAnd(x.ref.greater(0), y.ref.greater(0)).astype(np.float32), np.logicalOr(x.greater(1), y.less(-1)).astype(np.float32)], args: () => [whole(S, 24), whole(S, 25)] },
    ]);
  });

  describe("reductions", () => {
    cases([
      { name: "sum, max, min over one axis, several axes, all axes; keepdims", f: (x: A) => [x.ref.sum(1), x.ref.sum([0, 2]), x.ref.sum(), x.ref.max(0), x.ref.max([1, 2]), x.ref.min(2), x.ref.min([0, 1]), x.ref.min(), x.sum(-1, { keepdims: true })], args: () => [f32(S, 26)] },
      { name: "int32 sum, max, min (exact)", f: (x: A) => [x.ref.sum([0, 2]), x.ref.max(1), x.min()], args: () => [i32(S, 27)] },
      { name: "cumsum (broadcast, compare of constants, where, sum)", f: (x: A) => [np.cumsum(x.ref, 0), np.cumsum(x, 2)], args: () => [f32(S, 28)] },
    ]);

    test("sum over a broadcast axis is 5·x (x [3,7] reshaped to [3,1,7], broadcast to [3,5,7]); sum over it and another; max over it", async () => {
      const bx = (x: A) => np.broadcastTo(x.reshape([3, 1, 7]), [3, 5, 7]);
      const { want, got } = await agree({ name: "broadcast sum", f: (x: A) => [bx(x.ref).sum(1), bx(x.ref).sum([1, 2]), bx(x.ref).max(1), bx(x).sum()], args: () => [f32([3, 7], 29)] });
      const x = values(21, 29);
      got[0]!.forEach((v, i) => assert.ok(Math.abs(v - 5 * Math.fround(x[i]!)) <= 1e-5 * 10, `5·x[${i}]: ${v} vs ${5 * x[i]!}`));
      assert.deepEqual(want[2], got[2]);
    });
  });

  describe("dot", () => {
    cases([
      { name: "2-D [4,6]@[6,5]", f: (a: A, b: A) => np.matmul(a, b), args: () => [f32([4, 6], 30), f32([6, 5], 31)] },
      { name: "batched [3,4,6]@[3,6,5]", f: (a: A, b: A) => np.matmul(a, b), args: () => [f32([3, 4, 6], 32), f32([3, 6, 5], 33)] },
      { name: "broadcast batch [3,4,6]@[6,5] and [6,5]-by-[2,3,5,4]", f: (a: A, b: A, c: A) => [np.matmul(a, b.ref), np.matmul(b, c)], args: () => [f32([3, 4, 6], 34), f32([6, 5], 35), f32([2, 3, 5, 4], 36)] },
      { name: "vector-matrix [6]@[6,5] and vector·vector", f: (v: A, m: A, u: A) => [np.matmul(v.ref, m), np.dot(v, u)], args: () => [f32([6], 37), f32([6, 5], 38), f32([6], 39)] },
      { name: "matrix-vector [5,6]@[6] (a dot of operands of different rank)", f: (m: A, u: A) => np.matmul(m, u), args: () => [f32([5, 6], 100), f32([6], 101)] },
      { name: "np.dot of N-D arrays [2,3,4]·[5,4,6] and tensordot over two axes", f: (a: A, b: A, c: A) => [np.dot(a.ref, b), np.tensordot(a, c, [[1, 2], [0, 1]])], args: () => [f32([2, 3, 4], 40), f32([5, 4, 6], 41), f32([3, 4, 5], 42)] },
      { name: "inner dimension 1 (outer product by matmul) and size-1 rows", f: (a: A, b: A, r: A) => [np.matmul(a, b.ref), np.matmul(r, b)], args: () => [f32([4, 1], 43), f32([1, 6], 44), f32([1, 1], 45)] },
      { name: "an operand broadcast over the batch: broadcastTo(a [5,7], [3,5,7]) @ w [3,7,4]", f: (a: A, w: A) => np.matmul(np.broadcastTo(a, [3, 5, 7]), w), args: () => [f32([5, 7], 46), f32([3, 7, 4], 47)] },
      { name: "both operands broadcast over the batch (a lazy output axis)", f: (a: A, b: A) => np.matmul(np.broadcastTo(a, [3, 5, 7]), np.broadcastTo(b, [3, 7, 4])), args: () => [f32([5, 7], 48), f32([7, 4], 49)] },
      { name: "[3,4,6] @ broadcastTo(w [6,5], [3,6,5])", f: (a: A, w: A) => np.matmul(a, np.broadcastTo(w, [3, 6, 5])), args: () => [f32([3, 4, 6], 50), f32([6, 5], 51)] },
      { name: "a broadcast along the contracted axis: [4,5] @ broadcastTo(v [1,6], [5,6])", f: (a: A, v: A) => np.matmul(a, np.broadcastTo(v, [5, 6])), args: () => [f32([4, 5], 52), f32([1, 6], 53)] },
      { name: "K = 128 rows of a [64,128] broadcast to [8,64,128] times [8,128,32]", f: (a: A, w: A) => np.matmul(np.broadcastTo(a, [8, 64, 128]), w), args: () => [f32([64, 128], 54, -1, 1), f32([8, 128, 32], 55, -1, 1)] },
      { name: "int32 matmul [4,6]@[6,5] (exact)", f: (a: A, b: A) => np.matmul(a, b), args: () => [i32([4, 6], 56), i32([6, 5], 57)] },
    ]);
  });

  describe("reshape, transpose, slice, pad, concatenate, split", () => {
    const b1 = (x: A) => np.broadcastTo(x.reshape([3, 1, 7]), [3, 5, 7]); // lazy along axis 1
    const b0 = (x: A) => np.broadcastTo(x, [4, 5, 7]); // lazy along axis 0
    cases([
      { name: "reshape merging and splitting axes", f: (x: A) => [x.ref.reshape([15, 7]), x.ref.reshape([3, 35]), x.ref.reshape([105]), x.reshape([3, 5, 7, 1]).reshape([1, 3, 35])], args: () => [f32(S, 58)], exact: true },
      { name: "reshape of a broadcast that stays lazy ([4,5,7]→[4,35]; [3,5,7]→[3,5,7,1]; [2,1→3,4]→[2,3,2,2]), then summed over the lazy axis", f: (x: A, y: A, z: A) => [b0(x.ref).reshape([4, 35]).sum(0), b0(x).reshape([4, 35]).mul(f32([35], 59)), b1(y.ref).reshape([3, 5, 7, 1]).sum(1), np.exp(b1(y).reshape([3, 5, 7, 1])), np.broadcastTo(z.ref, [2, 3, 4]).reshape([2, 3, 2, 2]).sum(1), np.broadcastTo(z, [2, 3, 4]).reshape([2, 3, 2, 2])], args: () => [f32([5, 7], 60), f32([3, 7], 61), f32([2, 1, 4], 62)] },
      { name: "reshape of a broadcast that must expand ([3,1→5,7]→[15,7], →[3,35], →[105]; [4,1→2]→[8]) and [4,1→2]→[2,2,2], which stays lazy", f: (x: A, y: A) => [b1(x.ref).reshape([15, 7]), b1(x.ref).reshape([3, 35]).mul(2), b1(x).reshape([105]).sum(), np.broadcastTo(y.ref, [4, 2]).reshape([2, 2, 2]), np.broadcastTo(y, [4, 2]).reshape([8])], args: () => [f32([3, 7], 63), f32([4, 1], 64)] },
      { name: "transpose: several perms of [3,5,7] and [2,3,4,5]", f: (x: A, y: A) => [x.ref.transpose([2, 0, 1]), x.ref.transpose([1, 2, 0]), x.ref.transpose([0, 2, 1]), x.transpose(), y.ref.transpose([0, 2, 1, 3]), y.ref.transpose([3, 1, 2, 0]), y.transpose([1, 0, 3, 2])], args: () => [f32(S, 65), f32([2, 3, 4, 5], 66)], exact: true },
      { name: "transpose moving only size-1 axes, and with size-1 axes between moved ones", f: (x: A) => [x.ref.transpose([1, 0, 3, 2, 4]), x.ref.transpose([0, 3, 2, 1, 4]), x.ref.transpose([4, 1, 0, 3, 2]), x.transpose([2, 3, 4, 0, 1])], args: () => [f32([3, 1, 5, 1, 7], 67)], exact: true },
      { name: "transpose of a broadcast, then mixed with a full tensor", f: (x: A, y: A) => [b1(x.ref).transpose([2, 1, 0]).mul(y.ref), b1(x.ref).transpose([1, 0, 2]).sum(0), b1(x).transpose([0, 2, 1]).add(y.transpose([2, 0, 1]))], args: () => [f32([3, 7], 68), f32([7, 5, 3], 69)] },
      { name: "slices: x.slice ranges, single indices, negative indices, new axes; of a broadcast", f: (x: A, y: A) => [x.ref.slice([1, 3], [], 2), x.ref.slice([], [1, 4], [2, 6]), x.ref.slice(-1, [2], [0, -2]), x.ref.slice(null, [0, 2], 4), b1(y.ref).slice([], [1, 3], [2, 5]), b1(y).slice(1, [0, 4]).mul(x.slice(0, [1, 5]))], args: () => [f32(S, 70), f32([3, 7], 71)], exact: true },
      { name: "np.pad (constant zeros) of a tensor and of a broadcast", f: (x: A, y: A) => [np.pad(x, [[1, 2], [0, 0], [3, 0]]), np.pad(b1(y), [[0, 1], [2, 2], [0, 0]])], args: () => [f32(S, 72), f32([3, 7], 73)], exact: true },
      { name: "np.concatenate along each axis, with a broadcast operand", f: (x: A, y: A, z: A) => [np.concatenate([x.ref, y.ref], 1), np.concatenate([x.ref, x.ref], 0), np.concatenate([x.ref, b1(z.ref)], 2), np.concatenate([b1(z), x, y.slice([], [0, 1])], 1)], args: () => [f32(S, 74), f32([3, 2, 7], 75), f32([3, 7], 76)], exact: true },
      { name: "np.split at indices and into equal parts, of a tensor and along / across a broadcast axis", f: (x: A, y: A) => [...np.split(x.ref, [2, 4], 1), ...np.split(x, 7, 2), ...np.split(b1(y.ref), [1, 3], 1), ...np.split(b1(y), [2], 2)], args: () => [f32(S, 77), f32([3, 7], 78)], exact: true },
    ]);
  });

  describe("gradients", () => {
    /** A two-layer perceptron's mean squared error; `p` = {w1 [6,8], b1 [8], w2 [8,3]}, x [4,6], y [4,3]. */
    const mlp = (p: { w1: A; b1: A; w2: A }, x: A, y: A) => {
      const h = np.maximum(np.matmul(x, p.w1).add(p.b1), 0);
      const z = np.tanh(np.matmul(h, p.w2));
      return np.square(z.sub(y)).mean();
    };
    const params = () => ({ w1: f32([6, 8], 79, -1, 1), b1: f32([8], 80, -0.5, 0.5), w2: f32([8, 3], 81, -1, 1) });
    cases([
      { name: "grad of an MLP's loss with respect to its weights (a pytree)", f: grad(mlp), args: () => [params(), f32([4, 6], 82), f32([4, 3], 83, -0.5, 0.5)] },
      { name: "grad of an MLP's loss with respect to its input", f: grad((x: A, p: { w1: A; b1: A; w2: A }, y: A) => mlp(p, x, y)), args: () => [f32([4, 6], 84), params(), f32([4, 3], 85, -0.5, 0.5)] },
      { name: "grad of Σ (x @ w) ⊙ c over a batch [2,3,6] with respect to w (a weight gradient's lazy reshape)", f: grad((w: A, x: A, c: A) => np.matmul(x, w).mul(c).sum()), args: () => [f32([6, 5], 86), f32([2, 3, 6], 87), f32([2, 3, 5], 88)] },
      { name: "grad through softmax, erf (a GELU), sqrt and a layer norm", f: grad((x: A, w: A) => { const n = x.ref.sub(x.mean(-1, { keepdims: true })); const s = np.sqrt(np.square(n.ref).mean(-1, { keepdims: true }).add(1e-5)); const h = n.div(s).mul(w); const g = h.ref.mul(lax.erf(h.mul(0.7071)).add(1)).mul(0.5); return softmax(g).mul(f32([5], 89)).sum(); }), args: () => [f32([4, 5], 90), f32([5], 91, 0.5, 1.5)] },
    ]);
  });

  describe("untranslated primitives and the lazy broadcast", () => {
    for (const [name, f, args] of [
      ["sort", (x: A) => np.sort(x, -1), () => [f32(S, 92)]],
      ["argsort", (x: A) => np.argsort(x, -1), () => [f32(S, 93)]],
      ["gather", (x: A, i: A) => np.take(x, i, 1), () => [f32(S, 94), np.array(Int32Array.from([4, 0, 2]), { dtype: np.int32 })]],
      ["random_bits", (k: A) => random.bits(k, [4]), () => [np.array(Uint32Array.from([1, 2]), { dtype: np.uint32 })]],
    ] as [string, Fn, () => A[]][]) {
      test(`a function using ${name} rejects: "jax-js primitive "${name}" has no ONNX translation"`, async () => {
        const xs = args();
        try {
          await assert.rejects(nativeJit(f, 1)(...xs.map((x) => x.ref)), (e: unknown) => e instanceof Error && e.message.includes(`"${name}" has no ONNX translation`));
        } finally {
          xs.forEach((x) => x.dispose());
        }
      });
    }

    test("dispose after a failed translation resolves (nothing was compiled)", async () => {
      const nf = nativeJit((x: A) => np.sort(x, -1), 1);
      const x = f32(S, 102);
      await assert.rejects(nf(x.ref), /has no ONNX translation/);
      x.dispose();
      await nf.dispose();
    });

    /** The op types of `f`'s translation for arguments of `shapes`. */
    const opTypes = (f: Fn, ...shapes: number[][]) => {
      const avals = shapes.map((s) => {
        const z = np.zeros(s);
        const { aval } = z;
        z.dispose();
        return aval;
      });
      const { jaxpr } = makeJaxpr(f)(...avals);
      try {
        const model = onnxProto.onnx.ModelProto.decode(jaxprToOnnx(jaxpr).model);
        return (model.graph?.node ?? []).map((n) => n.opType ?? "");
      } finally {
        jaxpr.dispose();
      }
    };

    test("a dot of a broadcast operand ([64,128] broadcast to [8,64,128], times [8,128,32]) materialises no broadcast: no Expand, one matrix product", () => {
      const ops = opTypes((a: A, w: A) => np.matmul(np.broadcastTo(a, [8, 64, 128]), w), [64, 128], [8, 128, 32]);
      assert.ok(!ops.includes("Expand"), `ops: ${ops.join(" ")}`);
      assert.equal(ops.filter((o) => /Gemm|MatMul/.test(o)).length, 1, `one matrix product; ops: ${ops.join(" ")}`);
    });

    test("a weight gradient (Σ (x @ w) ⊙ c over a batch, by w) reads its broadcast cotangent lazily: no Expand", () => {
      const ops = opTypes(grad((w: A, x: A, c: A) => np.matmul(x, w).mul(c).sum()), [64, 32], [4, 16, 64], [4, 16, 32]);
      assert.ok(!ops.includes("Expand"), `ops: ${ops.join(" ")}`);
      assert.ok(ops.some((o) => /Gemm|MatMul/.test(o)), `ops: ${ops.join(" ")}`);
    });
  });
});

/** A closed-over constant of the elementwise cases (a traced constant of their jaxpr); made once jax-js is initialised. */
let closed: A;

/** Softmax over the last axis, written out (max-shifted). */
function softmax(x: A): A {
  const e = np.exp(x.ref.sub(lax.stopGradient(x.max(-1, { keepdims: true }))));
  return e.ref.div(e.sum(-1, { keepdims: true }));
}
