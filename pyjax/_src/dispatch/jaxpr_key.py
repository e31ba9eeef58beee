"""A canonical key of a lowering: what ``lowering.lower_module`` is given (the Jaxpr and its
arguments) and everything global it reads, hashed so that a process with a warm persistent
compilation cache finds the module text on disk instead of lowering again
(docs/first_call.md).

The key only stands in for the lowering: the text it finds is then compiled (or loaded) under
the module-text key as before, so the compile settings, the plugin and ``XLA_FLAGS`` are keyed
there. The key must change whenever the text could: it covers every equation (primitive,
params, variables and their avals with weak types, literals, name stacks and source
locations), the constvars, the lowering arguments (name, donation, replicas, partitions,
platform, shardings, const values), the thread's lowering context (``pmap``'s bound axes,
SPMD partitioning), every ``pyjax.config`` value, the device count and the
identity of pyjax's own source files (a changed lowering rule changes it). Anything it cannot
encode exactly (a callable param, an unknown object, a primitive or lowering rule that is not
pyjax's own, an FFI call) makes ``lowering_key`` return None: that program is lowered as before.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
import struct
import threading

import numpy as np

from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.config import config
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from pyjax._src.core.primitive import registry
from pyjax._src.core.source_info import SourceInfo
from pyjax._src.lax.collective_lowering import lowering_context

_FORMAT = b"pyjax-lowering-key-v1"


class _Unkeyable(Exception):
    """A part of the program that cannot be encoded exactly."""


def lowering_key(jaxpr: Jaxpr, name, lower_kw, extra=()) -> str | None:
    """The SHA-256 key of lowering ``jaxpr`` with ``lower_kw`` (``lower_module``'s keyword
    arguments) in the current configuration, or None when part of it cannot be encoded."""
    out = [_FORMAT, _source_identity()]
    try:
        _enc(("name", name, "kw", tuple(sorted(lower_kw.items())), "extra", tuple(extra),
              "context", lowering_context()), out)
        _enc_config(out)
        _enc_jaxpr(jaxpr, out)
    except _Unkeyable:
        return None
    return hashlib.sha256(b"".join(out)).hexdigest()


def _enc_config(out):
    """Every flag's value: a flag that changes the lowering (x64, matmul precision, ...)
    must change the key; one that does not only costs a miss. A value of a type
    ``_enc`` does not know (a device, a mesh) is keyed by its repr."""
    for k, v in sorted(config.values.items()):
        _enc(k, out)
        sub = []
        try:
            _enc(v, sub)
        except _Unkeyable:
            sub = []
            _enc(("repr", repr(v)), sub)
        out.extend(sub)


_source_id = []  # one digest, computed by a thread started at import or by the first key


def _source_identity() -> bytes:
    """Size and modification time of every file of the installed pyjax package (once per
    process): pyjax's version string does not change when a lowering rule does."""
    if not _source_id:
        found = []
        pending = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
        while pending:
            with os.scandir(pending.pop()) as it:
                for e in it:
                    if e.name.endswith(".py"):
                        st = e.stat()
                        found.append((e.path, st.st_size, st.st_mtime_ns))
                    elif e.is_dir() and e.name != "__pycache__":
                        pending.append(e.path)
        found.sort()
        _source_id[:] = [hashlib.sha256(repr(found).encode()).digest()]
    return _source_id[0]


def _enc_jaxpr(jaxpr: Jaxpr, out):
    numbers = {}

    def var(v):
        if isinstance(v, Literal):
            out.append(b"L")
            _enc_aval(v.aval, out)
            _enc(v.val, out)
            return
        n = numbers.get(id(v))
        if n is None:
            n = numbers[id(v)] = len(numbers)
            out.append(b"V%d" % n)
            _enc_aval(v.aval, out)
        else:
            out.append(b"v%d" % n)

    out.append(b"J(")
    for group in (jaxpr.constvars, jaxpr.invars):
        out.append(b"[")
        for v in group:
            var(v)
    for e in jaxpr.eqns:
        p = e.primitive
        if not _own_rule(p):
            raise _Unkeyable(p.name)
        out.append(b"E" + p.name.encode())
        for v in e.invars:
            var(v)
        out.append(b"->")
        for v in e.outvars:
            var(v)
        params = e.params
        if p.name in _BODY_ONLY and p.lower.__qualname__ == "_call_lower":
            # lowered as their body alone (custom_derivatives._call_lower): the derivative
            # rules (Python callables) and the body's consts are not part of the program
            params = {"call_jaxpr": params["call_jaxpr"].jaxpr}
        _enc(tuple(sorted(params.items())), out)
        _enc(e.name_stack, out)
        si = e.source_info
        _enc(None if si is None else (si.file, si.line, si.function), out)
    out.append(b"O")
    for v in jaxpr.outvars:
        var(v)
    out.append(b")")


# Primitives whose lowering rule is ``custom_derivatives._call_lower`` (lowers ``call_jaxpr``'s
# Jaxpr and reads no other param; tests/runtime/test_lowering_key.py checks its signature).
_BODY_ONLY = ("custom_jvp_call", "custom_vjp_call")


def _own_rule(p) -> bool:
    """Whether ``p`` is one of pyjax's primitives with pyjax's own lowering rule, which
    pyjax's files (``_source_identity``) cover: not a user's primitive (not in the registry),
    not a rule a user made (``mlir.lower_fun``, ``ffi.ffi_lowering``: their code and target
    are not in the equation), not an FFI call (lowering checks this process's registered
    targets)."""
    rule = getattr(p, "lower", None)
    return (registry.get(p.name) is p and rule is not None
            and getattr(rule, "__module__", "").startswith("pyjax.")
            and rule.__module__ != "pyjax._src.ffi"
            and not getattr(rule, "_pyjax_lower_fun", False))


def _enc_aval(a, out):
    if type(a) is not ShapedArray or not isinstance(a.dtype, np.dtype):
        raise _Unkeyable(type(a).__name__)
    out.append(b"A%s%r%d" % (a.dtype.str.encode(), a.shape, bool(a.weak_type)))


def _enc(x, out):
    """Appends an unambiguous encoding of ``x`` (type-tagged, length-prefixed)."""
    t = type(x)
    if x is None or t is bool:
        out.append(b"N" if x is None else (b"T" if x else b"F"))
    elif t is int:
        out.append(b"i%d;" % x)
    elif t is float or t is complex:
        out.append(b"f" + struct.pack("<d", x) if t is float
                   else b"c" + struct.pack("<dd", x.real, x.imag))
    elif t is str or t is bytes:
        b = x.encode() if t is str else x
        out.append(b"s%d:" % len(b) if t is str else b"b%d:" % len(b))
        out.append(b)
    elif t is tuple or t is list or (isinstance(x, tuple) and hasattr(x, "_fields")):
        out.append(b"(%s%d:" % (_type_name(t), len(x)))
        for v in x:
            _enc(v, out)
        out.append(b")")
    elif t is dict:
        _enc(("dict",) + tuple(sorted(x.items(), key=lambda kv: repr(kv[0]))), out)
    elif t is frozenset or t is set:
        parts = []
        for v in x:
            sub = []
            _enc(v, sub)
            parts.append(b"".join(sub))
        out.append(b"{%d:" % len(parts) + b"".join(sorted(parts)) + b"}")
    elif isinstance(x, np.dtype):
        out.append(b"d" + x.str.encode() + b";")
    elif isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        if a.dtype.hasobject:
            raise _Unkeyable("object array")
        data = np.ascontiguousarray(a).tobytes()
        out.append(b"a%s%r%d:" % (a.dtype.str.encode(), a.shape, len(data)))
        out.append(data)
    elif isinstance(x, enum.Enum):
        out.append(b"e" + _type_name(t) + b"." + x.name.encode() + b";")
    elif isinstance(x, type) and issubclass(x, np.generic):
        out.append(b"t" + np.dtype(x).str.encode() + b";")
    elif t is Jaxpr:
        _enc_jaxpr(x, out)
    elif t is ClosedJaxpr:
        _enc_jaxpr(x.jaxpr, out)
        _enc(tuple(x.consts), out)
    elif t is ShapedArray:
        _enc_aval(x, out)
    elif t is SourceInfo:
        _enc((x.file, x.line, x.function), out)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type) \
            and t.__dataclass_params__.frozen:
        out.append(b"D" + _type_name(t))
        _enc(tuple((f.name, getattr(x, f.name)) for f in dataclasses.fields(x)), out)
    else:  # a callable, an array on a device, an object of unknown contents
        raise _Unkeyable(t.__name__)


def _type_name(t) -> bytes:
    return f"{t.__module__}.{t.__qualname__}".encode()


# ~2 ms of directory walking, done off the first call (no lock: a key needed before the
# thread is done computes the same digest itself).
threading.Thread(target=_source_identity, name="pyjax-source-identity", daemon=True).start()
