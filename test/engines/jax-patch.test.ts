/**
 * rlvr's jax-js patch (patches/@jax-js+jax+0.1.25.patch, docs/jax-js-patch.md): small-M matmuls
 * as one row tile split by columns across workers, and kernels run inline on request. Both must
 * give bit for bit what jax-js 0.1.25's own paths give (same kernels, same order within each
 * output element): matmuls of every shape class, and the engine's scores, gradients, optimizer
 * step and seeded samples with the patch on and with RLVR_JAX_PATCH=off. Each run is its own
 * process (jax-js fixes its thread setup when it loads).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { jaxPatchRequested, jaxSyncRequested, relaxedSimdRequested } from "../../src/engines/embedded/runtime.ts";
import { runProbe } from "./helpers/run-probe.ts";

type MatmulResult = { shape: string; smallRowTile: boolean; inline: boolean; both: boolean; sync: boolean; syncSmallRowTile: boolean; maxErr: number };

for (const threads of ["2", "1"]) {
  test(`matmuls under the patch equal jax-js 0.1.25's tiling bit for bit (${threads} thread${threads === "1" ? "" : "s"})`, () => {
    const out = runProbe("jax-patch-probe.ts", { RLVR_THREADS: threads });
    const results = out.results as MatmulResult[];
    assert.ok(results.length >= 10);
    for (const r of results) {
      assert.ok(r.smallRowTile && r.inline && r.both && r.sync && r.syncSmallRowTile, `${r.shape}: ${JSON.stringify(r)}`);
      assert.ok(r.maxErr < 1e-4, `${r.shape}: plain result off the float64 reference by ${r.maxErr}`);
    }
  });
}

test("the engine's scores, gradients, step and samples are unchanged by the patch (2 threads; synchronous dispatch on and off)", () => {
  const on = runProbe("thread-probe.ts", { RLVR_THREADS: "2" }, ["results"]);
  const pool = runProbe("thread-probe.ts", { RLVR_THREADS: "2", RLVR_JAX_SYNC: "off" }, ["results"]);
  const off = runProbe("thread-probe.ts", { RLVR_THREADS: "2", RLVR_JAX_PATCH: "off" }, ["results"]);
  assert.equal((on.dispatch as { sync: boolean }).sync, true, "synchronous dispatch is on by default with 2 threads on Node");
  assert.equal((pool.dispatch as { sync: boolean }).sync, false);
  for (const key of ["logprobs", "entropy", "grads", "gradNorm", "samples", "after"]) {
    assert.deepEqual(on[key], off[key], `${key} differs between RLVR_JAX_PATCH=on and off`);
    assert.deepEqual(pool[key], off[key], `${key} differs between RLVR_JAX_SYNC=off and RLVR_JAX_PATCH=off`);
  }
});

test("RLVR_JAX_PATCH: unset/on/off, anything else is an error", () => {
  assert.equal(jaxPatchRequested(undefined), true);
  assert.equal(jaxPatchRequested(""), true);
  assert.equal(jaxPatchRequested("on"), true);
  assert.equal(jaxPatchRequested("off"), false);
  assert.throws(() => jaxPatchRequested("no"), /RLVR_JAX_PATCH must be "on" or "off"/);
  assert.equal(jaxSyncRequested(undefined), true);
  assert.equal(jaxSyncRequested("off"), false);
  assert.throws(() => jaxSyncRequested("1"), /RLVR_JAX_SYNC must be "on" or "off"/);
  assert.equal(relaxedSimdRequested(undefined), false);
  assert.equal(relaxedSimdRequested("on"), true);
  assert.equal(relaxedSimdRequested("off"), false);
  assert.throws(() => relaxedSimdRequested("yes"), /RLVR_RELAXED_SIMD must be "on" or "off"/);
});
