"""Parity of the torch worker's sampling shortcuts (python/rlvr_worker/sampling.py) with plain
generate(), on a tiny random Llama: (1) the shared-prompt prefill (each prompt's KV cache built once
and repeated for its n samples) against every sample prefilling its own copy — same tokens for a
seed, log-probs within 1e-5, greedy identical — with prompts of different lengths (left padding);
(2) under LoRA, the adapter merged into the base while sampling against the unmerged peft model,
and the base weights restored bit for bit afterwards. Prints one JSON line per case."""

import contextlib
import json
import sys

import numpy as np
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

from rlvr_worker.options import Options
from rlvr_worker.sampling import Sampling


class Sampler(Sampling):
    def __init__(self, model, shared, lora=False):
        self.model, self.device, self.dtype, self.lora = model, torch.device("cpu"), torch.float32, lora
        self.opts = Options()
        self.opts.shared_prompts, self.opts.kv_cache = shared, "dynamic"

    def _autocast(self):
        return contextlib.nullcontext()

    def info_vocab(self):
        return 97


def compare(label, a, b):
    same = int((a["tokens"] == b["tokens"]).all(axis=1).sum())
    lp = float(np.abs(a["logprobs"] - b["logprobs"]).max())
    print(json.dumps({"case": label, "rows": len(a["tokens"]), "same": same, "lp": lp, "lengths": bool((a["lengths"] == b["lengths"]).all())}))


torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
m = LlamaForCausalLM(cfg).float().eval()
g = np.random.default_rng(0)
prompts = [g.integers(3, 97, size=L).astype(np.int32) for L in (7, 12, 3, 9)]
h = {"n": 3, "maxNewTokens": 10, "temperature": 1.0, "stopTokens": [2], "seed": 5}
hg = dict(h, temperature=0.0)
compare("shared-sampled", Sampler(m, False).sample(prompts, h), Sampler(m, True).sample(prompts, h))
compare("shared-greedy", Sampler(m, False).sample(prompts, hg), Sampler(m, True).sample(prompts, hg))
pm = get_peft_model(m, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False)).eval()
before = {k: v.detach().clone() for k, v in pm.named_parameters()}
compare("lora-merged-sampled", Sampler(pm, True).sample(prompts, h), Sampler(pm, True, lora=True).sample(prompts, h))
compare("lora-merged-greedy", Sampler(pm, False).sample(prompts, hg), Sampler(pm, True, lora=True).sample(prompts, hg))
restored = all(torch.equal(before[k], v) for k, v in pm.named_parameters())
print(json.dumps({"case": "lora-restored", "restored": restored, "merged": bool(getattr(pm.base_model, "merged", False))}))
sys.stdout.flush()
