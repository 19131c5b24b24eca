"""Parity of python/rlvr_worker/scoring.py (chunked head, shared prompts) with the plain pass
`model(ids).logits` -> log-softmax, on tiny random Llama and Qwen2 models: log-probs, entropies
and the parameter gradients of a random linear loss of both; with `score_from` (the head skips the
prompt positions a loss does not read) the same on the positions from there on, 0 before, and the
gradients of a loss that reads only those positions. Prints one JSON line per case."""

import json
import sys

import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

import rlvr_worker.scoring as scoring
from rlvr_worker.scoring import plan_shared, split_model, split_scores


def plain(m, ids, lens):
    B, T = ids.shape
    z = m(input_ids=ids, use_cache=False).logits[:, :-1].float()
    lse = torch.logsumexp(z, -1)
    lp = z.gather(-1, ids[:, 1:, None])[..., 0] - lse
    H = lse - (z.softmax(-1) * z).sum(-1)
    valid = torch.arange(1, T)[None] < lens[:, None]
    zero = torch.zeros(B, 1)
    return torch.cat([zero, torch.where(valid, lp, 0.0)], 1), torch.cat([zero, torch.where(valid, H, 0.0)], 1)


def run(m, fn, w, we):
    m.zero_grad()
    lp, H = fn()
    ((lp * w).sum() + (H * we).sum()).backward()
    return lp.detach(), H.detach(), torch.cat([p.grad.flatten() for p in m.parameters()])


torch.manual_seed(0)
for name, cls, cfgc in [("llama", LlamaForCausalLM, LlamaConfig), ("qwen2", Qwen2ForCausalLM, Qwen2Config)]:
    cfg = cfgc(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    m = cls(cfg).float()
    B, T = 9, 20
    ids = torch.randint(0, 97, (B, T))
    # Two groups of 4 sharing 9 prompt tokens (one row shorter than the prompt + 1), and a loner.
    for g in range(2):
        ids[g * 4 : (g + 1) * 4, :9] = ids[g * 4, :9]
    lens = torch.tensor([20, 15, 10, 18, 9, 20, 11, 14, 17])
    plan = plan_shared(ids.numpy(), lens.numpy())
    decoder, head = split_model(m)
    w, we = torch.randn(B, T), torch.randn(B, T)
    ref = run(m, lambda: plain(m, ids, lens), w, we)
    # "chunked" and "shared" checkpoint every head chunk (as large logits are); the others do not.
    for case, shared, chunk, ckpt_above in [("chunked", False, 7, 0), ("shared", True, 7, 0), ("shared-1-chunk", True, 4096, scoring.CHECKPOINT_LOGITS)]:
        scoring.CHECKPOINT_LOGITS, default = ckpt_above, scoring.CHECKPOINT_LOGITS
        got = run(m, lambda: split_scores(decoder, head, ids, lens, True, chunk, shared), w, we)
        scoring.CHECKPOINT_LOGITS = default
        diff = [float((a - b).abs().max()) for a, b in zip(got, ref)]
        scale = float(ref[2].abs().max())
        print(json.dumps({"model": name, "case": case, "lp": diff[0], "entropy": diff[1], "grad": diff[2] / scale, "runs": plan[0].tolist() if plan else None, "shared": plan[1] if plan else 0}))
    # A loss reading positions >= 9 only (the shared prompt's length): score_from 9.
    wf, wef = w.clone(), we.clone()
    wf[:, :9] = 0
    wef[:, :9] = 0
    ref_f = run(m, lambda: plain(m, ids, lens), wf, wef)
    for case, shared in [("chunked-from", False), ("shared-from", True)]:
        got = run(m, lambda: split_scores(decoder, head, ids, lens, True, 7, shared, 9), wf, wef)
        before = float(max(got[0][:, :9].abs().max(), got[1][:, :9].abs().max()))
        diff = [float((a[:, 9:] - b[:, 9:]).abs().max()) for a, b in zip(got[:2], ref_f[:2])] + [float((got[2] - ref_f[2]).abs().max())]
        scale = float(ref_f[2].abs().max())
        print(json.dumps({"model": name, "case": case, "lp": max(diff[0], before), "entropy": diff[1], "grad": diff[2] / scale, "runs": plan[0].tolist() if plan else None, "shared": plan[1] if plan else 0}))
sys.stdout.flush()
