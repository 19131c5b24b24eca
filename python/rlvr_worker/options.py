"""The worker's load-time options (sent by the client with `load`/`init`) and what they resolve to:
the torch device and the forward dtype."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

import torch

@dataclass
class Options:
    """Worker options sent by the client at load time (see TorchEngineOptions in TypeScript)."""

    device: str = "auto"  # "auto" | "cpu" | "cuda" | "cuda:N" | "mps"
    dtype: str = "auto"  # "auto" | "float32" | "bfloat16"
    gradient_checkpointing: bool = False
    # Most tokens (rows x padded length) per forward; larger batches are split into micro-batches.
    token_budget: int = 16384
    # KV cache for generate(): "static" (fixed-size; CUDA float32 default) or "dynamic" (CPU and
    # bfloat16-autocast default).
    kv_cache: str = "auto"
    attn_implementation: str = "sdpa"
    seed: int = 0
    lora: Optional[Dict[str, Any]] = None
    threads: int = 0
    # Run the prompt a run of consecutive rows shares once (scoring.py); plain causal LMs only.
    shared_prompts: bool = True
    # Most positions whose logits exist at once in the chunked head (scoring.py).
    head_chunk: int = 1024

    @staticmethod
    def from_json(o: Dict[str, Any]) -> "Options":
        return Options(
            device=str(o.get("device", "auto")),
            dtype=str(o.get("dtype", "auto")),
            gradient_checkpointing=bool(o.get("gradientCheckpointing", False)),
            token_budget=int(o.get("tokenBudget", 16384)),
            kv_cache=str(o.get("kvCache", "auto")),
            attn_implementation=str(o.get("attnImplementation", "sdpa")),
            seed=int(o.get("seed", 0)),
            lora=o.get("lora"),
            threads=int(o.get("threads", 0)),
            shared_prompts=bool(o.get("sharedPrompts", True)),
            head_chunk=int(o.get("headChunk", 1024)),
        )


def resolve_device(name: str) -> torch.device:
    """Options.device as a torch device ("auto": CUDA when torch sees a GPU, else CPU); raises
    RuntimeError when CUDA is asked for and torch has none."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but torch {torch.__version__} sees no CUDA GPU (is this the CPU build of torch?)")
    return dev


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """Options.dtype as the forward dtype ("auto": bfloat16 on a CUDA GPU that supports it, else
    float32); raises ValueError for any other name."""
    if name == "auto":
        return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16}
    if name not in table:
        raise ValueError(f"dtype {name!r} is not supported (float32 or bfloat16)")
    return table[name]
