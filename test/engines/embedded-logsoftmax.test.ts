/**
 * The embedded engine's log-softmax (model.ts `logSoftmax`) against float64 on a real-size
 * vocabulary: jax-js's `nn.logSoftmax` sums the 49,152 exp-logits in one sequential float32 pass
 * and takes a 4-term-series log, which put it 1e-4–3e-4 off (the held-out check allows 1e-4 in all,
 * the model's own float32 error included); ours stays within 5e-6 — also at a vocabulary that is
 * not a multiple of its block (50,257: GPT-2's) — and its gradient equals `nn.logSoftmax`'s.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ensureJax } from "../../src/engines/embedded/runtime.ts";
import { logSoftmax } from "../../src/engines/embedded/model.ts";
import { numpy as np, nn, grad, jit } from "@jax-js/jax";
import { Rng } from "./helpers/tiny.ts";

/** [N, V] logits like a language model's: normal(0, 2.5) with one peaked token per row at varying heights. */
function logits(N: number, V: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  const z = new Float32Array(N * V);
  for (let i = 0; i < z.length; i++) z[i] = 2.5 * Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  for (let n = 0; n < N; n++) z[n * V + 7] = 6 + 1.5 * n;
  return z;
}

/** log softmax(z)[n, t] in float64. */
function exact(z: Float32Array, V: number, n: number, t: number): number {
  let m = -Infinity;
  for (let i = 0; i < V; i++) m = Math.max(m, z[n * V + i]!);
  let s = 0;
  for (let i = 0; i < V; i++) s += Math.exp(z[n * V + i]! - m);
  return z[n * V + t]! - m - Math.log(s);
}

for (const V of [49152, 50257]) {
  test(`log-softmax over ${V} logits within 5e-6 of float64 (eager and jitted); nn.logSoftmax is not`, async () => {
    await ensureJax();
    const N = 8;
    const z = logits(N, V, V);
    const worst = async (f: (x: np.Array) => np.Array) => {
      const out = (await f(np.array(z).reshape([N, V])).data()) as Float32Array;
      let w = 0;
      for (let n = 0; n < N; n++) for (const t of [7, 100, V - 1]) w = Math.max(w, Math.abs(out[n * V + t]! - exact(z, V, n, t)));
      return w;
    };
    const ours = Math.max(await worst(logSoftmax), await worst(jit(logSoftmax)));
    const theirs = await worst((x) => nn.logSoftmax(x, -1));
    assert.ok(ours <= 5e-6, `max |Δ| = ${ours}`);
    assert.ok(theirs > 2e-5, `nn.logSoftmax max |Δ| = ${theirs}: the control no longer shows the error this function fixes`);
  });
}

test("log-softmax's gradient equals nn.logSoftmax's", async () => {
  await ensureJax();
  const [N, V] = [4, 64];
  const w = np.array(Float32Array.from({ length: N * V }, (_, i) => Math.cos(i))).reshape([N, V]);
  const g = async (f: (x: np.Array) => np.Array) => (await grad((x: np.Array) => f(x).mul(w.ref).sum())(np.array(logits(N, V, 3)).reshape([N, V])).data()) as Float32Array;
  const a = await g(logSoftmax);
  const b = await g((x) => nn.logSoftmax(x, -1));
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) <= 1e-6, `grad[${i}]: ${a[i]} vs ${b[i]}`);
});
