"""Helpers that the lax modules' ``jvp`` and ``transpose`` rules share (layer 2).

The rule signatures are in ``core/rules.py``. Every lax module imports this one to declare its
primitives, so the primitives these helpers bind come from a module imported at the bottom
(read when a rule runs, after the whole lax package is loaded).
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.primitive import with_self
from pyjax._src.core.rules import Zero, is_undefined_primal  # noqa: F401 (for rule writers)
from pyjax._src.core.sharding_rules import explicit_spec
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
    z = shape_ops.broadcast_in_dim_p.bind(np.zeros((), aval.dtype)[()], shape=tuple(aval.shape),
                                             broadcast_dimensions=(), sharding=None)
    if type(z) is ArrayImpl and z.aval.weak_type != aval.weak_type:
        z = ArrayImpl(aval, z._buf, z._committed, z._npy)  # same buffer, the aval's weak type
    return z


def typed_zeros(aval: ShapedArray):
    """Zeros of ``aval`` with its Explicit sharding as their type (JAX's ``zeros_like_aval``):
    an instantiated zero tangent, or what a transpose accumulates into for a split primal (a
    gather's scatter-add), so the result has the primal's sharding."""
    if explicit_spec(aval) is None or trace_mod.is_eager():  # eagerly no rule looks at types
        return zeros(aval)
    return shape_ops.broadcast_in_dim_p.bind(np.zeros((), aval.dtype)[()],
                                             shape=tuple(aval.shape), broadcast_dimensions=(),
                                             sharding=aval.sharding)


def instantiate(t):
    """``t`` itself, or zeros of its aval (typed like it) when it is a symbolic ``Zero``."""
    return typed_zeros(t.aval) if type(t) is Zero else t


def linear_jvp(linear_argnums=None, tangent_params=None):
    """The JVP rule of a primitive linear in the operands ``linear_argnums`` (``None``: all of
    them; the others, e.g. indices, are passed unchanged): the tangent is the primitive applied
    to the tangents. ``tangent_params(params)`` may adjust the params of that application.
    Given in the primitive's own declaration (``with_self`` hands the rule the primitive)."""
    return with_self(lambda prim: _linear_jvp(prim, linear_argnums, tangent_params))


def _linear_jvp(prim, linear_argnums, tangent_params):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        argnums = range(len(primals)) if linear_argnums is None else linear_argnums
        if all(type(tangents[i]) is Zero for i in argnums):
            return out, zero_tangent(aval_of(out))
        args = list(primals)
        for i in argnums:
            args[i] = instantiate(tangents[i])
        tparams = params if tangent_params is None else tangent_params(params)
        return out, prim.bind(*args, **tparams)

    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def bilinear_jvp():
    """The JVP rule of a primitive linear in each of its two operands (``dot_general``,
    ``conv_general_dilated``): the product rule, ``f(tx, y) + f(x, ty)``, skipping zero
    tangents. Given in the primitive's own declaration."""
    return with_self(_bilinear_jvp)


def _bilinear_jvp(prim):
    def jvp(primals, tangents, **params):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y, **params)
        terms = []
        if type(tx) is not Zero:
            terms.append(prim.bind(tx, y, **params))
        if type(ty) is not Zero:
            terms.append(prim.bind(x, ty, **params))
        if not terms:
            return out, zero_tangent(aval_of(out))
        from pyjax._src.lax import elementwise  # imports this module: read at call time
        return out, terms[0] if len(terms) == 1 else elementwise.add(*terms)

    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def zero_cts(args):
    """The transpose result for a ``Zero`` cotangent: ``Zero`` for each linear input."""
    return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]


# Last, and read only inside rules: shape_ops declares its primitives with the helpers above.
from pyjax._src.lax import shape_ops  # noqa: E402
