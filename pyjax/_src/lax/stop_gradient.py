"""``lax.stop_gradient``: the identity whose derivative is zero (a primitive, as in JAX)."""
from __future__ import annotations

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE
from pyjax._src.lax.base import aval_of

__all__ = ["stop_gradient"]


def _stop_gradient_batch(args, dims):
    return stop_gradient_p.bind(args[0]), dims[0]


stop_gradient_p = Primitive("stop_gradient", abstract_eval=lambda x: x,
                            lower=lambda ctx, x: x, jvp=NOT_DIFFERENTIABLE,
                            batch=_stop_gradient_batch)


def stop_gradient(x):
    """The identity on every leaf of the pytree ``x``, with zero derivative: differentiation
    treats the result as a constant. Integer and boolean leaves pass through unchanged."""
    def stop(leaf):
        if dtypes.is_inexact(aval_of(leaf).dtype):
            return stop_gradient_p.bind(leaf)
        return leaf
    return pytree.tree_map(stop, x)
