/**
 * AdamW with bias correction and decoupled weight decay (Loshchilov & Hutter 2019,
 * arXiv:1711.05101) and global-norm gradient clipping. (The learning-rate schedule is in
 * src/core/schedule.ts: engines receive the rate in optimStep.)
 *
 * Weights, gradients and moments are name → array records (Hugging Face tensor names). The
 * update is one jitted function over the whole record, so it compiles once per model.
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { numpy as np, jit } from "@jax-js/jax";

export type Tensors = Record<string, np.Array>;

/** Names that get weight decay: matrices only (norm gains and biases are not decayed, as in HF Trainer). */
export function decays(name: string, shape: number[]): boolean {
  return shape.length >= 2 && !name.includes("norm");
}

/** Σ over all tensors of Σ g² (consumes `grads`). */
export const sumOfSquares = jit((grads: Tensors) => {
  let total: np.Array | null = null;
  for (const k of Object.keys(grads).sort()) {
    const g = grads[k]!;
    const s = g.ref.mul(g).sum();
    total = total ? total.add(s) : s;
  }
  return total ?? np.zeros([]);
});

/**
 * One AdamW step. `hyper` = [lr, beta1, beta2, eps, weightDecay, 1 − beta1^t, 1 − beta2^t, gradScale]
 * where gradScale multiplies the gradient first (global-norm clipping).
 *   m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²
 *   w ← w − lr · (m/(1−β1^t)) / (sqrt(v/(1−β2^t)) + eps) − lr · λ · w   (λ only where `decays`)
 * Consumes all arguments; returns new weights and moments.
 */
export const adamwUpdate = jit((w: Tensors, g: Tensors, m: Tensors, v: Tensors, hyper: np.Array) => {
  const h = (i: number) => hyper.ref.slice(i);
  const out: { w: Tensors; m: Tensors; v: Tensors } = { w: {}, m: {}, v: {} };
  for (const k of Object.keys(w).sort()) {
    const grad = g[k]!.mul(h(7));
    const m1 = m[k]!.mul(h(1)).add(grad.ref.mul(np.subtract(1, h(1))));
    const v1 = v[k]!.mul(h(2)).add(grad.ref.mul(grad).mul(np.subtract(1, h(2))));
    const mHat = m1.ref.div(h(5));
    const vHat = v1.ref.div(h(6));
    const step = mHat.div(np.sqrt(vHat).add(h(3))).mul(h(0));
    let w1 = w[k]!;
    if (decays(k, w1.shape)) w1 = w1.ref.sub(w1.mul(h(0).mul(h(4))));
    out.w[k] = w1.sub(step);
    out.m[k] = m1;
    out.v[k] = v1;
  }
  hyper.dispose();
  return out;
});
