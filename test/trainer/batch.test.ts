import { test } from "node:test";
import assert from "node:assert/strict";
import { chunkBySize, chunks, packSequences } from "../../src/trainer/batch.ts";

test("packSequences right-pads, masks prompts and broadcasts advantages over response tokens", () => {
  const b = packSequences(
    [
      { prompt: [1, 5, 6], response: [7, 2], advantage: 0.5, oldLogprobs: [-0.1, -0.2], groupId: 3 },
      { prompt: [1, 4], response: [9, 9, 2], advantage: -1, oldLogprobs: [-1, -2, -3], mask: [1, 0, 1], groupId: 3 },
    ],
    0,
  );
  assert.equal(b.batchSize, 2);
  assert.equal(b.seqLen, 5);
  assert.deepEqual(Array.from(b.tokens), [1, 5, 6, 7, 2, 1, 4, 9, 9, 2]);
  assert.deepEqual(Array.from(b.lengths), [5, 5]);
  assert.deepEqual(Array.from(b.lossMask), [0, 0, 0, 1, 1, 0, 0, 1, 0, 1]);
  assert.deepEqual(Array.from(b.advantages!), [0, 0, 0, 0.5, 0.5, 0, 0, -1, -1, -1]);
  assert.deepEqual(Array.from(b.oldLogprobs!).map((x) => +x.toFixed(3)), [0, 0, 0, -0.1, -0.2, 0, 0, -1, -2, -3]);
  assert.deepEqual(Array.from(b.groupIds!), [3, 3]);
});

test("chunks and chunkBySize cover every item once, in order", () => {
  const xs = Array.from({ length: 10 }, (_, i) => i);
  for (const n of [1, 2, 3, 7, 10, 20]) {
    const c = chunks(xs, n);
    assert.deepEqual(c.flat(), xs);
    assert.ok(c.every((x) => x.length > 0));
    assert.equal(c.length, Math.min(n, 10));
  }
  assert.deepEqual(chunkBySize(xs, 4).map((c) => c.length), [4, 4, 2]);
});
