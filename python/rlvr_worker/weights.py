"""Reading checkpoints: Hugging Face weight files, the generation config a checkpoint keeps, peft
adapter directories, and the linear modules a LoRA target may name."""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List, Optional

import torch

def full_tensor(t: torch.Tensor) -> torch.Tensor:
    """The whole tensor: a DTensor (FSDP2 shard) is all-gathered (a collective: every rank must
    call it, in the same order); a plain tensor is returned as it is."""
    gather = getattr(t, "full_tensor", None)
    return gather() if callable(gather) else t


def read_hf_weights(path: str, model: Any) -> Dict[str, torch.Tensor]:
    """The model*.safetensors tensors of a checkpoint directory, checked against `model`'s
    parameters (every one present, except a tied output head; same shapes). CPU tensors.
    Raises FileNotFoundError / ValueError naming the checkpoint and the tensor."""
    from safetensors.torch import load_file

    files = [f for f in os.listdir(path) if f.endswith(".safetensors") and f.startswith("model")]
    if not files:
        raise FileNotFoundError(f"no model*.safetensors in {path}")
    state: Dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(os.path.join(path, f)))
    own = dict(model.named_parameters())
    missing = [k for k in own if k not in state and not (k == "lm_head.weight" and model.config.tie_word_embeddings)]
    if missing:
        raise ValueError(f"checkpoint {path} lacks {len(missing)} tensors the model has, e.g. {missing[0]}")
    for k, p in own.items():
        if k in state and tuple(state[k].shape) != tuple(p.shape):
            raise ValueError(f"checkpoint {path}: tensor {k} has shape {list(state[k].shape)}, the model has {list(p.shape)}")
    return state


def checkpoint_generation_config(model: Any) -> Any:
    """The generation config a checkpoint keeps: the one the model came with (its directory's
    generation_config.json, or transformers' config-derived default), with bos/eos/pad filled from
    the model config where it lacks them (older rlvr checkpoints wrote an empty one). Without it a
    trained model generates past its end-of-turn token in transformers."""
    from transformers import GenerationConfig

    gc = copy.deepcopy(getattr(model, "generation_config", None)) or GenerationConfig()
    for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if getattr(gc, k, None) is None and getattr(model.config, k, None) is not None:
            setattr(gc, k, getattr(model.config, k))
    return gc


def read_json(path: str) -> Dict[str, Any]:
    """A JSON object file (adapter_config.json, config.json) as a dict."""
    with open(path) as f:
        return dict(json.load(f))


def adapter_base(path: str) -> Optional[str]:
    """The base model directory of a peft adapter directory (adapter_config.json's
    base_model_name_or_path: absolute, or relative to the adapter), None when `path` is no adapter.
    Raises FileNotFoundError naming the file when the base is missing."""
    f = os.path.join(path, "adapter_config.json")
    if not os.path.isfile(f):
        return None
    name = str(read_json(f).get("base_model_name_or_path") or "")
    for cand in ([name] if os.path.isabs(name) else [os.path.join(path, name), name]):
        if name and os.path.isfile(os.path.join(cand, "config.json")):
            return cand
    raise FileNotFoundError(f"adapter error in {f} at base_model_name_or_path: no base model directory with config.json at {name!r}")


def linear_module_names(model: Any) -> List[str]:
    """Leaf names of the model's linear layers a LoRA target may name (the output head excluded);
    on a model that already carries peft adapters, a linear layer peft wrapped counts under its own
    name (not its base_layer or the adapters' lora_A/lora_B inside it)."""
    head = model.get_output_embeddings()
    wrapped = [n for n, m in model.named_modules() if hasattr(m, "get_base_layer") and isinstance(m.get_base_layer(), torch.nn.Linear)]
    inside = tuple(n + "." for n in wrapped)
    names = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if m is not head and (n in wrapped or (isinstance(m, torch.nn.Linear) and not n.startswith(inside)))}
    return sorted(names)


def config_json(path: str) -> Dict[str, Any]:
    """A checkpoint directory's config.json as a dict."""
    with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
        out: Dict[str, Any] = json.load(f)
    return out
