// The TypeScript client's wire format checked against the tinker SDK's own protobuf classes: a
// ForwardBackwardRequest it encodes is parsed by tinker_public_pb2 field by field, and the
// SampleResponse / ForwardBackwardOutput a Tinker server sends (built with those classes) decode
// to the same numbers. Needs the SDK (.venv-tinker).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackwardRequest } from "../../src/tinker/proto.ts";

const python = process.env["TINKER_PYTHON"] ?? new URL("../../.venv-tinker/bin/python", import.meta.url).pathname;

describe("tinker wire format vs the SDK's protobuf classes", { skip: existsSync(python) ? false : `no tinker SDK at ${python}` }, () => {
  const req = encodeForwardBackwardRequest({
    modelId: "sess:train:3",
    seqId: 41,
    lossFn: "ppo",
    lossFnConfig: { clip_low_threshold: 0.75 },
    forwardOnly: false,
    data: [{ tokens: [4, 5, 70000], lossFnInputs: { target_tokens: { dtype: "int64", values: Float64Array.from([5, 70000, 2]), shape: [3] }, advantages: { dtype: "float32", values: Float64Array.from([0, 0.5, -1.5]), shape: [3] } } }],
  });
  const r = spawnSync(python, [new URL("./wire.py", import.meta.url).pathname, Buffer.from(req).toString("hex")], { cwd: tmpdir(), encoding: "utf8" });
  const out = JSON.parse(r.stdout || "null") as { parsed: Record<string, unknown>; sample_hex: string; fwd_hex: string } | null;

  it("a ForwardBackwardRequest from the TypeScript client parses in the SDK as sent", () => {
    assert.ok(out, r.stderr);
    assert.deepEqual(out.parsed, {
      model_id: "sess:train:3",
      seq_id: 41,
      loss_fn: "ppo",
      forward_only: false,
      config: { clip_low_threshold: 0.75 },
      config_v2: { clip_low_threshold: 0.75 },
      data: [{ tokens: [4, 5, 70000], inputs: { target_tokens: { dtype: "DTYPE_INT64", shape: [3], values: [5, 70000, 2] }, advantages: { dtype: "DTYPE_FLOAT32", shape: [3], values: [0, 0.5, -1.5] } } }],
    });
  });
  it("a SampleResponse built by the SDK's classes decodes to its sequences, prompt log-probs and top-k prompt log-probs", () => {
    assert.deepEqual(decodeSampleResponse(Buffer.from(out!.sample_hex, "hex")), {
      sequences: [
        { stopReason: "stop", tokens: [7, 8, 2], logprobs: [-0.5, -1.25, -0.125] },
        { stopReason: "length", tokens: [9], logprobs: [-2] },
      ],
      promptLogprobs: [null, -3.5, -0.75],
      topkPromptLogprobs: [null, [[11, -0.25], [4, -1.5]], [[6, -0.5]]],
    });
  });
  it("a ForwardBackwardOutput built by the SDK's classes decodes per datum", () => {
    const d = decodeForwardBackwardOutput(Buffer.from(out!.fwd_hex, "hex"));
    assert.equal(d.lossFnOutputType, "tinker.types:ArrayRecord");
    assert.deepEqual(d.metrics, { "loss:sum": 3.75 });
    assert.deepEqual(d.outputs.map((o) => Array.from(o["logprobs"]!)), [[-1, -2], [-0.5, -0.25, -4]]);
  });
});
