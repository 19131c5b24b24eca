import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { truncationMask } from "../../src/rollout/overlong.ts";
import { packSequences } from "../../src/core/sequence.ts";

describe("overlong filtering (mask truncated responses)", () => {
  it("a truncated response gets loss mask 0 on every token; a completed one keeps its mask", () => {
    assert.deepEqual(Array.from(truncationMask("max_tokens", 3)!), [0, 0, 0]);
    assert.equal(truncationMask("completed", 3), undefined);
    const m = [1, 0, 1];
    assert.equal(truncationMask("completed", 3, m), m);
    assert.deepEqual(Array.from(truncationMask("max_tokens", 3, m)!), [0, 0, 0]);
  });

  it("packed into a batch, the truncated sequence contributes no loss tokens", () => {
    const b = packSequences([
      { prompt: [1, 2], response: [3, 4, 5], mask: truncationMask("max_tokens", 3) },
      { prompt: [1], response: [6, 7], mask: truncationMask("completed", 2) },
    ]);
    const T = b.seqLen;
    assert.deepEqual([...b.lossMask.subarray(0, T)], [0, 0, 0, 0, 0]);
    assert.deepEqual([...b.lossMask.subarray(T, 2 * T)], [0, 1, 1, 0, 0]);
  });
});
