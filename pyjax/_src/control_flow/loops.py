"""``lax.fori_loop`` and ``lax.map``: loops written on top of ``scan`` and ``while_loop``."""
from __future__ import annotations

import weakref

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.trace import Tracer
from pyjax._src.control_flow import common
from pyjax._src.control_flow.scan import scan

__all__ = ["fori_loop", "map"]


def _concrete_int(x):
    """``x`` as a Python int when it is known now (a Python int or a concrete array), else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return None if v is None else int(np.asarray(v))
    a = common.aval_of(x)
    if a.ndim == 0 and dtypes.is_integer(a.dtype):
        return int(np.asarray(x))
    return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Loop from ``lower`` to ``upper``: ``val = body_fun(i, val)`` for each ``i``.

    Equivalent to::

        def fori_loop(lower, upper, body_fun, init_val):
            val = init_val
            for i in range(lower, upper):
                val = body_fun(i, val)
            return val

    With static bounds (Python ints or concrete values) the loop is a ``scan``, so it can be
    differentiated in reverse mode; otherwise it is a ``while_loop`` (forward mode only).
    ``unroll`` needs static bounds.
    """
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun argument should be callable, got {body_fun!r}")
    integer_bounds = True
    for name, b in (("lower", lower), ("upper", upper)):
        a = common.aval_of(b)
        if a.ndim != 0 or not (dtypes.is_integer(a.dtype)
                               or dtypes.issubdtype(a.dtype, np.floating)):
            raise TypeError(f"fori_loop {name} bound must be a scalar integer, got "
                            f"{a.str_short()}")
        integer_bounds = integer_bounds and dtypes.is_integer(a.dtype)
    # float bounds run as a while_loop with a float counter, as JAX does
    lo, hi = ((_concrete_int(lower), _concrete_int(upper)) if integer_bounds
              else (None, None))
    la, ua = common.aval_of(lower), common.aval_of(upper)
    if la.weak_type and ua.weak_type:
        dtype, weak = dtypes.result_type(la.dtype, ua.dtype), True
    elif la.weak_type or ua.weak_type:
        dtype, weak = (ua.dtype if la.weak_type else la.dtype), False
    else:
        dtype, weak = dtypes.result_type(la.dtype, ua.dtype), False
    i_aval = common.ShapedArray((), dtype, weak)

    if lo is not None and hi is not None:
        from pyjax._src.lax.elementwise import convert_element_type
        i0 = lo if weak else convert_element_type(lo, dtype, weak)

        (_, out), _ = scan(_wrapper(_fori_steps, body_fun, _fori_step), (i0, init_val), None,
                           length=max(hi - lo, 0),
                           unroll=1 if unroll is None else unroll)
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    from pyjax._src.control_flow.while_loop import while_loop
    lower = common.cast_to(lower, i_aval)
    upper = common.cast_to(upper, i_aval)

    return while_loop(_fori_cond, _wrapper(_fori_bodies, body_fun, _fori_body),
                      (lower, upper, init_val))[2]


# The wrappers around a user's function are cached per function, so that calling fori_loop or
# map again with the same function reuses the traced body (and, eagerly, its executable).
_fori_steps: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_fori_bodies: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_map_bodies: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _wrapper(cache, fun, make):
    try:
        w = cache.get(fun)
    except TypeError:  # not weak-referenceable
        return make(fun)
    if w is None:
        w = cache[fun] = make(fun)
    return w


def _fori_step(body_fun):
    def step(carry, _):
        i, x = carry
        return (i + 1, body_fun(i, x)), None
    step.__name__ = getattr(body_fun, "__name__", "body_fun")
    return step


def _fori_cond(carry):
    i, u, _ = carry
    return i < u


def _fori_body(body_fun):
    def body(carry):
        i, u, x = carry
        return i + 1, u, body_fun(i, x)
    body.__name__ = getattr(body_fun, "__name__", "body_fun")
    return body


def _map_body(f):
    def body(_, x):
        return (), f(x)
    body.__name__ = getattr(f, "__name__", "f")
    return body


def map(f, xs, *, batch_size=None):  # noqa: A001 - JAX's name
    """Map ``f`` over the leading axis of ``xs`` with a loop (``scan``), like
    ``jnp.stack([f(x) for x in xs])`` but compiled once.

    With ``batch_size``, ``f`` is ``vmap``-ed over batches of that many elements inside the
    loop, and any remainder is computed in one more ``vmap`` call.
    """
    if not callable(f):
        raise TypeError(f"map: f argument should be callable, got {f!r}")
    if batch_size is None:
        _, ys = scan(_wrapper(_map_bodies, f, _map_body), (), xs)
        return ys
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"map batch_size must be a positive int, got {batch_size!r}")
    from pyjax._src.transformations.vmap import vmap
    from pyjax._src.lax.shape_ops import reshape
    leaves, tree = pytree.tree_flatten(xs)
    if not leaves:
        raise ValueError("map: xs has no arrays to map over")
    n = common.aval_of(leaves[0]).shape[0]
    nb, rem = divmod(n, batch_size)
    body_f = vmap(f)
    outs = []
    if nb:
        main = [reshape(x[:nb * batch_size], (nb, batch_size) + tuple(common.aval_of(x).shape[1:]))
                for x in leaves]
        _, ys = scan(lambda _, x: ((), body_f(pytree.tree_unflatten(tree, x))), (), main)
        outs.append(pytree.tree_map(
            lambda y: reshape(y, (nb * batch_size,) + tuple(common.aval_of(y).shape[2:])), ys))
    if rem:
        outs.append(body_f(pytree.tree_unflatten(tree, [x[nb * batch_size:] for x in leaves])))
    if len(outs) == 1:
        return outs[0]
    from pyjax._src.lax.shape_ops import concatenate
    return pytree.tree_map(lambda a, b: concatenate([a, b], 0), *outs)
