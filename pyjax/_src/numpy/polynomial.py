"""Polynomial evaluation: ``polyval`` by Horner's method in a ``lax.scan`` over the
coefficients (as JAX does), so a long coefficient vector compiles to one loop."""
from __future__ import annotations

from pyjax._src.control_flow.scan import scan
from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy import creation

__all__ = ["polyval"]


def _polyval(p, x, unroll):
    shape = util.broadcast_shapes(tuple(p.shape[1:]), tuple(x.shape))
    y = lax_shape.full(shape, 0, x.dtype)
    xb = util.broadcast_to(x, shape)

    def horner(y, c):
        return lax.add(lax.mul(y, xb), util.broadcast_to(c, shape)), None

    y, _ = scan(horner, y, p, unroll=unroll)
    return y


_polyval_jit = jit(_polyval, static_argnums=2)  # one call in a user's Jaxpr, as in JAX


def polyval(p, x, *, unroll=16):
    """Evaluate the polynomial with coefficients ``p`` (highest degree first) at ``x``:
    ``p[0] * x**(n-1) + ... + p[n-1]``, by Horner's method.

    ``p`` may have more than one dimension: its leading axis holds the coefficients and the
    rest broadcasts against ``x``. Both are promoted to a common inexact dtype (JAX's rule;
    NumPy keeps integers). ``unroll`` is how many Horner steps each iteration of the compiled
    loop runs. An empty ``p`` gives zeros.
    """
    util.check_arraylike("polyval", p, x)
    p, x = util.promote_dtypes_inexact(creation.asarray(p), creation.asarray(x))
    p, x = creation.asarray(p), creation.asarray(x)
    if p.ndim == 0:
        raise ValueError("polyval: p must be an array of coefficients with at least one "
                         "dimension, got a scalar")
    if isinstance(unroll, bool):
        unroll = p.shape[0] if unroll else 1
    try:
        unroll = int(unroll)
    except (TypeError, ValueError):
        raise TypeError(f"polyval: unroll must be a static int, got {unroll!r}") from None
    if unroll < 1:
        raise ValueError(f"polyval: unroll must be at least 1, got {unroll}")
    return _polyval_jit(p, x, unroll)
