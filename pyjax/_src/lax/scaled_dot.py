"""``lax.scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` with block ("subchannel")
scales along the contracting dimensions, as for microscaled float8 formats.

Computed the way JAX 0.10.2 computes it on the CPU (measured against it: equal results up to
the summation order): operands and scales are rounded to bfloat16, each scale is repeated
along the contracting dimensions to the operand's size, the products are rounded to bfloat16,
and the dot accumulates in float32 before the result is converted to
``preferred_element_type`` (bfloat16 by default). The roundings are ``reduce_precision`` in
float32: XLA keeps those, where it may drop a bfloat16 round trip inside a fused program
(measured: jit gave 0.7% off without them). pyjax writes it with existing primitives, so
a Jaxpr shows them rather than a ``scaled_dot`` equation."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.lax import dot as lax_dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of

__all__ = ["scaled_dot"]

_DEFAULT_DIMS = {2: (((1,), (0,)), ((), ())), 3: (((2,), (1,)), ((0,), (0,)))}


def _to_bf16_values(x):
    """``x`` in float32, rounded to the bfloat16 grid (8 exponent, 7 mantissa bits)."""
    return ew.reduce_precision(ew.convert_element_type(x, np.float32), 8, 7)


def _scaled(x, scale, contracting, what):
    x = _to_bf16_values(x)
    if scale is None:
        return x
    xs, ss = aval_of(x).shape, aval_of(scale).shape
    if len(ss) != len(xs):
        raise TypeError(f"scaled_dot: {what}_scale must have the rank of {what} ({len(xs)}), "
                        f"got shape {ss} for {what} of shape {xs}")
    s = _to_bf16_values(scale)
    for d in range(len(xs)):
        if d in contracting:
            if ss[d] == 0 or xs[d] % ss[d]:
                raise TypeError(f"scaled_dot: the contracting dimension {d} of {what} "
                                f"({xs[d]}) must be a multiple of {what}_scale's ({ss[d]})")
            factor = xs[d] // ss[d]
            if factor > 1:  # each scale repeated `factor` times along d, consecutively
                cur = aval_of(s).shape
                wide = cur[:d + 1] + (factor,) + cur[d + 1:]
                keep = tuple(i for i in range(len(wide)) if i != d + 1)
                s = shape_ops.reshape(shape_ops.broadcast_in_dim(s, wide, keep),
                                      cur[:d] + (cur[d] * factor,) + cur[d + 1:])
        elif ss[d] != xs[d]:
            raise TypeError(f"scaled_dot: the non-contracting dimension {d} of {what}_scale "
                            f"({ss[d]}) must equal {what}'s ({xs[d]})")
    return _to_bf16_values(ew.mul(x, s))


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """``(lhs * lhs_scale) @ (rhs * rhs_scale)`` by ``lax.dot_general`` with
    ``dimension_numbers`` (default: ``(((1,), (0,)), ((), ()))`` for 2-d operands,
    ``(((2,), (1,)), ((0,), (0,)))`` for 3-d), in ``preferred_element_type`` (default
    bfloat16)."""
    nd = (len(aval_of(lhs).shape), len(aval_of(rhs).shape))
    if dimension_numbers is None:
        if nd[0] != nd[1] or nd[0] not in _DEFAULT_DIMS:
            raise TypeError(f"scaled_dot: dimension_numbers are needed for operands of ranks "
                            f"{nd} (the defaults cover two 2-d or two 3-d operands)")
        dimension_numbers = _DEFAULT_DIMS[nd[0]]
    (lc, rc), _ = dimension_numbers
    out_dtype = dtypes.canonicalize_dtype("bfloat16" if preferred_element_type is None
                                          else preferred_element_type)
    out = lax_dot.dot_general(_scaled(lhs, lhs_scale, tuple(lc), "lhs"),
                              _scaled(rhs, rhs_scale, tuple(rc), "rhs"), dimension_numbers,
                              preferred_element_type=np.dtype(np.float32))
    return ew.convert_element_type(out, out_dtype)
