"""Searching and counting in sorted data: ``searchsorted``, ``digitize``, ``bincount``,
``histogram`` and ``histogram_bin_edges``, with JAX's signatures and dtype rules.

``searchsorted`` follows JAX's methods: ``'scan'`` (the default) is a vectorized binary search,
a ``fori_loop`` of ``len(a).bit_length()`` steps that grows the count of elements before every
query at once (on integer sort keys for real types; complex, bool and float8 move ``lo``/``hi``
bounds instead); ``'scan_unrolled'`` is the same loop fully unrolled; ``'compare_all'`` compares
each query with every element of ``a`` and counts; ``'sort'`` ranks the queries among ``a`` with
one stable sort. All of them order values the way ``sort`` does: NaNs last, complex numbers
lexicographically (real part, then imaginary part), as NumPy does.
"""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy import creation
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy import reductions
from pyjax._src.numpy import indexing
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = ["searchsorted", "digitize", "bincount", "histogram", "histogram_bin_edges"]

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


# ---- the sort order (NaNs last, complex lexicographic) on arrays ----

def _isnan(x):
    return lax.ne(x, x)


def _real_lt(x, y):
    lt = lax.lt(x, y)
    if dtypes.is_floating(util.dtype_of(x)):
        lt = lax.bitwise_or(lt, lax.bitwise_and(lax.logical_not(_isnan(x)), _isnan(y)))
    return lt


def _real_eq(x, y):
    eq = lax.eq(x, y)
    if dtypes.is_floating(util.dtype_of(x)):
        eq = lax.bitwise_or(eq, lax.bitwise_and(_isnan(x), _isnan(y)))
    return eq


def _sort_lt(x, y):
    """``x < y`` in the order of ``sort``; ``x`` and ``y`` have one shape and dtype."""
    if dtypes.is_complex(util.dtype_of(x)):
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(_real_lt(xr, yr),
                       lax.bitwise_and(_real_eq(xr, yr), _real_lt(lax.imag(x), lax.imag(y))))
    return _real_lt(x, y)


def _sort_le(x, y):
    """``x <= y`` in the order of ``sort``: ``not (y < x)``."""
    return lax.logical_not(_sort_lt(y, x))


# ---- searchsorted ----

def _index_dtype(n):
    # JAX's choice: int32 whenever ``lo + hi`` cannot overflow it, whatever the x64 flag.
    return np.dtype(np.int32) if n <= np.iinfo(np.int32).max // 2 else dtypes.default_int_dtype()


# floats whose bits order like sign-magnitude integers, with NaN above inf when positive
_KEYED_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _has_sort_keys(dt):
    return dt.kind in "iu" or dt.name in _KEYED_FLOATS


def _sort_keys(x):
    """Integer keys of ``x`` whose signed order is ``sort``'s order (``_has_sort_keys``):
    floats are canonicalized (``-0.0`` to ``0.0``, every NaN to one positive NaN, which then
    sorts after ``inf``) and their bits reinterpreted, with the magnitude bits of negatives
    flipped; integers are their own keys."""
    dt = util.dtype_of(x)
    if dt.kind in "iu":
        return x
    x = lax.select(lax.eq(x, np.array(0, dt)), lax_shape.full(x.shape, 0, dt), x)
    x = lax.select(_isnan(x), lax_shape.full(x.shape, np.nan, dt), x)
    idt = np.dtype(f"int{8 * dt.itemsize}")
    bits = lax.bitcast_convert_type(x, idt)
    sign = lax.shift_right_arithmetic(bits, np.array(8 * dt.itemsize - 1, idt))
    return lax.bitwise_xor(bits, lax.bitwise_and(sign, np.array(np.iinfo(idt).max, idt)))


def _via_scan(a, v, side, dtype, unrolled):
    """Branchless binary search: ``pos`` counts the elements of ``a`` that go before ``v``
    (``a[j] < v`` for ``side='left'``, ``a[j] <= v`` for ``'right'``), grown by steps of
    2**(levels-1), ..., 2, 1, comparing integer sort keys computed once outside the loop.
    One loop-carried array and integer compares: 10^6 queries in 1000 elements ran in a
    third of the time of the loop of ``lo``/``hi`` bounds comparing floats with their NaN
    rules (docs/speed_vs_jax.md). Kept a loop unless ``unrolled``: unrolled, XLA fused the
    levels into the consumers of the result and recomputed them (``interp`` 12x slower)."""
    from pyjax._src.control_flow.loops import fori_loop
    if not _has_sort_keys(util.dtype_of(a)):  # complex, bool, float8: compare values
        return _via_scan_bounds(a, v, side, dtype, unrolled)
    n = a.shape[0]
    a_key, v_key = _sort_keys(a), _sort_keys(v)
    goes_before = lax.lt if side == "left" else lax.le
    levels = n.bit_length()  # the steps add up to 2**levels - 1 >= n
    last = np.array(n, dtype)

    def level(step, pos):
        cand = lax.add(pos, step)
        # past n the step is not taken; the clamp only keeps that gather in bounds
        j = lax.sub(lax.min(cand, last), np.array(1, dtype))
        take = lax.bitwise_and(lax.le(cand, last), goes_before(_take_in_bounds(a_key, j), v_key))
        return lax.select(take, cand, pos)

    pos = lax_shape.full(v.shape, 0, dtype)
    if unrolled:
        for k in reversed(range(levels)):
            pos = level(np.array(1 << k, dtype), pos)
        return pos
    top = np.array(levels - 1, dtype)
    return fori_loop(0, levels, lambda i, pos: level(
        lax.shift_left(np.array(1, dtype), lax.sub(top, lax.convert_element_type(i, dtype))),
        pos), pos)


def _take_in_bounds(a, idx):
    from pyjax._src.lax import slicing as lax_slicing
    dnums = lax_slicing.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                               start_index_map=(0,))
    idx = lax_shape.reshape(idx, tuple(idx.shape) + (1,))
    return lax_slicing.gather(a, idx, dnums, (1,),
                              mode=lax_slicing.GatherScatterMode.PROMISE_IN_BOUNDS)


def _via_scan_bounds(a, v, side, dtype, unrolled):
    """The binary search of ``lo``/``hi`` bounds, comparing values in ``sort``'s order."""
    from pyjax._src.control_flow.loops import fori_loop
    n = a.shape[0]
    go_left_fn = _sort_le if side == "left" else _sort_lt
    levels = int(np.ceil(np.log2(n + 1)))
    two = np.array(2, dtype)

    def body(_, state):
        lo, hi = state
        mid = lax.div(lax.add(lo, hi), two)  # lo + hi <= 2 * len(a) fits in ``dtype``
        # ``lo <= mid < hi <= n`` whenever ``lo < hi``, so the clamp never changes an index
        go_left = go_left_fn(v, indexing.take(a, mid, mode="clip"))
        return lax.select(go_left, lo, mid), lax.select(go_left, mid, hi)

    init = (lax_shape.full(v.shape, 0, dtype), lax_shape.full(v.shape, n, dtype))
    _, hi = fori_loop(0, levels, body, init, unroll=levels if unrolled else None)
    return hi


def _via_compare_all(a, v, side, dtype):
    cmp = _sort_lt if side == "left" else _sort_le
    shape = (a.shape[0],) + tuple(v.shape)
    a_b = lax_shape.broadcast_in_dim(a, shape, (0,))
    v_b = lax_shape.broadcast_in_dim(v, shape, tuple(range(1, len(shape))))
    return reductions.sum(cmp(a_b, v_b), axis=0, dtype=dtype)


def _via_sort(a, v, side, dtype):
    size = a.shape[0] + v.size
    work = np.dtype(np.int32) if size < np.iinfo(np.int32).max else dtypes.default_int_dtype()

    def rank(x):
        # rank[i] = position of x[i] in the stable sort of x
        idx = lax_shape.iota(work, x.shape[0])
        return creation.zeros(x.shape[0], work).at[reductions.argsort(x)].set(idx)

    q = lax_shape.reshape(v, (v.size,))
    if side == "left":  # queries first: a tie puts the query before the equal elements of a
        index = rank(lax_shape.concatenate([q, a], 0))[:v.size]
    else:
        index = rank(lax_shape.concatenate([a, q], 0))[a.shape[0]:]
    out = lax.sub(index, rank(q))
    return lax.convert_element_type(lax_shape.reshape(out, tuple(v.shape)), dtype)


@compiled_when_eager("side", "method")
def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices at which to insert ``v`` into the sorted 1-D array ``a`` to keep it sorted.

    ``side='left'`` gives the first suitable index ``i`` (``a[i-1] < v <= a[i]``),
    ``side='right'`` the last (``a[i-1] <= v < a[i]``). ``sorter`` holds indices that sort
    ``a`` (``a[sorter]`` is sorted). NaNs are ordered last and complex values
    lexicographically, as in ``sort``.

    ``method`` picks the algorithm (JAX's options), all with the same results:
    ``'scan'`` (default): a vectorized binary search in a loop of ``ceil(log2(len(a) + 1))``
    steps; ``'scan_unrolled'``: the same loop unrolled (faster on GPU, longer compiles);
    ``'compare_all'``: compare every query with every element (``O(len(a) * v.size)`` memory,
    fast for small ``a``); ``'sort'``: one stable sort of ``a`` and ``v`` together.

    Returns an integer array of the shape of ``v`` (``int32`` unless ``a`` is huge).
    """
    util.check_arraylike("searchsorted", a, v)
    if sorter is not None:
        util.check_arraylike("searchsorted", sorter)
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. "
                         "Expected one of ['left', 'right'].")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. "
                         f"Expected one of {list(_METHODS)}.")
    if util.ndim_of(a) != 1:
        raise ValueError(f"searchsorted: a should be 1-dimensional, got an array of shape "
                         f"{util.shape_of(a)}")
    a, v = util.promote_dtypes(a, v)
    a, v = creation.asarray(a), creation.asarray(v)
    if sorter is not None:
        sorter = creation.asarray(sorter)
        if sorter.shape != a.shape or not dtypes.is_integer(sorter.dtype):
            raise ValueError(f"searchsorted: sorter must be a 1-D integer array of the shape of "
                             f"a {a.shape}, got {sorter.dtype.name}{list(sorter.shape)}")
        a = indexing.take(a, sorter, mode="clip")
    dtype = _index_dtype(a.shape[0])
    if a.shape[0] == 0:
        return lax_shape.full(v.shape, 0, dtype)
    if method == "compare_all":
        return _via_compare_all(a, v, side, dtype)
    if method == "sort":
        return _via_sort(a, v, side, dtype)
    return _via_scan(a, v, side, dtype, unrolled=method == "scan_unrolled")


@compiled_when_eager("right", "method")
def digitize(x, bins, right=False, *, method=None):
    """Indices of the bins to which each value of ``x`` belongs.

    For increasing ``bins``, ``i`` satisfies ``bins[i-1] <= x < bins[i]`` (``right=False``) or
    ``bins[i-1] < x <= bins[i]`` (``right=True``); for decreasing ``bins`` the inequalities are
    reversed, as in NumPy. Values beyond the bins give ``0`` or ``len(bins)``. ``method`` is
    passed on to :func:`searchsorted`.
    """
    util.check_arraylike("digitize", x, bins)
    right = bool(creation._concrete_or_error(right, "right argument of jnp.digitize()"))
    bins = creation.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins of shape "
                         f"{bins.shape}")
    if bins.shape[0] == 0:
        return lax_shape.full(util.shape_of(x), 0, np.dtype(np.int32))
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = searchsorted(bins, x, side=side, **kw)
    decreasing = lax.sub(np.array(bins.shape[0], increasing.dtype),
                         searchsorted(lax_shape.rev(bins, (0,)), x, side=side, **kw))
    return ufuncs.where(ufuncs.greater_equal(bins[-1], bins[0]), increasing, decreasing)


# ---- counting ----

def _static_int(x, what, hint=""):
    if isinstance(x, Tracer):
        val = x.to_concrete_value()
        if val is None:
            raise errors.ConcretizationTypeError(
                x.aval.str_short(), f"The error occurred because of argument {what}.{hint}\n")
        x = val
    try:
        return operator.index(x)
    except TypeError:
        if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "__array__"):
            arr = np.asarray(x)
            if arr.ndim == 0 and arr.dtype.kind in "iu":
                return int(arr)
        raise TypeError(f"{what} must be an integer, got {x!r}") from None


def bincount(x, weights=None, minlength=0, *, length=None):
    """Count occurrences of each value in the non-negative integer array ``x``.

    ``out[i]`` is the number of times ``i`` occurs in ``x`` (or the sum of ``weights`` where
    it does). The output has ``length`` entries when ``length`` is given, else
    ``max(minlength, x.max() + 1)``, which needs a concrete ``x``: under ``jit`` pass a static
    ``length``. As in JAX, negative values count in bin 0 and values ``>= length`` are dropped.
    The result has the dtype of ``weights`` (the default integer dtype without weights).
    """
    util.check_arraylike("bincount", x)
    x = creation.asarray(x)
    if dtypes.is_bool(x.dtype):
        x = lax.convert_element_type(x, np.dtype(np.int32))
    if not dtypes.is_integer(x.dtype):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype.name}")
    if x.ndim != 1:
        raise ValueError(f"bincount: only 1-dimensional input supported, got x of shape "
                         f"{x.shape}")
    minlength = _static_int(minlength, "'minlength' of jnp.bincount")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if length is None:
        if isinstance(x, Tracer) and x.to_concrete_value() is None:
            raise errors.ConcretizationTypeError(
                x.aval.str_short(),
                "The error occurred because of argument 'x' of jnp.bincount: the output length "
                "depends on the values of x. To avoid this error, pass a static `length` "
                "argument.\n")
        xv = np.asarray(x.to_concrete_value() if isinstance(x, Tracer) else x)
        length = max(minlength, int(xv.max()) + 1 if xv.size else 0)
    else:
        length = _static_int(length, "'length' of jnp.bincount")
        if length < 0:
            raise ValueError(f"bincount: length must be non-negative, got {length}")
    if weights is None:
        weights = np.array(1, dtypes.default_int_dtype())
    else:
        util.check_arraylike("bincount", weights)
        weights = creation.asarray(weights)
        if weights.shape != x.shape:
            raise ValueError(f"bincount: shape of weights {weights.shape} must match shape of x "
                             f"{x.shape}.")
    w_dtype = util.dtype_of(weights)
    return creation.zeros(length, w_dtype).at[ufuncs.maximum(x, 0)].add(weights, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """The bin edges :func:`histogram` uses: ``bins`` itself when it is 1-D, else ``bins + 1``
    evenly spaced edges over ``range`` (default ``(a.min(), a.max())``, widened by 0.5 on each
    side when empty). ``weights`` is unused (string ``bins`` are not supported)."""
    del weights
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    util.check_arraylike("histogram_bin_edges", a, bins)
    arr = creation.asarray(a)
    dtype = dtypes.to_inexact_dtype(arr.dtype)
    if util.ndim_of(bins) == 1:
        return creation.asarray(bins, dtype=dtype)
    if util.ndim_of(bins) != 0:
        raise ValueError(f"histogram: bins must be an integer or a 1-D array of edges, got an "
                         f"array of shape {util.shape_of(bins)}")
    nbins = _static_int(bins, "bins of jnp.histogram_bin_edges",
                        " Pass the number of bins as a static Python int.")
    if nbins < 1:
        raise ValueError(f"histogram: `bins` must be positive, when an integer, got {nbins}")
    if range is None:
        if arr.size == 0:
            lo, hi = np.zeros((), dtype), np.ones((), dtype)
        else:
            lo, hi = reductions.min(arr), reductions.max(arr)
        lo = lax.convert_element_type(creation.asarray(lo), dtype)
        hi = lax.convert_element_type(creation.asarray(hi), dtype)
    else:
        if isinstance(range, (tuple, list)):
            if len(range) != 2:
                raise ValueError(f"`range` must be either None or a sequence of two scalars, "
                                 f"got {range}")
            lo, hi = (creation.asarray(r, dtype=dtype) for r in range)
        else:
            r = creation.asarray(range, dtype=dtype)
            if r.shape != (2,):
                raise ValueError(f"`range` must be either None or a sequence of two scalars, "
                                 f"got an array of shape {r.shape}")
            lo, hi = r[0], r[1]
        if lo.ndim or hi.ndim:
            raise ValueError(f"`range` must be either None or a sequence of two scalars, "
                             f"got {range}")
        # a concrete range is checked like NumPy does
        clo, chi = _concrete_or_none(lo), _concrete_or_none(hi)
        if clo is not None and chi is not None and float(clo) > float(chi):
            raise ValueError("max must be larger than min in range parameter.")
    empty = ufuncs.equal(hi, lo)
    lo = ufuncs.where(empty, lax.sub(lo, np.array(0.5, dtype)), lo)
    hi = ufuncs.where(empty, lax.add(hi, np.array(0.5, dtype)), hi)
    return creation.linspace(lo, hi, nbins + 1, dtype=dtype)


def _concrete_or_none(x):
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return None if v is None else np.asarray(v)
    return np.asarray(x)


@compiled_when_eager("bins", "range", "density")  # an array of edges runs op by op
def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The histogram of ``a``: ``(counts, bin_edges)``.

    ``bins`` is the number of equal-width bins over ``range`` (default: the span of ``a``) or
    a 1-D array of monotonically increasing edges. Every bin is half-open ``[e[i], e[i+1])``
    but the last, which includes its right edge; values outside the edges (and NaNs) are not
    counted. ``weights`` (the shape of ``a``) weight each value; ``density=True`` normalizes
    the counts to a probability density. As in JAX, counts are floating point.
    """
    if weights is None:
        util.check_arraylike("histogram", a, bins)
        (a,) = util.promote_dtypes_inexact(creation.asarray(a))
        weights = lax_shape.full(util.shape_of(a), 1, util.dtype_of(a))
    else:
        util.check_arraylike("histogram", a, bins, weights)
        if util.shape_of(a) != util.shape_of(weights):
            raise ValueError(f"histogram: weights should have the same shape as a, got "
                             f"{util.shape_of(weights)} and {util.shape_of(a)}.")
        a, weights = util.promote_dtypes_inexact(creation.asarray(a), creation.asarray(weights))
    a, weights = creation.asarray(a), creation.asarray(weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    n = edges.shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = ufuncs.where(ufuncs.equal(a, edges[-1]), np.array(n - 1, idx.dtype), idx)
    counts = creation.zeros(n, weights.dtype).at[idx].add(weights, mode="drop")[1:]
    if density:
        widths = lax.sub(edges[1:], edges[:-1])
        counts = ufuncs.divide(ufuncs.divide(counts, widths), reductions.sum(counts))
    return counts, edges
