"""The worker's command table: protocol op -> Command (commands.py). __main__ reads a request
frame, looks its op up in COMMANDS and runs it; under torchrun rank 0 first sends the request to
every other rank (distributed.py), and only rank 0 replies.

This module is the one place the table is filled: the model ops below (load, sample, score,
forward/backward, optimizer, reference, checkpoints, tensors) and, through `register`, the
commands other modules define (the colocated vLLM sampler's, vllm_colocated.commands()).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

from .commands import Check, Command, Session
from .options import Options
from .protocol import Tensors
from .vllm_colocated import commands as vllm_commands
from .weights import adapter_base
from .worker import Worker

COMMANDS: Dict[str, Command] = {}


def register(commands: Dict[str, Command]) -> None:
    """Add protocol ops to COMMANDS. Raises ValueError naming an op that is already registered."""
    taken = sorted(set(commands) & set(COMMANDS))
    if taken:
        raise ValueError(f"worker command {taken[0]!r} is registered twice")
    COMMANDS.update(commands)


def _batch(t: Tensors, h: Dict[str, Any]) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """[B, T] tokens and [B] lengths of a request (None on ranks that were not sent them)."""
    if "tokens" not in t:
        return None, None
    B = int(h["batchSize"])
    T = int(h["seqLen"])
    return t["tokens"].reshape(B, T), t["lengths"].reshape(B)


def _prompts(t: Tensors) -> Optional[List[np.ndarray]]:
    if "prompts" not in t:
        return None
    flat = t["prompts"]
    offs = np.concatenate([[0], np.cumsum(t["promptLengths"])])
    return [flat[offs[i] : offs[i + 1]] for i in range(len(offs) - 1)]


def _op_hello(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    import sys

    import transformers

    from . import PROTOCOL_VERSION, __version__

    try:
        import peft  # noqa: F401

        has_peft = True
    except ImportError:
        has_peft = False
    return {
        "protocol": PROTOCOL_VERSION,
        "worker": __version__,
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cuda": bool(torch.cuda.is_available()),
        "peft": has_peft,
        "worldSize": 1 if s.dist is None else int(s.dist.world),
        "backend": None if s.dist is None else str(s.dist.backend),
    }, {}


def _check_load(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    if "config" not in h and not os.path.isfile(os.path.join(str(h["path"]), "config.json")) and adapter_base(str(h["path"])) is None:
        raise FileNotFoundError(f"{h['path']}/config.json not found: model.path must be a local Hugging Face checkpoint directory (or a peft adapter directory)")
    if s.dist is not None and h.get("options", {}).get("lora"):
        raise ValueError("LoRA under model.distributed is not supported yet: train LoRA on one process (drop model.distributed)")
    if s.dist is not None and h.get("options", {}).get("kvCache") == "static":
        raise ValueError("kvCache 'static' is not supported under model.distributed: use kvCache 'auto' or 'dynamic'")


def _op_load(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    opts = Options.from_json(h.get("options", {}))
    w: Worker
    if s.dist is None:
        w = Worker()
    else:
        from .distributed import DistributedWorker

        w = DistributedWorker(s.dist, str(h.get("options", {}).get("strategy", "fsdp2")))
    info = w.init(h["config"], opts) if "config" in h else w.load(str(h["path"]), opts)
    s.worker = w
    return {"info": info}, {}


def _check_sample(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    w = s.need()
    prompts = _prompts(t) or []
    V = w.info_vocab()
    if any(len(p) == 0 for p in prompts):
        raise ValueError("every prompt needs at least one token")
    for i, p in enumerate(prompts):
        if p.min() < 0 or p.max() >= V:
            raise ValueError(f"prompt {i} has a token id outside the vocabulary [0, {V})")
    max_pos = int(getattr(w.model.config, "max_position_embeddings", 0) or 0)
    longest = max((len(p) for p in prompts), default=0)
    if max_pos and longest + int(h["maxNewTokens"]) > max_pos:
        raise ValueError(f"prompt ({longest} tokens) + maxNewTokens ({h['maxNewTokens']}) exceeds the model's max_position_embeddings {max_pos}")


def _op_sample(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    return {}, s.need().sample(_prompts(t), h)  # type: ignore[arg-type]


def _check_batch_request(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    tokens, lengths = _batch(t, h)
    w = s.need()
    if tokens is not None and lengths is not None:
        w.check_batch(tokens, lengths)
    has_reference = w.reference is not None or (w.lora and (w.ref_is_base or w.ref_adapter is not None))
    if h.get("model") == "reference" and not has_reference:
        raise RuntimeError("score(model='reference') called before setReference()")


def _op_score(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    tokens, lengths = _batch(t, h)
    return {}, s.need().score(tokens, lengths, str(h.get("model", "policy")), bool(h.get("entropy", False)))  # type: ignore[arg-type]


def _op_forward(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    tokens, lengths = _batch(t, h)
    return {}, s.need().forward(tokens, lengths, bool(h.get("entropy", False)), int(h.get("scoreFrom", 0)))  # type: ignore[arg-type]


def _cotangents(h: Dict[str, Any], t: Tensors) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    d_lp = t.get("dLogprobs")
    d_ent = t.get("dEntropy")
    if "batchSize" in h:
        shape = (int(h["batchSize"]), int(h["seqLen"]))
        d_lp = None if d_lp is None else d_lp.reshape(shape)
        d_ent = None if d_ent is None else d_ent.reshape(shape)
    return d_lp, d_ent


def _check_backward(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    w = s.need()
    p = w.pending
    if p is None:
        raise RuntimeError("backward without a preceding forward")
    d_lp, d_ent = _cotangents(h, t)
    assert p.tokens is not None
    if d_lp is not None and d_lp.shape != p.tokens.shape:
        raise ValueError(f"dLogprobs has shape {d_lp.shape}, expected {p.tokens.shape}")
    if d_ent is not None and not p.entropy:
        raise ValueError("dEntropy given but the forward did not compute entropy (pass entropy: true)")


def _op_backward(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    d_lp, d_ent = _cotangents(h, t)
    s.need().backward(d_lp, d_ent)
    return {}, {}


def _op_optim_step(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    return s.need().optim_step(h), {}


def _op_zero_grad(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    s.need().zero_grad()
    return {}, {}


def _need_model(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    s.need()


def _check_path(key: str) -> Check:
    def check(s: Session, h: Dict[str, Any], t: Tensors) -> None:
        s.need()
        path = h.get(key)
        if path is not None and not os.path.isdir(str(path)):
            raise FileNotFoundError(f"checkpoint directory {path} does not exist")

    return check


def _op_set_reference(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    s.need().set_reference(h.get("path"))
    return {}, {}


def _op_save(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    out = s.need().save(str(h["path"]), bool(h.get("optimizer", False)))
    return (out or {}), {}


def _op_load_weights(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    s.need().load_weights(str(h["path"]))
    return {}, {}


def _check_tensor_name(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    params = dict(s.need().model.named_parameters())
    name = str(h["name"])
    if name not in params:
        raise KeyError(f"no parameter named {name}")
    if "data" in t and t["data"].size != params[name].numel():
        raise ValueError(f"parameter {name} has {params[name].numel()} elements, data has {t['data'].size}")


def _op_get_tensor(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    arr = s.need().get_tensor(str(h["name"]), bool(h.get("grad", False)))
    return ({"present": False}, {}) if arr is None else ({"present": True}, {"data": arr.reshape(-1)})


def _op_set_tensor(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    s.need().set_tensor(str(h["name"]), t["data"])
    return {}, {}


def _check_add_tenant(s: Session, h: Dict[str, Any], t: Tensors) -> None:
    s.need()
    if s.dist is not None:
        raise ValueError("shareBase is not supported under model.distributed (LoRA trains in one process)")


def _op_add_tenant(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    return s.need().add_tenant(h.get("lora"), int(h.get("seed", 0))), {}


def _op_drop_tenant(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    s.need().drop_tenant(str(h["name"]))
    return {}, {}


def _op_memory(s: Session, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    if not torch.cuda.is_available():
        return {"peakBytes": 0, "allocatedBytes": 0}, {}
    res = {"peakBytes": int(torch.cuda.max_memory_allocated()), "allocatedBytes": int(torch.cuda.memory_allocated())}
    if h.get("reset"):
        torch.cuda.reset_peak_memory_stats()
    return res, {}


register(
    {
        "hello": Command(_op_hello, ranks="rank0", tenant=False),
        "load": Command(_op_load, check=_check_load, tenant=False),
        "sample": Command(_op_sample, check=_check_sample),
        "score": Command(_op_score, check=_check_batch_request),
        "forward": Command(_op_forward, check=_check_batch_request),
        "backward": Command(_op_backward, check=_check_backward),
        "optim_step": Command(_op_optim_step, check=_need_model),
        "zero_grad": Command(_op_zero_grad, check=_need_model),
        "set_reference": Command(_op_set_reference, check=_check_path("path")),
        "save": Command(_op_save, check=_need_model),
        "load_weights": Command(_op_load_weights, check=_check_path("path")),
        "get_tensor": Command(_op_get_tensor, check=_check_tensor_name),
        "set_tensor": Command(_op_set_tensor, send_tensors=True, check=_check_tensor_name),
        "memory": Command(_op_memory, ranks="rank0", tenant=False),
        "add_tenant": Command(_op_add_tenant, check=_check_add_tenant, tenant=False),
        "drop_tenant": Command(_op_drop_tenant, check=_check_add_tenant, tenant=False),
    }
)
register(vllm_commands())  # vllm_init, vllm_sample, vllm_sync, vllm_close
