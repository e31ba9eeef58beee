"""Choosing values by conditions: ``select`` (nested ``lax.select``, first true condition
wins) and ``piecewise`` (``lax.switch`` over an index computed from the conditions, vmapped
over the elements of ``x``, as JAX does)."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy import creation
from pyjax._src.numpy import reductions

__all__ = ["select", "piecewise"]


def _to_bool(c):
    c = creation.asarray(c)
    if dtypes.is_bool(c.dtype):
        return c
    return lax.ne(c, lax_shape.full((), 0, c.dtype))


@compiled_when_eager()
def select(condlist, choicelist, default=0):
    """Elements of ``choicelist`` chosen by ``condlist``: where ``condlist[i]`` is the first
    true condition, the result is ``choicelist[i]``; where none is true, ``default``.

    Conditions, choices and ``default`` broadcast together; the choices and ``default`` are
    promoted to one dtype. Non-boolean conditions are compared with zero (as in JAX).
    """
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    util.check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = util.promote_dtypes(default, *choicelist)
    conds = [_to_bool(c) for c in condlist]
    shape = util.broadcast_shapes(*[util.shape_of(v) for v in (*conds, *choices, default)])
    dtype = util.dtype_of(default)
    out = util.broadcast_to(creation.asarray(default, dtype=dtype), shape)
    # from the last choice to the first, so the first true condition is applied last
    for c, v in zip(reversed(conds), reversed(choices)):
        out = lax.select(util.broadcast_to(c, shape),
                         util.broadcast_to(creation.asarray(v, dtype=dtype), shape), out)
    return out


def _is_array(x):
    return isinstance(x, (ArrayImpl, Tracer, np.ndarray))


def _normalize_condlist(condlist, x):
    """``condlist`` as a list of conditions, with NumPy's rule for a single condition: a
    scalar, or (for non-scalar ``x``) a sequence whose first entry is a scalar."""
    if (util.ndim_of(condlist) == 0) if _is_array(condlist) else \
            isinstance(condlist, (bool, np.bool_)):
        return [condlist]
    if not _is_array(condlist) and not isinstance(condlist, (list, tuple)):
        raise TypeError(f"piecewise: condlist must be a list of boolean arrays, got "
                        f"{type(condlist)}")
    if len(condlist) == 0:
        return []
    first = condlist[0]
    first_is_scalar = util.ndim_of(first) == 0 if _is_array(first) else \
        not isinstance(first, (list, tuple))
    if first_is_scalar and x.ndim != 0:
        return [condlist if _is_array(condlist) else np.asarray(condlist)]
    if _is_array(condlist):
        return [condlist[i] for i in range(util.shape_of(condlist)[0])]
    return [np.asarray(c) if isinstance(c, (list, tuple)) else c for c in condlist]


def piecewise(x, condlist, funclist, *args, **kw):
    """Evaluate a piecewise-defined function: where ``condlist[i]`` holds, the result is
    ``funclist[i](x, *args, **kw)`` (or ``funclist[i]`` itself when it is a constant).

    With one more function than conditions, the extra last one is the value where no
    condition holds (else 0). Where several conditions hold, the last one wins, as in NumPy.
    The result has the dtype of ``x``.

    As in JAX, each function is applied to single elements of ``x`` (the choice is a
    ``lax.switch`` vmapped over the elements), so every function must work elementwise, and
    all of them are evaluated.
    """
    util.check_arraylike("piecewise", x)
    x = creation.asarray(x)
    conds = _normalize_condlist(condlist, x)
    funclist = list(funclist)
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        funclist = funclist[-1:] + funclist[:-1]
    elif nf == nc:
        funclist = [0] + funclist
    else:
        raise ValueError(f"piecewise: with {nc} condition(s), either {nc} or {nc + 1} "
                         f"functions are expected; got {nf}")
    dtype = x.dtype
    conds = [util.broadcast_to(_to_bool(c), x.shape) for c in conds]
    # a leading all-false row for "no condition": argmax of the running count of true
    # conditions is the last true one (or 0 when there is none)
    stacked = lax_shape.concatenate(
        [lax_shape.full((1,) + x.shape, 0, np.int32)]
        + [lax_shape.broadcast_in_dim(lax.convert_element_type(c, np.int32), (1,) + x.shape,
                                      tuple(range(1, x.ndim + 1))) for c in conds], 0)
    index = reductions.argmax(reductions.cumsum(stacked, axis=0), axis=0)

    def call(f):
        def branch(xi):
            return lax.convert_element_type(creation.asarray(f(xi, *args, **kw)), dtype)
        return branch

    def constant(v):
        if np.ndim(v) != 0 if not isinstance(v, (ArrayImpl, Tracer)) else v.ndim != 0:
            raise ValueError(f"piecewise: constant entries of funclist must be scalars, got "
                             f"{v!r}")
        if isinstance(v, (ArrayImpl, Tracer)):  # a device value: convert it in the program
            return lambda xi: lax.convert_element_type(v, dtype)
        value = np.asarray(v).astype(dtype)[()]
        return lambda xi: lax_shape.full((), value, dtype)

    branches = [call(f) if callable(f) else constant(f) for f in funclist]
    from pyjax._src.control_flow.cond import switch
    if x.ndim == 0:
        return switch(index, branches, x)
    if x.size == 0:
        return lax_shape.full(x.shape, 0, dtype)
    from pyjax._src.transformations.vmap import vmap
    flat = vmap(lambda i, xi: switch(i, branches, xi))(lax_shape.reshape(index, (x.size,)),
                                                       lax_shape.reshape(x, (x.size,)))
    return lax_shape.reshape(flat, x.shape)
