"""`python -m rlvr_worker`: serve the engine contract on stdin/stdout until stdin closes.

stdout carries protocol frames only: at start the real stdout is moved to a private descriptor
and descriptor 1 is pointed at stderr, so a stray print() from any library cannot corrupt the
stream. stderr is free-form log text (the client forwards it).

Under torchrun (`python -m torch.distributed.run ... -m rlvr_worker`, which sets RANK,
WORLD_SIZE and LOCAL_RANK) every rank starts here: rank 0 reads the requests and writes the
replies; the other ranks never touch stdin or stdout and receive each request from rank 0
(distributed.py). The commands themselves are the table ops.COMMANDS.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from typing import IO, Any, Dict, Optional

from .protocol import ProtocolError, Tensors, read_message, write_message


def _private_stdout() -> IO[bytes]:
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=0)


def _log(msg: str) -> None:
    sys.stderr.write(f"[rlvr-worker] {msg}\n")
    sys.stderr.flush()


def _error(rid: Any, e: BaseException, note: str = "") -> Dict[str, Any]:
    return {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}{note}", "traceback": traceback.format_exc()}


_FAULT_COUNTS: dict = {}


def _inject_fault(op: str) -> None:
    """Fault injection for tests: RLVR_WORKER_KILL_AT="forward:3" makes this process SIGKILL itself
    when it receives its 3rd forward request (a worker that dies mid-call, as after an OOM kill)."""
    spec = os.environ.get("RLVR_WORKER_KILL_AT")
    if not spec:
        return
    want, _, nth = spec.partition(":")
    if op != want:
        return
    _FAULT_COUNTS[op] = _FAULT_COUNTS.get(op, 0) + 1
    if _FAULT_COUNTS[op] == int(nth or 1):
        _log(f"RLVR_WORKER_KILL_AT={spec}: killing this worker (fault injection)")
        os.kill(os.getpid(), signal.SIGKILL)


def serve_single(inp: IO[bytes], out: IO[bytes]) -> None:
    """One process: read a request, run its command, write the reply; until EOF or shutdown."""
    from .commands import Session
    from .ops import COMMANDS

    session = Session()
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
        cmd = COMMANDS.get(op)
        _inject_fault(op)
        try:
            if cmd is None:
                raise ValueError(f"unknown op {op!r}")
            with session.scope(cmd, header):
                if cmd.check is not None:
                    cmd.check(session, header, tensors)
                reply, rt = cmd.fn(session, header, tensors)
            write_message(out, {"id": rid, "ok": True, **reply}, rt)
        except Exception as e:  # noqa: BLE001 - every error goes back to the client
            write_message(out, _error(rid, e))


def serve_distributed(inp: Optional[IO[bytes]], out: Optional[IO[bytes]]) -> None:
    """Under torchrun: rank 0 serves the client and relays each request to the other ranks."""
    from .distributed import init_from_env, receive_request, send_request
    from .commands import Session
    from .ops import COMMANDS

    ctx = init_from_env()
    session = Session(ctx)
    _log(f"rank {ctx.rank} of {ctx.world} up ({ctx.backend}, {ctx.device})")
    while True:
        tensors: Tensors = {}
        if ctx.rank == 0:
            assert inp is not None and out is not None
            try:
                header, tensors = read_message(inp)
            except EOFError:
                header = {"op": "shutdown"}
            except ProtocolError as e:
                _log(f"protocol error, exiting: {e}")
                send_request(ctx, {"op": "shutdown"}, {})
                sys.exit(3)
            rid = header.get("id")
            op = str(header.get("op"))
            cmd = COMMANDS.get(op)
            if op != "shutdown":
                try:
                    if cmd is None:
                        raise ValueError(f"unknown op {op!r}")
                    if cmd.check is not None:
                        cmd.check(session, header, tensors)
                    if cmd.ranks == "rank0":
                        reply, rt = cmd.fn(session, header, tensors)
                        write_message(out, {"id": rid, "ok": True, **reply}, rt)
                        continue
                except Exception as e:  # noqa: BLE001 - rank 0 alone: an ordinary error reply
                    write_message(out, _error(rid, e))
                    continue
            send_request(ctx, header, tensors if cmd is not None and cmd.send_tensors else {})
        else:
            header, tensors = receive_request(ctx)
            rid = header.get("id")
            op = str(header.get("op"))
            cmd = COMMANDS.get(op)
        if op == "shutdown":
            if out is not None and rid is not None:
                write_message(out, {"id": rid, "ok": True})
            ctx.close()
            # Leave without interpreter teardown: the process group's C++ threads can still be
            # joinable then, and their std::terminate (SIGABRT, "terminate called without an
            # active exception") turned a clean shutdown into torchrun exit 1 now and then
            # (test/scale/distributed.test.ts, two nodes). Nothing is left to write.
            if out is not None:
                out.flush()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        assert cmd is not None
        try:
            reply, rt = cmd.fn(session, header, tensors)
        except Exception as e:  # noqa: BLE001
            # The ranks may now disagree (one failed inside a collective sequence): reply, then
            # end the whole group; torchrun stops the other ranks.
            _log(f"rank {ctx.rank}: {op} failed, ending the worker group:\n{traceback.format_exc()}")
            if out is not None:
                write_message(out, _error(rid, e, " (under torchrun this ends the worker group; create a new engine)"))
            os._exit(1)
        if out is not None:
            write_message(out, {"id": rid, "ok": True, **reply}, rt)


def main() -> None:
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ and "LOCAL_RANK" in os.environ:
        if os.environ["RANK"] == "0":
            serve_distributed(sys.stdin.buffer, _private_stdout())
        else:
            # Only rank 0 may write frames or read requests (all ranks inherit torchrun's stdio).
            os.dup2(2, 1)
            sys.stdout = sys.stderr
            serve_distributed(None, None)
        return
    serve_single(sys.stdin.buffer, _private_stdout())


if __name__ == "__main__":
    main()
