"""Wire check with the SDK's own protobuf classes (tinker 0.38.0). argv[1] = hex of a
ForwardBackwardRequest the TypeScript client encoded: parsed by tinker_public_pb2 and printed as
JSON. Then a SampleResponse and a ForwardBackwardOutput built with the same classes, as a Tinker
server sends them, printed as hex for the TypeScript decoders."""
import json
import sys

import numpy as np
from tinker.proto import tinker_public_pb2 as pb

req = pb.ForwardBackwardRequest.FromString(bytes.fromhex(sys.argv[1]))
DT = {pb.DTYPE_FLOAT32: np.float32, pb.DTYPE_INT64: np.int64}
data = []
for d in req.data:
    tokens = [int(x) for c in d.model_input for x in np.frombuffer(c.encoded_text.tokens, dtype=np.int32)]
    inputs = {k: {"dtype": pb.DType.Name(t.dtype), "shape": list(t.shape), "values": np.frombuffer(t.dense, dtype=DT[t.dtype]).tolist()} for k, t in d.loss_fn_inputs.items()}
    data.append({"tokens": tokens, "inputs": inputs})
parsed = {"model_id": req.model_id, "seq_id": req.seq_id, "loss_fn": req.loss_fn, "forward_only": req.forward_only,
          "config": dict(req.loss_fn_config), "config_v2": {k: v.number for k, v in req.loss_fn_config_v2.items()}, "data": data}

sr = pb.SampleResponse()
s1 = sr.sequences.add(); s1.stop_reason = pb.STOP_REASON_STOP; s1.tokens = np.array([7, 8, 2], np.int32).tobytes(); s1.logprobs = np.array([-0.5, -1.25, -0.125], np.float32).tobytes()
s2 = sr.sequences.add(); s2.stop_reason = pb.STOP_REASON_LENGTH; s2.tokens = np.array([9], np.int32).tobytes(); s2.logprobs = np.array([-2.0], np.float32).tobytes()
sr.prompt_logprobs = np.array([np.nan, -3.5, -0.75], np.float32).tobytes()
sr.topk_prompt_logprobs.k = 2; sr.topk_prompt_logprobs.length = 3
sr.topk_prompt_logprobs.token_ids = np.array([0, 0, 11, 4, 6, 0], np.int32).tobytes()
sr.topk_prompt_logprobs.logprobs = np.array([-99999.0, -99999.0, -0.25, -1.5, -0.5, -99999.0], np.float32).tobytes()

fo = pb.ForwardBackwardOutput(loss_fn_output_type="tinker.types:ArrayRecord")
rec = fo.loss_fn_outputs.add(); rec.num_datums = 2
bt = rec.fields["logprobs"]; bt.dtype = pb.DTYPE_FLOAT32
bt.data = np.array([-1.0, -2.0, -0.5, -0.25, -4.0], np.float32).tobytes(); bt.offsets = np.array([0, 8, 20], np.int64).tobytes()
fo.metrics["loss:sum"] = 3.75
print(json.dumps({"parsed": parsed, "sample_hex": sr.SerializeToString().hex(), "fwd_hex": fo.SerializeToString().hex()}))
