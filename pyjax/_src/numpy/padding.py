"""``pad``: every NumPy mode, one axis after another as NumPy does (so corners come out the
same), each as slices, concatenations and reductions of the input, hence differentiable.
No gathers: edge and wrap are slices (broadcast for edge) concatenated, and a single constant
value is one ``lax.pad``, the forms XLA:CPU runs fastest (docs/speed_vs_jax.md).

Pad widths and ``stat_length`` are static; ``constant_values`` and ``end_values`` may be
traced. ``reflect``/``symmetric`` with pads longer than the axis extend it in chunks, each
reflecting what is there so far, which is what NumPy's ``reflect_type="odd"`` gives.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import array as to_array, asarray, linspace, zeros
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.reductions import max as _max, min as _min, mean, median
from pyjax._src.numpy.shape import broadcast_to, concatenate, flip, squeeze
from pyjax._src.numpy.ufuncs import round as _round

__all__ = ["pad"]

_MODE_KWARGS = {
    "constant": ("constant_values",), "edge": (), "empty": (), "wrap": (),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",), "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",)}


def _take_slice(x, axis, start, stop):
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def _plain_widths(pair):
    return type(pair[0]) is int and type(pair[1]) is int and pair[0] >= 0 and pair[1] >= 0


def _static_pairs(value, ndim, what):
    """``value`` broadcast to ``ndim`` (before, after) pairs of non-negative Python ints."""
    t = type(value)
    if t is int and value >= 0:  # the common forms, without NumPy: jnp.pad(x, 1),
        return [(value, value)] * ndim
    if t is tuple or t is list:  # (1, 2) and ((1, 2), (0, 1))
        if len(value) == 2 and _plain_widths(value):
            return [tuple(value)] * ndim
        if len(value) == ndim and all((type(p) is tuple or type(p) is list) and len(p) == 2
                                      and _plain_widths(p) for p in value):
            return [tuple(p) for p in value]
    if isinstance(value, Tracer):
        raise errors.ConcretizationTypeError(
            value.aval.str_short(), f"jnp.pad: {what} must be static (concrete) values.\n")
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - say what was expected
        raise TypeError(f"jnp.pad: {what} must be an int or a sequence of int pairs, got "
                        f"{value!r}") from None
    if arr.dtype == object or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"jnp.pad: {what} must be of integral type, got {value!r}")
    if ndim == 0:
        return []
    try:
        pairs = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: {what} {value!r} cannot be broadcast to ({ndim}, 2), one "
                         "(before, after) pair per axis") from None
    if (pairs < 0).any():
        raise ValueError(f"index can't contain negative values (jnp.pad {what}: {value!r})")
    return [(int(b), int(a)) for b, a in pairs]


def _value_pairs(value, ndim, dtype, what):
    """``value`` (possibly traced) broadcast to ``(ndim, 2)`` scalars of ``dtype``."""
    v = to_array(value)  # nested (before, after) tuples too, possibly of traced scalars
    if v.ndim > 2:
        raise ValueError(f"jnp.pad: {what} must be broadcastable to ({ndim}, 2), got shape "
                         f"{v.shape}")
    v = broadcast_to(v, (ndim, 2))
    return [(v[i, 0].astype(dtype), v[i, 1].astype(dtype)) for i in range(ndim)]


def _block(x, axis, width, value):
    shape = list(x.shape)
    shape[axis] = width
    return broadcast_to(value, tuple(shape))


def _pad_constant(x, widths, values):
    for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
        if lo or hi:
            x = concatenate([_block(x, axis, lo, vlo), x, _block(x, axis, hi, vhi)], axis)
    return x


def _check_not_empty(x, axis, lo, hi, mode):
    if x.shape[axis] == 0 and (lo or hi):
        raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' "
                         f"or 'empty' (mode {mode!r})")


def _pad_edge(x, widths):
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            _check_not_empty(x, axis, lo, hi, "edge")
            n = x.shape[axis]
            x = concatenate([_block(x, axis, lo, _take_slice(x, axis, 0, 1)), x,
                             _block(x, axis, hi, _take_slice(x, axis, n - 1, n))], axis)
    return x


def _pad_wrap(x, widths):
    """Before: the last ``lo % n`` entries then whole periods; after: the mirror of that."""
    for axis, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        _check_not_empty(x, axis, lo, hi, "wrap")
        n = x.shape[axis]
        parts = [_take_slice(x, axis, n - lo % n, n)] if lo % n else []
        parts += [x] * (lo // n + 1 + hi // n)
        if hi % n:
            parts.append(_take_slice(x, axis, 0, hi % n))
        x = concatenate(parts, axis)
    return x


def _reflect_axis(x, axis, lo, hi, symmetric, odd):
    n = x.shape[axis]
    if n == 1:  # NumPy extends a single element as "edge"
        return _pad_edge(x, [(lo, hi) if a == axis else (0, 0) for a in range(x.ndim)])
    while lo or hi:
        length = x.shape[axis]
        # the part that repeats whole periods of the original values
        avail = (length // n * n) if symmetric else ((length - 1) // (n - 1) * (n - 1))
        parts = []
        take_lo, take_hi = min(avail, lo), min(avail, hi)
        if take_lo:
            start = 0 if symmetric else 1
            chunk = flip(_take_slice(x, axis, start, start + take_lo), axis)
            if odd:
                chunk = 2 * _take_slice(x, axis, 0, 1) - chunk
            parts.append(chunk)
        parts.append(x)
        if take_hi:
            stop = length if symmetric else length - 1
            chunk = flip(_take_slice(x, axis, stop - take_hi, stop), axis)
            if odd:
                chunk = 2 * _take_slice(x, axis, length - 1, length) - chunk
            parts.append(chunk)
        x = concatenate(parts, axis)
        lo, hi = lo - take_lo, hi - take_hi
    return x


def _pad_stat(x, widths, mode, stat_length):
    stat = {"maximum": _max, "minimum": _min, "mean": mean, "median": median}[mode]
    lengths = stat_length
    for axis, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        _check_not_empty(x, axis, lo, hi, mode)
        n = x.shape[axis]
        ls = (n, n) if lengths is None else lengths[axis]
        if 0 in ls:
            raise ValueError("stat_length of 0 yields no value for padding")
        sides = []
        for width, (start, stop) in ((lo, (0, min(ls[0], n))), (hi, (n - min(ls[1], n), n))):
            v = stat(_take_slice(x, axis, start, stop), axis=axis, keepdims=True)
            if mode in ("mean", "median") and not dtypes.issubdtype(x.dtype, np.inexact):
                v = _round(v)  # NumPy rounds integer means
            sides.append(_block(x, axis, width, v.astype(x.dtype)))
        x = concatenate([sides[0], x, sides[1]], axis)
    return x


def _pad_linear_ramp(x, widths, end_values):
    values = _value_pairs(end_values, x.ndim, x.dtype, "end_values")
    for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
        if not (lo or hi):
            continue
        _check_not_empty(x, axis, lo, hi, "linear_ramp")
        n = x.shape[axis]
        # linspace inserts the ramp's axis at `axis`, so start from the edges without it
        first = squeeze(_take_slice(x, axis, 0, 1), axis)  # slices, not gathers
        last = squeeze(_take_slice(x, axis, n - 1, n), axis)
        left = linspace(broadcast_to(vlo, first.shape), first, lo, endpoint=False,
                        dtype=x.dtype, axis=axis)
        right = flip(linspace(broadcast_to(vhi, last.shape), last, hi, endpoint=False,
                              dtype=x.dtype, axis=axis), axis)
        x = concatenate([_take_slice(left, axis, 0, lo), x, _take_slice(right, axis, 0, hi)],
                        axis)
    return x


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad ``array``: ``pad_width`` is an int, a (before, after) pair, or one pair per axis;
    ``mode`` is one of NumPy's ("constant", "edge", "linear_ramp", "maximum", "mean",
    "median", "minimum", "reflect", "symmetric", "wrap", "empty") or a function
    ``f(vector, iaxis_pad_width, iaxis, kwargs)`` returning the padded vector, applied along
    each axis in turn."""
    if type(array) is ArrayImpl:
        x = array
    else:
        util.check_arraylike("pad", array)
        x = asarray(array)
    widths = _static_pairs(pad_width, x.ndim, "pad_width")
    if callable(mode):
        from pyjax._src.numpy.vectorize import apply_along_axis
        x = _pad_constant(x, widths, [(zeros((), x.dtype),) * 2] * x.ndim)
        for axis in range(x.ndim):
            x = apply_along_axis(mode, axis, x, widths[axis], axis, kwargs)
        return x
    if mode not in _MODE_KWARGS:
        raise ValueError(f"mode {mode!r} is not supported (jnp.pad modes: "
                         f"{sorted(_MODE_KWARGS)} or a callable)")
    unsupported = set(kwargs) - set(_MODE_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(unsupported)}")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got "
                         f"{reflect_type!r}")
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = tuple(_static_pairs(stat_length, x.ndim, "stat_length"))
    # values as arrays, configuration as hashable statics: one compiled call when eager
    values = None
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0)
    elif mode == "linear_ramp":
        values = kwargs.get("end_values", 0)
    if values is not None and type(values) not in (int, float, bool):  # (a Python scalar
        values = to_array(values)  # is an operand of the compiled call as it is)
    return _pad(x, tuple(widths), mode, values, stat_length, reflect_type)


@compiled_when_eager("widths", "mode", "stat_length", "reflect_type")
def _pad(x, widths, mode, values, stat_length, reflect_type):
    if type(values) in (int, float, bool):
        values = to_array(values)
    if mode in ("constant", "empty"):
        if values.size == 1 and values.ndim <= 2:  # one value everywhere: one lax.pad
            if isinstance(values, Tracer):
                value = values.reshape(()).astype(x.dtype)
            else:  # concrete under jit: a literal XLA folds into the pad, not an argument
                value = np.asarray(values).reshape(()).astype(x.dtype)[()]
            return lax_shape.pad(x, value, [(lo, hi, 0) for lo, hi in widths])
        return _pad_constant(x, widths, _value_pairs(values, x.ndim, x.dtype,
                                                     "constant_values"))
    if mode == "edge":
        return _pad_edge(x, widths)
    if mode == "wrap":
        return _pad_wrap(x, widths)
    if mode == "linear_ramp":
        return _pad_linear_ramp(x, widths, values)
    if mode in ("reflect", "symmetric"):
        for axis, (lo, hi) in enumerate(widths):
            if lo or hi:
                _check_not_empty(x, axis, lo, hi, mode)
                x = _reflect_axis(x, axis, lo, hi, mode == "symmetric", reflect_type == "odd")
        return x
    return _pad_stat(x, widths, mode, stat_length)
