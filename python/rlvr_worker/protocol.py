"""The framed binary protocol between the TypeScript client and the worker.

One message = one frame on the byte stream:

    u32 LE  payload length N (bytes that follow)
    payload:
      u32 LE  header length H
      H bytes UTF-8 JSON header (an object; `tensors` lists the buffers that follow)
      zero padding to a multiple of 8 (counted from the payload start)
      for each entry of header["tensors"], in order: its raw little-endian bytes, then zero
      padding to a multiple of 8

A tensor entry is {"name": str, "dtype": "float32" | "int32", "shape": [int, ...]}; its byte size
is prod(shape) * 4. Numbers never travel as JSON arrays. Requests carry "id" and "op"; replies
carry the same "id" and "ok" (true, or false with "error" and "traceback").
"""

from __future__ import annotations

import json
import struct
from typing import IO, Any, Dict, Tuple

import numpy as np

MAX_MESSAGE_BYTES = 1 << 31  # 2 GiB; a larger batch should be split by the client
_DTYPES: Dict[str, "np.dtype[Any]"] = {"float32": np.dtype("<f4"), "int32": np.dtype("<i4")}

Tensors = Dict[str, "np.ndarray[Any, Any]"]


class ProtocolError(Exception):
    """The byte stream is not a valid frame (the worker cannot resynchronise and exits)."""


def _pad8(n: int) -> int:
    return (8 - n % 8) % 8


def read_exact(stream: IO[bytes], n: int) -> bytes:
    """Read exactly n bytes; raises EOFError at a clean end of stream before any byte."""
    chunks = []
    got = 0
    while got < n:
        b = stream.read(n - got)
        if not b:
            if got == 0:
                raise EOFError
            raise ProtocolError(f"stream ended inside a frame ({got} of {n} bytes)")
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def decode(payload: bytes) -> Tuple[Dict[str, Any], Tensors]:
    """Split a payload into its JSON header and its tensors (copies, writable, native order)."""
    if len(payload) < 4:
        raise ProtocolError("payload shorter than its header length field")
    (hlen,) = struct.unpack_from("<I", payload, 0)
    if 4 + hlen > len(payload):
        raise ProtocolError(f"header length {hlen} exceeds payload {len(payload)}")
    header = json.loads(payload[4 : 4 + hlen].decode("utf-8"))
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    off = 4 + hlen
    off += _pad8(off)
    tensors: Tensors = {}
    for spec in header.get("tensors", []):
        dt = _DTYPES.get(spec["dtype"])
        if dt is None:
            raise ProtocolError(f"tensor {spec.get('name')}: unsupported dtype {spec['dtype']!r}")
        shape = tuple(int(s) for s in spec["shape"])
        count = int(np.prod(shape)) if shape else 1
        nbytes = count * dt.itemsize
        if off + nbytes > len(payload):
            raise ProtocolError(f"tensor {spec['name']}: {nbytes} bytes past the end of the payload")
        arr = np.frombuffer(payload, dtype=dt, count=count, offset=off).reshape(shape).copy()
        tensors[str(spec["name"])] = arr
        off += nbytes + _pad8(nbytes)
    return header, tensors


def encode(header: Dict[str, Any], tensors: Tensors | None = None) -> bytes:
    """Build one frame (length prefix included) from a header and float32/int32 arrays."""
    tensors = tensors or {}
    specs = []
    bufs = []
    for name, arr in tensors.items():
        if arr.dtype.kind == "f":
            a = np.ascontiguousarray(arr, dtype="<f4")
            dtype = "float32"
        elif arr.dtype.kind in "iub":
            a = np.ascontiguousarray(arr, dtype="<i4")
            dtype = "int32"
        else:
            raise TypeError(f"tensor {name}: dtype {arr.dtype} cannot be sent (float32 or int32 only)")
        specs.append({"name": name, "dtype": dtype, "shape": list(a.shape)})
        bufs.append(a.tobytes())
    head = json.dumps({**header, "tensors": specs}, separators=(",", ":")).encode("utf-8")
    parts = [struct.pack("<I", len(head)), head, b"\0" * _pad8(4 + len(head))]
    for b in bufs:
        parts.append(b)
        parts.append(b"\0" * _pad8(len(b)))
    payload = b"".join(parts)
    if len(payload) >= MAX_MESSAGE_BYTES:
        raise ProtocolError(f"reply of {len(payload)} bytes exceeds the 2 GiB frame limit")
    return struct.pack("<I", len(payload)) + payload


def read_message(stream: IO[bytes]) -> Tuple[Dict[str, Any], Tensors]:
    """Read one frame; raises EOFError when the client closed the stream."""
    (n,) = struct.unpack("<I", read_exact(stream, 4))
    return decode(read_exact(stream, n))


def write_message(stream: IO[bytes], header: Dict[str, Any], tensors: Tensors | None = None) -> None:
    stream.write(encode(header, tensors))
    stream.flush()
