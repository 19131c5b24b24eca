"""`python -m rlvr_worker`: serve the engine contract on stdin/stdout until stdin closes.

stdout carries protocol frames only: at start the real stdout is moved to a private descriptor
and descriptor 1 is pointed at stderr, so a stray print() from any library cannot corrupt the
stream. stderr is free-form log text (the client forwards it).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import IO, Any, Callable, Dict, Optional, Tuple

import numpy as np

from . import PROTOCOL_VERSION, __version__
from .protocol import ProtocolError, Tensors, read_message, write_message


def _private_stdout() -> IO[bytes]:
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=0)


def _log(msg: str) -> None:
    sys.stderr.write(f"[rlvr-worker] {msg}\n")
    sys.stderr.flush()


def _batch(t: Tensors, h: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    B = int(h["batchSize"])
    T = int(h["seqLen"])
    tokens = t["tokens"].reshape(B, T)
    lengths = t["lengths"].reshape(B)
    return tokens, lengths


def main() -> None:
    out = _private_stdout()
    inp = sys.stdin.buffer
    worker: Optional[Any] = None

    def need() -> Any:
        if worker is None:
            raise RuntimeError("no model loaded (send load or init first)")
        return worker

    def op_hello(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        import torch
        import transformers

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
        }, {}

    def op_load(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        nonlocal worker
        from .engine import Options, Worker

        w = Worker()
        opts = Options.from_json(h.get("options", {}))
        info = w.init(h["config"], opts) if "config" in h else w.load(str(h["path"]), opts)
        worker = w
        return {"info": info}, {}

    def op_sample(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        flat = t["prompts"]
        lens = t["promptLengths"]
        offs = np.concatenate([[0], np.cumsum(lens)])
        prompts = [flat[offs[i] : offs[i + 1]] for i in range(len(lens))]
        return {}, need().sample(prompts, h)

    def op_score(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        tokens, lengths = _batch(t, h)
        return {}, need().score(tokens, lengths, str(h.get("model", "policy")), bool(h.get("entropy", False)))

    def op_forward(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        tokens, lengths = _batch(t, h)
        return {}, need().forward(tokens, lengths, bool(h.get("entropy", False)))

    def op_backward(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        w = need()
        d_lp = t.get("dLogprobs")
        d_ent = t.get("dEntropy")
        shape = (int(h["batchSize"]), int(h["seqLen"])) if "batchSize" in h else None
        w.backward(d_lp.reshape(shape) if d_lp is not None and shape else d_lp, d_ent.reshape(shape) if d_ent is not None and shape else d_ent)
        return {}, {}

    def op_optim_step(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        return need().optim_step(h), {}

    def op_zero_grad(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        need().zero_grad()
        return {}, {}

    def op_set_reference(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        need().set_reference(h.get("path"))
        return {}, {}

    def op_save(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        need().save(str(h["path"]), bool(h.get("optimizer", False)))
        return {}, {}

    def op_load_weights(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        need().load_weights(str(h["path"]))
        return {}, {}

    def op_get_tensor(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        arr = need().get_tensor(str(h["name"]), bool(h.get("grad", False)))
        return ({"present": False}, {}) if arr is None else ({"present": True}, {"data": arr.reshape(-1)})

    def op_set_tensor(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        need().set_tensor(str(h["name"]), t["data"])
        return {}, {}

    def op_memory(h: Dict[str, Any], t: Tensors) -> Tuple[Dict[str, Any], Tensors]:
        import torch

        if not torch.cuda.is_available():
            return {"peakBytes": 0, "allocatedBytes": 0}, {}
        res = {"peakBytes": int(torch.cuda.max_memory_allocated()), "allocatedBytes": int(torch.cuda.memory_allocated())}
        if h.get("reset"):
            torch.cuda.reset_peak_memory_stats()
        return res, {}

    ops: Dict[str, Callable[[Dict[str, Any], Tensors], Tuple[Dict[str, Any], Tensors]]] = {
        "hello": op_hello,
        "load": op_load,
        "sample": op_sample,
        "score": op_score,
        "forward": op_forward,
        "backward": op_backward,
        "optim_step": op_optim_step,
        "zero_grad": op_zero_grad,
        "set_reference": op_set_reference,
        "save": op_save,
        "load_weights": op_load_weights,
        "get_tensor": op_get_tensor,
        "set_tensor": op_set_tensor,
        "memory": op_memory,
    }

    while True:
        try:
            header, tensors = read_message(inp)
        except EOFError:
            return
        except ProtocolError as e:
            _log(f"protocol error, exiting: {e}")
            sys.exit(3)
        rid = header.get("id")
        op = str(header.get("op"))
        if op == "shutdown":
            write_message(out, {"id": rid, "ok": True})
            return
        fn = ops.get(op)
        try:
            if fn is None:
                raise ValueError(f"unknown op {op!r}")
            reply, rt = fn(header, tensors)
            write_message(out, {"id": rid, "ok": True, **reply}, rt)
        except Exception as e:  # noqa: BLE001 - every error goes back to the client
            write_message(out, {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})


if __name__ == "__main__":
    main()
