"""``jax.profiler.device_memory_profile``: the live device buffers as a pprof profile.

As JAX's, the result is a gzip-compressed ``perftools.profiles.Profile`` protocol buffer
(https://github.com/google/pprof/blob/main/proto/profile.proto), readable by
``pprof`` (``pprof -top profile.prof``). Its two sample types are JAX's,
``allocations``/``count`` and ``space``/``bytes``. pyjax has no allocation stacks, so each
sample is one live array, located at a function named after its type (``f32[1000]``) so that
pprof totals the memory by shape and dtype, and labelled with ``device``, ``shape`` and
``dtype``. The protobuf is written here by hand (a few field kinds suffice)."""
from __future__ import annotations

import gzip

from pyjax._src.runtime.protobuf_wire import (
    bytes_field as _bytes_field, int_field as _int_field, varint as _varint)


class _Strings:
    def __init__(self):
        self.index = {"": 0}

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.index)
        return i


def profile_bytes(arrays) -> bytes:
    """The gzipped pprof Profile of ``arrays`` (live device arrays)."""
    strings = _Strings()
    out = bytearray()
    for kind, unit in (("allocations", "count"), ("space", "bytes")):
        out += _bytes_field(1, _int_field(1, strings(kind)) + _int_field(2, strings(unit)))
    functions = {}  # type string -> function/location id
    for x in arrays:
        aval = x.aval
        name = aval.str_short()
        fid = functions.get(name)
        if fid is None:
            fid = functions[name] = len(functions) + 1
        nbytes = aval.size * aval.dtype.itemsize
        labels = b"".join(
            _bytes_field(3, _int_field(1, strings(k)) + _int_field(2, strings(v)))
            for k, v in (("device", str(x._buf.device)), ("shape", str(aval.shape)),
                         ("dtype", aval.dtype.name)))
        out += _bytes_field(2, _int_field(1, fid) + _int_field(2, 1) + _int_field(2, nbytes)
                            + labels)
    for name, fid in functions.items():
        line = _bytes_field(4, _int_field(1, fid))
        out += _bytes_field(4, _int_field(1, fid) + line)  # location, same id as its function
        out += _bytes_field(5, _int_field(1, fid) + _int_field(2, strings(name))
                            + _int_field(3, strings(name)))
    for s in strings.index:  # in index order: dicts keep insertion order
        out += _bytes_field(6, s.encode())
    out += _int_field(14, strings("space"))  # default sample type
    return gzip.compress(bytes(out))


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live device buffers as a gzipped pprof profile (see the module docstring)."""
    from pyjax._src.api import live_arrays
    return profile_bytes(live_arrays(backend))


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Write ``device_memory_profile(backend)`` to ``filename``."""
    data = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(data)
