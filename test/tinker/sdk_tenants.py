"""Several training and sampling clients on one base model with the tinker SDK (multi-tenant LoRA),
printing one JSON line: A and B (same seed) train interleaved on different data, C with B's seed
trains alone on B's data; a sampling client on B's saved adapter and one on the base model (the
KL reference). Run against `rlvr tinker --engine torch` by test/tinker/engines.test.ts.
argv: base URL, model name."""
import json
import sys

import tinker
from tinker import types

BASE_URL, MODEL = sys.argv[1], sys.argv[2]
service = tinker.ServiceClient(base_url=BASE_URL, api_key="tml-local")
seqs = [[5, 6, 7, 8, 2], [9, 10, 11, 2], [12, 13, 14, 15, 16, 2]]
seqs2 = [[6, 5, 9, 2], [13, 12, 11, 10, 2]]


def sft(ss):
    return [types.Datum(model_input=types.ModelInput.from_ints(s[:-1]), loss_fn_inputs={"target_tokens": s[1:], "weights": [0.0] + [1.0] * (len(s) - 2)}) for s in ss]


data, data2 = sft(seqs), sft(seqs2)
adam = types.AdamParams(learning_rate=1e-2)
a_c = service.create_lora_training_client(base_model=MODEL, rank=4, seed=7).result()
b_c = service.create_lora_training_client(base_model=MODEL, rank=4, seed=7).result()
lp_of = lambda client: client.forward(data2[:1], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy().tolist()
b_before = lp_of(b_c)
for _ in range(3):
    a_c.forward_backward(data, "cross_entropy").result()
    a_c.optim_step(adam).result()
b_after_a = lp_of(b_c)
# interleaved: requests of A and B in flight together
for _ in range(3):
    futures = [a_c.forward_backward(data, "cross_entropy"), b_c.forward_backward(data2, "cross_entropy"), a_c.optim_step(adam), b_c.optim_step(adam)]
    for f in futures:
        f.result()
c_c = service.create_lora_training_client(base_model=MODEL, rank=4, seed=7).result()
for _ in range(3):
    c_c.forward_backward(data2, "cross_entropy").result()
    c_c.optim_step(adam).result()
b_sampler = b_c.save_weights_and_get_sampling_client().result()
ref = service.create_sampling_client(base_model=MODEL)
fresh = service.create_lora_training_client(base_model=MODEL, rank=4).result()
toks = seqs2[0]
print(json.dumps({
    "b_before": b_before, "b_after_a": b_after_a, "b": lp_of(b_c), "c": lp_of(c_c), "a": lp_of(a_c),
    "b_sampler": b_sampler.compute_logprobs(types.ModelInput.from_ints(toks)).result()[1:],
    "base": ref.compute_logprobs(types.ModelInput.from_ints(toks)).result()[1:], "fresh": lp_of(fresh),
}, default=float), flush=True)
