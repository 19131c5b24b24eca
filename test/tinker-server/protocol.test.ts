// The Tinker protocol pieces that need no SDK: a ForwardBackwardRequest recorded from the official
// SDK (tinker 0.38.0, tinker.proto.request_conv) decoded field by field; request ordering by
// seq_id; idempotent retries; user errors reported as such. The SDK end to end: test/tinker.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decodeForwardBackwardRequest } from "../../src/tinker/proto.ts";
import { FutureStore, SeqQueue, UserError } from "../../src/tinker/futures.ts";
import { RECORDED } from "./recorded.ts";


describe("tinker protocol: ForwardBackwardRequest (protobuf) recorded from the SDK", () => {
  // Decode from inside a larger Node Buffer (as Fastify hands it) to catch views over the pool.
  const bytes = Buffer.from(RECORDED, "hex");
  const pooled = Buffer.concat([Buffer.from([9, 9, 9]), bytes]).subarray(3);
  const req = decodeForwardBackwardRequest(pooled);
  it("header fields", () => {
    assert.equal(req.modelId, "s:train:0");
    assert.equal(req.seqId, 12);
    assert.equal(req.lossFn, "ppo");
    assert.equal(req.forwardOnly, true);
    assert.deepEqual(req.lossFnConfig, { clip_low_threshold: 0.7, clip_high_threshold: 1.3 });
  });
  it("datums: tokens over chunks, int64 and float32 tensors", () => {
    assert.equal(req.data.length, 2);
    assert.deepEqual(req.data[0]!.tokens, [5, 6, 7]);
    assert.deepEqual(Array.from(req.data[0]!.lossFnInputs["target_tokens"]!.values), [6, 7, 300000]);
    assert.equal(req.data[0]!.lossFnInputs["target_tokens"]!.dtype, "int64");
    assert.deepEqual(Array.from(req.data[0]!.lossFnInputs["weights"]!.values), [0, 1, 0.5]);
    assert.deepEqual(req.data[0]!.lossFnInputs["weights"]!.shape, [3]);
    assert.deepEqual(req.data[1]!.tokens, [1, 2, 3]);
    assert.deepEqual(Array.from(req.data[1]!.lossFnInputs["logprobs"]!.values), [-1.5, -0.25, -2]);
    assert.deepEqual(Array.from(req.data[1]!.lossFnInputs["advantages"]!.values), [0, 1, -1]);
  });
  it("truncated input is an error, not a partial request", () => {
    assert.throws(() => decodeForwardBackwardRequest(bytes.subarray(0, 40)), /protobuf: truncated/);
  });
});

describe("tinker protocol: ordering and retries", () => {
  it("SeqQueue runs requests in seq_id order whatever the arrival order", async () => {
    const q = new SeqQueue();
    const ran: number[] = [];
    const work = (n: number) => async () => {
      ran.push(n);
    };
    const first = q.run(1, work(1));
    const late = [q.run(4, work(4)), q.run(3, work(3)), q.run(2, work(2))];
    await Promise.all([first, ...late]);
    assert.deepEqual(ran, [1, 2, 3, 4]);
    await assert.rejects(q.run(2, work(99)), /seq_id 2 arrived after seq_id 4 had run/);
  });
  it("FutureStore: a retry with the same key gets the same request id and the work runs once", async () => {
    const f = new FutureStore();
    let runs = 0;
    const work = async () => {
      runs++;
      return { json: { ok: true } };
    };
    const a = f.submit(work, "m/7/optim_step");
    const b = f.submit(work, "m/7/optim_step");
    assert.equal(a, b);
    const e = await f.wait(a, 1000);
    assert.equal(e!.state, "done");
    assert.equal(runs, 1);
  });
  it("FutureStore: a UserError fails with category user, any other error with category server", async () => {
    const f = new FutureStore();
    const u = await f.wait(f.submit(async () => { throw new UserError("bad datum"); }), 1000);
    const s = await f.wait(f.submit(async () => { throw new Error("boom"); }), 1000);
    assert.deepEqual([u!.state, u!.category, u!.error], ["failed", "user", "bad datum"]);
    assert.deepEqual([s!.state, s!.category], ["failed", "server"]);
  });
});
