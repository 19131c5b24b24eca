import { test } from "node:test";
import assert from "node:assert/strict";
import { chunkBySize, chunks, packSequences } from "../../src/core/sequence.ts";

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

test("packSequences: per-token advantages take precedence over the sequence advantage", () => {
  const b = packSequences([{ prompt: [1, 5], response: [7, 2], advantage: 9, tokenAdvantages: [0.25, -0.5] }, { prompt: [1], response: [3, 3, 2], advantage: 1 }], 0);
  assert.deepEqual(Array.from(b.advantages!), [0, 0, 0.25, -0.5, 0, 1, 1, 1]);
});

test("sequenceTokenAdvantages: REINFORCE++ returns land on each response's tokens; KL enters as per-token rewards −β·kl_t", async () => {
  const { sequenceTokenAdvantages } = await import("../../src/pipeline/advantages.ts");
  const { reinforcePpAdvantages } = await import("../../src/algorithms/index.ts");
  // Prompts of different lengths, a masked token (tool output) in the second response.
  const seqs = [
    { prompt: [1, 5, 6], response: [7, 2] },
    { prompt: [1], response: [9, 9, 2], mask: [1, 0, 1] },
    { prompt: [1, 4], response: [8, 2] },
  ];
  const input = { rewards: Float32Array.from([1, 0, 1]), groupIds: Int32Array.from([0, 1, 2]), lengths: Int32Array.from([2, 3, 2]) };
  // Without KL: the same as reinforce_pp on the packed batch (γ = 1: every token's return is the outcome).
  const packed = packSequences(seqs, 0);
  const T = packed.seqLen;
  const ref = reinforcePpAdvantages({ ...input, mask: packed.lossMask, seqLen: T }, { gamma: 1 });
  const plain = sequenceTokenAdvantages("reinforce_pp", { gamma: 1 }, seqs, input, null, 0);
  seqs.forEach((s, b) => assert.deepEqual(Array.from(plain.tokenAdv[b]!), Array.from(ref.slice(b * T + s.prompt.length, b * T + s.prompt.length + s.response.length))));
  assert.equal(plain.tokenAdv[1]![1], 0, "masked token gets 0");
  assert.ok(plain.tokenAdv[0]![0]! > 0 && plain.tokenAdv[1]![0]! < 0, "reward 1 above the batch mean, reward 0 below");
  // With KL laid out like the reference batch (here: the same packing): R_t = s − β Σ_{u≥t} kl_u before whitening.
  const kl = new Float32Array(seqs.length * T);
  kl[0 * T + 3] = 2; // first response, first token
  kl[0 * T + 4] = 1; // first response, last token
  const withKl = sequenceTokenAdvantages("reinforce_pp", { gamma: 1, whiten: false }, seqs, input, { kl, seqLen: T, coef: 0.1 }, 0);
  assert.deepEqual(Array.from(withKl.tokenAdv[0]!).map((x) => +x.toFixed(6)), [1 - 0.1 * 3, 1 - 0.1 * 1]);
  assert.deepEqual(Array.from(withKl.tokenAdv[2]!), [1, 1]);
  // adv: mean over masked tokens.
  assert.deepEqual(Array.from(withKl.adv).map((x) => +x.toFixed(6)), [+((0.7 + 0.9) / 2).toFixed(6), 0, 1]);
});
