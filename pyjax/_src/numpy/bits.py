"""Bit-level helpers: ``packbits``, ``unpackbits`` (uint8 bit fields) and ``spacing`` (the
gap to the next representable float)."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.lax import elementwise as lax
from pyjax._src.numpy import util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.creation import asarray, zeros
from pyjax._src.numpy.reductions import sum as _sum
from pyjax._src.numpy.shape import concatenate, moveaxis, ravel, reshape
from pyjax._src.numpy.ufuncs import (bitwise_and, copysign, left_shift, nextafter,
                                     right_shift, subtract, where)

__all__ = ["packbits", "unpackbits", "spacing"]


def _bitorder(bitorder, fun):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{fun}: 'order' must be either 'little' or 'big', got "
                         f"{bitorder!r}")
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1].copy() if bitorder == "big" else shifts


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth values of ``a`` (integer or bool) into uint8 bits along ``axis``
    (the flattened array when None), padding the last byte with zeros."""
    util.check_arraylike("packbits", a)
    arr = asarray(a)
    if not (dtypes.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError(f"Expected an input array of integer or boolean data type, got "
                        f"{arr.dtype}")
    shifts = _bitorder(bitorder, "packbits")
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = axes_mod.canonicalize_axis(axis, arr.ndim, fun="packbits")
    bits = moveaxis((arr != 0).astype(np.uint8), axis, -1)
    n = bits.shape[-1]
    pad = -n % 8
    if pad:
        bits = concatenate([bits, zeros(bits.shape[:-1] + (pad,), np.uint8)], axis=-1)
    bits = reshape(bits, bits.shape[:-1] + ((n + pad) // 8, 8))
    packed = _sum(left_shift(bits, asarray(shifts)), axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array ``a`` as a uint8 array of 0s and 1s along ``axis`` (the
    flattened array when None); ``count`` keeps that many (negative: drops from the end;
    more than there are: pads with zeros)."""
    util.check_arraylike("unpackbits", a)
    arr = asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError(f"Expected an input array of unsigned byte data type, got "
                        f"{arr.dtype}")
    shifts = _bitorder(bitorder, "unpackbits")
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = axes_mod.canonicalize_axis(axis, arr.ndim, fun="unpackbits")
    moved = moveaxis(arr, axis, -1)
    bits = bitwise_and(right_shift(moved[..., None], asarray(shifts)), np.uint8(1))
    bits = reshape(bits, moved.shape[:-1] + (moved.shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep > n:
            bits = concatenate([bits, zeros(bits.shape[:-1] + (keep - n,), np.uint8)], -1)
        else:
            bits = bits[..., :keep]
    return moveaxis(bits, -1, axis)


@compiled_when_eager()
def spacing(x, /):
    """The distance from ``x`` to the next representable number away from zero (negative
    for negative ``x``; in float16, as NumPy and JAX, toward +inf: ``nextafter(x, inf) - x``),
    in ``x``'s floating dtype; NaN for NaN and infinities (float16: inf for -inf)."""
    util.check_arraylike("spacing", x)
    (x,) = util.promote_dtypes_inexact(asarray(x))
    x = asarray(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("spacing is not defined for complex inputs")
    dt = x.dtype
    if dt == np.float16:  # computed in float32 by XLA: no subnormal is flushed
        return subtract(nextafter(x, asarray(np.inf).astype(dt)), x)
    # Built from the exponent bits: a float subtraction would flush subnormal gaps (those of
    # zero and of the smallest normals) to zero on XLA's CPU code.
    info = dtypes.finfo(dt)
    int_dt = np.dtype(f"int{dt.itemsize * 8}")
    c = lambda v: np.asarray(v, int_dt)[()]  # noqa: E731
    nmant, exp_mask = info.nmant, (1 << info.nexp) - 1
    i = lax.bitcast_convert_type(x, int_dt)
    ebits = lax.bitwise_and(lax.shift_right_logical(i, c(nmant)), c(exp_mask))
    # gap 2**(e - nmant): a normal number if its exponent field ebits - nmant is >= 1,
    # otherwise the subnormal with the single bit ebits - 1 (bit 0 for zeros and subnormals)
    normal = lax.shift_left(lax.sub(ebits, c(nmant)), c(nmant))
    sub = lax.shift_left(c(1), lax.max(lax.sub(ebits, c(1)), c(0)))
    gap = lax.bitcast_convert_type(
        lax.select(lax.ge(ebits, c(nmant + 1)), normal, sub), dt)
    big = asarray(float(info.max)).astype(dt)
    gap = where(lax.eq(lax.abs(x), big), asarray(np.inf).astype(dt), gap)  # next is inf
    gap = copysign(gap, x)
    return where(lax.eq(ebits, c(exp_mask)), asarray(np.nan).astype(dt), gap)
