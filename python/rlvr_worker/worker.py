"""The tensor side of rlvr's engine contract on PyTorch + transformers.

Conventions (identical to src/core/engine.ts, which is authoritative):
- A token batch is [B, T] right-padded; `lengths[b]` real tokens. Per-token outputs are aligned
  with the token they score: lp[b, t] = log p(tok[b, t] | tok[b, :t]); lp[b, 0] = 0 and padded
  positions hold 0. Entropy H[b, t] is that of the distribution that predicted tok[b, t].
- Sampled log-probs: see sampling.py, whose `Sampling.sample` the Worker inherits.
- Right padding + causal attention means real positions never see padding, so training and
  scoring forwards need no attention mask (and use the fused causal kernels).

Precision: float32 parameters (the master copy) everywhere. With dtype "bfloat16" (the default
on CUDA), forwards run under torch.autocast(bfloat16); log-softmax and entropy are always taken
in float32. AdamW (Loshchilov & Hutter 2019, arXiv:1711.05101) is torch.optim.AdamW with two
parameter groups: decoupled weight decay only on >= 2-D weights whose name has no "norm" (as the
embedded engine and HF Trainer).

The protocol ops that drive a Worker are in ops.py; under torchrun, distributed.DistributedWorker
takes the Worker's place.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import torch

from .options import Options, resolve_device, resolve_dtype
from .sampling import Sampling
from .scoring import split_model, split_scores
from .weights import adapter_base, checkpoint_generation_config, full_tensor, linear_module_names, read_hf_weights, read_json


def _as_list(x: Any) -> List[str]:
    return [x] if isinstance(x, str) else [str(v) for v in x]


def _decays(name: str, p: torch.Tensor) -> bool:
    """Decoupled weight decay applies to matrices only (not norm gains, not biases)."""
    return p.ndim >= 2 and "norm" not in name


# The tenant a request without a "tenant" field addresses: the engine that loaded the model (its
# peft adapter is peft's "default").
DEFAULT_TENANT = "default"

# What each tenant owns besides its adapter's tensors (and their .grad): settings (its model.lora),
# AdamW state, the forward awaiting its backward, and its reference. Swapped by Worker.as_tenant.
TENANT_FIELDS = ("opts", "lora", "opt", "pending", "has_grad", "reference", "ref_adapter", "ref_is_base", "adapter_dir")


@dataclass
class Pending:
    """State between the two phases of forward-backward."""

    # Fast path: one forward with a retained graph.
    lp: Optional[torch.Tensor] = None
    ent: Optional[torch.Tensor] = None
    # Micro-batched path: rows of each micro-batch, recomputed with a graph at backward time.
    micro: List[np.ndarray] = field(default_factory=list)
    tokens: Optional[np.ndarray] = None
    lengths: Optional[np.ndarray] = None
    entropy: bool = False
    score_from: int = 0


def _lora_config(model: Any, cfg: Dict[str, Any]) -> Any:
    """peft's LoraConfig for `cfg` (model.lora: rank, alpha, dropout, targets), its targets checked
    against the model's linear modules and output head (raises ValueError naming them)."""
    from peft import LoraConfig

    targets = [str(t) for t in cfg.get("targets", [])]
    # The output head (lm_head) may carry an adapter too (Tinker's train_unembed).
    head = [n.rsplit(".", 1)[-1] for n, m in model.named_modules() if m is model.get_output_embeddings()]
    modules = linear_module_names(model) + head
    unknown = [t for t in targets if t not in modules]
    if unknown:
        raise ValueError(f"config error at model.lora.targets: {', '.join(repr(u) for u in unknown)} not a module of this model; its linear modules: {', '.join(modules)}")
    return LoraConfig(r=int(cfg["rank"]), lora_alpha=float(cfg["alpha"]), lora_dropout=float(cfg.get("dropout", 0.0)), target_modules=targets, task_type="CAUSAL_LM")


def set_activation_checkpointing(model: Any, on: bool) -> None:
    """Turn transformers' (non-reentrant) activation checkpointing on or off:
    `activation_checkpointing_enable` from transformers 5.24, `gradient_checkpointing_enable` before."""
    if on:
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    elif hasattr(model, "activation_checkpointing_disable"):
        model.activation_checkpointing_disable()
    else:
        model.gradient_checkpointing_disable()


class Worker(Sampling):
    """One policy model (+ optional reference) and its optimizer; under LoRA, several tenants on the
    one base (add_tenant: a named peft adapter each, or the base alone), each request run as its
    tenant (as_tenant)."""

    # Score plain causal LMs through their decoder and head (scoring.py). Off under torchrun: FSDP2
    # and DDP gather parameters and hook gradients in the root module's own forward.
    split_scoring = True

    def __init__(self) -> None:
        self.model: Any = None
        self.reference: Any = None
        self.ref_adapter: Optional[Dict[str, torch.Tensor]] = None  # LoRA: frozen adapter tensors
        self.ref_is_base = False  # LoRA: reference = base model with adapters disabled
        self.opt: Optional[torch.optim.Optimizer] = None
        self.opts = Options()
        self.device = torch.device("cpu")
        self.dtype = torch.float32
        self.pending: Optional[Pending] = None
        self.has_grad = False
        self.model_id = ""
        self.lora = False
        # The base model's directory (None: random init) and the adapter directory it was loaded with.
        self.base_path: Optional[str] = None
        self.adapter_dir: Optional[str] = None
        # Tenants (several LoRA adapters on the one base, shareBase): the live fields above
        # (TENANT_FIELDS) are the active tenant's; each other tenant's are kept in `tenants`.
        self.tenant: Optional[str] = DEFAULT_TENANT
        self.tenants: Dict[str, Dict[str, Any]] = {}
        self.next_tenant = 1
        self.retired: Optional[str] = None  # the last adapter, its tenant closed (drop_tenant)

    # ------------------------------------------------------------------ load

    def _setup(self, opts: Options) -> None:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.opts = opts
        if opts.threads > 0:
            torch.set_num_threads(opts.threads)
        self.device = resolve_device(opts.device)
        self.dtype = resolve_dtype(opts.dtype, self.device)
        torch.manual_seed(opts.seed)

    def _finish_model(self, model: Any) -> None:
        from transformers import GenerationConfig

        model.to(self.device)
        # RL samples from exactly the distribution the request names: drop the checkpoint's
        # generation defaults (repetition penalty, top-k 50, ...) while sampling; `save` writes
        # the original back so the checkpoint stops where the model does (eos) in transformers.
        self.saved_generation_config = checkpoint_generation_config(model)
        model.generation_config = GenerationConfig()
        if self.opts.lora:
            model = self._wrap_lora(model, self.opts.lora)
        if self.opts.gradient_checkpointing:
            set_activation_checkpointing(model, True)
            if self.lora:
                model.enable_input_require_grads()
        model.eval()
        self.model = model
        self.reference = None
        self.ref_adapter = None
        self.ref_is_base = False
        self.opt = None
        self.pending = None
        self.has_grad = False
        self.tenant = DEFAULT_TENANT
        self.tenants = {}
        self.retired = None

    def _wrap_lora(self, model: Any, cfg: Dict[str, Any]) -> Any:
        """peft LoRA on `cfg`'s targets (model.lora: rank, alpha, dropout, targets), or, when the
        model was loaded from an adapter directory, that adapter made trainable (its rank and
        targets must equal the config's)."""
        try:
            from peft import PeftModel, get_peft_model
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise RuntimeError("LoRA needs peft: pip install peft (inside the worker's virtual environment)") from e
        lc = _lora_config(model, cfg)
        self.lora = True
        if self.adapter_dir is not None:
            ac = read_json(os.path.join(self.adapter_dir, "adapter_config.json"))
            have = (int(ac["r"]), sorted(_as_list(ac["target_modules"])))
            want = (int(cfg["rank"]), sorted(lc.target_modules))
            if have != want:
                raise ValueError(f"config error at model.lora: the adapter at {self.adapter_dir} has rank {have[0]} on {have[1]}, model.lora asks for rank {want[0]} on {want[1]}; make them equal (or start from the merged checkpoint)")
            return PeftModel.from_pretrained(model, self.adapter_dir, is_trainable=True)
        with self._seeded(int(self.opts.seed)):
            return get_peft_model(model, lc)

    @contextlib.contextmanager
    def _seeded(self, seed: int) -> Iterator[None]:
        """torch's RNG seeded with `seed` inside, restored after: a new adapter's A depends on its
        seed alone (the same for the loading engine's adapter and a shareBase tenant's)."""
        with torch.random.fork_rng(devices=[self.device] if self.device.type == "cuda" else []):
            torch.manual_seed(seed)
            yield

    def load(self, path: str, opts: Options) -> Dict[str, Any]:
        """Load a Hugging Face causal LM from a local directory (no tokenizer: TypeScript tokenizes)."""
        from transformers import AutoModelForCausalLM

        self._setup(opts)
        self.adapter_dir = None
        self.base_path = path
        base = adapter_base(path)
        if base is not None:
            # A peft adapter directory: its base model, plus the adapter (trainable under
            # model.lora; otherwise folded into the weights).
            self.adapter_dir, self.base_path = path, base
        if not os.path.isfile(os.path.join(self.base_path, "config.json")):
            raise FileNotFoundError(f"{self.base_path}/config.json not found: model.path must be a local Hugging Face checkpoint directory (or a peft adapter directory)")
        model = AutoModelForCausalLM.from_pretrained(self.base_path, dtype=torch.float32, attn_implementation=opts.attn_implementation)
        if self.adapter_dir is not None and not opts.lora:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, self.adapter_dir).merge_and_unload()
        self.model_id = path
        self._finish_model(model)
        self._load_optimizer_state(path)
        return self.info()

    def init(self, config: Dict[str, Any], opts: Options) -> Dict[str, Any]:
        """A randomly initialised model from a config.json object (transformers' own init)."""
        from transformers import AutoConfig, AutoModelForCausalLM

        self._setup(opts)
        cfg = dict(config)
        model_type = cfg.pop("model_type")
        hf_cfg = AutoConfig.for_model(model_type, **cfg)
        hf_cfg._attn_implementation = opts.attn_implementation
        model = AutoModelForCausalLM.from_config(hf_cfg, dtype=torch.float32)
        self.model_id = f"random-init({model_type})"
        self.adapter_dir = None
        self.base_path = None
        self._finish_model(model)
        return self.info()

    def info(self) -> Dict[str, Any]:
        m = self.model
        n = sum(p.numel() for _, p in self._named_trainable())
        cfg = m.config
        vocab = int(m.get_output_embeddings().weight.shape[0])
        dtype = "float32" if self.dtype == torch.float32 else "bfloat16 (autocast; float32 master weights)"
        return {
            "modelId": self.model_id,
            "vocabSize": vocab,
            "maxSeqLen": int(getattr(cfg, "max_position_embeddings", 0) or 0),
            "numParams": int(n),
            "device": str(self.device) + (f" ({torch.cuda.get_device_name(self.device)})" if self.device.type == "cuda" else f" ({torch.get_num_threads()} threads)"),
            "dtype": dtype,
            "torch": torch.__version__,
            "lora": self.lora,
        }

    # ------------------------------------------------------------------ tenants (shareBase)

    def add_tenant(self, lora: Optional[Dict[str, Any]], seed: int) -> Dict[str, Any]:
        """A new tenant on this worker's base (multi-tenant LoRA): with `lora`, its own peft adapter
        (named as the tenant; A drawn from `seed` on a forked RNG, B zero), AdamW state, gradients
        and reference; without, the base model alone (adapters disabled), for sampling and scoring
        (a KL reference). The base is not copied. Returns {"tenant": name, "info": its info()}.
        Raises RuntimeError when the model trains every weight (no frozen base), ValueError on bad targets."""
        if not hasattr(self.model, "peft_config"):
            raise RuntimeError("shareBase: this engine trains every weight, so it has no frozen base to share (open it with model.lora)")
        name = f"tenant-{self.next_tenant}"
        self.next_tenant += 1
        if lora is not None:
            lc = _lora_config(self.model.get_base_model(), lora)
            with self._seeded(seed):
                self.model.add_adapter(name, lc)
            if self.retired is not None:
                self.model.delete_adapter(self.retired)
                self.retired = None
        self._stash()
        self._restore(name, self._fresh(lora))
        with self.as_tenant(name):
            return {"tenant": name, "info": self.info()}

    def drop_tenant(self, name: str) -> None:
        """Release tenant `name`: its adapter (peft delete_adapter; the tensors and their gradients)
        and its AdamW state. Raises KeyError when there is no such tenant."""
        if name == self.tenant:
            had_adapter = bool(self.lora)
            self._restore(None, self._fresh(None))
        elif name in self.tenants:
            had_adapter = bool(self.tenants.pop(name)["lora"])
        else:
            raise KeyError(f"no tenant {name!r} on this worker (already closed?)")
        peft = getattr(self.model, "peft_config", {})
        if not had_adapter or name not in peft:
            return
        if len(peft) > 1:
            self.model.delete_adapter(name)
            return
        # peft runs no model without an adapter: the last one stays, inactive (base views disable
        # it), its gradients freed, until add_tenant adds another.
        for n, p in self.model.named_parameters():
            if f".{name}." in n:
                p.grad = None
        self.retired = name

    def _fresh(self, lora: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        """A new tenant's fields (TENANT_FIELDS): its model.lora, no optimizer, gradients, pending forward or reference."""
        return {"opts": dataclasses.replace(self.opts, lora=lora), "lora": lora is not None, "opt": None, "pending": None, "has_grad": False, "reference": None, "ref_adapter": None, "ref_is_base": False, "adapter_dir": None}

    def _stash(self) -> None:
        if self.tenant is not None:
            self.tenants[self.tenant] = {f: getattr(self, f) for f in TENANT_FIELDS}

    def _restore(self, name: Optional[str], state: Dict[str, Any]) -> None:
        for f, v in state.items():
            setattr(self, f, v)
        self.tenant = name

    @contextlib.contextmanager
    def as_tenant(self, name: str) -> Iterator[None]:
        """Run a request as tenant `name`: its fields live, its adapter the active (and only
        trainable) one; a base-model tenant runs with the adapters disabled. Raises KeyError when
        there is no such tenant."""
        if name != self.tenant:
            if name not in self.tenants:
                raise KeyError(f"no tenant {name!r} on this worker (already closed?)")
            self._stash()
            self._restore(name, self.tenants.pop(name))
        peft = getattr(self.model, "peft_config", None)
        if self.lora:
            if self.model.active_adapter != name:
                self.model.set_adapter(name)
            yield
        elif peft:
            with self.model.disable_adapter():
                yield
        else:
            yield

    def _needs_adapter(self, what: str) -> None:
        """Raises RuntimeError when the active tenant is a base-model view (it samples and scores only)."""
        if not self.lora and hasattr(self.model, "peft_config"):
            raise RuntimeError(f"{what}: this engine is the base model shared with other engines (shareBase without LoRA); it samples and scores only")

    # ------------------------------------------------------------------ forwards

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        if self.dtype == torch.float32:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.dtype)

    def _token_scores(self, model: Any, ids: torch.Tensor, lengths: torch.Tensor, entropy: bool, score_from: int = 0) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """lp, H: [B, T] float32 in the contract layout (0 at t = 0 and on padding). Plain causal
        LMs go through scoring.split_scores (chunked head, shared prompts run once; positions
        before `score_from` may come back 0); others through the full logits."""
        parts = split_model(model) if self.split_scoring else None
        with self._autocast():
            if parts is not None:
                # Gradient checkpointing turns the KV cache off in training, so no shared prompts with it.
                shared = self.opts.shared_prompts and not (self.opts.gradient_checkpointing and model.training)
                return split_scores(parts[0], parts[1], ids, lengths, entropy, self.opts.head_chunk, shared, score_from)
            logits = model(input_ids=ids, use_cache=False).logits
        z = logits[:, :-1].float()  # position t-1 predicts token t
        lse = torch.logsumexp(z, dim=-1)
        lp = z.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1) - lse
        B, T = ids.shape
        valid = torch.arange(1, T, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)
        zero = torch.zeros(B, 1, device=ids.device, dtype=torch.float32)
        lp = torch.cat([zero, torch.where(valid, lp, 0.0)], dim=1)
        ent: Optional[torch.Tensor] = None
        if entropy:
            p = torch.softmax(z, dim=-1)
            h = lse - (p * z).sum(-1)
            ent = torch.cat([zero, torch.where(valid, h, 0.0)], dim=1)
        return lp, ent

    def _micro_batches(self, lengths: np.ndarray) -> List[np.ndarray]:
        """Row groups (longest first) whose rows x longest length fit the token budget."""
        order = np.argsort(-lengths, kind="stable")
        groups: List[np.ndarray] = []
        cur: List[int] = []
        for r in order:
            rows = len(cur) + 1
            longest = int(lengths[cur[0]]) if cur else int(lengths[r])
            if cur and rows * longest > self.opts.token_budget:
                groups.append(np.array(cur))
                cur = []
            cur.append(int(r))
        if cur:
            groups.append(np.array(cur))
        return groups

    def _rows(self, tokens: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> Tuple[torch.Tensor, torch.Tensor, int]:
        T = max(1, int(lengths[rows].max()))
        ids = torch.from_numpy(tokens[rows, :T].astype(np.int64)).to(self.device)
        lens = torch.from_numpy(lengths[rows].astype(np.int64)).to(self.device)
        return ids, lens, T

    def check_batch(self, tokens: np.ndarray, lengths: np.ndarray) -> None:
        """Raises ValueError unless lengths is [B] within [0, T] and every real token is in the vocabulary."""
        V = self.info_vocab()
        B, T = tokens.shape
        if lengths.shape != (B,):
            raise ValueError(f"lengths has shape {lengths.shape}, expected ({B},)")
        if (lengths > T).any() or (lengths < 0).any():
            raise ValueError(f"lengths must lie in [0, {T}]")
        mask = np.arange(T)[None, :] < lengths[:, None]
        bad = mask & ((tokens < 0) | (tokens >= V))
        if bad.any():
            b, t = map(int, np.argwhere(bad)[0])
            raise ValueError(f"token id {int(tokens[b, t])} at batch row {b}, position {t} is outside the vocabulary [0, {V})")

    def info_vocab(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    @torch.no_grad()
    def _score_no_grad(self, model: Any, tokens: np.ndarray, lengths: np.ndarray, entropy: bool) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        B, T = tokens.shape
        lp_out = np.zeros((B, T), dtype=np.float32)
        ent_out = np.zeros((B, T), dtype=np.float32) if entropy else None
        for rows in self._micro_batches(lengths):
            ids, lens, Tm = self._rows(tokens, lengths, rows)
            lp, ent = self._token_scores(model, ids, lens, entropy)
            lp_out[rows, :Tm] = lp.cpu().numpy()
            if ent_out is not None and ent is not None:
                ent_out[rows, :Tm] = ent.cpu().numpy()
        return lp_out, ent_out

    @contextlib.contextmanager
    def _reference_model(self) -> Iterator[Any]:
        if self.reference is not None:
            yield self.reference
        elif self.lora and self.ref_is_base:
            with self.model.disable_adapter():
                yield self.model
        elif self.lora and self.ref_adapter is not None:
            # Swap the frozen adapter in, score, swap the trained one back.
            params = dict(self.model.named_parameters())
            saved = {k: params[k].detach().clone() for k in self.ref_adapter}
            with torch.no_grad():
                for k, v in self.ref_adapter.items():
                    params[k].copy_(v)
            try:
                yield self.model
            finally:
                with torch.no_grad():
                    for k, v in saved.items():
                        params[k].copy_(v)
        else:
            raise RuntimeError("score(model='reference') called before setReference()")

    def score(self, tokens: np.ndarray, lengths: np.ndarray, which: str, entropy: bool) -> Dict[str, np.ndarray]:
        self.check_batch(tokens, lengths)
        if which == "reference":
            with self._reference_model() as m:
                lp, ent = self._score_no_grad(m, tokens, lengths, entropy)
        else:
            lp, ent = self._score_no_grad(self.model, tokens, lengths, entropy)
        out = {"logprobs": lp}
        if ent is not None:
            out["entropy"] = ent
        return out

    # ------------------------------------------------------------------ training

    def _train_mode(self) -> None:
        # Gradient checkpointing in transformers only engages in training mode, and so does LoRA
        # dropout; the supported architectures have no other dropout at attention_dropout 0.
        if self.opts.gradient_checkpointing or float((self.opts.lora or {}).get("dropout", 0)) > 0:
            self.model.train()

    def forward(self, tokens: np.ndarray, lengths: np.ndarray, entropy: bool, score_from: int = 0) -> Dict[str, np.ndarray]:
        """Phase 1 of forward-backward: scores with a graph kept for `backward`. `score_from`: the
        loss reads no position before it (the batch's first trained token), so those may be 0."""
        self._needs_adapter("forwardBackward")
        self.check_batch(tokens, lengths)
        self.pending = None
        micro = self._micro_batches(lengths)
        B, T = tokens.shape
        if len(micro) == 1:
            self._train_mode()
            try:
                ids, lens, Tm = self._rows(tokens, lengths, np.arange(B))
                lp, ent = self._token_scores(self.model, ids, lens, entropy, score_from)
            finally:
                self.model.eval()
            self.pending = Pending(lp=lp, ent=ent, tokens=tokens, lengths=lengths, entropy=entropy)
            lp_np = np.zeros((B, T), dtype=np.float32)
            lp_np[:, :Tm] = lp.detach().cpu().numpy()
            out = {"logprobs": lp_np}
            if ent is not None:
                ent_np = np.zeros((B, T), dtype=np.float32)
                ent_np[:, :Tm] = ent.detach().cpu().numpy()
                out["entropy"] = ent_np
            return out
        # Too large for one graph: score without one now, recompute each micro-batch with a graph
        # in `backward` (the loss depends on the parameters only through lp and H, and forwards
        # are deterministic, so the recomputed scores equal the ones the loss saw).
        lp_all, ent_all = self._score_no_grad(self.model, tokens, lengths, entropy)
        self.pending = Pending(micro=micro, tokens=tokens, lengths=lengths, entropy=entropy, score_from=score_from)
        res = {"logprobs": lp_all}
        if ent_all is not None:
            res["entropy"] = ent_all
        return res

    def backward(self, d_lp: Optional[np.ndarray], d_ent: Optional[np.ndarray]) -> None:
        """Phase 2: back-propagate dL/dlp (and dL/dH) into the parameters' .grad (accumulating)."""
        p = self.pending
        self.pending = None
        if p is None:
            raise RuntimeError("backward without a preceding forward")
        if d_lp is None:
            return  # the client dropped this batch (e.g. a non-finite loss)
        assert p.tokens is not None and p.lengths is not None
        B, T = p.tokens.shape
        if d_lp.shape != (B, T):
            raise ValueError(f"dLogprobs has shape {d_lp.shape}, expected ({B}, {T})")
        if d_ent is not None and not p.entropy:
            raise ValueError("dEntropy given but the forward did not compute entropy (pass entropy: true)")
        if p.lp is not None:
            Tm = p.lp.shape[1]
            outs = [p.lp]
            grads = [torch.from_numpy(d_lp[:, :Tm]).to(self.device)]
            if d_ent is not None and p.ent is not None:
                outs.append(p.ent)
                grads.append(torch.from_numpy(d_ent[:, :Tm]).to(self.device))
            torch.autograd.backward(outs, grads)
            self.has_grad = True
            return
        self._train_mode()
        try:
            for rows in p.micro:
                ids, lens, Tm = self._rows(p.tokens, p.lengths, rows)
                lp, ent = self._token_scores(self.model, ids, lens, d_ent is not None, p.score_from)
                outs = [lp]
                grads = [torch.from_numpy(np.ascontiguousarray(d_lp[rows, :Tm])).to(self.device)]
                if d_ent is not None and ent is not None:
                    outs.append(ent)
                    grads.append(torch.from_numpy(np.ascontiguousarray(d_ent[rows, :Tm])).to(self.device))
                torch.autograd.backward(outs, grads)
        finally:
            self.model.eval()
        self.has_grad = True

    def _named_trainable(self) -> List[Tuple[str, torch.nn.Parameter]]:
        """The active tenant's trainable parameters (under LoRA its adapter's; none for a base-model view)."""
        if not self.lora and hasattr(self.model, "peft_config"):
            return []
        return [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]

    def _optimizer(self) -> torch.optim.Optimizer:
        if self.opt is None:
            named = self._named_trainable()
            decay = [p for n, p in named if _decays(n, p)]
            no_decay = [p for n, p in named if not _decays(n, p)]
            groups = [{"params": decay, "weight_decay": 0.0, "decay": True}, {"params": no_decay, "weight_decay": 0.0, "decay": False}]
            kw: Dict[str, Any] = {"fused": True} if self.device.type == "cuda" else {"foreach": True}
            self.opt = torch.optim.AdamW(groups, lr=0.0, **kw)
        return self.opt

    def optim_step(self, h: Dict[str, Any]) -> Dict[str, Any]:
        """AdamW with global-norm clipping; returns the norm before clipping."""
        self.pending = None
        if not self.has_grad:
            return {"gradNorm": 0.0, "skipped": True}
        params = [p for _, p in self._named_trainable()]
        grads = [p.grad for p in params if p.grad is not None]
        # Under FSDP2 the gradients are DTensor shards: get_total_norm reduces over the shards
        # and returns a DTensor, which clip_grads_with_norm_ takes as it is.
        total = torch.nn.utils.get_total_norm(grads, 2.0) if grads else None
        norm = float(full_tensor(total)) if total is not None else 0.0
        self.has_grad = False
        if not np.isfinite(norm):
            self.zero_grad()
            return {"gradNorm": norm, "skipped": True}
        max_norm = float(h.get("maxGradNorm") or 0.0)
        if max_norm > 0 and norm > max_norm and total is not None:
            torch.nn.utils.clip_grads_with_norm_(params, max_norm, total)
        opt = self._optimizer()
        wd = float(h.get("weightDecay") or 0.0)
        for g in opt.param_groups:
            g["lr"] = float(h["lr"])
            g["betas"] = (float(h.get("beta1", 0.9)), float(h.get("beta2", 0.999)))
            g["eps"] = float(h.get("eps", 1e-8))
            g["weight_decay"] = wd if g["decay"] else 0.0
        opt.step()
        opt.zero_grad(set_to_none=True)
        return {"gradNorm": norm, "skipped": False}

    def zero_grad(self) -> None:
        self.pending = None
        self.has_grad = False
        for _, p in self._named_trainable():  # the active tenant's: other adapters keep theirs
            p.grad = None

    # ------------------------------------------------------------------ reference

    def set_reference(self, path: Optional[str]) -> None:
        from transformers import AutoModelForCausalLM

        ref: Any
        self._needs_adapter("setReference")
        self.reference = None
        self.ref_adapter = None
        self.ref_is_base = False
        if path is not None and self.lora and adapter_base(path) is not None:
            # LoRA: a saved adapter as the reference (the base is shared): its tensors, by our parameter names.
            from peft import set_peft_model_state_dict
            from safetensors.torch import load_file

            own = {n: p for n, p in self.model.named_parameters() if p.requires_grad}
            current = {n: p.detach().clone() for n, p in own.items()}
            set_peft_model_state_dict(self.model, load_file(os.path.join(path, "adapter_model.safetensors")), adapter_name=self.tenant)
            self.ref_adapter = {n: p.detach().clone() for n, p in own.items()}
            with torch.no_grad():
                for n, p in own.items():
                    p.copy_(current[n])
            return
        if path is not None:
            ref = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=self.opts.attn_implementation)
        elif self.lora:
            # LoRA: the untrained policy is the base model (adapters disabled, no copy); later
            # resets snapshot only the adapter tensors.
            if self.opt is None:
                self.ref_is_base = True
            else:
                self.ref_adapter = {n: p.detach().clone() for n, p in self.model.named_parameters() if p.requires_grad}
            return
        else:
            ref = copy.deepcopy(self.model)
            if self.opts.gradient_checkpointing:
                set_activation_checkpointing(ref, False)
        ref.to(self.device)
        ref.eval()
        for q in ref.parameters():
            q.requires_grad_(False)
        self.reference = ref

    # ------------------------------------------------------------------ I/O

    def save(self, path: str, optimizer: bool) -> Dict[str, Any]:
        """The model in the Hugging Face layout; under LoRA the adapter in peft's layout
        (adapter_config.json pointing at the base by absolute path, adapter_model.safetensors),
        the base itself in `base/` (named relatively) when it was randomly initialised, and with model.lora.saveMerged
        the merged weights in `merged/`. Returns the directories that hold a full model."""
        self._needs_adapter("save")
        os.makedirs(path, exist_ok=True)
        full: List[str] = []
        if self.lora:
            self._save_adapter(path)
            # The base by absolute path; a random-init base goes to base/ inside the checkpoint,
            # named relatively so the checkpoint directory can move (the trainer renames it).
            base_ref = os.path.abspath(self.base_path) if self.base_path is not None else "base"
            if self.base_path is None:
                base = os.path.join(path, "base")
                # The base without the LoRA layers (peft's unload, on a copy: the adapters keep training).
                copy.deepcopy(self.model).unload().save_pretrained(base, safe_serialization=True)
                self.saved_generation_config.save_pretrained(base)
                full.append(base)
            cfg_file = os.path.join(path, "adapter_config.json")
            ac = read_json(cfg_file)
            ac["base_model_name_or_path"] = base_ref
            with open(cfg_file, "w") as f:
                json.dump(ac, f, indent=2)
            if (self.opts.lora or {}).get("saveMerged"):
                merged = os.path.join(path, "merged")
                copy.deepcopy(self.model).merge_and_unload().save_pretrained(merged, safe_serialization=True)
                self.saved_generation_config.save_pretrained(merged)
                full.append(merged)
        else:
            self.model.save_pretrained(path, safe_serialization=True)
            self.saved_generation_config.save_pretrained(path)
        if optimizer and self.opt is not None:
            self._save_optimizer_state(path)
        return {"modelDirs": full}

    def load_weights(self, path: str) -> None:
        """Replace the policy weights (and optimizer state when present) from a checkpoint."""
        from safetensors.torch import load_file

        self._needs_adapter("load")
        self.zero_grad()
        if self.lora and os.path.isfile(os.path.join(path, "adapter_config.json")):
            from peft import set_peft_model_state_dict

            set_peft_model_state_dict(self.model, load_file(os.path.join(path, "adapter_model.safetensors")), adapter_name=self.tenant)
        else:
            target = self.model.get_base_model() if self.lora else self.model
            state = read_hf_weights(path, target)
            own = dict(target.named_parameters())
            with torch.no_grad():
                for k, p in own.items():
                    if k in state:
                        p.copy_(state[k].to(p.dtype))
        self.opt = None
        self._load_optimizer_state(path)

    def _state_key(self, name: str, adapter: Optional[str] = None) -> str:
        """A parameter's name in optimizer.safetensors: under LoRA as in peft's adapter file (and the
        embedded engine's layout), without the adapter name (`...lora_A.<adapter>.weight` ->
        `...lora_A.weight`), so any tenant or engine resumes it; with `adapter`, that name kept
        instead (the layout of older torch checkpoints, which kept peft's "default")."""
        if not self.lora or self.tenant is None:
            return name
        return re.sub(rf"\.(lora_[AB])\.{re.escape(self.tenant)}\.", rf".\1.{adapter}." if adapter else r".\1.", name)

    def _save_adapter(self, path: str) -> None:
        """The active tenant's adapter in peft's layout in `path` (peft writes an adapter not named
        "default" to a subdirectory of its name; its files are moved up)."""
        assert self.tenant is not None
        self.model.save_pretrained(path, safe_serialization=True, selected_adapters=[self.tenant])
        if self.tenant != DEFAULT_TENANT:
            sub = os.path.join(path, self.tenant)
            for f in os.listdir(sub):
                os.replace(os.path.join(sub, f), os.path.join(path, f))
            os.rmdir(sub)

    def _save_optimizer_state(self, path: str) -> None:
        """optimizer.safetensors in the embedded engine's layout: m:<name>, v:<name>, step."""
        from safetensors.torch import save_file

        assert self.opt is not None
        out: Dict[str, torch.Tensor] = {}
        step = 0.0
        for name, p in self._named_trainable():
            st = self.opt.state.get(p)
            if not st:
                continue
            key = self._state_key(name)
            out[f"m:{key}"] = st["exp_avg"].detach().float().cpu().contiguous()
            out[f"v:{key}"] = st["exp_avg_sq"].detach().float().cpu().contiguous()
            step = float(st["step"])
        out["step"] = torch.tensor([step], dtype=torch.float32)
        save_file(out, os.path.join(path, "optimizer.safetensors"))

    def _load_optimizer_state(self, path: str) -> None:
        from safetensors.torch import load_file

        f = os.path.join(path, "optimizer.safetensors")
        if not os.path.isfile(f):
            return
        state = load_file(f)
        opt = self._optimizer()
        step = float(state["step"].reshape(-1)[0]) if "step" in state else 0.0
        for name, p in self._named_trainable():
            # The file names adapter tensors as peft's adapter file does; older torch checkpoints with peft's "default" in them.
            key = next((k for k in (self._state_key(name), self._state_key(name, DEFAULT_TENANT)) if f"m:{k}" in state and f"v:{k}" in state), None)
            if key is not None:
                opt.state[p] = {
                    "step": torch.tensor(step, dtype=torch.float32, device=p.device if self.device.type == "cuda" else "cpu"),
                    "exp_avg": state[f"m:{key}"].to(p.device, p.dtype).reshape(p.shape).clone(),
                    "exp_avg_sq": state[f"v:{key}"].to(p.device, p.dtype).reshape(p.shape).clone(),
                }

    # ------------------------------------------------------------------ inspection (tests)

    def get_tensor(self, name: str, grad: bool) -> Optional[np.ndarray]:
        params = dict(self.model.named_parameters())
        if name not in params:
            raise KeyError(f"no parameter named {name}")
        p = params[name]
        t = p.grad if grad else p.detach()
        return None if t is None else full_tensor(t).float().cpu().clone().numpy()

    def set_tensor(self, name: str, data: np.ndarray) -> None:
        params = dict(self.model.named_parameters())
        if name not in params:
            raise KeyError(f"no parameter named {name}")
        p = params[name]
        with torch.no_grad():
            p.copy_(torch.from_numpy(data).reshape(p.shape).to(p.dtype))
