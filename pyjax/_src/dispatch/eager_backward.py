"""Eager reverse mode: a backward pass as one compiled executable (installed into
``interpreters.ad`` as its ``eager_backward``)."""
from __future__ import annotations

import numpy as np

from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from pyjax._src.core.rules import Zero
from pyjax._src.core.sharded_array import ShardedArray
from pyjax._src.core.trace import get_aval
from pyjax._src.dispatch import compiler, devices
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.dispatch.cache import Cache
from pyjax._src.interpreters import ad

# Eagerly, each transposed equation would be its own single-op executable. Instead, a linear
# Jaxpr whose structure has been seen before has its transpose compiled once (keyed by that
# structure) and run as one call with the residuals and cotangents as arguments. A structure
# seen only once runs op by op, so one-off gradients never wait for a compile.

_bwd_cache = Cache("eager backward")  # structure key -> 1 (seen once), 0 (op by op), _Backward
# Equations whose transpose runs user code that may expect concrete values (custom_vjp's bwd).
_EAGER_ONLY = {"custom_lin"}
# Calls of an already compiled Jaxpr: a backward pass made only of them runs call by call.
_CALLS = {"jit"}


def _literal_key(v):
    return (v.aval, np.asarray(v.val).tobytes())


def _structure_key(jaxpr, consts):
    ids = {}
    for v in jaxpr.constvars:
        ids[v] = len(ids)
    for v in jaxpr.invars:
        ids[v] = len(ids)
    parts = [tuple([c.aval if type(c) is ArrayImpl else get_aval(c) for c in consts]),
             tuple([v.aval for v in jaxpr.invars])]
    for e in jaxpr.eqns:
        ins = tuple([ids[v] if type(v) is not Literal else _literal_key(v) for v in e.invars])
        parts.append((e.primitive, ins, tuple(e.params.items()) if e.params else ()))
        for o in e.outvars:
            ids[o] = len(ids)
    parts.append(tuple([ids[v] if type(v) is not Literal else _literal_key(v)
                        for v in jaxpr.outvars]))
    key = tuple(parts)
    hash(key)  # unhashable params: TypeError, no compiled path
    return key


def eager_backward(closed, cts):
    """The input cotangents by one compiled call, or None to transpose op by op."""
    for c in closed.consts:
        if type(c) is ShardedArray:  # laid out over a mesh: op by op keeps the layouts
            return None              # (each op an SPMD program), one device would not
    ct_nz = tuple(type(c) is not Zero for c in cts)
    try:
        key = (_structure_key(closed.jaxpr, closed.consts), ct_nz,
               tuple(get_aval(c) for c, nz in zip(cts, ct_nz) if nz))
    except TypeError:
        return None
    entry = _bwd_cache.get(key)
    if type(entry) is not _Backward:
        if entry is None:  # first sighting
            _bwd_cache.put(key, 1)
            return None
        if entry == 0 or any(e.primitive.name in _EAGER_ONLY for e in closed.jaxpr.eqns) or all(
                e.primitive.name in _CALLS for e in closed.jaxpr.eqns):
            # (a backward pass of calls alone is already one compiled call per equation)
            _bwd_cache.put(key, 0)
            return None
        try:
            entry = _Backward(closed, ct_nz)
        except Exception:  # noqa: BLE001 - op by op reports any real error
            _bwd_cache.put(key, 0)
            return None
        _bwd_cache.put(key, entry)
    to_array = dispatch.to_array
    args = [c if type(c) is ArrayImpl else to_array(c) for c in closed.consts]
    args += [c if type(c) is ArrayImpl else to_array(c) for c, nz in zip(cts, ct_nz) if nz]
    return entry(args)


class _Backward:
    __slots__ = ("exe", "const_bufs", "out_avals", "in_nz", "in_avals")

    def __init__(self, closed, ct_nz):
        j = closed.jaxpr
        nconst = len(j.constvars)
        opened = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), [])
        t_closed, t_consts, self.in_nz = ad._transpose_jaxpr(
            opened, [False] * nconst + [True] * len(j.invars), ct_nz)
        self.exe = compiler.compile_jaxpr(t_closed.jaxpr, "backward")
        self.const_bufs = [dispatch.to_array(c)._buf for c in t_consts]
        self.out_avals = t_closed.out_avals
        self.in_avals = [ad.tangent_aval(v.aval) for v in j.invars]

    def __call__(self, arrays):
        device, committed = devices.call_device(arrays)
        bufs = self.exe.execute_unchecked(self.const_bufs + [a._buf for a in arrays], device)
        outs = iter(ArrayImpl(a, b, committed) for a, b in zip(self.out_avals, bufs))
        return [next(outs) if nz else Zero(a) for nz, a in zip(self.in_nz, self.in_avals)]


ad.eager_backward = eager_backward
