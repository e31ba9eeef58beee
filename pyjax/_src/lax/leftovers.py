"""``lax.empty``, ``lax.broadcast_like``, ``lax.rng_uniform`` (``stablehlo.rng``) and the
tokens of ``lax.create_token`` / ``lax.after_all``."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of

__all__ = ["empty", "broadcast_like", "rng_uniform", "rng_uniform_p", "create_token",
           "after_all", "Token"]


def _operand(x):
    """Arrays and tracers as they are; Python and NumPy values as arrays of their (canonical)
    JAX dtype."""
    if hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic)):
        return x
    return np.asarray(x, dtypes.dtype_of(x))


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (as JAX says: backend
    dependent). pyjax fills it with zeros, which is what JAX gives on CPU."""
    if out_sharding is not None:
        raise NotImplementedError("lax.empty: out_sharding is not supported")
    shape = axes_mod.canonicalize_shape(shape, "shape", "empty")
    dt = dtypes.check_user_dtype(dtype, "empty")
    return shape_ops.full(tuple(shape), dt.type(0), dt)


def broadcast_like(arr, like_arr):
    """``arr`` broadcast to the shape of ``like_arr`` (NumPy's rules: trailing dimensions
    align, size-1 dimensions stretch)."""
    x = _operand(arr)
    shape, target = tuple(np.shape(x)), tuple(np.shape(like_arr))
    lead = len(target) - len(shape)
    if lead < 0 or any(d not in (1, t) for d, t in zip(shape, target[lead:])):
        raise ValueError(f"broadcast_like: cannot broadcast an array of shape {shape} to the "
                         f"shape {target} of like_arr")
    if shape == target:
        return x
    keep = [i for i, d in enumerate(shape) if d == target[lead + i]]
    if len(keep) != len(shape):   # size-1 dimensions that stretch: drop them first
        x = shape_ops.reshape(x, tuple(shape[i] for i in keep))
    return shape_ops.broadcast_in_dim(x, target, tuple(lead + i for i in keep))


# --- rng_uniform ----------------------------------------------------------------------------

def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.shape or b.shape:
        raise TypeError(f"rng_uniform: a and b must be scalars, got {a.str_short()} and "
                        f"{b.str_short()}")
    if a.dtype != b.dtype:
        raise TypeError(f"rng_uniform: a and b must have the same dtype, got {a.dtype.name} "
                        f"and {b.dtype.name}")
    if not (dtypes.is_floating(a.dtype) or dtypes.is_integer(a.dtype)) or a.dtype.itemsize < 2:
        raise TypeError(f"rng_uniform: a and b must be floating or integer of at least 16 bits, "
                        f"got {a.dtype.name}")
    return ShapedArray(shape, a.dtype)


def _rng_uniform_lower(ctx, a, b, *, shape):
    dims = ctx.constant(np.array(shape, np.int64), ShapedArray((len(shape),), np.dtype(np.int64)))
    return ctx.op("stablehlo.rng", [a, b, dims], ShapedArray(shape, ctx.avals_in[0].dtype),
                  attrs={"rng_distribution": "#stablehlo<rng_distribution UNIFORM>"})


def _rng_uniform_batch(args, dims, *, shape):
    # a and b are scalars: a batched bound means one draw per batch element
    a, b = (bu.move_axis(x, d, 0) if d is not None else x for x, d in zip(args, dims))
    n = next(aval_of(x).shape[0] for x, d in zip((a, b), dims) if d is not None)
    draws = []
    for i in range(n):
        ai = shape_ops.squeeze(shape_ops.slice_in_dim(a, i, i + 1, axis=0), (0,)) \
            if dims[0] is not None else a
        bi = shape_ops.squeeze(shape_ops.slice_in_dim(b, i, i + 1, axis=0), (0,)) \
            if dims[1] is not None else b
        draws.append(shape_ops.expand_dims(rng_uniform_p.bind(ai, bi, shape=shape), (0,)))
    return shape_ops.concatenate(draws, 0), 0


rng_uniform_p = Primitive("rng_uniform", abstract_eval=_rng_uniform_abstract_eval,
                          lower=_rng_uniform_lower, jvp=NOT_DIFFERENTIABLE,
                          batch=_rng_uniform_batch)


def rng_uniform(a, b, shape):
    """Stateful uniform random numbers in ``[a, b)`` of ``shape`` (XLA's ``RngUniform``).

    As JAX says: experimental and discouraged (use ``pyjax.random``); the numbers depend on
    the backend and change from call to call; with ``b <= a`` the result is undefined."""
    shape = axes_mod.canonicalize_shape(shape, "shape", "rng_uniform")
    a, b = _operand(a), _operand(b)
    return rng_uniform_p.bind(a, b, shape=tuple(shape))


# --- tokens ---------------------------------------------------------------------------------
# XLA tokens order side effects (infeed, outfeed, send/recv). pyjax has no operation that
# takes a token, so there is nothing for one to order: a Token is a value without data, an
# empty pytree, so it passes through jit, vmap and loops and comes back out as a Token.

class Token:
    """An XLA token (``lax.create_token()``, ``lax.after_all(...)``): no data."""

    __slots__ = ()

    def __repr__(self):
        return "Token()"

    def block_until_ready(self):
        return self


pytree.register_pytree_node(Token, lambda t: ((), None), lambda _, children: Token())


def create_token(_=None):
    """A token with no preconditions (JAX: the argument is ignored; it exists for backward
    compatibility)."""
    return Token()


def after_all(*operands):
    """A token that comes after all the ``operands`` (tokens)."""
    for x in operands:
        if not isinstance(x, Token):
            raise TypeError(f"after_all: every operand must be a token (lax.create_token()), "
                            f"got {type(x).__name__}")
    return Token()
