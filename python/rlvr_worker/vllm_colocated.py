"""Colocated vLLM sampler: vLLM's offline `LLM` inside the torch worker's process.

The worker's commands `vllm_init`, `vllm_sample`, `vllm_sync`, `vllm_close` (`commands()`, which
ops.py registers in the worker's command table) drive one `vllm.LLM` that shares the process with the trainer:

- Start-up: `LLM(model=<dir>, load_format="dummy", skip_tokenizer_init=True,
  logprobs_mode="processed_logprobs", hf_overrides={"tie_word_embeddings": False},
  worker_extension_cls=RlvrWorkerExtension)`, then the trainer's weights are pushed in memory
  (version 0). The engine core runs in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0), so
  weights travel as tensors, never through a file or a socket.
- Sync: `llm.collective_rpc("rlvr_load_weights", kwargs={"weights": <trainer tensors>})`, which
  calls vLLM's in-place `reload_weights` (vllm_ext.py).
- LoRA (the worker trains a peft adapter): vLLM starts with `enable_lora` on the frozen base,
  written once as a checkpoint, and each sync saves the adapter (peft layout) and samples with a
  new `LoRARequest` — vLLM's LoRA adapter loading, not a merged copy of the weights.
- GPU memory: with `sleep` (GPU only) vLLM is built with `enable_sleep_mode=True`, sleeps (level
  1: weights offloaded, KV cache dropped) after each sampling call and wakes before the next call
  or sync, so the trainer gets the memory back while it trains.

Sampling semantics (the contract of src/core/engine.ts `SampleResult.logprobs`): with
logprobs_mode "processed_logprobs" vLLM returns the sampled token's log-prob under
softmax(logits / temperature), and under the raw softmax for greedy decoding, as the torch
engine does. With top-p < 1 or top-k > 0 vLLM's value is taken after truncation (renormalised
over the kept tokens), i.e. it exceeds the contract's value by -log(kept mass); docs/scaling.md
says so. Only the request's stop tokens end a sample (`ignore_eos`), and they are kept in the
output, as in Hugging Face `generate`.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .commands import Command

Tensors = Dict[str, "np.ndarray[Any, Any]"]

EXTENSION = "rlvr_worker.vllm_ext.RlvrWorkerExtension"


def sampling_params(h: Dict[str, Any], seed: int) -> Any:
    """vLLM SamplingParams for one prompt of a SampleRequest header (n, maxNewTokens, ...)."""
    from vllm import SamplingParams

    temperature = float(h["temperature"])
    greedy = temperature <= 0
    top_k = int(h.get("topK") or 0)
    top_p_raw = h.get("topP")
    top_p = 1.0 if top_p_raw is None else float(top_p_raw)
    return SamplingParams(
        n=int(h["n"]),
        temperature=0.0 if greedy else temperature,
        top_p=1.0 if greedy else top_p,
        top_k=0 if greedy or top_k <= 0 else top_k,
        max_tokens=int(h["maxNewTokens"]),
        stop_token_ids=[int(s) for s in (h.get("stopTokens") or [])],
        ignore_eos=True,
        logprobs=0,
        seed=seed,
        detokenize=False,
        skip_special_tokens=False,
    )


def pack_outputs(outputs: List[Any], n: int, max_new: int, stop: List[int]) -> Tensors:
    """vLLM RequestOutputs (one per prompt, n completions each) → the worker's sample tensors."""
    R = len(outputs) * n
    tokens = np.zeros((R, max_new), dtype=np.int32)
    lps = np.zeros((R, max_new), dtype=np.float32)
    lengths = np.zeros((R,), dtype=np.int32)
    stopped = np.zeros((R,), dtype=np.int32)
    stop_set = set(stop)
    for i, ro in enumerate(outputs):
        comps = sorted(ro.outputs, key=lambda c: c.index)
        if len(comps) != n:
            raise RuntimeError(f"vLLM returned {len(comps)} completions for prompt {i}, expected {n}")
        for j, c in enumerate(comps):
            r = i * n + j
            ids = list(c.token_ids)[:max_new]
            L = len(ids)
            tokens[r, :L] = ids
            if c.logprobs is None or len(c.logprobs) < L:
                raise RuntimeError("vLLM returned no log-probs for the sampled tokens (SamplingParams.logprobs=0 was ignored)")
            lps[r, :L] = [c.logprobs[t][tok].logprob for t, tok in enumerate(ids)]
            lengths[r] = L
            stopped[r] = 1 if L > 0 and ids[-1] in stop_set else 0
    return {"tokens": tokens, "logprobs": lps, "lengths": lengths, "stop": stopped}


class ColocatedVllm:
    """One vLLM engine in the worker's process, fed from the worker's policy model."""

    def __init__(self, worker: Any, h: Dict[str, Any]) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(h.get("kvCacheGiB", 1)))
        # vLLM's CPU worker drops the process to 1 torch thread unless OMP_NUM_THREADS is set; the
        # trainer shares this process, so keep its thread count (measured on the 2-core machine:
        # vLLM sampling 1000 tokens/s at 1 thread, 4200 at 2; docs/benchmarks.md).
        import torch

        os.environ.setdefault("OMP_NUM_THREADS", str(torch.get_num_threads()))
        try:
            from vllm import LLM
        except ImportError as e:
            raise RuntimeError("rollout.engine vllm needs vLLM in the worker's Python: run `rlvr setup vllm` and use its environment (python/.venv-vllm)") from e
        self.worker = worker
        self.lora = bool(getattr(worker, "lora", False))
        self.lora_request: Any = None
        self.gpu = worker.device.type == "cuda"
        self.sleep_mode = bool(h.get("sleep", self.gpu)) and self.gpu
        self.asleep = False
        self.version = 0
        cfg = worker.model.config
        self.dir = tempfile.mkdtemp(prefix="rlvr-vllm-")
        cfg.to_json_file(os.path.join(self.dir, "config.json"))
        max_len = int(h.get("maxModelLen") or getattr(cfg, "max_position_embeddings", 0) or 2048)
        kw: Dict[str, Any] = dict(
            model=self.dir,
            load_format="dummy",
            skip_tokenizer_init=True,
            dtype=str(h.get("dtype") or ("bfloat16" if self.gpu else "float32")),
            max_model_len=max_len,
            seed=int(h.get("seed", 0)),
            logprobs_mode="processed_logprobs",
            generation_config="vllm",
            hf_overrides={"tie_word_embeddings": False},
            worker_extension_cls=EXTENSION,
            enforce_eager=bool(h.get("enforceEager", not self.gpu)),
        )
        if not self.gpu:
            # A request whose prompt is split across steps (chunked prefill) makes vLLM rewind its
            # seeded generator, which a CPU torch.Generator cannot do ("CPU Generator does not use
            # offset"): on CPU every prompt is prefilled in one step instead.
            kw.update(enable_chunked_prefill=False, max_num_batched_tokens=max(max_len, 4096))
        if self.gpu:
            kw["gpu_memory_utilization"] = float(h.get("gpuMemoryUtilization", 0.5))
            kw["enable_sleep_mode"] = self.sleep_mode
        if self.lora:
            # LoRA: the base never changes, so vLLM loads it once from a checkpoint; each sync
            # pushes only the adapter through vLLM's LoRA loading (a LoRARequest per version).
            self._write_base()
            rank = int(worker.model.peft_config["default"].r)
            kw.update(load_format="auto", enable_lora=True, max_loras=1, max_lora_rank=min(r for r in (1, 8, 16, 32, 64, 128, 256, 320, 512) if r >= rank))
        t = time.perf_counter()
        self.llm = LLM(**kw)
        self.startup_seconds = time.perf_counter() - t
        self.sync(0)

    def _wake(self, tags: Optional[List[str]] = None) -> None:
        if self.asleep:
            self.llm.wake_up(tags=tags)
            self.asleep = tags is not None and "kv_cache" not in tags

    def _sleep(self) -> None:
        if self.sleep_mode and not self.asleep:
            self.llm.sleep(level=1)
            self.asleep = True

    def _write_base(self) -> None:
        """The frozen base of a LoRA model as model.safetensors in self.dir (Hugging Face names,
        peft's wrappers removed; lm_head written out, as vLLM runs with untied embeddings)."""
        import torch
        from safetensors.torch import save_file

        from .vllm_ext import with_untied_head

        named = []
        for n, p in self.worker.model.get_base_model().state_dict().items():
            if "lora_" in n:
                continue
            named.append((n.replace(".base_layer.", "."), p.detach().to(torch.float32)))
        save_file({n: t.contiguous().clone() for n, t in with_untied_head(named)}, os.path.join(self.dir, "model.safetensors"))

    def _sync_adapter(self, version: int) -> None:
        """Save the trained adapter (peft layout) and sample with it from now on (vLLM's LoRARequest)."""
        import shutil

        from vllm.lora.request import LoRARequest

        path = os.path.join(self.dir, f"adapter-v{version}")
        shutil.rmtree(path, ignore_errors=True)
        self.worker.model.save_pretrained(path, safe_serialization=True)
        old = self.lora_request
        # A new id per sync: vLLM caches adapters by id, so the same id would keep the old weights.
        self.lora_seq = getattr(self, "lora_seq", 0) + 1
        self.lora_request = LoRARequest(f"rlvr-policy-v{version}", self.lora_seq, path)
        if old is not None and old.lora_path != path:
            shutil.rmtree(old.lora_path, ignore_errors=True)

    def sync(self, version: int) -> float:
        """Push the worker's current policy weights into vLLM; returns seconds."""
        import torch

        t = time.perf_counter()
        if self.lora:
            self._sync_adapter(version)
            self.version = int(version)
            return time.perf_counter() - t
        self._wake(["weights"] if self.asleep else None)
        model = self.worker.model
        with torch.no_grad():
            named = [(n, p.detach()) for n, p in model.state_dict(keep_vars=False).items()]
            self.llm.collective_rpc("rlvr_load_weights", kwargs={"weights": named})
        self.version = int(version)
        if self.sleep_mode:
            self.llm.reset_prefix_cache()
        self._sleep()
        return time.perf_counter() - t

    def sample(self, prompts: List["np.ndarray[Any, Any]"], h: Dict[str, Any]) -> Tensors:
        """Prompt-major samples as Worker.sample returns them (tokens, logprobs, lengths, stop)."""
        n = int(h["n"])
        max_new = int(h["maxNewTokens"])
        stop = [int(s) for s in (h.get("stopTokens") or [])]
        if any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        if not prompts or max_new == 0:
            R = len(prompts) * n
            return {"tokens": np.zeros((R, max_new), np.int32), "logprobs": np.zeros((R, max_new), np.float32), "lengths": np.zeros((R,), np.int32), "stop": np.zeros((R,), np.int32)}
        seed = int(h.get("seed", 0))
        # Child i*n + j of prompt i gets seed (seed + i*n) + j (vLLM seeds a request's n children
        # seed, seed+1, ...), so every sample of the call has its own stream.
        params = [sampling_params(h, (seed + i * n) % (2**31)) for i in range(len(prompts))]
        reqs = [{"prompt_token_ids": [int(x) for x in p]} for p in prompts]
        self._wake()
        outs = self.llm.generate(reqs, params, use_tqdm=False, lora_request=self.lora_request)
        self._sleep()
        return pack_outputs(outs, n, max_new, stop)

    def close(self) -> None:
        import shutil

        try:
            del self.llm
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


_STATE: Dict[str, Optional[ColocatedVllm]] = {"llm": None}


def _get() -> ColocatedVllm:
    v = _STATE["llm"]
    if v is None:
        raise RuntimeError("vLLM is not started in this worker (send vllm_init first)")
    return v


def _check_single(s: Any, h: Dict[str, Any], t: Tensors) -> None:
    if getattr(s, "dist", None) is not None:
        raise RuntimeError("rollout.engine vllm, mode colocated runs in a single worker process; under torchrun use rollout.mode server")
    s.need()


def _op_init(s: Any, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    if _STATE["llm"] is not None:
        _STATE["llm"].close()
        _STATE["llm"] = None
    v = ColocatedVllm(s.need(), h)
    _STATE["llm"] = v
    import vllm

    return {"vllm": vllm.__version__, "startupSeconds": v.startup_seconds, "sleep": v.sleep_mode}, {}


def _op_sample(s: Any, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    flat = t["prompts"]
    offs = np.concatenate([[0], np.cumsum(t["promptLengths"])])
    prompts = [flat[offs[i] : offs[i + 1]] for i in range(len(offs) - 1)]
    v = _get()
    return {"version": v.version}, v.sample(prompts, h)


def _op_sync(s: Any, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    return {"seconds": _get().sync(int(h.get("version", 0)))}, {}


def _op_close(s: Any, h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
    if _STATE["llm"] is not None:
        _STATE["llm"].close()
        _STATE["llm"] = None
    return {}, {}


def commands() -> Dict[str, Command]:
    """The colocated sampler's protocol ops, for the worker's command table (ops.register)."""
    return {
        "vllm_init": Command(_op_init, ranks="rank0", check=_check_single),
        "vllm_sample": Command(_op_sample, ranks="rank0", check=_check_single),
        "vllm_sync": Command(_op_sync, ranks="rank0", check=_check_single),
        "vllm_close": Command(_op_close, ranks="rank0"),
    }
