"""Per-token log-probs and entropies of a causal LM, in the engine contract's layout.

Two savings over `model(ids).logits` followed by a log-softmax, both exact up to float rounding:

- **Chunked head**: the output projection, log-sum-exp and entropy run over at most
  `chunk_tokens` positions at a time, each chunk under activation checkpointing when a graph is
  kept and the logits would be large (over CHECKPOINT_LOGITS elements in all), so the
  [tokens x vocab] logits never exist whole (for a 49k vocabulary they are 0.2 MB a token, and a
  softmax keeps several copies for backward); below that the head's forward is not run twice.
  Liger-Kernel's fused linear cross-entropy and TRL's `selective_log_softmax` make the same observation.
- **Shared prompts**: a GRPO batch holds n samples of each prompt in consecutive rows. The
  positions a run of rows has in common are run once for the run (one KV cache, then selected
  per row); each row runs only its own positions against that cache. Autograd sums the rows'
  cotangents into the shared positions, so gradients equal the unshared pass's. This is the torch
  engine's counterpart of the embedded engine's shared-prefix pass (src/engines/embedded/prefix.ts).

Both need the model split into decoder and head, so they apply to architectures whose logits are
exactly `lm_head(final hidden state)` (SIMPLE_HEAD_TYPES); other models take the plain path.

Layout (the contract): lp[b, t] = log p(ids[b, t] | ids[b, :t]) for 1 <= t < lengths[b], and 0 at
t = 0 and on padding; the same for the entropy H[b, t] of the distribution that predicts token t.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, List, Optional, Tuple

import numpy as np
import torch
import torch.utils.checkpoint as ckpt

# Model types whose causal-LM logits are lm_head(decoder(ids).last_hidden_state), with no
# soft-capping or logit scale (gemma2/3, cohere and granite scale or cap theirs).
SIMPLE_HEAD_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3"})

# Logit elements (positions x vocabulary) above which head chunks are checkpointed when a graph is
# kept: 2^27 floats = 512 MiB a copy (e.g. ~2,700 positions of a 49k vocabulary).
CHECKPOINT_LOGITS = 1 << 27

# Fewest positions a shared prompt must save (fraction of the full pass) to be worth a second call.
MIN_SAVING = 0.2


def split_model(model: Any) -> Optional[Tuple[Any, Any]]:
    """(decoder, head) of a plain causal LM (peft-wrapped or not), or None when its logits are not
    exactly head(decoder(ids).last_hidden_state)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if getattr(base.config, "model_type", None) not in SIMPLE_HEAD_TYPES:
        return None
    if getattr(base.config, "final_logit_softcapping", None) or getattr(base.config, "logit_scale", None):
        return None
    return base.get_decoder(), base.get_output_embeddings()


def _head_chunk(head: Any, h: torch.Tensor, targets: torch.Tensor, entropy: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """h [N, D], targets [N] -> (lp [N], H [N]; H is zeros when entropy is False)."""
    z = head(h).float()
    lse = torch.logsumexp(z, dim=-1)
    lp = z.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - lse
    if not entropy:
        return lp, torch.zeros_like(lp)
    p = torch.softmax(z, dim=-1)
    return lp, lse - (p * z).sum(-1)


def head_scores(head: Any, h: torch.Tensor, targets: torch.Tensor, entropy: bool, chunk_tokens: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """lp, H [*, S] of targets [*, S] predicted from hidden states h [*, S, D], `chunk_tokens`
    positions at a time (checkpointed when a graph is kept and the logits exceed
    CHECKPOINT_LOGITS elements: then only h is saved for backward)."""
    lead = targets.shape
    hf = h.reshape(-1, h.shape[-1])
    tf = targets.reshape(-1)
    n = tf.shape[0]
    vocab = int(head.weight.shape[0]) if hasattr(head, "weight") else 1 << 20
    checkpointed = torch.is_grad_enabled() and hf.requires_grad and n * vocab > CHECKPOINT_LOGITS
    lps: List[torch.Tensor] = []
    ents: List[torch.Tensor] = []
    for i in range(0, n, max(1, chunk_tokens)):
        args = (head, hf[i : i + chunk_tokens], tf[i : i + chunk_tokens], entropy)
        lp, ent = ckpt.checkpoint(_head_chunk, *args, use_reentrant=False) if checkpointed else _head_chunk(*args)
        lps.append(lp)
        ents.append(ent)
    if not lps:
        z = hf.new_zeros(lead, dtype=torch.float32)
        return z, z
    return torch.cat(lps).reshape(lead), torch.cat(ents).reshape(lead)


def plan_shared(ids: np.ndarray, lengths: np.ndarray) -> Optional[Tuple[np.ndarray, int]]:
    """The cheapest split of consecutive rows into runs sharing their first P tokens, as
    (run index of each row [B], P), or None when it saves under MIN_SAVING of the positions.
    Cost of a plan: runs x P + rows x (T - P)."""
    B, T = ids.shape
    if B < 2 or T < 3:
        return None
    lcp = np.zeros(B - 1, dtype=np.int64)
    for b in range(B - 1):
        n = int(min(lengths[b], lengths[b + 1]))
        diff = np.nonzero(ids[b, :n] != ids[b + 1, :n])[0]
        lcp[b] = int(diff[0]) if diff.size else n
    best: Optional[Tuple[np.ndarray, int]] = None
    best_cost = B * T * (1 - MIN_SAVING)
    for P in sorted({int(x) for x in lcp if x >= 2}):
        P = min(P, T - 1)
        breaks = np.concatenate([[0], (lcp < P).astype(np.int64)])
        runs = np.cumsum(breaks)
        cost = (int(runs[-1]) + 1) * P + B * (T - P)
        if cost < best_cost:
            best, best_cost = (runs, P), cost
    return best


@functools.lru_cache(maxsize=None)
def cache_arg(decoder_type: type) -> str:
    """The decoder's KV-cache argument: `cache` (transformers >= 5.24) or `past_key_values`."""
    return "cache" if "cache" in inspect.signature(decoder_type.forward).parameters else "past_key_values"


def _shared_hidden(decoder: Any, ids: torch.Tensor, runs: torch.Tensor, firsts: torch.Tensor, P: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Hidden states (h_prefix [U, P, D] of each run's first row, h_rest [B, T-P, D])."""
    pre = decoder(input_ids=ids[firsts, :P], use_cache=True)
    cache = pre.cache if hasattr(pre, "cache") else pre.past_key_values
    cache.batch_select_indices(runs)
    rest = decoder(input_ids=ids[:, P:], use_cache=True, **{cache_arg(type(decoder)): cache})
    return pre.last_hidden_state, rest.last_hidden_state


def split_scores(
    decoder: Any, head: Any, ids: torch.Tensor, lengths: torch.Tensor, entropy: bool, chunk_tokens: int, shared: bool, score_from: int = 0
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """lp, H [B, T] in the contract layout, through the decoder and a chunked head (shared prompts
    run once per run of rows when `shared` and it saves enough). The head skips positions before
    `score_from` (their lp and H are 0): the caller's loss reads none of them (prompt tokens)."""
    B, T = ids.shape
    s = min(max(1, score_from), T)
    plan = plan_shared(ids.cpu().numpy(), lengths.cpu().numpy()) if shared else None
    if plan is None:
        h = decoder(input_ids=ids, use_cache=False).last_hidden_state
        lp, ent = head_scores(head, h[:, s - 1 : -1], ids[:, s:], entropy, chunk_tokens)
        if s > 1:
            skipped = lp.new_zeros(B, s - 1)
            lp, ent = torch.cat([skipped, lp], dim=1), torch.cat([skipped, ent], dim=1)
    else:
        runs, P = plan
        runs_t = torch.from_numpy(runs).to(ids.device)
        firsts = torch.from_numpy(np.concatenate([[0], np.nonzero(np.diff(runs))[0] + 1])).to(ids.device)
        h_pre, h_rest = _shared_hidden(decoder, ids, runs_t, firsts, P)
        # Positions 0..P-2 predict tokens 1..P-1, the run's own; position P-1 predicts each row's token P.
        if s >= P:
            lp_pre = ent_pre = h_pre.new_zeros(len(firsts), P - 1, dtype=torch.float32)
        else:
            lp_pre, ent_pre = head_scores(head, h_pre[:, : P - 1], ids[firsts, 1:P], entropy, chunk_tokens)
        h_rows = torch.cat([h_pre[runs_t, P - 1 : P], h_rest[:, :-1]], dim=1)  # [B, T-P, D]
        lp_row, ent_row = head_scores(head, h_rows, ids[:, P:], entropy, chunk_tokens)
        lp = torch.cat([lp_pre[runs_t], lp_row], dim=1)
        ent = torch.cat([ent_pre[runs_t], ent_row], dim=1)
    valid = torch.arange(1, T, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)
    zero = torch.zeros(B, 1, device=ids.device, dtype=torch.float32)
    lp = torch.cat([zero, torch.where(valid, lp, 0.0)], dim=1)
    return lp, (torch.cat([zero, torch.where(valid, ent, 0.0)], dim=1) if entropy else None)
