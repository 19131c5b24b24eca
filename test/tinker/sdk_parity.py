"""A few supervised and importance-sampling steps with the tinker SDK, printing every number the
server returned (losses, grad norms, forward and compute_logprobs log-probs, greedy samples) as
one JSON line: run against servers on different engines, the numbers must agree. argv: base URL,
model name, a LoRA adapter directory to start from."""
import json
import sys

import tinker
from tinker import types

BASE_URL, MODEL, ADAPTER = sys.argv[1], sys.argv[2], sys.argv[3]
service = tinker.ServiceClient(base_url=BASE_URL, api_key="tml-local")
# Both engines start from the same LoRA adapter (a peft directory; engines initialise A differently).
tc = service.create_training_client_from_state(ADAPTER).result()
seqs = [[5, 6, 7, 8, 2], [9, 10, 11, 2], [12, 13, 14, 15, 16, 2]]
sft = [types.Datum(model_input=types.ModelInput.from_ints(s[:-1]), loss_fn_inputs={"target_tokens": s[1:], "weights": [0.0] + [1.0] * (len(s) - 2)}) for s in seqs]
rl = [types.Datum(model_input=types.ModelInput.from_ints(s[:-1]), loss_fn_inputs={"target_tokens": s[1:], "logprobs": [-2.0] * (len(s) - 1), "advantages": [0.0] + [0.5 if i % 2 else -0.5 for i in range(len(s) - 2)]}) for s in seqs]
out = {"loss": [], "grad_norm": []}
for step in range(3):
    for data, fn in ((sft, "cross_entropy"), (rl, "ppo")):
        out["loss"].append(tc.forward_backward(data, fn).result().metrics["loss:sum"])
        out["grad_norm"].append(tc.optim_step(types.AdamParams(learning_rate=1e-2)).result().metrics["grad_norm"])
out["forward"] = [float(x) for x in tc.forward(sft[:1], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy()]
sampler = tc.save_weights_and_get_sampling_client().result()
out["compute"] = sampler.compute_logprobs(types.ModelInput.from_ints(seqs[0])).result()[1:]
out["greedy"] = sampler.sample(types.ModelInput.from_ints([5, 6]), 1, types.SamplingParams(max_tokens=4, temperature=0.0, stop=[])).result().sequences[0].tokens
print(json.dumps(out, default=float), flush=True)
