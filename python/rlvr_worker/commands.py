"""What a protocol op is: `Command` (a handler, which ranks run it, its rank-0 check) and the
`Session` the handlers share. The table itself (op name -> Command) is ops.COMMANDS.

  - A handler takes (session, header, tensors) and returns (reply header, reply tensors); on
    ranks other than 0 its reply is discarded and `tensors` is empty unless send_tensors=True.
  - ranks="all": every rank runs it, in the same order (the handler makes the collectives it
    needs; in a single process it just runs). ranks="rank0": only rank 0 runs it (no collectives).
  - check: runs on rank 0 before the request goes to the other ranks; what it raises is an
    ordinary error reply. Under torchrun an error raised inside a ranks="all" handler is replied
    and then ends the worker group, since the ranks' states may no longer agree.

Adding commands (e.g. the vLLM rollouts of vllm_colocated.py): define the handlers in their own
module with a function returning {op name: Command(handler, ranks=...)}, and pass its result to
ops.register in ops.py (the one place the table is filled).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Dict, Optional, Tuple

from .protocol import Tensors
from .worker import DEFAULT_TENANT, Worker

Handler = Callable[["Session", Dict[str, Any], Tensors], Tuple[Dict[str, Any], Tensors]]
Check = Callable[["Session", Dict[str, Any], Tensors], None]


@dataclass
class Command:
    """One protocol op: its handler, which ranks run it, and its rank-0 validation."""

    fn: Handler
    ranks: str = "all"  # "all" | "rank0"
    send_tensors: bool = False  # broadcast the request's tensors to every rank (else the handler scatters them)
    check: Optional[Check] = None
    # Runs as the request's tenant (its "tenant" field, else the default; Worker.as_tenant), check included.
    tenant: bool = True


class Session:
    """What the command handlers share: the loaded worker and, under torchrun, the process group."""

    def __init__(self, dist: Any = None) -> None:
        self.worker: Optional[Worker] = None
        self.dist = dist  # distributed.DistContext, or None in a single process

    @property
    def is_rank0(self) -> bool:
        return self.dist is None or self.dist.rank == 0

    def need(self) -> Worker:
        if self.worker is None:
            raise RuntimeError("no model loaded (send load or init first)")
        return self.worker

    def scope(self, cmd: Optional[Command], header: Dict[str, Any]) -> ContextManager[None]:
        """The context a request runs in: as its tenant (one process, a model loaded, a command that
        acts on a tenant), else none."""
        if cmd is None or not cmd.tenant or self.worker is None or self.dist is not None:
            return contextlib.nullcontext()
        return self.worker.as_tenant(str(header.get("tenant", DEFAULT_TENANT)))
