"""Loops written like tinker-cookbook's sl_loop.py / rl_loop.py, with local data and a tiny local
model, run with the official tinker SDK against `rlvr tinker` (base_url from argv[1]). Prints one
JSON line per check; test/tinker/sdk.test.ts asserts on them."""
import json
import math
import sys

import numpy as np
import tinker
from tinker import types

BASE_URL, MODEL, MODEL_DIR = sys.argv[1], sys.argv[2], sys.argv[3]
ALPHABET = "0123456789+= abc"
EOS = 2


def enc(s):
    return [4 + ALPHABET.index(c) for c in s]


def emit(**kw):
    print(json.dumps(kw, default=float), flush=True)


def sft_datum(prompt, completion):
    # As the cookbook's datum_from_tokens_weights: inputs tokens[:-1], targets tokens[1:].
    tokens = enc(prompt) + enc(completion) + [EOS]
    weights = [0.0] * len(enc(prompt)) + [1.0] * (len(completion) + 1)
    return types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


service = tinker.ServiceClient(base_url=BASE_URL, api_key="tml-local")
emit(check="capabilities", models=[m.model_name for m in service.get_server_capabilities().supported_models])

# ---------------------------------------------------------------- supervised loop (sl_loop.py)
tc = service.create_lora_training_client(base_model=MODEL, rank=8).result()
# a local Hugging Face directory works as base_model too; get_tokenizer loads the model's tokenizer
by_dir = service.create_lora_training_client(base_model=MODEL_DIR, rank=8).result()
tok = tc.get_tokenizer()
# without special tokens: the text's ids; by default the tokenizer.json post-processor adds <bos> (id 1), as rlvr does
emit(check="tokenizer", ids=tok.encode("1+2=a", add_special_tokens=False), want=enc("1+2=a"), with_bos=tok.encode("1+2=a"), by_dir=by_dir.get_info().model_data.model_name)
data = [sft_datum(f"{a}+{b}=", str((a + b) % 10)) for a in range(3) for b in range(3)]
adam = types.AdamParams(learning_rate=5e-3, beta1=0.9, beta2=0.95, eps=1e-8)
losses = []
for step in range(12):
    fwd_bwd = tc.forward_backward(data, loss_fn="cross_entropy")
    optim = tc.optim_step(adam)
    out = fwd_bwd.result()
    optim.result()
    n_tokens = sum(sum(d.loss_fn_inputs["weights"].to_numpy()) for d in data)
    losses.append(float(out.metrics["loss:sum"] / n_tokens))
emit(check="sl", losses=losses)

# forward's logprobs agree with compute_logprobs on saved weights, and with the loss
fwd = tc.forward(data[:1], "cross_entropy").result()
lp_fwd = fwd.loss_fn_outputs[0]["logprobs"].to_numpy().tolist()
w = data[0].loss_fn_inputs["weights"].to_numpy()
sampler = tc.save_weights_and_get_sampling_client().result()
toks = data[0].model_input.to_ints() + [int(data[0].loss_fn_inputs["target_tokens"].to_numpy()[-1])]
lp_sampler = sampler.compute_logprobs(types.ModelInput.from_ints(toks)).result()
emit(check="logprobs", forward=lp_fwd, compute=lp_sampler[1:], loss=fwd.metrics["loss:sum"], manual=float(-(np.array(lp_fwd) * w).sum()))

# save_state / load_state round trip (with and without optimizer)
state = tc.save_state("after-sl").result().path
before = tc.forward(data, "cross_entropy").result().metrics["loss:sum"]
tc.forward_backward(data, "cross_entropy").result()
tc.optim_step(types.AdamParams(learning_rate=5e-2)).result()
moved = tc.forward(data, "cross_entropy").result().metrics["loss:sum"]
tc.load_state(state).result()
restored = tc.forward(data, "cross_entropy").result().metrics["loss:sum"]
tc.load_state_with_optimizer(state).result()
restored_opt = tc.forward(data, "cross_entropy").result().metrics["loss:sum"]
tc2 = service.create_training_client_from_state(state).result()
other = tc2.forward(data, "cross_entropy").result().metrics["loss:sum"]
emit(check="state", path=state, before=before, moved=moved, restored=restored, restored_opt=restored_opt, other_client=other)
# gradients accumulate until optim_step: two half batches then one step == the full batch then one step
step = types.AdamParams(learning_rate=1e-2)
halves = service.create_training_client_from_state_with_optimizer(state).result()
halves.forward_backward(data[:4], "cross_entropy").result()
halves.forward_backward(data[4:], "cross_entropy").result()
halves.optim_step(step).result()
full = service.create_training_client_from_state_with_optimizer(state).result()
full.forward_backward(data, "cross_entropy").result()
full.optim_step(step).result()
emit(check="accumulate", halves=halves.forward(data, "cross_entropy").result().metrics["loss:sum"], full=full.forward(data, "cross_entropy").result().metrics["loss:sum"], before=before)
# forward_backward_custom: the SDK's forward + a torch loss's gradient sent back as cross_entropy
# weights. A custom loss of 2·Σ(−w·lp) must update exactly as cross_entropy with weights 2w.
import torch  # noqa: E402  (the SDK needs torch for custom losses)


def double_ce(batch, logprobs_list):
    total = sum((-lp * torch.tensor(d.loss_fn_inputs["weights"].to_numpy()) * 2).sum() for d, lp in zip(batch, logprobs_list))
    return total, {"custom:calls": 1.0}


custom = service.create_training_client_from_state_with_optimizer(state).result()
cres = custom.forward_backward_custom(data, double_ce).result()
custom.optim_step(step).result()
doubled = [types.Datum(model_input=d.model_input, loss_fn_inputs={"target_tokens": d.loss_fn_inputs["target_tokens"], "weights": d.loss_fn_inputs["weights"].to_numpy() * 2}) for d in data]
plain = service.create_training_client_from_state_with_optimizer(state).result()
pres = plain.forward_backward(doubled, "cross_entropy").result()
plain.optim_step(step).result()
emit(check="custom", custom_loss=cres.metrics["loss:sum"], ce_loss=pres.metrics["loss:sum"], after_custom=custom.forward(data, "cross_entropy").result().metrics["loss:sum"], after_ce=plain.forward(data, "cross_entropy").result().metrics["loss:sum"])
named = tc.save_weights_for_sampler("named").result().path
s2 = service.create_sampling_client(model_path=named)
emit(check="sampler_path", path=named, n=len(s2.sample(types.ModelInput.from_ints(enc("1+1=")), 2, types.SamplingParams(max_tokens=3, seed=5)).result().sequences))
ext = tc.save_weights_external("export").result().path
rest = tinker.RestClient(base_url=BASE_URL, api_key="tml-local")
urls = rest.get_external_weights_urls(ext).result().urls
import urllib.request  # noqa: E402
sizes = {f: len(urllib.request.urlopen(u).read()) for f, u in urls.items()}
emit(check="external", path=ext, files=sorted(urls), sizes=sizes)
# the checkpoint is a peft LoRA adapter: the SDK's defaults train attention, MLP and the head, alpha 32
adapter_cfg = json.loads(urllib.request.urlopen(urls["adapter_config.json"]).read())
attn_only = service.create_lora_training_client(base_model=MODEL, rank=2, train_mlp=False, train_unembed=False).result()
attn_info = rest.get_weights_info_by_tinker_path(attn_only.save_state("attn").result().path).result()
emit(check="adapter", r=adapter_cfg["r"], alpha=adapter_cfg["lora_alpha"], targets=sorted(adapter_cfg["target_modules"]),
     attn_only=[attn_info.is_lora, attn_info.lora_rank, attn_info.train_attn, attn_info.train_mlp, attn_info.train_unembed])
emit(check="checkpoints", ids=[c.checkpoint_id for c in rest.list_checkpoints(tc.model_id).result().checkpoints])
doomed = tc.save_state("to-delete").result().path
rest.delete_checkpoint_from_tinker_path(doomed).result()
emit(check="deleted", ids=[c.checkpoint_id for c in rest.list_checkpoints(tc.model_id).result().checkpoints])

# two training clients on one base model at once: training one leaves the other as it was
one = service.create_lora_training_client(base_model=MODEL, rank=4).result()
two = service.create_lora_training_client(base_model=MODEL, rank=4).result()
two_before = two.forward(data, "cross_entropy").result().metrics["loss:sum"]
for _ in range(3):
    one.forward_backward(data, "cross_entropy").result()
    one.optim_step(types.AdamParams(learning_rate=1e-2)).result()
emit(check="two_clients", one=one.forward(data, "cross_entropy").result().metrics["loss:sum"], two_before=two_before, two_after=two.forward(data, "cross_entropy").result().metrics["loss:sum"])
# at once, interleaved: A and B (same seed) train on different data step by step; B must end as a
# client C with B's seed trained alone on B's data (its adapter and AdamW state kept apart from A's)
data2 = [sft_datum(f"{a}+{b}=", "c") for a in range(3) for b in range(3)]
a_c = service.create_lora_training_client(base_model=MODEL, rank=4, seed=7).result()
b_c = service.create_lora_training_client(base_model=MODEL, rank=4, seed=7).result()
for _ in range(3):
    fa = a_c.forward_backward(data, "cross_entropy")
    fb2 = b_c.forward_backward(data2, "cross_entropy")
    oa = a_c.optim_step(types.AdamParams(learning_rate=1e-2))
    ob = b_c.optim_step(types.AdamParams(learning_rate=1e-2))
    for f in (fa, fb2, oa, ob):
        f.result()
c_c = service.create_lora_training_client(base_model=MODEL, rank=4, seed=7).result()
for _ in range(3):
    c_c.forward_backward(data2, "cross_entropy").result()
    c_c.optim_step(types.AdamParams(learning_rate=1e-2)).result()
lp_of = lambda client: client.forward(data2, "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy().tolist()
emit(check="interleaved", b=lp_of(b_c), c=lp_of(c_c), a=lp_of(a_c))
# the base as a KL/reference model: a sampling client on base_model; its compute_logprobs equal a
# fresh LoRA client's forward (B = 0: exactly the base) and differ from a trained client's
ref = service.create_sampling_client(base_model=MODEL)
fresh = service.create_lora_training_client(base_model=MODEL, rank=4).result()
toks2 = data2[0].model_input.to_ints() + [int(data2[0].loss_fn_inputs["target_tokens"].to_numpy()[-1])]
# top-k prompt log-probs: per position the k most likely tokens with their log-probs (position 0: None)
tk = ref.sample(types.ModelInput.from_ints(toks2), 1, types.SamplingParams(max_tokens=1, seed=3), include_prompt_logprobs=True, topk_prompt_logprobs=3).result()
emit(check="topk", topk=[None if row is None else [[int(t), float(l)] for t, l in row] for row in tk.topk_prompt_logprobs], prompt=[None if v is None else float(v) for v in tk.prompt_logprobs], tokens=toks2)
emit(check="reference", base=ref.compute_logprobs(types.ModelInput.from_ints(toks2)).result()[1:], fresh=lp_of(fresh), trained=lp_of(c_c))

# ---------------------------------------------------------------- RL loop (rl_loop.py)
# Reward: the first sampled character is "a". GRPO-style centring within each group.
rl = service.create_lora_training_client(base_model=MODEL, rank=8).result()
prompts = [enc(p) for p in ["1+2=", "3+4=", "5+6=", "7+8="]]
TARGET = enc("a")[0]
params = types.SamplingParams(max_tokens=3, temperature=1.0)
rewards = []
for step in range(12):
    sampling_client = rl.save_weights_and_get_sampling_client().result()
    # Seeded per request: unseeded requests take the server's counter in arrival order, which the
    # SDK's concurrent futures do not fix, so the run (and whether it learns in 10 steps) varied.
    futures = [sampling_client.sample(types.ModelInput.from_ints(p), num_samples=16, sampling_params=params.model_copy(update={"seed": 100 * step + i})) for i, p in enumerate(prompts)]
    datums, batch_rewards = [], []
    for prompt, fut in zip(prompts, futures):
        res = fut.result()
        rs = [1.0 if s.tokens and s.tokens[0] == TARGET else 0.0 for s in res.sequences]
        batch_rewards += rs
        mean = sum(rs) / len(rs)
        for s, r in zip(res.sequences, rs):
            adv = r - mean
            if adv == 0.0:
                continue
            ob_len = len(prompt) - 1
            model_input = types.ModelInput.from_ints(prompt + s.tokens[:-1])
            datums.append(types.Datum(model_input=model_input, loss_fn_inputs={
                "target_tokens": [0] * ob_len + s.tokens,
                "logprobs": [0.0] * ob_len + s.logprobs,
                "advantages": [0.0] * ob_len + [adv] * (model_input.length - ob_len),
            }))
    rewards.append(sum(batch_rewards) / len(batch_rewards))
    if datums:
        fb = rl.forward_backward(datums, loss_fn="importance_sampling")
        op = rl.optim_step(types.AdamParams(learning_rate=2e-2))
        fb.result()
        op.result()
emit(check="rl", rewards=rewards)

# every built-in loss through forward_backward (loss = the formula on forward's logprobs)
d = types.Datum(model_input=types.ModelInput.from_ints(enc("1+2=3")), loss_fn_inputs={
    "target_tokens": enc("+2=3") + [EOS], "logprobs": [-2.0, -2.5, -1.0, -3.0, -2.2],
    "advantages": [0.5, -1.0, 2.0, 0.0, 1.5], "weights": [1.0, 1.0, 0.0, 1.0, 2.0]})
lp = np.array(rl.forward([types.Datum(model_input=d.model_input, loss_fn_inputs={"target_tokens": d.loss_fn_inputs["target_tokens"], "weights": d.loss_fn_inputs["weights"]})], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy(), dtype=np.float64)
q = d.loss_fn_inputs["logprobs"].to_numpy().astype(np.float64)
A = d.loss_fn_inputs["advantages"].to_numpy().astype(np.float64)
r = np.exp(lp - q)
expect = {
    "importance_sampling": -(r * A).sum(),
    "ppo": -np.minimum(r * A, np.clip(r, 0.8, 1.2) * A).sum(),
    "cispo": -(np.clip(r, 0.8, 1.2) * lp * A).sum(),
    "dro": -(lp * A - 0.5 * 0.1 * (lp - q) ** 2).sum(),
}
got = {}
for name in expect:
    only = {k: v for k, v in d.loss_fn_inputs.items() if k != "weights"}
    cfg = {"beta": 0.1} if name == "dro" else None
    got[name] = rl.forward_backward([types.Datum(model_input=d.model_input, loss_fn_inputs=only)], name, loss_fn_config=cfg).result().metrics["loss:sum"]
emit(check="losses", got=got, expect={k: float(v) for k, v in expect.items()})
try:
    rl.forward_backward([d], "gspo").result()
    emit(check="unsupported", raised=False)
except Exception as e:  # noqa: BLE001
    emit(check="unsupported", raised=True, message=str(e)[:200])
# a target that is not the next input token: NaN where unweighted, refused where a loss reads it
odd = types.Datum(model_input=types.ModelInput.from_ints(enc("1+2")), loss_fn_inputs={"target_tokens": enc("9") + enc("2="), "weights": [0.0, 1.0, 1.0]})
odd_lp = [None if math.isnan(v) else v for v in rl.forward([odd], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy().tolist()]
bad = types.Datum(model_input=odd.model_input, loss_fn_inputs={"target_tokens": odd.loss_fn_inputs["target_tokens"], "weights": [1.0, 1.0, 1.0]})
try:
    rl.forward([bad], "cross_entropy").result()
    emit(check="unscorable", logprobs=odd_lp, raised=False)
except Exception as e:  # noqa: BLE001
    emit(check="unscorable", logprobs=odd_lp, raised=True, message=str(e)[:300])
# a Hugging Face directory written by transformers alone (tied Qwen2, no tokenizer files): a LoRA
# client with the SDK's defaults (the head included) trains, saves, samples and scores on token ids
import os  # noqa: E402
import tempfile  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402

torch.manual_seed(0)
qdir = os.path.join(tempfile.mkdtemp(prefix="rlvr-tinker-qwen2-"), "qwen2")
Qwen2ForCausalLM(Qwen2Config(vocab_size=48, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=True)).save_pretrained(qdir)
qc = service.create_lora_training_client(base_model=qdir, rank=4).result()
qtoks = [3, 9, 12, 7, 30, 5, 2]
qd = types.Datum(model_input=types.ModelInput.from_ints(qtoks[:-1]), loss_fn_inputs={"target_tokens": qtoks[1:], "logprobs": [-3.0] * 6, "advantages": [1.0, -0.5, 0.3, 0.0, 2.0, -1.0]})
q_losses = []
for _ in range(3):
    q_losses.append(qc.forward_backward([qd], "ppo").result().metrics["loss:sum"])
    qc.optim_step(types.AdamParams(learning_rate=1e-2)).result()
qs = qc.save_weights_and_get_sampling_client().result()
q_fwd = qc.forward([qd], "ppo").result().loss_fn_outputs[0]["logprobs"].to_numpy().tolist()
emit(check="bare_qwen2", losses=q_losses, forward=q_fwd, compute=qs.compute_logprobs(types.ModelInput.from_ints(qtoks)).result()[1:],
     sample=qs.sample(types.ModelInput.from_ints(qtoks[:3]), 1, types.SamplingParams(max_tokens=3, stop=[2])).result().sequences[0].tokens)
emit(check="done")
