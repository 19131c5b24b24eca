/**
 * Wasm relaxed SIMD (RLVR_RELAXED_SIMD=on, runtime.ts `applyRelaxedSimd`): jax-js's matmul kernels
 * with fused multiply-add must move the engine's scores, gradients and step by float32 rounding
 * only, and sample the same tokens. Opt-in on Node 20, so this comparison sits in test:slow (two
 * engine probes, one process each: jax-js probes the feature when it loads).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runProbe } from "./helpers/run-probe.ts";

test("relaxed SIMD (fused multiply-add) moves scores, gradients and the step by float32 rounding only; the same samples", () => {
  const on = runProbe("thread-probe.ts", { RLVR_THREADS: "2", RLVR_RELAXED_SIMD: "on" }, ["results"]);
  const off = runProbe("thread-probe.ts", { RLVR_THREADS: "2" }, ["results"]);
  assert.equal((on.dispatch as { relaxedSimd: boolean }).relaxedSimd, true, "RLVR_RELAXED_SIMD=on turns it on");
  assert.equal((off.dispatch as { relaxedSimd: boolean }).relaxedSimd, false, "off by default on Node 20");
  const close = (a: unknown, b: unknown, tol: number, what: string) => {
    const x = (a as number[]).flat(), y = (b as number[]).flat();
    assert.equal(x.length, y.length);
    let worst = 0;
    x.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - y[i]!) / (1 + Math.abs(y[i]!)))));
    assert.ok(worst <= tol, `${what}: relaxed vs plain differ by ${worst}`);
    return worst;
  };
  const moved = close(on.logprobs, off.logprobs, 1e-5, "log-probs") + close(on.after, off.after, 1e-5, "log-probs after the step");
  assert.ok(moved > 0, "fused multiply-add rounds differently: the two runs are different paths");
  close(on.entropy, off.entropy, 1e-5, "entropies");
  const g1 = on.grads as Record<string, number[]>, g2 = off.grads as Record<string, number[]>;
  for (const name of Object.keys(g2)) close(g1[name], g2[name], 1e-4, `gradient ${name}`);
  const tokens = (r: unknown) => (r as { tokens: number[] }[]).map((x) => x.tokens);
  assert.deepEqual(tokens(on.samples), tokens(off.samples));
});
