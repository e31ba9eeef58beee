"""Reductions of ``pyjax.numpy``: sum, prod, max, min, mean, var, std, arg-reductions,
cumulative reductions, NaN-aware variants and whole-array comparisons; and sorting and
searching (sort, argsort, nonzero, flatnonzero, argwhere).

NumPy's signatures with JAX's semantics: sums and products of bools and small integers
accumulate in the default integer type, means and variances of integers are floats, float16 and
bfloat16 are accumulated in float32, and ``max``/``min`` of an empty array need ``initial``.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import reductions as lax_red
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax import sorting as lax_sort
from pyjax._src.numpy import shape as jshape
from pyjax._src.numpy import key_arrays, util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.shape import asarray, const, convert, isnan, to_bool

__all__ = [
    "sum", "prod", "product", "max", "amax", "min", "amin", "mean", "var", "std", "argmax",
    "argmin", "all", "any", "alltrue", "sometrue", "cumsum", "cumprod", "cumulative_sum",
    "cumulative_prod", "nancumsum", "nancumprod", "nansum", "nanprod", "nanmean", "nanvar",
    "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin", "ptp", "count_nonzero", "average",
    "median", "nanmedian", "allclose", "array_equal", "array_equiv", "sort", "argsort",
    "nonzero", "flatnonzero", "argwhere",
]

_sum, _max, _min, _all, _any = builtins.sum, builtins.max, builtins.min, builtins.all, \
    builtins.any
_F16 = ("float16", "bfloat16")   # dtype names: bfloat16 may not be loaded yet


# ---------------------------------------------------------------------------------------
# shared machinery
# ---------------------------------------------------------------------------------------

def _check_out(out, fun):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{fun} is not supported.")


def _check_overwrite_input(overwrite_input, fun):
    if overwrite_input:  # arrays are immutable: there is no input to overwrite
        raise ValueError(f"jax.numpy.{fun} does not support overwrite_input=True")


def _sort_operand(fun, a, axis, kind, order):
    """``(a, axis)`` for ``sort``/``argsort``: ``a`` as an array (flattened for
    ``axis=None``) and the axis to sort along, after refusing ``kind`` and ``order``."""
    util.check_arraylike(fun, a)
    if kind is not None:  # JAX removed it for stable=
        raise TypeError(f"'kind' argument to {fun} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise ValueError(f"The 'order' argument to {fun} is not supported.")
    a = asarray(a)
    if axis is None:
        a, axis = jshape.ravel(a), 0
    return a, util.canonicalize_axis(axis, a.ndim, fun=fun)


def _keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _finish(res, shape, axes, keepdims):
    if keepdims:
        new = _keepdims_shape(shape, axes)
        if util.shape_of(res) != new:
            res = lax_shape.reshape(res, new)
    return res


def _promote_integer(dt):
    """JAX's ``promote_integers``: bools and narrow ints accumulate in the default int."""
    if dtypes.is_bool(dt):
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dt):
        u = dtypes.default_uint_dtype()
        return u if dt.itemsize < u.itemsize else dt
    if dtypes.is_integer(dt):
        i = dtypes.default_int_dtype()
        return i if dt.itemsize < i.itemsize else dt
    return dt


def _upcast(dt):
    return np.dtype(np.float32) if dt.name in _F16 else dt


def _mask(a, where, fill):
    """``a`` with masked-out entries (``where`` False) replaced by ``fill``."""
    if where is None:
        return a
    shape = util.broadcast_shapes(util.shape_of(a), util.shape_of(where))
    a = util.broadcast_to(a, shape)
    w = util.broadcast_to(convert(where, np.bool_), shape)
    return lax_ew.select(w, a, lax_shape.full(shape, fill, util.dtype_of(a)))


def _identity(op, dt):
    """The identity of ``max``/``min`` on ``dt`` (the lowest/highest finite value of a
    floating type without infinities, such as float8_e4m3fn)."""
    ident = lax_red.max_identity(dt) if op == "max" else lax_red.min_identity(dt)
    return ident.item() if dtypes.is_bool(dt) or dtypes.is_integer(dt) else ident


def _reduce(op, a, axes):
    if not axes:
        return a
    dt = util.dtype_of(a)
    if op == "sum":
        return lax_red.reduce_or(a, axes) if dtypes.is_bool(dt) else lax_red.reduce_sum(a, axes)
    if op == "prod":
        return lax_red.reduce_and(a, axes) if dtypes.is_bool(dt) else \
            lax_red.reduce_prod(a, axes)
    if op == "max":
        return lax_red.reduce_or(a, axes) if dtypes.is_bool(dt) else lax_red.reduce_max(a, axes)
    return lax_red.reduce_and(a, axes) if dtypes.is_bool(dt) else lax_red.reduce_min(a, axes)


def _sum_or_prod(op, a, axis, dtype, out, keepdims, initial, where, promote_integers):
    _check_out(out, op)
    util.check_arraylike(op, a)
    a = asarray(a)
    axes = util.canonicalize_axes(axis, a.ndim, fun=op)
    dtype = dtypes.check_user_dtype(dtype, op)
    weak = dtype is None and a.weak_type  # reductions of weak values stay weak, as in JAX
    if dtype is None:
        dtype = _promote_integer(a.dtype) if promote_integers else a.dtype
        if dtypes.is_bool(dtype):
            dtype = dtypes.default_int_dtype()
    comp = _upcast(dtype)
    if dtypes.is_bool(comp):  # an explicit dtype=bool: reduce logically
        x = convert(a, np.bool_)
    else:  # through dtype first: int32 values beyond float16's range become inf, as in JAX
        x = convert(convert(a, dtype) if comp != dtype else a, comp)
    x = _mask(x, where, 0 if op == "sum" else 1)
    res = _reduce(op, x, axes)
    if initial is not None:
        init = convert(asarray(initial), util.dtype_of(res))
        res = (lax_ew.add if op == "sum" else lax_ew.mul)(res, init) \
            if not dtypes.is_bool(comp) else \
            (lax_ew.bitwise_or if op == "sum" else lax_ew.bitwise_and)(res, init)
    res = lax_ew.convert_element_type(res, dtype, weak) if weak else convert(res, dtype)
    return _finish(res, a.shape, axes, keepdims)


@compiled_when_eager("axis", "dtype", "out", "keepdims", "promote_integers")
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """Sum of elements over ``axis``; bools and small ints accumulate in the default int."""
    return _sum_or_prod("sum", a, axis, dtype, out, keepdims, initial, where, promote_integers)


@compiled_when_eager("axis", "dtype", "out", "keepdims", "promote_integers")
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product of elements over ``axis``."""
    return _sum_or_prod("prod", a, axis, dtype, out, keepdims, initial, where, promote_integers)


product = prod


def _max_or_min(op, a, axis, out, keepdims, initial, where):
    _check_out(out, op)
    util.check_arraylike(op, a)
    a = asarray(a)
    axes = util.canonicalize_axes(axis, a.ndim, fun=op)
    if initial is None:
        if _any(a.shape[i] == 0 for i in axes):
            raise ValueError(f"zero-size array to reduction operation {op} which has no "
                             "identity")
        if where is not None:
            raise ValueError(f"reduction operation {op} does not have an identity, so to use a "
                             "where mask one has to specify 'initial'")
    x = _mask(a, where, _identity(op, a.dtype))
    res = _reduce(op, x, axes)
    if initial is not None:
        init = convert(asarray(initial), a.dtype)
        res = (lax_ew.max if op == "max" else lax_ew.min)(res, init)
    return _finish(res, a.shape, axes, keepdims)


@compiled_when_eager("axis", "out", "keepdims")
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over ``axis`` (NaN propagates); empty reductions need ``initial``."""
    return _max_or_min("max", a, axis, out, keepdims, initial, where)


@compiled_when_eager("axis", "out", "keepdims")
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over ``axis`` (NaN propagates); empty reductions need ``initial``."""
    return _max_or_min("min", a, axis, out, keepdims, initial, where)


amax, amin = max, min


def _all_any(op, a, axis, out, keepdims, where):
    _check_out(out, op)
    util.check_arraylike(op, a)
    a = asarray(a)
    axes = util.canonicalize_axes(axis, a.ndim, fun=op)
    x = _mask(to_bool(a), where, op == "all")
    res = lax_red.reduce_and(x, axes) if op == "all" else lax_red.reduce_or(x, axes)
    return _finish(res, a.shape, axes, keepdims)


@compiled_when_eager("axis", "out", "keepdims")
def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where all elements over ``axis`` are non-zero."""
    return _all_any("all", a, axis, out, keepdims, where)


@compiled_when_eager("axis", "out", "keepdims")
def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where any element over ``axis`` is non-zero."""
    return _all_any("any", a, axis, out, keepdims, where)


alltrue, sometrue = all, any


# ---------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------

def _count(a_shape, axes, where, keepdims, dt):
    """Number of elements reduced (a Python int, or an array when ``where`` is given)."""
    if where is None:
        return math.prod(a_shape[i] for i in axes)
    w = util.broadcast_to(convert(where, np.bool_), a_shape)
    return sum(w, axis=axes, dtype=dt, keepdims=keepdims)


def _mean_dtypes(a, dtype, fun):
    dtype = dtypes.check_user_dtype(dtype, fun)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(util.dtype_of(a))
    return dtype, _upcast(dtype)


@compiled_when_eager("axis", "dtype", "out", "keepdims")
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``; integer inputs give the default float."""
    _check_out(out, "mean")
    util.check_arraylike("mean", a)
    a = asarray(a)
    axes = util.canonicalize_axes(axis, a.ndim, fun='mean')
    dtype, comp = _mean_dtypes(a, dtype, "mean")  # an integer dtype sums and divides in it
    total = sum(a, axis=axes, dtype=comp, keepdims=keepdims, where=where)
    n = _count(a.shape, axes, where, keepdims, comp)
    n = const(comp, n) if isinstance(n, int) else n
    return convert(lax_ew.div(total, n), dtype)


@compiled_when_eager("axis", "dtype", "out", "ddof", "keepdims", "correction")
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Variance over ``axis`` with ``ddof`` (or ``correction``) degrees of freedom removed.
    Complex inputs give a real variance."""
    _check_out(out, "var")
    util.check_arraylike("var", a)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = asarray(a)
    axes = util.canonicalize_axes(axis, a.ndim, fun='var')
    dtype = dtypes.check_user_dtype(dtype, "var")
    if dtype is None:
        dtype = dtypes.to_real_dtype(dtypes.to_inexact_dtype(a.dtype))
    comp = _upcast(dtypes.to_inexact_dtype(a.dtype))
    if dtypes.is_inexact(dtype) and not dtypes.is_complex(a.dtype):
        comp = _upcast(dtypes.to_inexact_dtype(dtypes.result_type(comp, dtype)))
    x = convert(a, comp)
    centered = lax_ew.sub(*util.broadcast_arrays(
        x, mean(x, axis=axes, dtype=comp, keepdims=True, where=where)))
    if dtypes.is_complex(comp):
        sq = lax_ew.add(lax_ew.square(lax_ew.real(centered)),
                        lax_ew.square(lax_ew.imag(centered)))
    else:
        sq = lax_ew.square(centered)
    rdt = dtypes.to_real_dtype(comp)
    total = sum(sq, axis=axes, dtype=rdt, keepdims=keepdims, where=where)
    n = _count(a.shape, axes, where, keepdims, rdt)
    # no degrees of freedom left (n - ddof <= 0) gives NaN, as JAX (NumPy gives inf)
    if isinstance(n, int) and not hasattr(ddof, "shape"):
        res = lax_ew.div(total, const(rdt, n - ddof)) if n - ddof > 0 else \
            lax_shape.full(util.shape_of(total), np.nan, rdt)
    else:
        n = convert(asarray(n), rdt) if isinstance(n, int) else n
        denom = lax_ew.sub(n, convert(asarray(ddof), rdt))
        denom, total = util.broadcast_arrays(denom, total)
        pos = lax_ew.gt(denom, const(rdt, 0))
        res = lax_ew.select(pos, lax_ew.div(total, denom),
                            lax_shape.full(util.shape_of(total), np.nan, rdt))
    return convert(res, dtype)


@compiled_when_eager("axis", "dtype", "out", "ddof", "keepdims", "correction")
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Standard deviation: the square root of :func:`var`."""
    _check_out(out, "std")
    v = var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
            correction=correction)
    dt = util.dtype_of(v)
    if not dtypes.is_inexact(dt):  # an explicit integer dtype
        return convert(lax_ew.sqrt(convert(v, dtypes.default_float_dtype())), dt)
    return lax_ew.sqrt(v)


@compiled_when_eager("axis", "returned", "keepdims")
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average over ``axis``; ``returned=True`` also gives the sum of weights."""
    util.check_arraylike("average", a)
    a = asarray(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        axes = util.canonicalize_axes(axis, a.ndim, fun='average')
        wsum = lax_shape.full(util.shape_of(avg), math.prod(a.shape[i] for i in axes),
                              util.dtype_of(avg))
    else:
        util.check_arraylike("average", weights)
        w = asarray(weights)
        a, w = util.promote_dtypes_inexact(a, w)
        axes = util.canonicalize_axes(axis, a.ndim, fun='average')
        if a.shape != w.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if w.ndim != 1:
                raise ValueError("1D weights expected when shapes of a and weights differ.")
            if len(axes) != 1 or w.shape[0] != a.shape[axes[0]]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = lax_shape.broadcast_in_dim(w, a.shape, axes)
        wsum = sum(w, axis=axes, keepdims=keepdims)
        avg = lax_ew.div(sum(lax_ew.mul(a, w), axis=axes, keepdims=keepdims), wsum)
    if returned:
        if util.shape_of(wsum) != util.shape_of(avg):
            wsum = util.broadcast_to(wsum, util.shape_of(avg))
        return avg, wsum
    return avg


@compiled_when_eager("axis", "out", "keepdims")
def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values (max - min) over ``axis``."""
    _check_out(out, "ptp")
    mx = max(a, axis=axis, keepdims=keepdims)
    mn = min(a, axis=axis, keepdims=keepdims)
    if dtypes.is_bool(util.dtype_of(mx)):
        raise TypeError("ptp does not support boolean inputs (subtraction of bools)")
    return lax_ew.sub(mx, mn)


@compiled_when_eager("axis", "keepdims")
def count_nonzero(a, axis=None, keepdims=False):
    """Number of non-zero elements over ``axis`` (default int dtype)."""
    util.check_arraylike("count_nonzero", a)
    a = asarray(a)
    return sum(to_bool(a), axis=axis, dtype=dtypes.default_int_dtype(),
               keepdims=keepdims)


def _median_sorted_last(x, n):
    """Median along the last axis of ``x`` (size ``n``), NaN if any NaN is present."""
    if n == 0:
        return lax_shape.full(x.shape[:-1], np.nan, x.dtype)
    s = lax_sort.sort(x, dimension=x.ndim - 1)
    ax = x.ndim - 1
    hi = lax_shape.index_in_dim(s, n // 2, ax, keepdims=False)
    if n % 2:
        med = hi
    else:
        lo = lax_shape.index_in_dim(s, n // 2 - 1, ax, keepdims=False)
        med = lax_ew.add(lo, lax_ew.mul(lax_ew.sub(hi, lo), const(x.dtype, 0.5)))
    if not dtypes.is_complex(x.dtype):
        has_nan = isnan(lax_shape.index_in_dim(s, n - 1, ax, keepdims=False))
        med = lax_ew.select(has_nan, lax_shape.full(med.shape, np.nan, med.dtype), med)
    return med


def _reduced_axes_last(name, a, axis):
    """``a`` as an inexact array with the reduced ``axis`` moved last and flattened into one:
    returns (a as an array, the reduced axes, that view, its last dimension's size)."""
    util.check_arraylike(name, a)
    a = asarray(a)
    axes = util.canonicalize_axes(axis, a.ndim, fun=name)
    x = convert(a, dtypes.to_inexact_dtype(a.dtype))
    rest = [i for i in range(a.ndim) if i not in axes]
    x = jshape.transpose(x, rest + list(axes))
    n = math.prod(a.shape[i] for i in axes)
    x = lax_shape.reshape(x, tuple(a.shape[i] for i in rest) + (n,))
    return a, axes, x, n


@compiled_when_eager("axis", "out", "overwrite_input", "keepdims")
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis`` (a NaN anywhere in a slice gives NaN)."""
    _check_out(out, "median")
    _check_overwrite_input(overwrite_input, "median")
    a, axes, x, n = _reduced_axes_last("median", a, axis)
    res = _median_sorted_last(x, n)
    return _finish(res, a.shape, axes, keepdims)


@compiled_when_eager("axis", "out", "overwrite_input", "keepdims")
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median ignoring NaNs (all-NaN slices give NaN)."""
    _check_out(out, "nanmedian")
    _check_overwrite_input(overwrite_input, "nanmedian")
    a, axes, x, n = _reduced_axes_last("nanmedian", a, axis)
    if n == 0:
        return _finish(lax_shape.full(x.shape[:-1], np.nan, x.dtype), a.shape, axes, keepdims)
    s = lax_sort.sort(x, dimension=x.ndim - 1)  # NaNs sort last
    idt = dtypes.default_int_dtype()
    cnt = sum(lax_ew.bitwise_not(isnan(s)), axis=-1, dtype=idt, keepdims=True)
    lo_i = lax_ew.div(lax_ew.sub(cnt, const(idt, 1)), const(idt, 2))
    hi_i = lax_ew.div(cnt, const(idt, 2))
    iota = lax_shape.broadcasted_iota(idt, s.shape, s.ndim - 1)
    zero = lax_shape.full(s.shape, 0, s.dtype)
    pick = lambda i: lax_red.reduce_sum(  # noqa: E731 - one-hot pick of s[..., i]
        lax_ew.select(lax_ew.eq(iota, util.broadcast_to(i, s.shape)), s, zero), (s.ndim - 1,))
    lo, hi = pick(lo_i), pick(hi_i)
    med = lax_ew.mul(lax_ew.add(lo, hi), const(s.dtype, 0.5))
    empty = lax_ew.eq(lax_shape.reshape(cnt, med.shape), const(idt, 0))
    med = lax_ew.select(empty, lax_shape.full(med.shape, np.nan, med.dtype), med)
    return _finish(med, a.shape, axes, keepdims)


# ---------------------------------------------------------------------------------------
# arg-reductions and cumulative reductions
# ---------------------------------------------------------------------------------------

def _arg(op, a, axis, out, keepdims):
    _check_out(out, op)
    util.check_arraylike(op, a)
    a = asarray(a)
    shape = a.shape
    if axis is None:
        a, ax = jshape.ravel(a), 0
        if a.shape[0] == 0:
            raise ValueError(f"attempt to get {op} of an empty sequence")
    else:
        ax = util.canonicalize_axis(axis, a.ndim, fun=op)
        if a.shape[ax] == 0:
            raise ValueError(f"attempt to get {op} of an empty sequence")
    if dtypes.is_bool(a.dtype):
        a = convert(a, np.int8)
    f = lax_red.argmax if op == "argmax" else lax_red.argmin
    res = f(a, ax, dtypes.default_int_dtype())
    if keepdims:
        res = lax_shape.reshape(res, (1,) * len(shape) if axis is None else
                                _keepdims_shape(shape, (ax,)))
    return res


@compiled_when_eager("axis", "out", "keepdims")
def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the maximum (first occurrence; NaN counts as the maximum)."""
    return _arg("argmax", a, axis, out, keepdims)


@compiled_when_eager("axis", "out", "keepdims")
def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the minimum (first occurrence; NaN counts as the minimum)."""
    return _arg("argmin", a, axis, out, keepdims)


def _nanarg(op, a, axis, out, keepdims):
    util.check_arraylike(op, a)
    a = asarray(a)
    if not dtypes.is_inexact(a.dtype):
        return _arg(op[3:], a, axis, out, keepdims)
    nan = isnan(a)
    fill = _identity("max" if op == "nanargmax" else "min", a.dtype)
    res = _arg(op[3:], lax_ew.select(nan, lax_shape.full(a.shape, fill, a.dtype), a), axis,
               out, keepdims)
    all_nan = all(nan, axis=axis, keepdims=keepdims)
    return lax_ew.select(all_nan, lax_shape.full(util.shape_of(res), -1, res.dtype), res)


@compiled_when_eager("axis", "out", "keepdims")
def nanargmax(a, axis=None, out=None, keepdims=None):
    """:func:`argmax` ignoring NaNs (-1 for all-NaN slices)."""
    return _nanarg("nanargmax", a, axis, out, keepdims)


@compiled_when_eager("axis", "out", "keepdims")
def nanargmin(a, axis=None, out=None, keepdims=None):
    """:func:`argmin` ignoring NaNs (-1 for all-NaN slices)."""
    return _nanarg("nanargmin", a, axis, out, keepdims)


def _cumulative(op, a, axis, dtype, promote_integers=False, include_initial=False,
                reverse=False):
    util.check_arraylike(op, a)
    a = asarray(a)
    if axis is None:
        a, axis = jshape.ravel(a), 0
    axis = util.canonicalize_axis(axis, a.ndim, fun=op)
    req = dtypes.check_user_dtype(dtype, op)
    out_dt = req if req is not None else a.dtype
    if req is not None:  # values pass through the requested dtype first, as in JAX
        a = convert(a, req)
    if (req is None and promote_integers) or dtypes.is_bool(out_dt):
        out_dt = _promote_integer(out_dt)
    x = convert(a, _upcast(out_dt))
    kind = "sum" if "sum" in op else "prod"
    f = lax_red.cumsum if kind == "sum" else lax_red.cumprod
    res = f(x, axis, reverse) if x.shape[axis] else x
    res = convert(res, out_dt)
    if req is not None and dtypes.is_bool(req):
        res = convert(res, np.bool_)
    if include_initial:
        shape = list(res.shape)
        shape[axis] = 1
        init = lax_shape.full(tuple(shape), 0 if kind == "sum" else 1, res.dtype)
        res = lax_shape.concatenate([init, res], axis)
    return res


@compiled_when_eager("axis", "dtype", "out")
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (the flattened array when None)."""
    _check_out(out, "cumsum")
    return _cumulative("cumsum", a, axis, dtype)


@compiled_when_eager("axis", "dtype", "out")
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (the flattened array when None)."""
    _check_out(out, "cumprod")
    return _cumulative("cumprod", a, axis, dtype)


def _array_api_axis(x, axis, fun):
    if axis is None:
        if np.ndim(x) > 1:
            raise ValueError(f"{fun}: axis must be specified for arrays with more than one "
                             f"dimension, got shape {np.shape(x)}")
        axis = 0
    return axis


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative sum; ``include_initial`` prepends the zero."""
    axis = _array_api_axis(x, axis, "cumulative_sum")
    return _cumulative("cumulative_sum", x, axis, dtype, True, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative product; ``include_initial`` prepends the one."""
    axis = _array_api_axis(x, axis, "cumulative_prod")
    return _cumulative("cumulative_prod", x, axis, dtype, True, include_initial)


def _nan_to(a, value):
    a = asarray(a)
    if not dtypes.is_inexact(a.dtype):
        return a
    return lax_ew.select(isnan(a), lax_shape.full(a.shape, value, a.dtype), a)


@compiled_when_eager("axis", "dtype", "out")
def nancumsum(a, axis=None, dtype=None, out=None):
    """:func:`cumsum` treating NaNs as zero."""
    _check_out(out, "nancumsum")
    util.check_arraylike("nancumsum", a)
    return _cumulative("nancumsum", _nan_to(a, 0), axis, dtype)


@compiled_when_eager("axis", "dtype", "out")
def nancumprod(a, axis=None, dtype=None, out=None):
    """:func:`cumprod` treating NaNs as one."""
    _check_out(out, "nancumprod")
    util.check_arraylike("nancumprod", a)
    return _cumulative("nancumprod", _nan_to(a, 1), axis, dtype)


# ---------------------------------------------------------------------------------------
# NaN-ignoring reductions
# ---------------------------------------------------------------------------------------

@compiled_when_eager("axis", "dtype", "out", "keepdims")
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`sum` treating NaNs as zero."""
    util.check_arraylike("nansum", a)
    return sum(_nan_to(a, 0), axis=axis, dtype=dtype, out=out, keepdims=keepdims,
               initial=initial, where=where)


@compiled_when_eager("axis", "dtype", "out", "keepdims")
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`prod` treating NaNs as one."""
    util.check_arraylike("nanprod", a)
    return prod(_nan_to(a, 1), axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                initial=initial, where=where)


def _nan_extreme(op, a, axis, out, keepdims, initial, where):
    util.check_arraylike(f"nan{op}", a)
    a = asarray(a)
    if not dtypes.is_inexact(a.dtype):
        return _max_or_min(op, a, axis, out, keepdims, initial, where)
    nan = isnan(a)
    fill = _identity(op, a.dtype)
    res = _max_or_min(op, lax_ew.select(nan, lax_shape.full(a.shape, fill, a.dtype), a), axis,
                      out, keepdims, initial, where)
    keep = lax_ew.bitwise_not(nan)
    if where is not None:
        keep = lax_ew.bitwise_and(keep, util.broadcast_to(convert(where, np.bool_), a.shape))
    all_nan = lax_ew.bitwise_not(any(keep, axis=axis, keepdims=keepdims))
    if initial is not None:
        return res
    return lax_ew.select(all_nan, lax_shape.full(util.shape_of(res), np.nan, res.dtype), res)


@compiled_when_eager("axis", "out", "keepdims")
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`max` ignoring NaNs (all-NaN slices give NaN)."""
    return _nan_extreme("max", a, axis, out, keepdims, initial, where)


@compiled_when_eager("axis", "out", "keepdims")
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`min` ignoring NaNs (all-NaN slices give NaN)."""
    return _nan_extreme("min", a, axis, out, keepdims, initial, where)


def _not_nan_where(a, where):
    keep = lax_ew.bitwise_not(isnan(a))
    if where is not None:
        keep = lax_ew.bitwise_and(keep, util.broadcast_to(convert(where, np.bool_), a.shape))
    return keep


@compiled_when_eager("axis", "dtype", "out", "keepdims")
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """:func:`mean` ignoring NaNs (all-NaN slices give NaN)."""
    util.check_arraylike("nanmean", a)
    a = asarray(a)
    if not dtypes.is_inexact(a.dtype):
        return mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    return mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                where=_not_nan_where(a, where))


@compiled_when_eager("axis", "dtype", "out", "ddof", "keepdims", "correction")
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           correction=None):
    """:func:`var` ignoring NaNs."""
    util.check_arraylike("nanvar", a)
    a = asarray(a)
    if dtypes.is_inexact(a.dtype):
        where = _not_nan_where(a, where)
        a = _nan_to(a, 0)
    return var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where,
               correction=correction)


@compiled_when_eager("axis", "dtype", "out", "ddof", "keepdims", "correction")
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           correction=None):
    """:func:`std` ignoring NaNs."""
    v = nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where,
               correction=correction)
    return lax_ew.sqrt(v)


# ---------------------------------------------------------------------------------------
# whole-array comparisons
# ---------------------------------------------------------------------------------------

def _isclose(a, b, rtol, atol, equal_nan):
    a, b = util.promote_args("allclose", a, b)
    a, b = asarray(a), asarray(b)
    dt = util.dtype_of(a)
    if not dtypes.is_inexact(dt):
        return lax_ew.eq(a, b)
    rdt = dtypes.to_real_dtype(dt)
    rtol = const(rdt, rtol)
    atol = const(rdt, atol)
    diff = lax_ew.abs(lax_ew.sub(a, b))
    close = lax_ew.le(diff, lax_ew.add(atol, lax_ew.mul(rtol, lax_ew.abs(b))))
    finite_a, finite_b = _is_finite(a), _is_finite(b)
    both_finite = lax_ew.bitwise_and(finite_a, finite_b)
    out = lax_ew.bitwise_and(close, both_finite)
    # infinities are close only to themselves
    inf_eq = lax_ew.bitwise_and(lax_ew.eq(a, b), lax_ew.bitwise_not(both_finite))
    out = lax_ew.bitwise_or(out, inf_eq)
    if equal_nan:
        out = lax_ew.bitwise_or(out, lax_ew.bitwise_and(isnan(a), isnan(b)))
    return out


def _is_finite(x):
    if dtypes.is_complex(util.dtype_of(x)):
        return lax_ew.bitwise_and(lax_ew.is_finite(lax_ew.real(x)),
                                  lax_ew.is_finite(lax_ew.imag(x)))
    return lax_ew.is_finite(x)


@compiled_when_eager("rtol", "atol", "equal_nan")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``a`` is within ``atol + rtol * |b|`` of ``b``."""
    util.check_arraylike("allclose", a, b)
    return all(_isclose(a, b, rtol, atol, equal_nan))


def _false():
    return lax_ew.convert_element_type(np.bool_(False), np.bool_)


@compiled_when_eager("equal_nan")
def array_equal(a1, a2, equal_nan=False):
    """True when both arrays have the same shape and elements."""
    if key_arrays.is_key_array(a1) or key_arrays.is_key_array(a2):
        return key_arrays.array_equal(a1, a2)
    util.check_arraylike("array_equal", a1, a2)
    if util.shape_of(a1) != util.shape_of(a2):
        return _false()
    a1, a2 = util.promote_args("array_equal", a1, a2)
    eq = lax_ew.eq(a1, a2)
    if equal_nan and dtypes.is_inexact(util.dtype_of(a1)):
        eq = lax_ew.bitwise_or(eq, lax_ew.bitwise_and(isnan(a1), isnan(a2)))
    return all(eq)


@compiled_when_eager()
def array_equiv(a1, a2):
    """True when the arrays broadcast to a common shape and are equal there."""
    util.check_arraylike("array_equiv", a1, a2)
    try:
        util.broadcast_shapes(util.shape_of(a1), util.shape_of(a2))
    except ValueError:
        return _false()
    a1, a2 = util.promote_args("array_equiv", a1, a2)
    return all(lax_ew.eq(a1, a2))


# ---------------------------------------------------------------------------------------
# sorting and searching (argmax/argmin/count_nonzero above belong here too)
# ---------------------------------------------------------------------------------------

def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """A sorted copy of ``a`` (NaNs last); ``axis=None`` sorts the flattened array."""
    a, axis = _sort_operand("sort", a, axis, kind, order)
    out = lax_sort.sort(a, dimension=axis, is_stable=bool(stable))
    return lax_shape.rev(out, (axis,)) if descending else out


@compiled_when_eager("axis", "kind", "order", "stable", "descending")
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices that sort ``a`` along ``axis``; stable, also when ``descending``."""
    a, axis = _sort_operand("argsort", a, axis, kind, order)
    idt = dtypes.default_int_dtype()
    iota = lax_shape.broadcasted_iota(idt, a.shape, axis)
    if descending:
        # reverse, sort stably ascending, reverse back: ties keep their original order
        a = lax_shape.rev(a, (axis,))
        _, perm = lax_sort.sort((a, iota), dimension=axis, is_stable=True, num_keys=1)
        perm = lax_shape.rev(perm, (axis,))
        return lax_ew.sub(const(idt, a.shape[axis] - 1), perm)
    _, perm = lax_sort.sort((a, iota), dimension=axis, is_stable=bool(stable), num_keys=1)
    return perm




def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one array per dimension.

    Under ``jit`` the output shape must be static: pass ``size`` (results are truncated or
    padded with ``fill_value``, default 0)."""
    util.check_arraylike("nonzero", a)
    if np.ndim(a) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(arr)"
                         ".nonzero() instead.")
    if size is None:
        v = jshape._concrete_value(a)
        if v is None:
            jshape._need_size(a, "nonzero")
        return tuple(jshape._upload(i, dtypes.default_int_dtype()) for i in np.nonzero(v))
    return _nonzero_sized(a, size, fill_value)


@compiled_when_eager("size", "fill_value")  # (an array fill_value runs op by op)
def _nonzero_sized(a, size, fill_value):
    size = jshape.static_int(size, "nonzero size", nonnegative=True)
    a = asarray(a)
    idt = dtypes.default_int_dtype()
    mask = jshape.ravel(to_bool(a))
    pos, valid = jshape._flat_true_positions(mask, size, fill_value)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length {a.ndim}, "
                         f"got {fill_value!r}")
    out, stride = [], math.prod(a.shape)
    for d, f in zip(a.shape, fills):
        stride //= d if d else 1
        # (an empty `a` has no valid slot; dividing by a zero stride would be folded at
        # compile time, and XLA's folding of an integer 0 // 0 kills the process)
        coord = lax_ew.div(pos, const(idt, stride)) if stride > 1 else pos
        coord = lax_ew.rem(coord, const(idt, d)) if d else coord
        f = 0 if f is None else f
        out.append(lax_ew.select(valid, coord, util.broadcast_to(convert(f, idt), (size,))))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened array."""
    util.check_arraylike("flatnonzero", a)
    return nonzero(jshape.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of non-zero elements, grouped by element: shape ``(N, a.ndim)``."""
    util.check_arraylike("argwhere", a)
    a = asarray(a)
    if a.ndim == 0:
        n = (1 if bool(jshape._concrete_value(a)) else 0) if size is None else size
        if size is None and jshape._concrete_value(a) is None:
            jshape._need_size(a, "argwhere")
        return lax_shape.full((n, 0), 0, dtypes.default_int_dtype())
    if size is None:
        return jshape.stack(nonzero(a), axis=1)
    return _argwhere_sized(a, size, fill_value)


@compiled_when_eager("size", "fill_value")
def _argwhere_sized(a, size, fill_value):
    return jshape.stack(nonzero(a, size=size, fill_value=fill_value), axis=1)
