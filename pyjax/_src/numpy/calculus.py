"""Finite differences, numerical derivatives and integrals, interpolation: ``diff``,
``ediff1d``, ``gradient``, ``trapezoid``, ``interp``, ``unwrap`` (JAX's signatures; all are
differentiable in their floating inputs)."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import asarray
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.reductions import sum as _sum, cumsum
from pyjax._src.numpy.searching import searchsorted
from pyjax._src.numpy.shape import concatenate, ravel, broadcast_to, reshape
from pyjax._src.numpy.reductions import argsort
from pyjax._src.numpy.ufuncs import (abs as _abs, clip, not_equal, where, remainder, less,
                                     greater, logical_and, equal)

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp", "unwrap"]


def _slice_along(a, axis, start=None, stop=None):
    idx = [slice(None)] * a.ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def _static_nonneg_int(n, what, fun):
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fun}: {what} must be a static integer, got {n!r}") from None
    if n < 0:
        raise ValueError(f"{fun}: order must be non-negative but got {n}")
    return n


def _diff_once(a, axis):
    hi, lo = _slice_along(a, axis, 1, None), _slice_along(a, axis, None, -1)
    return not_equal(hi, lo) if a.dtype == np.bool_ else hi - lo


@compiled_when_eager("n", "axis")
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference of ``a`` along ``axis`` (``a[i+1] - a[i]``; for
    booleans ``a[i+1] != a[i]``), after concatenating ``prepend``/``append`` (broadcast to
    ``a``'s shape except along ``axis``)."""
    util.check_arraylike("diff", a)
    a = asarray(a)
    n = _static_nonneg_int(n, "n", "diff")
    if n == 0:
        return a
    if a.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="diff")
    parts = []
    if prepend is not None:
        parts.append(_edge_values(prepend, a, axis, "prepend"))
    parts.append(a)
    if append is not None:
        parts.append(_edge_values(append, a, axis, "append"))
    if len(parts) > 1:
        a = concatenate(util.promote_dtypes(*parts), axis=axis)
    for _ in range(n):
        a = _diff_once(a, axis)
    return a


def _edge_values(v, a, axis, what):
    util.check_arraylike("diff", v)
    v = asarray(v)
    if v.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        v = broadcast_to(v, tuple(shape))
    return v


@compiled_when_eager()
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened ``ary``, with ``to_begin``
    and ``to_end`` (flattened) put before and after."""
    util.check_arraylike("ediff1d", ary)
    a = ravel(asarray(ary))
    result = _diff_once(a, 0) if a.shape[0] else a
    parts = []
    if to_begin is not None:
        util.check_arraylike("ediff1d", to_begin)
        parts.append(ravel(asarray(to_begin)).astype(result.dtype))
    parts.append(result)
    if to_end is not None:
        util.check_arraylike("ediff1d", to_end)
        parts.append(ravel(asarray(to_end)).astype(result.dtype))
    return concatenate(parts) if len(parts) > 1 else result


def _gradient_along(a, h, axis):
    if a.shape[axis] < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required along each differentiated axis, got "
                         f"shape {a.shape}")
    s = lambda lo, hi=None: _slice_along(a, axis, lo, hi)  # noqa: E731
    upper_edge = s(1, 2) - s(0, 1)
    lower_edge = s(-1) - s(-2, -1)
    if h.ndim == 0:
        inner = (s(2) - s(None, -2)) * 0.5 / h
        return concatenate((upper_edge / h, inner, lower_edge / h), axis=axis)
    if h.ndim != 1 or h.shape[0] != a.shape[axis]:
        raise ValueError(f"gradient: the spacing along axis {axis} must be a scalar or a 1-D "
                         f"array of length {a.shape[axis]}, got shape {h.shape}")
    shape = [1] * a.ndim
    shape[axis] = h.shape[0]
    x = reshape(h, tuple(shape))
    sx = lambda lo, hi=None: _slice_along(x, axis, lo, hi)  # noqa: E731
    upper_edge = upper_edge / (sx(1, 2) - sx(0, 1))
    lower_edge = lower_edge / (sx(-1) - sx(-2, -1))
    dx1 = sx(1, -1) - sx(0, -2)
    dx2 = sx(2) - sx(1, -1)
    inner = (-dx2 / (dx1 * (dx1 + dx2)) * s(0, -2) + (dx2 - dx1) / (dx1 * dx2) * s(1, -1)
             + dx1 / (dx2 * (dx1 + dx2)) * s(2))
    return concatenate((upper_edge, inner, lower_edge), axis=axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of ``f`` by second-order central differences inside and first-order
    one-sided differences at the edges (NumPy's ``edge_order=1``). ``varargs``: one spacing
    for all axes, or one per axis (a scalar or the coordinates along that axis). A list of
    arrays, one per axis, or a single array when there is one axis."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    util.check_arraylike("gradient", f, *varargs)
    a = asarray(f)
    if not dtypes.issubdtype(a.dtype, np.inexact):
        # integers become float32 (int64: float64), or what the spacings promote them to
        a = a.astype(dtypes.to_inexact_dtype(dtypes.result_type(a, *varargs)))
    if a.ndim == 0:
        raise ValueError("gradient requires an array of at least one dimension, got a scalar")
    axis_tuple = (tuple(range(a.ndim)) if axis is None
                  else axes_mod.canonicalize_axes(axis, a.ndim, fun="gradient"))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axis_tuple = (axes_mod.canonicalize_axis(axis, a.ndim, fun="gradient"),)
    if len(varargs) == 0:
        spacings = [asarray(1.0)] * len(axis_tuple)
    elif len(varargs) == 1 and asarray(varargs[0]).ndim == 0:
        spacings = [asarray(varargs[0])] * len(axis_tuple)
    elif len(varargs) == len(axis_tuple):
        spacings = [asarray(v) for v in varargs]
    else:
        raise TypeError(f"gradient: invalid number of spacing arguments: got {len(varargs)} "
                        f"for {len(axis_tuple)} axes")
    out = [_gradient_along(a, h.astype(a.dtype) if h.dtype != a.dtype
                           and dtypes.issubdtype(h.dtype, np.integer) else h, ax)
           for ax, h in zip(axis_tuple, spacings)]
    return out[0] if len(out) == 1 else out


@compiled_when_eager("axis")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    (if given) or with uniform spacing ``dx``."""
    util.check_arraylike("trapezoid", y)
    if x is None:
        # a scalar dx does not widen y (JAX: int32 y with dx=0.5 integrates in float32)
        (y,) = util.promote_dtypes_inexact(asarray(y))
        y, dx_arr = asarray(y), asarray(dx)
        axis = axes_mod.canonicalize_axis(axis, y.ndim, fun="trapezoid")
    else:
        util.check_arraylike("trapezoid", x)
        y, x = (asarray(v) for v in util.promote_dtypes_inexact(asarray(y), asarray(x)))
        axis = axes_mod.canonicalize_axis(axis, y.ndim, fun="trapezoid")
        if x.ndim == 1:
            dx_arr = diff(x)
            shape = [1] * y.ndim
            shape[axis] = dx_arr.shape[0]
            dx_arr = reshape(dx_arr, tuple(shape))
        else:
            dx_arr = diff(x, axis=axis)
    mids = _slice_along(y, axis, 1) + _slice_along(y, axis, None, -1)
    return 0.5 * _sum(dx_arr * mids, axis=axis)


@compiled_when_eager()
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; ``left``/``right`` for ``x`` outside (default ``fp[0]``/``fp[-1]``), or a
    ``period`` for angular coordinates (then ``left``/``right`` are not allowed)."""
    util.check_arraylike("interp", x, xp, fp)
    x, xp = (asarray(v) for v in util.promote_dtypes_inexact(asarray(x), asarray(xp)))
    (fp,) = util.promote_dtypes_inexact(asarray(fp))
    fp = asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError(f"xp and fp must be one-dimensional arrays, got shapes {xp.shape} "
                         f"and {fp.shape}")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError(f"xp and fp must have the same length, got {xp.shape[0]} and "
                         f"{fp.shape[0]}")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right cannot be given together with period")
        period = _abs(asarray(period))
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    if xp.shape[0] == 1:
        f = broadcast_to(fp[0], x.shape)
    else:
        i = clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
        df = fp[i] - fp[i - 1]
        dx = xp[i] - xp[i - 1]
        delta = x - xp[i - 1]
        eps = np.spacing(np.finfo(np.dtype(xp.dtype)).eps)
        dx0 = _abs(dx) <= eps  # equal neighbouring points: take the left value
        f = where(dx0, fp[i - 1], fp[i - 1] + (delta / where(dx0, 1, dx)).astype(fp.dtype) * df)
    if period is None:
        f = where(less(x, xp[0]), fp[0] if left is None else asarray(left).astype(fp.dtype), f)
        f = where(greater(x, xp[-1]), fp[-1] if right is None
                  else asarray(right).astype(fp.dtype), f)
    return f


@compiled_when_eager("axis")
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap the phases ``p`` along ``axis``: jumps larger than ``max(discont,
    period/2)`` become their ``period`` complement (NumPy's algorithm)."""
    util.check_arraylike("unwrap", p)
    (p,) = util.promote_dtypes_inexact(asarray(p))
    p = asarray(p)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axes_mod.canonicalize_axis(axis, p.ndim, fun="unwrap")] == 0:
        return p
    axis = axes_mod.canonicalize_axis(axis, p.ndim, fun="unwrap")
    if discont is None:
        discont = period / 2
    interval = period / 2
    dd = diff(p, axis=axis)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where(logical_and(equal(ddmod, -interval), greater(dd, 0)), interval, ddmod)
    ph_correct = where(_abs(dd) < discont, 0, ddmod - dd)
    up = concatenate((_slice_along(p, axis, None, 1),
                      _slice_along(p, axis, 1) + cumsum(ph_correct, axis=axis)), axis=axis)
    return up
