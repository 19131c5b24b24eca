"""The torch worker under torchrun: data-parallel training with FSDP2 or DDP.

Every rank runs `python -m rlvr_worker`; rank 0 speaks the framed protocol to TypeScript and
sends each request to the other ranks (`send_request`: broadcast_object_list). The command
handlers then run on every rank, and the worker below makes the collectives each needs:

- Token batches (score, forward): rank 0 deals the rows out round-robin (scatter_object_list),
  each rank runs its rows, rank 0 gathers the per-row log-probs (gather_object) and replies.
- backward: the TypeScript loss computed dL/dlp on rank 0's gathered log-probs; rank 0 scatters
  each rank's cotangent rows and every rank back-propagates its own rows. The loss already
  divides by the step's GLOBAL counts (src/algorithms `stepCounts`), so the gradient of the step
  is the SUM of the ranks' gradients: FSDP2 reduces with divide factor 1 (a sum), and DDP, which
  averages, gets cotangents multiplied by the world size (DDP reduces the accumulated .grad, so
  only an average keeps gradient accumulation over micro-batches right). The update is then the
  one-process update for the same global batch, whatever the number of ranks.
- FSDP2 (`fully_shard` on each decoder layer and on the root) shards parameters, gradients and
  AdamW state; its forwards all-gather, so every rank runs the same number of forwards: a rank
  with fewer micro-batches (or no rows) runs a 2-token dummy row with a zero cotangent.
  Mixed precision (bf16 parameters in the forward, fp32 gradient reduction) on CUDA only.
  DDP keeps a full replica per rank.
- optim_step: gradient-norm clipping over the sharded gradients (get_total_norm on DTensors).
- save: get_model_state_dict(full_state_dict, cpu_offload) gathers the full Hugging Face state
  on rank 0, which writes it with save_pretrained (and optimizer.safetensors, all-gathered).
  load: rank 0 reads the checkpoint; set_model_state_dict(broadcast_from_rank0) shards it.
- sample: each rank generates a contiguous share of the (prompt, sample) rows with its own seed
  (seed + rank), FSDP2 with generate(synced_gpus=True) so that ranks that finish early keep
  joining the all-gathers; rank 0 gathers the rows. Under N ranks the draws differ from the
  one-process draws for the same seed (same distribution, other random numbers).
Backend: gloo on CPU, nccl on CUDA ($RLVR_DIST_BACKEND overrides).
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist

from .options import Options
from .weights import checkpoint_generation_config, full_tensor, read_hf_weights
from .worker import Pending, Worker, set_activation_checkpointing
from .protocol import Tensors


@dataclass
class DistContext:
    """This process's place in the torchrun group."""

    rank: int
    world: int
    local_rank: int
    backend: str
    device: torch.device  # the device this rank computes on (cuda:LOCAL_RANK under nccl)

    def close(self) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()


def _watch_parent() -> None:
    """Exit when torchrun dies (e.g. killed by the client): ranks waiting in a collective would
    otherwise wait for the process group's timeout."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                sys.stderr.write("[rlvr-worker] torchrun exited; this rank exits too\n")
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="rlvr-parent-watch").start()


def _group_timeout() -> "datetime.timedelta":
    """The process group's timeout: RLVR_DIST_TIMEOUT_S seconds (model.distributed.timeoutS; default 1800)."""
    import datetime

    return datetime.timedelta(seconds=float(os.environ.get("RLVR_DIST_TIMEOUT_S") or 1800))


def init_from_env() -> DistContext:
    """Join the process group torchrun set up (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT)."""
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ["LOCAL_RANK"])
    backend = os.environ.get("RLVR_DIST_BACKEND") or ("nccl" if torch.cuda.is_available() else "gloo")
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"RLVR_DIST_BACKEND={backend!r}: expected gloo or nccl")
    if backend == "nccl":
        if not torch.cuda.is_available():
            raise RuntimeError(f"backend nccl needs CUDA GPUs, but torch {torch.__version__} sees none: use backend gloo on CPU")
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device, timeout=_group_timeout())
    else:
        device = torch.device("cuda", local) if torch.cuda.is_available() else torch.device("cpu")
        dist.init_process_group("gloo", timeout=_group_timeout())
    _watch_parent()
    return DistContext(rank=rank, world=world, local_rank=local, backend=backend, device=device)


def send_request(ctx: DistContext, header: Dict[str, Any], tensors: Tensors) -> None:
    """Rank 0: send one request (header and, when the command asks, its tensors) to every rank."""
    dist.broadcast_object_list([(header, tensors)], src=0)


def receive_request(ctx: DistContext) -> Tuple[Dict[str, Any], Tensors]:
    """Ranks > 0: wait for rank 0's next request."""
    box: List[Any] = [None]
    dist.broadcast_object_list(box, src=0)
    header, tensors = box[0]
    return header, tensors


def _scatter(ctx: DistContext, parts: Optional[List[Any]]) -> Any:
    """Rank 0's parts[r] goes to rank r (scatter_object_list); returns this rank's part."""
    out: List[Any] = [None]
    dist.scatter_object_list(out, parts if ctx.rank == 0 else None, src=0)
    return out[0]


def _gather(ctx: DistContext, obj: Any) -> Optional[List[Any]]:
    """Every rank's obj, in rank order, on rank 0 (gather_object); None elsewhere."""
    got: Optional[List[Any]] = [None] * ctx.world if ctx.rank == 0 else None
    dist.gather_object(obj, got, dst=0)
    return got


def _max_over_ranks(ctx: DistContext, n: int) -> int:
    t = torch.tensor([n], dtype=torch.int64, device=ctx.device if ctx.backend == "nccl" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


_DUMMY_TOKENS = np.zeros((1, 2), dtype=np.int32)  # a 2-token row: lp[0, 1] depends on every parameter
_DUMMY_LENGTHS = np.array([2], dtype=np.int32)


@dataclass
class _Shard:
    """This rank's part of a pending forward-backward."""

    tokens: np.ndarray  # [b, T] this rank's rows (b may be 0)
    lengths: np.ndarray  # [b]
    entropy: bool
    passes: int  # forwards every rank runs (the most micro-batches any rank has)
    micro: List[np.ndarray]  # this rank's micro-batches (rows of `tokens`); shorter than passes on some ranks
    lp: Optional[torch.Tensor] = None  # passes == 1: the forward kept with its graph
    ent: Optional[torch.Tensor] = None
    assignment: Optional[List[np.ndarray]] = None  # rank 0: global rows of each rank


class DistributedWorker(Worker):
    """The Worker on one rank of a torchrun group; every method is called on every rank, in the
    same order. Batch arguments are the whole batch on rank 0 and None on the other ranks;
    results are meaningful on rank 0 only."""

    split_scoring = False  # FSDP2/DDP: scores through the wrapped root's forward (worker.Worker)

    def __init__(self, ctx: DistContext, strategy: str) -> None:
        super().__init__()
        if strategy not in ("fsdp2", "ddp"):
            raise ValueError(f"model.distributed.strategy {strategy!r}: expected fsdp2 or ddp")
        self.ctx = ctx
        self.strategy = strategy
        self.ddp: Any = None  # DDP wrapper (ddp); self.model is the module inside
        self.mesh: Any = None
        self.mixed = False  # FSDP2 bf16 parameters in the forward (CUDA)
        self.shard: Optional[_Shard] = None

    # ------------------------------------------------------------------ build

    @property
    def rank0(self) -> bool:
        return self.ctx.rank == 0

    def _setup(self, opts: Options) -> None:
        super()._setup(opts)
        if self.device.type == "cuda":
            self.device = torch.device("cuda", self.ctx.local_rank)
        elif self.ctx.backend == "nccl":
            raise ValueError("backend nccl needs model.device on CUDA (or auto); use backend gloo on CPU")
        if self.opts.kv_cache == "auto":
            self.opts.kv_cache = "dynamic"
        self.mixed = self.strategy == "fsdp2" and self.device.type == "cuda" and self.dtype == torch.bfloat16

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        if self.mixed:
            return contextlib.nullcontext()  # FSDP2's MixedPrecisionPolicy casts the parameters
        return super()._autocast()

    def _construct(self, config: Any) -> Any:
        """The architecture on every rank, sharded (fsdp2) or placed (ddp), weights uninitialised."""
        from transformers import AutoModelForCausalLM, GenerationConfig

        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation=self.opts.attn_implementation)
        model.generation_config = GenerationConfig()
        if self.opts.gradient_checkpointing:
            set_activation_checkpointing(model, True)
        if self.strategy == "fsdp2":
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard

            if self.mesh is None:
                self.mesh = init_device_mesh(self.device.type, (self.ctx.world,))
            mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if self.mixed else MixedPrecisionPolicy()
            layer_types = set(getattr(model, "_no_split_modules", None) or [])
            for m in model.modules():
                if type(m).__name__ in layer_types:
                    fully_shard(m, mesh=self.mesh, mp_policy=mp)
            fully_shard(model, mesh=self.mesh, mp_policy=mp)
            model.to_empty(device=self.device)
            for m in model.modules():
                if isinstance(m, FSDPModule):
                    m.set_gradient_divide_factor(1.0)  # sum over ranks (see the module docstring)
                    m.set_force_sum_reduction_for_comms(True)  # plain SUM (gloo has no PREMUL_SUM)
        else:
            model.to_empty(device=self.device)
            model.tie_weights()
        return model

    def _fill(self, model: Any, real: Optional[Any]) -> None:
        """Copy rank 0's full model `real` (CPU) into the sharded/placed `model` on every rank."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        state = real.state_dict() if real is not None else {}
        set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
        # Buffers that are not in the state dict (rotary inv_freq) were left uninitialised.
        src = dict(real.named_buffers()) if real is not None else {}
        with torch.no_grad():
            for name, b in model.named_buffers():
                if real is not None:
                    b.copy_(src[name].to(b.device, b.dtype))
                dist.broadcast(b, src=0)

    def _build(self, real: Optional[Any]) -> Any:
        """A model on every rank from rank 0's full CPU model (None on the other ranks)."""
        box: List[Any] = [real.config if real is not None else None]
        dist.broadcast_object_list(box, src=0)
        if real is not None:
            self.saved_generation_config = checkpoint_generation_config(real)
        model = self._construct(box[0])
        self._fill(model, real)
        return model

    def _start(self, real: Optional[Any]) -> Dict[str, Any]:
        model = self._build(real)
        del real
        model.eval()
        self.model = model
        self.ddp = None
        if self.strategy == "ddp":
            from torch.nn.parallel import DistributedDataParallel

            ids = [self.device.index] if self.device.type == "cuda" else None
            self.ddp = DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)
        self.reference = None
        self.opt = None
        self.pending = None
        self.shard = None
        self.has_grad = False
        return self.info()

    def load(self, path: str, opts: Options) -> Dict[str, Any]:
        from transformers import AutoModelForCausalLM

        self._setup(opts)
        real = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=opts.attn_implementation) if self.rank0 else None
        self.model_id = path
        info = self._start(real)
        self._load_optimizer_state(path)
        return info

    def init(self, config: Dict[str, Any], opts: Options) -> Dict[str, Any]:
        from transformers import AutoConfig, AutoModelForCausalLM

        self._setup(opts)
        real = None
        cfg = dict(config)
        model_type = cfg.pop("model_type")
        if self.rank0:
            hf_cfg = AutoConfig.for_model(model_type, **cfg)
            hf_cfg._attn_implementation = opts.attn_implementation
            real = AutoModelForCausalLM.from_config(hf_cfg, dtype=torch.float32)
        self.model_id = f"random-init({model_type})"
        return self._start(real)

    def info(self) -> Dict[str, Any]:
        out = super().info()
        out["device"] = f"{out['device']} x {self.ctx.world} ranks ({self.strategy}, {self.ctx.backend})"
        if self.mixed:
            out["dtype"] = "bfloat16 (FSDP2 mixed precision; float32 sharded master weights and gradient reduction)"
        return out

    # ------------------------------------------------------------------ rows

    def _deal(self, tokens: Optional[np.ndarray], lengths: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray, Optional[List[np.ndarray]]]:
        """Scatter the rows round-robin: rank r gets rows r, r+W, ...; returns its tokens, lengths
        and (rank 0) every rank's row indices."""
        assignment: Optional[List[np.ndarray]] = None
        parts: Optional[List[Any]] = None
        if self.rank0:
            assert tokens is not None and lengths is not None
            B = tokens.shape[0]
            assignment = [np.arange(r, B, self.ctx.world) for r in range(self.ctx.world)]
            parts = [(tokens[a], lengths[a]) for a in assignment]
        tk, ln = _scatter(self.ctx, parts)
        if tk.shape[1] < 2:  # forwards here always take >= 2 positions (see _DUMMY_TOKENS)
            tk = np.concatenate([tk, np.zeros((tk.shape[0], 2 - tk.shape[1]), dtype=tk.dtype)], axis=1)
        return tk, ln, assignment

    def _collect(self, local: Dict[str, np.ndarray], assignment: Optional[List[np.ndarray]], shape: Optional[Tuple[int, int]]) -> Dict[str, np.ndarray]:
        """Gather each rank's per-row outputs into [B, T] arrays on rank 0."""
        got = _gather(self.ctx, local)
        if got is None:
            return {}
        assert assignment is not None and shape is not None
        out: Dict[str, np.ndarray] = {}
        for key in local:
            full = np.zeros(shape, dtype=np.float32)
            for rows, part in zip(assignment, got):
                if len(rows):
                    w = min(shape[1], part[key].shape[1])
                    full[rows, :w] = part[key][:, :w]
            out[key] = full
        return out

    def _rows(self, tokens: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> Tuple[torch.Tensor, torch.Tensor, int]:
        T = max(2, int(lengths[rows].max()))
        ids = torch.from_numpy(tokens[rows, :T].astype(np.int64)).to(self.device)
        lens = torch.from_numpy(lengths[rows].astype(np.int64)).to(self.device)
        return ids, lens, T

    def _dummy(self) -> Tuple[torch.Tensor, torch.Tensor, int]:
        return self._rows(_DUMMY_TOKENS, _DUMMY_LENGTHS, np.arange(1))

    def _reshard(self) -> None:
        """FSDP2 keeps the root's parameters gathered after a forward (for the backward that
        usually follows); free them after forwards that have no backward, and before reading or
        writing parameters (otherwise named_parameters() yields the gathered copies)."""
        if self.strategy != "fsdp2":
            return
        from torch.distributed.fsdp import FSDPModule

        for model in (self.model, self.reference):
            if model is not None:
                for m in model.modules():
                    if isinstance(m, FSDPModule):
                        m.reshard()

    def _synced(self) -> bool:
        """Whether forwards are collectives (every rank must run the same number)."""
        return self.strategy == "fsdp2"

    def _passes(self, micro: List[np.ndarray]) -> int:
        n = max(1, len(micro))
        return _max_over_ranks(self.ctx, n) if self._synced() else n

    @torch.no_grad()
    def _score_rows(self, model: Any, tk: np.ndarray, ln: np.ndarray, entropy: bool, passes: Optional[int] = None) -> Dict[str, np.ndarray]:
        micro = self._micro_batches(ln) if len(ln) else []
        if passes is None:
            passes = self._passes(micro)
        b, T = tk.shape
        lp_out = np.zeros((b, T), dtype=np.float32)
        ent_out = np.zeros((b, T), dtype=np.float32)
        for i in range(passes):
            if i < len(micro):
                rows = micro[i]
                ids, lens, Tm = self._rows(tk, ln, rows)
                lp, ent = self._token_scores(model, ids, lens, entropy)
                lp_out[rows, :Tm] = lp.cpu().numpy()
                if ent is not None:
                    ent_out[rows, :Tm] = ent.cpu().numpy()
            elif self._synced():
                ids, lens, _ = self._dummy()
                self._token_scores(model, ids, lens, entropy)
        return {"logprobs": lp_out, "entropy": ent_out} if entropy else {"logprobs": lp_out}

    # ------------------------------------------------------------------ scoring and training

    def score(self, tokens: Optional[np.ndarray], lengths: Optional[np.ndarray], which: str, entropy: bool) -> Dict[str, np.ndarray]:  # type: ignore[override]
        tk, ln, assignment = self._deal(tokens, lengths)
        with (self._reference_model() if which == "reference" else contextlib.nullcontext(self.model)) as m:
            local = self._score_rows(m, tk, ln, entropy)
        self._reshard()
        return self._collect(local, assignment, None if tokens is None else tokens.shape)

    def _train_model(self) -> Any:
        return self.ddp if self.ddp is not None else self.model

    def forward(self, tokens: Optional[np.ndarray], lengths: Optional[np.ndarray], entropy: bool, score_from: int = 0) -> Dict[str, np.ndarray]:  # type: ignore[override]
        self.pending = None
        self.shard = None
        tk, ln, assignment = self._deal(tokens, lengths)
        micro = self._micro_batches(ln) if len(ln) else []
        # DDP reduces in every backward, so its ranks must also agree on the number of passes.
        passes = _max_over_ranks(self.ctx, max(1, len(micro)))
        sh = _Shard(tokens=tk, lengths=ln, entropy=entropy, passes=passes, micro=micro, assignment=assignment)
        b, T = tk.shape
        if passes == 1:
            self._train_mode()
            try:
                ids, lens, Tm = self._rows(tk, ln, np.arange(b)) if b else self._dummy()
                sh.lp, sh.ent = self._token_scores(self._train_model(), ids, lens, entropy)
            finally:
                self.model.eval()
            local = {"logprobs": np.zeros((b, T), dtype=np.float32)}
            if b:
                local["logprobs"][:, :Tm] = sh.lp.detach().cpu().numpy()
            if entropy:
                local["entropy"] = np.zeros((b, T), dtype=np.float32)
                if b and sh.ent is not None:
                    local["entropy"][:, :Tm] = sh.ent.detach().cpu().numpy()
        else:
            # Too large for one graph: score now, recompute each micro-batch with a graph in backward.
            local = self._score_rows(self.model, tk, ln, entropy, passes=passes if self._synced() else None)
        self.shard = sh
        self.pending = Pending(tokens=tokens if tokens is not None else tk, lengths=lengths if lengths is not None else ln, entropy=entropy)
        return self._collect(local, assignment, None if tokens is None else tokens.shape)

    def backward(self, d_lp: Optional[np.ndarray], d_ent: Optional[np.ndarray]) -> None:
        sh = self.shard
        self.shard = None
        self.pending = None
        if sh is None:
            raise RuntimeError("backward without a preceding forward")
        parts: Optional[List[Any]] = None
        if self.rank0:
            assert sh.assignment is not None
            parts = [(None if d_lp is None else d_lp[a], None if d_ent is None else d_ent[a]) for a in sh.assignment]
        my_lp, my_ent = _scatter(self.ctx, parts)
        drop = my_lp is None  # the client dropped this batch (the same on every rank)
        # DDP averages the ranks' gradients; scaling the cotangents by W turns that into the sum.
        scale = float(self.ctx.world) if self.ddp is not None else 1.0
        b, T = sh.tokens.shape

        def cot(d: Optional[np.ndarray], rows: np.ndarray, Tm: int) -> torch.Tensor:
            if d is None:
                return torch.zeros((len(rows), Tm), dtype=torch.float32, device=self.device)
            part = np.zeros((len(rows), Tm), dtype=np.float32)
            w = min(Tm, d.shape[1])
            part[:, :w] = d[rows, :w]
            return torch.from_numpy(part).to(self.device) * scale

        if sh.passes == 1:
            assert sh.lp is not None
            Tm = sh.lp.shape[1]
            rows = np.arange(b)
            outs = [sh.lp]
            grads = [cot(my_lp, rows, Tm) if b else torch.zeros_like(sh.lp)]
            if my_ent is not None and sh.ent is not None and b:
                outs.append(sh.ent)
                grads.append(cot(my_ent, rows, Tm))
            torch.autograd.backward(outs, grads)
        elif not drop:
            self._train_mode()
            try:
                for i in range(sh.passes):
                    if i < len(sh.micro):
                        rows = sh.micro[i]
                        ids, lens, Tm = self._rows(sh.tokens, sh.lengths, rows)
                        lp, ent = self._token_scores(self._train_model(), ids, lens, my_ent is not None)
                        outs = [lp]
                        grads = [cot(my_lp, rows, Tm)]
                        if my_ent is not None and ent is not None:
                            outs.append(ent)
                            grads.append(cot(my_ent, rows, Tm))
                    else:
                        ids, lens, _ = self._dummy()
                        lp, _ = self._token_scores(self._train_model(), ids, lens, False)
                        outs, grads = [lp], [torch.zeros_like(lp)]
                    torch.autograd.backward(outs, grads)
            finally:
                self.model.eval()
        if not drop:
            self.has_grad = True

    def zero_grad(self) -> None:
        super().zero_grad()
        self.shard = None

    # ------------------------------------------------------------------ reference

    def set_reference(self, path: Optional[str]) -> None:
        from transformers import AutoModelForCausalLM

        self._reshard()
        self.reference = None
        if path is not None:
            real = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=self.opts.attn_implementation) if self.rank0 else None
            ref = self._build(real)
        elif self.strategy == "ddp":
            ref = copy.deepcopy(self.model)
        else:
            # Same architecture and sharding as the policy: copy each rank's local shards.
            ref = self._construct(self.model.config)
            own = dict(self.model.named_parameters())
            with torch.no_grad():
                for name, q in ref.named_parameters():
                    q.to_local().copy_(own[name].to_local())
                bufs = dict(self.model.named_buffers())
                for name, b in ref.named_buffers():
                    b.copy_(bufs[name])
        ref.eval()
        for q in ref.parameters():
            q.requires_grad_(False)
        self.reference = ref

    @contextlib.contextmanager
    def _reference_model(self) -> Iterator[Any]:
        if self.reference is None:
            raise RuntimeError("score(model='reference') called before setReference()")
        yield self.reference

    # ------------------------------------------------------------------ sampling

    def _generate_kwargs(self) -> Dict[str, Any]:
        # FSDP2 forwards are all-gathers: ranks whose rows all stopped keep stepping with the others.
        return {"synced_gpus": True} if self._synced() else {}

    def sample(self, prompts: Optional[List[np.ndarray]], h: Dict[str, Any]) -> Dict[str, np.ndarray]:  # type: ignore[override]
        n = int(h["n"])
        parts: Optional[List[Any]] = None
        blocks: Optional[List[np.ndarray]] = None
        if self.rank0:
            assert prompts is not None
            R = len(prompts) * n
            blocks = np.array_split(np.arange(R), self.ctx.world)
            parts = [[prompts[int(r) // n] for r in blk] for blk in blocks]
        mine: List[np.ndarray] = _scatter(self.ctx, parts)
        real = len(mine)
        if not mine:
            mine = [np.zeros(1, dtype=np.int32)]  # keeps this rank in the synced generate
        local = Worker.sample(self, mine, {**h, "n": 1, "seed": int(h.get("seed", 0)) + self.ctx.rank})
        self._reshard()
        local = {k: v[:real] for k, v in local.items()}
        got = _gather(self.ctx, local)
        if got is None:
            return {}
        return {k: np.concatenate([g[k] for g in got], axis=0) for k in local}

    # ------------------------------------------------------------------ checkpoints

    def save(self, path: str, optimizer: bool) -> None:
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        self._reshard()
        state = get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        opt_state = self._gather_optimizer_state() if optimizer and self.opt is not None else None
        if self.rank0:
            os.makedirs(path, exist_ok=True)
            self.model.save_pretrained(path, state_dict=state, safe_serialization=True)
            self.saved_generation_config.save_pretrained(path)
            if opt_state is not None:
                from safetensors.torch import save_file

                save_file(opt_state, os.path.join(path, "optimizer.safetensors"))

    def load_weights(self, path: str) -> None:
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        self.zero_grad()
        self._reshard()
        state: Dict[str, torch.Tensor] = {}
        if self.rank0:
            state = read_hf_weights(path, self.model)
            # A tied head is absent from the file: give each name of a shared parameter its tensor.
            by_param: Dict[int, str] = {}
            for name, p in self.model.named_parameters(remove_duplicate=False):
                if name in state:
                    by_param[id(p)] = name
            for name, p in self.model.named_parameters(remove_duplicate=False):
                if name not in state and id(p) in by_param:
                    state[name] = state[by_param[id(p)]]
        set_model_state_dict(self.model, state, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
        self.opt = None
        self._load_optimizer_state(path)

    def _gather_optimizer_state(self) -> Dict[str, torch.Tensor]:
        """optimizer.safetensors (m:<name>, v:<name>, step), all-gathered; complete on rank 0."""
        assert self.opt is not None
        out: Dict[str, torch.Tensor] = {}
        step = 0.0
        for name, p in self._named_trainable():
            st = self.opt.state.get(p)
            if not st:
                continue
            out[f"m:{name}"] = full_tensor(st["exp_avg"]).detach().float().cpu().contiguous()
            out[f"v:{name}"] = full_tensor(st["exp_avg_sq"]).detach().float().cpu().contiguous()
            step = float(st["step"])
        out["step"] = torch.tensor([step], dtype=torch.float32)
        return out

    def _save_optimizer_state(self, path: str) -> None:
        from safetensors.torch import save_file

        state = self._gather_optimizer_state()
        if self.rank0:
            save_file(state, os.path.join(path, "optimizer.safetensors"))

    def _load_optimizer_state(self, path: str) -> None:
        """Rank 0 reads optimizer.safetensors; each tensor is broadcast and every rank keeps its shard."""
        from safetensors.torch import load_file

        state: Dict[str, torch.Tensor] = {}
        if self.rank0:
            f = os.path.join(path, "optimizer.safetensors")
            state = load_file(f) if os.path.isfile(f) else {}
        box: List[Any] = [(sorted(state.keys()), float(state["step"].reshape(-1)[0]) if "step" in state else 0.0)]
        dist.broadcast_object_list(box, src=0)
        keys, step = set(box[0][0]), box[0][1]
        if not keys:
            return
        opt = self._optimizer()
        for name, p in self._named_trainable():
            if f"m:{name}" not in keys or f"v:{name}" not in keys:
                continue
            entry: Dict[str, Any] = {"step": torch.tensor(step, dtype=torch.float32, device=p.device if self.device.type == "cuda" else "cpu")}
            for key, slot in (("m", "exp_avg"), ("v", "exp_avg_sq")):
                full = state[f"{key}:{name}"].reshape(p.shape).to(self.device, torch.float32) if self.rank0 else torch.empty(tuple(p.shape), dtype=torch.float32, device=self.device)
                dist.broadcast(full, src=0)
                entry[slot] = _like(p, full)
            opt.state[p] = entry

    # ------------------------------------------------------------------ inspection (tests)

    def get_tensor(self, name: str, grad: bool) -> Optional[np.ndarray]:
        self._reshard()
        return super().get_tensor(name, grad)

    def set_tensor(self, name: str, data: np.ndarray) -> None:
        self._reshard()
        p = dict(self.model.named_parameters())[name]
        full = torch.from_numpy(data).reshape(tuple(p.shape)).to(self.device, p.dtype)
        with torch.no_grad():
            if hasattr(p, "to_local"):
                p.to_local().copy_(_like(p, full).to_local())
            else:
                p.copy_(full)


def _like(p: torch.Tensor, full: torch.Tensor) -> torch.Tensor:
    """`full` (the same whole tensor on every rank) laid out like parameter p: its shard when p
    is a DTensor (no communication), else itself."""
    mesh = getattr(p, "device_mesh", None)
    if mesh is None:
        return full.clone()
    from torch.distributed.tensor import distribute_tensor

    return distribute_tensor(full, mesh, p.placements, src_data_rank=None)  # type: ignore[attr-defined]
