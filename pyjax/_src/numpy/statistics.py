"""Order statistics and covariances: ``quantile``, ``percentile``, ``nanquantile``,
``nanpercentile`` (NumPy's 13 methods), ``cov``, ``corrcoef``, ``histogram2d``,
``histogramdd``.

Quantiles sort the reduced axes (moved last and flattened), then gather the two order
statistics around NumPy's "virtual index" of each q and interpolate; the NaN-ignoring
versions do the same with each slice's own count of non-NaN values (NaNs sort last), so
every method works under ``jit``/``vmap`` and is differentiable in ``a`` and ``q``.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import ufuncs, util
from pyjax._src.numpy.creation import asarray, zeros
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.indexing import take_along_axis
from pyjax._src.numpy.reductions import (sum as _sum, any as _any, sort, average, mean, cumsum,
                                         argsort)
from pyjax._src.numpy.searching import histogram_bin_edges, searchsorted
from pyjax._src.numpy.shape import (moveaxis, reshape, transpose, concatenate, atleast_2d,
                                    ravel, stack, squeeze)
from pyjax._src.numpy.ufuncs import (isnan, where, floor, clip, equal, logical_and,
                                     logical_not, less, greater_equal, rint, remainder, conj,
                                     sqrt, real, imag, divide)
from pyjax._src.numpy.products import dot, diagonal

__all__ = ["quantile", "percentile", "nanquantile", "nanpercentile", "cov", "corrcoef",
           "histogram2d", "histogramdd"]

# continuous methods: virtual index n*q + alpha + q*(1 - alpha - beta) - 1 (Hyndman & Fan)
_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("lower", "higher", "nearest", "midpoint", "inverted_cdf",
             "averaged_inverted_cdf", "closest_observation")
METHODS = tuple(_CONTINUOUS) + _DISCRETE


def _lerp(lo, hi, t):
    # NumPy's form: exact at both ends, monotonic in t
    d = hi - lo
    out = where(greater_equal(t, 0.5), hi - d * (1 - t), lo + d * t)
    # an infinite end: the weighted sum keeps the infinity where NumPy's form gives
    # inf - inf = NaN, and t of exactly 0 or 1 picks one end (the median of [-inf, 1, inf]
    # is 1, as in JAX); finite ends keep NumPy's form and its derivative in t
    inf_end = where(equal(t, 0), lo, where(equal(t, 1), hi, lo * (1 - t) + hi * t))
    return where(ufuncs.logical_or(ufuncs.isinf(lo), ufuncs.isinf(hi)), inf_end, out)


def _virtual(n, q, method):
    """``(index_lo, index_hi, t)``: the result is lerp(sorted[lo], sorted[hi], t)."""
    fdt = q.dtype
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    elif method in ("inverted_cdf", "averaged_inverted_cdf"):
        v = n * q - 1
    elif method == "closest_observation":
        v = n * q - 1 - 0.5
    else:
        v = (n - 1) * q
    lo = floor(v)
    g = v - lo
    if method in _CONTINUOUS:
        t = g
    elif method == "lower":
        t = zeros(g.shape, fdt)
    elif method == "higher":
        t = (g > 0).astype(fdt)
    elif method == "nearest":
        # round half to even, on the order-statistic index
        t = (rint(v) > lo).astype(fdt)
    elif method == "midpoint":
        t = where(g > 0, 0.5, 0.0).astype(fdt)
    elif method == "inverted_cdf":
        t = (g > 0).astype(fdt)
    elif method == "averaged_inverted_cdf":
        t = where(g > 0, 1.0, 0.5).astype(fdt)
    else:  # closest_observation: at g == 0 the even 1-based (odd 0-based) order statistic
        t = where(logical_and(equal(g, 0), equal(remainder(lo, 2), 1)), 0.0, 1.0).astype(fdt)
    last = n - 1
    below = less(v, 0)
    above = greater_equal(v, last)
    lo = where(below, 0, where(above, last, lo))
    hi = where(below, 0, where(above, last, lo + 1))
    idt = dtypes.default_int_dtype()
    return clip(lo, 0, None).astype(idt), clip(hi, 0, None).astype(idt), t


def _quantile(a, q, axis, method, keepdims, ignore_nan, fun, weights=None, percent=False):
    if method not in METHODS:
        raise ValueError(f"{fun}: method must be one of {list(METHODS)}, got {method!r}")
    if weights is not None:
        if method != "inverted_cdf":  # JAX 0.10.2's refusal
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      "'inverted_cdf' supports weights.")
        util.check_arraylike(fun, weights)
    util.check_arraylike(fun, a, q)
    if not _q_in_range(q, 100 if percent else 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if isinstance(axis, list):
        axis = tuple(axis)
    return _quantile_compiled(a, q, axis, method, keepdims, ignore_nan, fun, weights, percent)


def _q_in_range(q, top):
    """False when a concrete ``q`` (a percentage on the host) is out of ``[0, top]`` or NaN,
    as NumPy checks; a traced one passes."""
    if type(q) is float or type(q) is int:  # (the common case, without NumPy's overhead)
        return 0 <= q <= top
    qv = q if not isinstance(q, Tracer) else q.to_concrete_value()
    if qv is None:
        return True
    qn = np.asarray(qv)
    return not qn.size or bool(np.all(qn >= 0) and np.all(qn <= top))


def _weighted_inverted_cdf(a2, w, qf, axes_shape, ignore_nan):
    """Each q's value: the first sorted value whose cumulative weight share reaches q. As JAX
    0.10.2: q = 0 gives the smallest value even when its weight is 0, a negative or NaN
    weight makes the slice's result NaN, an all-zero weight gives the smallest value."""
    n_total = a2.shape[-1]
    w = asarray(w).astype(a2.dtype)
    if w.shape == tuple(axes_shape):
        w = reshape(w, (n_total,)) + zeros(a2.shape, a2.dtype)
    elif w.shape != a2.shape:
        raise ValueError(f"Weights shape {w.shape} must match reduction axes "
                         f"{tuple(axes_shape)}")
    bad = _any(ufuncs.logical_or(less(w, 0), isnan(w)), axis=-1)
    if ignore_nan:
        w = where(isnan(a2), 0, w)
    order = argsort(a2, axis=-1, stable=True)  # NaNs last
    s, ws = take_along_axis(a2, order, axis=-1), take_along_axis(w, order, axis=-1)
    cdf = divide(cumsum(ws, axis=-1), _sum(ws, axis=-1, keepdims=True))
    below = less(cdf[..., None, :], qf[:, None])  # (batch..., Q, n): NaN compares False
    idx = clip(_sum(below, axis=-1), 0, n_total - 1).astype(dtypes.default_int_dtype())
    return where(bad[..., None], np.nan, take_along_axis(s, idx, axis=-1)), s


@compiled_when_eager("axis", "method", "keepdims", "ignore_nan", "fun", "percent")
def _quantile_compiled(a, q, axis, method, keepdims, ignore_nan, fun, weights=None,
                       percent=False):
    if percent:  # in the compiled call, as JAX's jitted percentile divides
        q = _q_from_percent(q)
    # the result has a's inexact dtype whatever q's is (JAX 0.10.2: int32 data and a float64
    # q give float32)
    (a,) = util.promote_dtypes_inexact(asarray(a))
    a = asarray(a)
    q = asarray(q).astype(a.dtype)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(f"{fun} does not support complex input")
    nd = a.ndim
    axes = tuple(range(nd)) if axis is None else axes_mod.canonicalize_axes(axis, nd,
                                                                             fun=fun)
    keep = [d for d in range(nd) if d not in axes]
    batch_shape = tuple(a.shape[d] for d in keep)
    n_total = math.prod(a.shape[d] for d in axes)
    a2 = reshape(transpose(a, keep + list(axes)), batch_shape + (n_total,))
    if n_total == 0:
        raise ValueError(f"{fun}: cannot take a quantile over an empty axis")
    qf = ravel(q)
    if ignore_nan:
        n = _sum(logical_not(isnan(a2)), axis=-1).astype(q.dtype)[..., None]
    else:
        n = asarray(float(n_total)).astype(q.dtype)
    if weights is not None:
        res, s = _weighted_inverted_cdf(a2, weights, qf, [a.shape[d] for d in axes],
                                        ignore_nan)
    else:
        s = sort(a2, axis=-1)  # NaNs last
        lo, hi, t = _virtual(n, qf, method)
        lo = lo * 1 + zeros(batch_shape + (qf.shape[0],), lo.dtype)
        hi = hi * 1 + zeros(batch_shape + (qf.shape[0],), hi.dtype)
        t = t + zeros(batch_shape + (qf.shape[0],), t.dtype)
        res = _lerp(take_along_axis(s, lo, axis=-1), take_along_axis(s, hi, axis=-1), t)
    if ignore_nan:
        res = where(equal(n, 0), np.nan, res)
    else:
        res = where(isnan(s[..., -1:]), np.nan, res)
    res = moveaxis(res, -1, 0)  # (Q, batch...)
    if keepdims:
        full = [1 if d in axes else a.shape[d] for d in range(nd)]
        res = reshape(res, (qf.shape[0],) + tuple(full))
    res = reshape(res, q.shape + tuple(res.shape[1:]))
    return res


def _unsupported(fun, out, overwrite_input, interpolation=None):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{fun} is not supported.")
    if overwrite_input:
        raise NotImplementedError(f"The 'overwrite_input' argument to jnp.{fun} is not "
                                  "supported.")
    if interpolation is not None:
        raise TypeError(f"{fun}() argument interpolation was removed in NumPy 2.0 and JAX; "
                        "use method= instead.")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles (0 <= q <= 1) of ``a`` along ``axis``; any of NumPy's
    ``method`` s. A NaN in a slice makes its quantiles NaN. The result has the shape
    ``q.shape + reduced shape`` and a floating dtype."""
    _unsupported("quantile", out, overwrite_input, interpolation)
    return _quantile(a, q, axis, method, keepdims, False, "quantile", weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """``quantile`` ignoring NaNs (an all-NaN slice gives NaN)."""
    _unsupported("nanquantile", out, overwrite_input, interpolation)
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile", weights)


def _q_from_percent(q):
    q = asarray(q)
    return divide(q, 100) if dtypes.issubdtype(q.dtype, np.inexact) else divide(q, 100.0)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """``quantile`` with ``q`` in percent (0..100)."""
    util.check_arraylike("percentile", q)
    _unsupported("quantile", out, overwrite_input, interpolation)
    return _quantile(a, q, axis, method, keepdims, False, "quantile", weights, percent=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """``nanquantile`` with ``q`` in percent (0..100)."""
    util.check_arraylike("nanpercentile", q)
    _unsupported("nanquantile", out, overwrite_input, interpolation)
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile", weights, percent=True)


# ---------------------------------------------------------------------------------------
# covariance
# ---------------------------------------------------------------------------------------

@compiled_when_eager("rowvar", "bias", "ddof")
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``
    (and ``y``), with optional integer frequency and real observation weights."""
    util.check_arraylike("cov", m)
    if ddof is not None and not isinstance(ddof, (int, np.integer)):
        raise ValueError(f"ddof must be an integer, got {ddof!r}")
    m = asarray(m)
    if m.ndim > 2:
        raise ValueError(f"m has more than 2 dimensions: shape {m.shape}")
    x = atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return zeros((0, 0), dtypes.to_inexact_dtype(m.dtype))
    if y is not None:
        util.check_arraylike("cov", y)
        y = asarray(y)
        if y.ndim > 2:
            raise ValueError(f"y has more than 2 dimensions: shape {y.shape}")
        y2 = atleast_2d(y)
        if not rowvar and y2.shape[0] != 1:
            y2 = y2.T
        x = concatenate(util.promote_dtypes(x, y2), axis=0)
    (x,) = util.promote_dtypes_inexact(x)
    x = asarray(x)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        util.check_arraylike("cov", fweights)
        fw = asarray(fweights)
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.issubdtype(fw.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = fw.astype(x.dtype)
    if aweights is not None:
        util.check_arraylike("cov", aweights)
        aw = asarray(aweights)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = aw.astype(x.dtype) if not dtypes.issubdtype(aw.dtype, np.complexfloating) else aw
        w = aw if w is None else w * aw
    if w is None:
        avg = mean(x, axis=1)
        w_sum = asarray(float(x.shape[1])).astype(real(avg).dtype)
        fact = x.shape[1] - ddof
    else:
        avg = average(x, axis=1, weights=w)
        w_sum = _sum(w)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * _sum(w * asarray(aweights).astype(w.dtype)) / w_sum
    xm = x - avg[:, None]
    xw = xm if w is None else xm * w
    c = dot(xw, conj(xm).T) / fact
    return squeeze(c)  # as NumPy: one variable gives a 0-d result


@compiled_when_eager("rowvar")
def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (``cov`` normalized by the standard deviations,
    real parts clipped to [-1, 1])."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return divide(c, c)
    d = diagonal(c)
    stddev = sqrt(real(d)).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    if dtypes.issubdtype(c.dtype, np.complexfloating):
        return clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)
    return clip(c, -1, 1)


# ---------------------------------------------------------------------------------------
# multidimensional histograms
# ---------------------------------------------------------------------------------------

def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The histogram of ``N`` points in ``D`` dimensions (``sample`` of shape ``(N, D)``):
    ``(counts, [edges per dimension])``. ``bins``: a count or edges array, or one per
    dimension; ``range``: None or a ``(lo, hi)`` per dimension. As in JAX, counts are integers
    (the default integer dtype) without ``weights`` and ``density``."""
    util.check_arraylike("histogramdd", sample)
    sample = asarray(sample)
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 2-D (N points, D dimensions), got "
                         f"shape {sample.shape}")
    (sample,) = util.promote_dtypes_inexact(sample)
    sample = asarray(sample)
    num, dim = sample.shape
    if weights is not None:
        util.check_arraylike("histogramdd", weights)
        weights = asarray(weights)
        if weights.shape != (num,):
            raise ValueError(f"should have one weight for each sample, got shape "
                             f"{weights.shape} for {num} samples")
    per_dim_bins = (isinstance(bins, (list, tuple)) and len(bins) == dim) or \
        (not isinstance(bins, (int, np.integer)) and util.ndim_of(bins) == 2)
    if isinstance(bins, (list, tuple)) and not per_dim_bins:
        raise ValueError(f"histogramdd: the dimension of bins must be equal to the dimension "
                         f"of the sample x ({dim}), got {len(bins)}")
    if range is not None and len(range) != dim:
        raise ValueError(f"histogramdd: range must have one entry per dimension ({dim}), got "
                         f"{len(range)}")
    edges, index, nbin = [], [], []
    idt = dtypes.default_int_dtype()
    for i in builtins.range(dim):
        b = bins[i] if per_dim_bins else bins
        r = None if range is None else range[i]
        e = histogram_bin_edges(sample[:, i], b, r, weights)
        n = e.shape[0]
        pos = searchsorted(e, sample[:, i], side="right")
        pos = where(equal(sample[:, i], e[-1]), n - 1, pos)  # the last bin is closed
        edges.append(e)
        index.append(pos.astype(idt))
        nbin.append(n + 1)  # underflow and overflow bins, dropped below
    strides = np.cumprod([1] + nbin[::-1][:-1])[::-1]
    flat = zeros((num,), idt)
    for pos, st in zip(index, strides):
        flat = flat + pos * int(st)
    # as in JAX: integer counts without weights (floating once normalized by density)
    wdt = idt if weights is None else dtypes.to_inexact_dtype(weights.dtype)
    total = int(np.prod(nbin))
    ones_ = np.array(1, wdt) if weights is None else weights.astype(wdt)
    hist = zeros((total,), wdt).at[flat].add(ones_, mode="drop")
    hist = reshape(hist, tuple(nbin))
    hist = hist[(slice(1, -1),) * dim]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / _sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * dim
            shape[i] = e.shape[0] - 1
            hist = hist / reshape(e[1:] - e[:-1], tuple(shape))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The 2-D histogram of the points ``(x[i], y[i])``: ``(counts, x_edges, y_edges)``."""
    util.check_arraylike("histogram2d", x, y)
    x, y = (asarray(v) for v in util.promote_dtypes(asarray(x), asarray(y)))
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"histogram2d: x and y must be 1-D of the same length, got shapes "
                         f"{x.shape} and {y.shape}")
    try:
        nb = len(bins)  # NumPy's rule: two entries are one per dimension
    except TypeError:
        nb = 1
    if nb != 2:
        bins = [bins, bins]  # one count, or one edges array, for both dimensions
    hist, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]
