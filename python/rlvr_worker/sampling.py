"""Sampling with transformers' generate(): the Worker's `sample` (a mixin the Worker class takes) and
the one logits processor it runs, which applies temperature, top-k and top-p itself and records
each sampled token's log-prob.

Sampled log-probs are under softmax(logits / temperature) over the full vocabulary (after
temperature, before top-k/top-p truncation; temperature 1 for greedy decoding), as verl and vLLM
report and as the embedded engine does (src/core/engine.ts is authoritative).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np
import torch

from .options import Options
from .scoring import cache_arg


class Sampling:
    """Worker.sample: batched generate() on the worker's policy model. The Worker class (worker.py)
    provides the attributes below; the FSDP2 worker (distributed.py) overrides `_generate_kwargs`."""

    model: Any
    opts: Options
    device: torch.device
    dtype: torch.dtype
    _autocast: Callable[[], contextlib.AbstractContextManager[Any]]
    info_vocab: Callable[[], int]

    def _generate_kwargs(self) -> Dict[str, Any]:
        """Extra generate() arguments (the FSDP2 worker adds synced_gpus)."""
        return {}

    @torch.no_grad()
    def sample(self, prompts: List[np.ndarray], h: Dict[str, Any]) -> Dict[str, np.ndarray]:
        """Batched generate(); returns flat [R, maxNewTokens] tokens/logprobs, lengths [R], stop [R]."""
        from transformers import GenerationConfig, LogitsProcessorList

        n = int(h["n"])
        max_new = int(h["maxNewTokens"])
        temperature = float(h["temperature"])
        top_k = int(h.get("topK") or 0)
        top_p_raw = h.get("topP")
        top_p = 1.0 if top_p_raw is None else float(top_p_raw)
        stop = [int(s) for s in (h.get("stopTokens") or [])]
        R = len(prompts) * n
        tokens_out = np.zeros((R, max_new), dtype=np.int32)
        lp_out = np.zeros((R, max_new), dtype=np.float32)
        lengths = np.zeros((R,), dtype=np.int32)
        stopped = np.zeros((R,), dtype=np.int32)
        if R == 0 or max_new == 0:
            return {"tokens": tokens_out, "logprobs": lp_out, "lengths": lengths, "stop": stopped}
        max_pos = int(getattr(self.model.config, "max_position_embeddings", 0) or 0)
        longest = max(len(p) for p in prompts)
        if max_pos and longest + max_new > max_pos:
            raise ValueError(f"prompt ({longest} tokens) + maxNewTokens ({max_new}) exceeds the model's max_position_embeddings {max_pos}")
        if any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        V = self.info_vocab()
        pad = stop[0] if stop else 0
        P = longest
        # Rows are prompt-major (prompt i, sample j at i*n + j); expanded here rather than with
        # num_return_sequences, which generate() refuses for greedy decoding.
        ids = np.full((R, P), pad, dtype=np.int64)
        mask = np.zeros((R, P), dtype=np.int64)
        for i, p in enumerate(prompts):
            if p.min() < 0 or p.max() >= V:
                raise ValueError(f"prompt {i} has a token id outside the vocabulary [0, {V})")
            ids[i * n : (i + 1) * n, P - len(p) :] = p
            mask[i * n : (i + 1) * n, P - len(p) :] = 1
        kv = self.opts.kv_cache
        autocast = self.dtype != torch.float32
        if kv == "auto":
            # transformers' static cache takes one dtype, but under autocast the rotated keys come
            # out float32 and the values bfloat16, so autocast sampling uses the dynamic cache.
            kv = "static" if self.device.type == "cuda" and not autocast else "dynamic"
        if kv == "static" and autocast:
            raise ValueError("kvCache 'static' needs dtype float32 (under bfloat16 autocast keys and values differ in dtype); use kvCache 'auto' or 'dynamic'")
        greedy = temperature <= 0
        gc = GenerationConfig(
            do_sample=not greedy,
            max_new_tokens=max_new,
            min_new_tokens=0,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            min_p=None,
            typical_p=1.0,
            repetition_penalty=1.0,
            num_beams=1,
            num_return_sequences=1,
            eos_token_id=stop if stop else None,
            pad_token_id=pad,
            bos_token_id=None,
            cache_implementation=kv if kv == "static" else None,
        )
        proc = _RecordingWarper(1.0 if greedy else temperature, 0 if greedy else top_k, 1.0 if greedy else top_p)
        torch.manual_seed(int(h.get("seed", 0)))
        if self.device.type == "cuda":
            torch.cuda.manual_seed_all(int(h.get("seed", 0)))
        kw = self._generate_kwargs()  # non-empty only across ranks (FSDP2): no shortcuts there
        with self._autocast(), self._adapter_merged(not kw):
            if n > 1 and kv == "dynamic" and P > 1 and self.opts.shared_prompts and not kw:
                kw = self._shared_prefill(ids, mask, n)
            seqs = self.model.generate(
                input_ids=torch.from_numpy(ids).to(self.device),
                attention_mask=torch.from_numpy(mask).to(self.device),
                generation_config=gc,
                logits_processor=LogitsProcessorList([proc]),
                **kw,
            )
        gen = seqs[:, P:]
        lps = proc.finish(gen[:, -1]) if gen.shape[1] > 0 else torch.zeros(R, 0)
        gen_np = gen.cpu().numpy().astype(np.int32)
        lps_np = lps.float().cpu().numpy()
        S = gen_np.shape[1]
        stop_set = np.array(stop, dtype=np.int32)
        for r in range(R):
            row = gen_np[r]
            hits = np.nonzero(np.isin(row, stop_set))[0] if stop else np.array([], dtype=np.int64)
            L = int(hits[0]) + 1 if hits.size else S
            lengths[r] = L
            stopped[r] = 1 if hits.size else 0
            tokens_out[r, :L] = row[:L]
            lp_out[r, :L] = lps_np[r, :L]
        return {"tokens": tokens_out, "logprobs": lp_out, "lengths": lengths, "stop": stopped}

    @contextlib.contextmanager
    def _adapter_merged(self, allowed: bool) -> Iterator[None]:
        """Under LoRA (one process): the adapter folded into the base weights while generate() runs
        — one matmul per projection and token instead of three — and the base weights restored bit
        for bit afterwards (peft's unmerge alone would leave a rounding residue that accumulates
        over steps). Costs a copy of the adapted weights while sampling."""
        if not (allowed and getattr(self, "lora", False) and hasattr(self.model, "merge_adapter")):
            yield
            return
        from peft.tuners.lora import LoraLayer

        saved = [(w, w.detach().clone()) for w in (m.get_base_layer().weight for m in self.model.modules() if isinstance(m, LoraLayer))]
        self.model.merge_adapter()
        try:
            yield
        finally:
            self.model.unmerge_adapter()
            with torch.no_grad():
                for w, orig in saved:
                    w.copy_(orig)

    def _shared_prefill(self, ids: np.ndarray, mask: np.ndarray, n: int) -> Dict[str, Any]:
        """generate() arguments that start it from a KV cache of the first P-1 prompt tokens,
        computed once per prompt and repeated for its n samples (rows are prompt-major), instead of
        prefilling every sample's copy of the prompt. Positions as generate() derives them from the
        attention mask (left padding), so the cache is the one its own prefill would build."""
        u_ids = torch.from_numpy(ids[::n, :-1]).to(self.device)
        u_mask = torch.from_numpy(mask[::n, :-1]).to(self.device)
        pos = (u_mask.cumsum(-1) - 1).masked_fill(u_mask == 0, 0)
        out = self.model(input_ids=u_ids, attention_mask=u_mask, position_ids=pos, use_cache=True, logits_to_keep=1)
        cache = out.cache if getattr(out, "cache", None) is not None else out.past_key_values
        cache.batch_repeat_interleave(n)
        base = self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model
        return {cache_arg(type(base)): cache}


class _RecordingWarper:
    """The only logits processor given to generate(): records each sampled token's log-prob and
    applies temperature, top-k and top-p itself (generate runs with its own warpers off).

    At call s it receives the logits for step s and the ids so far, whose last column is the
    token drawn at step s-1; so it stores one step's log-probs and gathers them a step later.
    Top-k/top-p follow the embedded engine: candidates sorted by probability (ties to the lower
    id), top-k first, then the smallest prefix whose mass under the full distribution >= top-p.
    """

    def __init__(self, temperature: float, top_k: int, top_p: float) -> None:
        self.temperature = temperature
        self.top_k = top_k
        self.top_p = top_p
        self.prev: Optional[torch.Tensor] = None
        self.lps: List[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.prev is not None:
            self.lps.append(self.prev.gather(1, input_ids[:, -1:]).squeeze(1))
        z = scores.float() / self.temperature
        logp = torch.log_softmax(z, dim=-1)
        self.prev = logp
        V = z.shape[-1]
        if (self.top_k <= 0 or self.top_k >= V) and self.top_p >= 1.0:
            return z
        sp, idx = torch.sort(logp, dim=-1, descending=True, stable=True)
        keep = torch.ones_like(sp, dtype=torch.bool)
        if 0 < self.top_k < V:
            keep[:, self.top_k :] = False
        if self.top_p < 1.0:
            probs = sp.exp()
            before = torch.cumsum(probs, dim=-1) - probs
            keep &= before < self.top_p
        keep[:, 0] = True
        mask = torch.zeros_like(keep).scatter(1, idx, keep)
        return z.masked_fill(~mask, float("-inf"))

    def finish(self, last: torch.Tensor) -> torch.Tensor:
        if self.prev is not None:
            self.lps.append(self.prev.gather(1, last.unsqueeze(1)).squeeze(1))
        return torch.stack(self.lps, dim=1)
