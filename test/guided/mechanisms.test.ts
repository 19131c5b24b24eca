// ReLIFT buffer and schedule, RAFT selection, CHORD μ schedule, expert trajectories' masks and weights.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { expertSequence } from "../../src/methods/luffy.ts";
import { hardestGroups, ReliftBuffer, reliftSftSteps } from "../../src/methods/relift.ts";
import { scheduleValue } from "../../src/methods/schedule.ts";
import { selectForRaft } from "../../src/methods/raft.ts";
import { demonstration } from "../../src/methods/sft.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { packSequences } from "../../src/core/sequence.ts";
import type { Example } from "../../src/core/example.ts";

const seq = (n: number) => ({ prompt: [1], response: Array.from({ length: n }, (_, i) => i + 2) });

describe("ReLIFT buffer", () => {
  it("FIFO, deduplicated by id (a re-added id moves to the back), evicts the oldest when full", () => {
    const b = new ReliftBuffer(3);
    assert.equal(b.add({ id: "a", seq: seq(1), step: 1 }), true);
    b.add({ id: "b", seq: seq(1), step: 1 });
    b.add({ id: "c", seq: seq(1), step: 2 });
    assert.equal(b.add({ id: "a", seq: seq(2), step: 3 }), false);
    assert.deepEqual(b.ids(), ["b", "c", "a"]);
    b.add({ id: "d", seq: seq(1), step: 4 });
    assert.deepEqual(b.ids(), ["c", "a", "d"]);
    assert.equal(b.evicted, 1);
    const taken = b.take(2);
    assert.deepEqual(taken.map((x) => x.id), ["c", "a"]);
    assert.equal(taken[1]!.seq.response.length, 2, "the refreshed demonstration is kept");
    assert.deepEqual(b.ids(), ["d"]);
    assert.deepEqual(b.take(5).map((x) => x.id), ["d"]);
    assert.equal(b.size, 0);
    assert.throws(() => new ReliftBuffer(0), /capacity/);
  });
  it("hardest groups: accuracy ≤ hardness", () => {
    const c = [false, false, false, false, true, false, false, false, true, true, true, true];
    assert.deepEqual(hardestGroups(c, 4), [0]);
    assert.deepEqual(hardestGroups(c, 4, 0.25), [0, 1]);
    assert.deepEqual(hardestGroups(c, 4, 1), [0, 1, 2]);
  });
});

describe("ReLIFT schedule", () => {
  it("only full batches, at most maxSftSteps, only on schedule", () => {
    const s = { batchSize: 4, every: 0, maxSftSteps: 2 };
    assert.equal(reliftSftSteps(1, 3, s), 0);
    assert.equal(reliftSftSteps(1, 4, s), 1);
    assert.equal(reliftSftSteps(1, 11, s), 2);
    assert.equal(reliftSftSteps(7, 100, { ...s, maxSftSteps: 10 }), 10);
    const e = { batchSize: 2, every: 3, maxSftSteps: 1 };
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((t) => reliftSftSteps(t, 8, e)), [0, 0, 1, 0, 0, 1]);
  });
});

describe("RAFT selection", () => {
  it("best per prompt (ties → earliest), threshold, never below the threshold or NaN", () => {
    const r = [0, 1, 1, 0.5, /**/ 0, 0, 0, 0, /**/ 1, NaN, 0.7, 1];
    assert.deepEqual(selectForRaft(r, 4, { keep: "best", threshold: 1, perPrompt: 1 }), [1, 8]);
    assert.deepEqual(selectForRaft(r, 4, { keep: "best", threshold: 0.5, perPrompt: 2 }), [1, 2, 8, 11]);
    assert.deepEqual(selectForRaft(r, 4, { keep: "threshold", threshold: 0.5, perPrompt: 1 }), [1, 2, 3, 8, 10, 11]);
  });
});

describe("CHORD μ schedule", () => {
  it("linear and cosine from start to end, then constant", () => {
    const s = { start: 0.8, end: 0.2, steps: 10 };
    assert.equal(scheduleValue({ ...s, shape: "linear" }, 0), 0.8);
    assert.ok(Math.abs(scheduleValue({ ...s, shape: "linear" }, 5) - 0.5) < 1e-12);
    assert.ok(Math.abs(scheduleValue({ ...s, shape: "cosine" }, 5) - 0.5) < 1e-12);
    assert.ok(Math.abs(scheduleValue({ ...s, shape: "linear" }, 50) - 0.2) < 1e-12);
    assert.equal(scheduleValue({ ...s, shape: "constant" }, 7), 0.8);
  });
});

describe("expert trajectories", () => {
  const tok = new CharTokenizer({ alphabet: "0123456789+=" });
  const ex: Example = { id: "e1", prompt: "12+3=", answer: "15", solution: "15", task: "addition" };
  const enc = (e: Example) => Int32Array.from(tok.encode(e.prompt, { addSpecialTokens: false }));
  it("mask 1 and weights 1 on every response token (answer + EOS), old log-probs 0, the group it joins", () => {
    const s = expertSequence(ex, enc, tok, 7);
    assert.deepEqual(Array.from(s.response), [...tok.encode("15", { addSpecialTokens: false }), tok.eosId]);
    assert.deepEqual(Array.from(s.mask!), [1, 1, 1]);
    assert.deepEqual(Array.from(s.weights!), [1, 1, 1]);
    assert.deepEqual(Array.from(s.oldLogprobs!), [0, 0, 0]);
    assert.equal(s.groupId, 7);
  });
  it("pack: expert tokens carry weights > 0, on-policy and prompt tokens 0", () => {
    const onPolicy = { ...demonstration(ex, enc, tok, "14"), groupId: 7 };
    const b = packSequences([onPolicy, expertSequence(ex, enc, tok, 7)], tok.padId);
    const T = b.seqLen;
    const P = enc(ex).length;
    for (let t = 0; t < T; t++) {
      assert.equal(b.weights![t], 0);
      assert.equal(b.weights![T + t], t >= P && t < P + 3 ? 1 : 0);
      assert.equal(b.lossMask[T + t], t >= P && t < P + 3 ? 1 : 0);
    }
    assert.deepEqual([...b.groupIds!], [7, 7]);
  });
});
