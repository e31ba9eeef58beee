"""Helpers that the lax modules' ``jvp`` and ``transpose`` rules share (layer 2).

The rule signatures are in ``core/rules.py``. These helpers only build values with primitives
(looked up in the registry at call time, so that every lax module may import this one).
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.primitive import registry
from pyjax._src.core.rules import Zero, is_undefined_primal  # noqa: F401 (for rule writers)
from pyjax._src.lax.base import aval_of


def is_zero(x) -> bool:
    return type(x) is Zero


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The aval of a tangent of a value of ``aval``: float0 for integer and bool values."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0, False)


def zero_tangent(aval: ShapedArray) -> Zero:
    """A symbolic zero tangent for an output of ``aval``."""
    return Zero(tangent_aval(aval))


def zeros(aval: ShapedArray):
    """Zeros of ``aval`` on the current trace, with its weak type when concrete; a NumPy
    array for float0 avals (the tangents of integer values, which nothing computes with)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    z = registry["broadcast_in_dim"].bind(np.zeros((), aval.dtype)[()], shape=tuple(aval.shape),
                                          broadcast_dimensions=(), sharding=None)
    if type(z) is ArrayImpl and z.aval.weak_type != aval.weak_type:
        z = ArrayImpl(aval, z._buf, z._committed, z._npy)  # same buffer, the aval's weak type
    return z


def instantiate(t):
    """``t`` itself, or zeros of its aval when it is a symbolic ``Zero``."""
    return zeros(t.aval) if type(t) is Zero else t


def linear_jvp(name, linear_argnums=None, tangent_params=None):
    """The JVP rule of the primitive ``name``, linear in the operands ``linear_argnums``
    (``None``: all of them; the others, e.g. indices, are passed unchanged): the tangent is the
    primitive applied to the tangents. ``tangent_params(params)`` may adjust the params of that
    application. The primitive is looked up when the rule first runs, so that the rule can be
    given in the primitive's own declaration."""
    prim = None

    def jvp(primals, tangents, **params):
        nonlocal prim
        if prim is None:
            prim = registry[name]
        out = prim.bind(*primals, **params)
        argnums = range(len(primals)) if linear_argnums is None else linear_argnums
        if all(type(tangents[i]) is Zero for i in argnums):
            return out, zero_tangent(aval_of(out))
        args = list(primals)
        for i in argnums:
            args[i] = instantiate(tangents[i])
        tparams = params if tangent_params is None else tangent_params(params)
        return out, prim.bind(*args, **tparams)

    return jvp


def zero_cts(args):
    """The transpose result for a ``Zero`` cotangent: ``Zero`` for each linear input."""
    return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
