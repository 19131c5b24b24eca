/**
 * rlvr's jax-js patch, the allocator part (docs/jax-js-patch.md, item 3): arrays whose size
 * changes on every call reuse the freed Wasm heap instead of exhausting it (jax-js 0.1.25 fails
 * at round 8 of the probe). Slow suite: the probe fills the 4 GiB heap (~10 s).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runProbe } from "./helpers/run-probe.ts";

test("arrays whose size changes every call reuse the freed heap (merge + split before the 4 GiB limit)", () => {
  const on = runProbe("jax-alloc-probe.ts", { RLVR_THREADS: "1" });
  assert.equal(on.error, null, `the patched allocator failed: ${String(on.error)}`);
  assert.equal(on.rounds, 24);
  assert.equal(on.check, 2 * 25, "the last round's values (24 + 1, twice) read back");
  assert.ok((on.heapGiB as number) < 4, `heap ${on.heapGiB} GiB`);
});
