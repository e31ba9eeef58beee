"""``jax.scipy.integrate.trapezoid``."""
from __future__ import annotations

import pyjax.numpy as jnp
from pyjax._src.core import axes as axes_mod
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import promote_dtypes_inexact


@compiled_when_eager("axis")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    (1-D of the axis' length, or of ``y``'s shape) or spacing ``dx``."""
    if x is None:
        y, = promote_dtypes_inexact(y)
        y = jnp.asarray(y)
    else:
        y, x = (jnp.asarray(v) for v in promote_dtypes_inexact(y, x))
    axis = axes_mod.canonicalize_axis(axis, y.ndim, "axis", "trapezoid")
    y = jnp.moveaxis(y, axis, -1)
    n = y.shape[-1]
    mid = 0.5 * (y[..., 1:] + y[..., :-1])
    if x is None:
        return jnp.sum(mid, axis=-1) * dx
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ValueError(f"trapezoid: x has length {x.shape[0]}, y has {n} samples along "
                             f"axis {axis}")
        d = x[1:] - x[:-1]
    else:
        x = jnp.moveaxis(x, axis, -1)
        d = x[..., 1:] - x[..., :-1]
    return jnp.sum(mid * d, axis=-1)
