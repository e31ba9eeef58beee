"""Index helpers: ``c_``, ``r_``, ``s_``, ``index_exp``, ``ix_``, ``mgrid``, ``ogrid``,
``indices``, ``diag_indices(_from)``, ``tril/triu_indices(_from)``, ``mask_indices``,
``ravel_multi_index``, ``unravel_index``, ``fill_diagonal``.

Shapes and grid sizes are static (Python values), as in JAX; index values may be traced.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import asarray, arange, array, linspace, ones
from pyjax._src.numpy.reductions import nonzero
from pyjax._src.numpy.shape import concatenate, reshape, stack, ravel, broadcast_arrays
from pyjax._src.numpy.ufuncs import clip, where, less, remainder, floor_divide

__all__ = ["c_", "r_", "s_", "index_exp", "ix_", "mgrid", "ogrid", "indices",
           "diag_indices", "diag_indices_from", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "mask_indices", "ravel_multi_index",
           "unravel_index", "fill_diagonal"]

s_ = np.s_  # plain Python index expressions, the same objects as NumPy's (as in JAX)
index_exp = np.index_exp


def _static_index(x, what, fun):
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{fun}: {what} must be a static integer, got {x!r}") from None


# ---------------------------------------------------------------------------------------
# grids
# ---------------------------------------------------------------------------------------

def _slice_values(s, fun):
    """The 1-D array a slice stands for: ``arange``, or ``linspace`` when the step is
    imaginary (its magnitude is the number of points, end included)."""
    for v in (s.start, s.stop, s.step):
        if isinstance(v, Tracer):
            errors_msg = f"{fun}: slice bounds must be static, got a traced value"
            raise errors.ConcretizationTypeError(v.aval.str_short(), errors_msg + "\n")
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)), endpoint=True)
    return arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse, name):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key, self.name)
        axes = [_slice_values(k, self.name) for k in key]
        if not axes:
            return asarray([])
        axes = [asarray(a) for a in util.promote_dtypes(*axes)]
        n = len(axes)
        shaped = [reshape(a, tuple(-1 if i == j else 1 for j in range(n)))
                  for i, a in enumerate(axes)]
        if self.sparse:
            return shaped
        return stack(broadcast_arrays(*shaped), 0)

    def __repr__(self):
        return f"pyjax.numpy.{self.name}"


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _Concatenator:
    """``r_``/``c_``: concatenate slices (as ``arange``/``linspace``), scalars and arrays
    along an axis; a leading string "axis[,ndmin[,trans1d]]" sets the layout."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        items = list(key)
        if items and isinstance(items[0], str):
            spec = items.pop(0)
            if spec in ("r", "c"):
                raise NotImplementedError(f"jnp.{self.name}: matrix output ('{spec}') is not "
                                          "supported (there is no matrix type)")
            try:
                parts = [int(p) for p in spec.split(",")]
            except ValueError:
                raise ValueError(f"jnp.{self.name}: could not understand directive "
                                 f"{spec!r}") from None
            if len(parts) > 3:
                raise ValueError(f"jnp.{self.name}: directive {spec!r} has more than three "
                                 "integers (axis, ndmin, trans1d)")
            axis, ndmin, trans1d = (parts + [ndmin, trans1d][len(parts) - 1:])[:3]
        arrays = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"jnp.{self.name}: a string directive must come first, got "
                                 f"{item!r} later")
            if isinstance(item, slice):
                arr = _slice_values(item, self.name)
            else:
                arr = array(item)  # lists too, as in NumPy
            if ndmin > arr.ndim:
                arr = _to_ndmin(arr, ndmin, trans1d if not _is_scalar(item) else -1)
            arrays.append(arr)
        if not arrays:
            return asarray([])
        arrays = [asarray(a) for a in util.promote_dtypes(*arrays)]
        return concatenate(arrays, axis=axis)

    def __repr__(self):
        return f"pyjax.numpy.{self.name}"


def _is_scalar(item):
    return isinstance(item, (bool, int, float, complex, np.generic))


def _to_ndmin(arr, ndmin, trans1d):
    """NumPy's layout: new unit dimensions go first, then ``trans1d`` says where the
    original dimensions end up (-1: last)."""
    k2 = ndmin - arr.ndim
    arr = reshape(arr, (1,) * k2 + tuple(arr.shape))
    if trans1d == -1:
        return arr
    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
    order = list(range(ndmin))
    return arr.transpose(order[:k1] + order[k2:] + order[k1:k2])


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")


def ix_(*args):
    """An open mesh from 1-D integer sequences: ``a[ix_(rows, cols)]`` picks the cross
    product. Boolean sequences are not supported (their length would be data-dependent)."""
    util.check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not supported")
        out.append(reshape(a, tuple(-1 if j == i else 1 for j in range(n))))
    return tuple(out)


def indices(dimensions, dtype=None, sparse=False):
    """The index of each position of a grid of shape ``dimensions``: an array of shape
    ``(len(dimensions), *dimensions)``, or with ``sparse`` a tuple of broadcastable ones."""
    dims = tuple(_static_index(d, "dimensions", "indices") for d in dimensions)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    out = []
    for i, d in enumerate(dims):
        shape = tuple(d if j == i else 1 for j in range(len(dims)))
        idx = lax_shape.broadcasted_iota(dtype, shape, i)
        out.append(idx if sparse else lax_shape.broadcast_in_dim(
            idx, dims, tuple(range(len(dims)))))
    if sparse:
        return tuple(out)
    return stack(out, 0) if out else asarray(np.zeros((0,), dtype))


# ---------------------------------------------------------------------------------------
# diagonal and triangle indices
# ---------------------------------------------------------------------------------------

def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``(n,) * ndim`` array."""
    n = _static_index(n, "n", "diag_indices")
    ndim = _static_index(ndim, "ndim", "diag_indices")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (arange(n),) * ndim


def diag_indices_from(arr):
    """``diag_indices`` of the square array ``arr``."""
    util.check_arraylike("diag_indices_from", arr)
    shape = np.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(f"All dimensions of input must be of equal length, got {shape}")
    return diag_indices(shape[0], len(shape))


def _tri_indices(n, k, m, lower, fun):
    n = _static_index(n, "n", fun)
    k = _static_index(k, "k", fun)
    m = n if m is None else _static_index(m, "m", fun)
    mask = np.tri(n, m, k, dtype=bool)
    if not lower:
        mask = ~np.tri(n, m, k - 1, dtype=bool)
    rows, cols = np.nonzero(mask)  # static: depends only on the static n, m, k
    idt = dtypes.default_int_dtype()
    return asarray(rows.astype(idt)), asarray(cols.astype(idt))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (diagonal offset ``k``) of an
    ``(n, m)`` array."""
    return _tri_indices(n, k, m, True, "tril_indices")


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (offset ``k``) of an ``(n, m)`` array."""
    return _tri_indices(n, k, m, False, "triu_indices")


def _tri_from(arr, k, lower, fun):
    util.check_arraylike(fun, arr)
    shape = np.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{fun} requires a 2-dimensional array, got shape {shape}")
    return _tri_indices(shape[0], k, shape[1], lower, fun)


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of the 2-D ``arr``."""
    return _tri_from(arr, k, True, "tril_indices_from")


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of the 2-D ``arr``."""
    return _tri_from(arr, k, False, "triu_indices_from")


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. ``jnp.triu``);
    under ``jit`` a static ``size`` as for ``nonzero``."""
    n = _static_index(n, "n", "mask_indices")
    a = mask_func(ones((n, n), dtypes.default_int_dtype()), k)
    return nonzero(a, size=size)


# ---------------------------------------------------------------------------------------
# flat <-> multi indices
# ---------------------------------------------------------------------------------------

def _dims(dims, fun):
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"{fun}: dims must be a tuple of static integers, got {dims!r}") \
            from None
    return dims


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat index of each multi-index in an array of shape ``dims``. ``mode``: "raise"
    (needs concrete indices; checks them), "wrap" or "clip"; ``order`` "C" or "F"."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: invalid mode {mode!r}; expected 'raise', "
                         "'wrap' or 'clip'")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    dims = _dims(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}, "
                         f"got {len(multi_index)}")
    util.check_arraylike("ravel_multi_index", *multi_index)
    idx = [asarray(i) for i in multi_index]
    for i in idx:
        if not dtypes.issubdtype(i.dtype, np.integer):
            raise TypeError(f"only int indices permitted in ravel_multi_index, got {i.dtype}")
    idx = broadcast_arrays(*idx) if idx else idx
    if mode == "raise":
        for i, d in zip(idx, dims):
            if isinstance(i, Tracer) and i.to_concrete_value() is None:
                raise errors.ConcretizationTypeError(
                    i.aval.str_short(), "The error occurred in jnp.ravel_multi_index(): "
                    "mode='raise' needs concrete indices; use mode='wrap' or mode='clip' "
                    "under transformations.\n")
            v = np.asarray(i)
            if v.size and (v.min() < 0 or v.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [remainder(i, d) if d else i for i, d in zip(idx, dims)]
    else:
        idx = [clip(i, 0, max(d - 1, 0)) for i, d in zip(idx, dims)]
    idt = dtypes.default_int_dtype()
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    strides = strides[::-1] if order == "C" else strides
    result = asarray(np.zeros((), idt))
    for i, s in zip(idx, strides):
        result = result + i.astype(idt) * int(s)
    return result


def unravel_index(indices, shape):
    """The multi-index of each flat index in an array of ``shape``: a tuple of arrays.
    Negative indices count from the end and out-of-range ones are clipped (as in JAX)."""
    util.check_arraylike("unravel_index", indices)
    idx = asarray(indices)
    if not dtypes.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"Only int indices permitted, got {idx.dtype}")
    shape = _dims(shape if isinstance(shape, (tuple, list)) else (shape,), "unravel_index")
    total = math.prod(shape)
    if total == 0 and shape:
        raise ValueError("cannot unravel index into a zero-size array")
    idt = idx.dtype if idx.dtype.itemsize >= 4 else dtypes.default_int_dtype()
    idx = idx.astype(idt)
    idx = where(less(idx, 0), idx + total, idx)
    idx = clip(idx, 0, total - 1)
    out = []
    for d in shape[::-1]:
        out.append(remainder(idx, d))
        idx = floor_divide(idx, d)
    return tuple(out[::-1])


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of ``a`` with its main diagonal set to ``val`` (repeated as needed). JAX arrays
    are immutable: pass ``inplace=False``."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    util.check_arraylike("fill_diagonal", a, val)
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape) if a.ndim > 2 else min(a.shape)
    if a.ndim == 2:
        rows, cols = a.shape
        step = cols + 1
        end = a.size if wrap else min(rows, cols) * cols
        flat_pos = np.arange(0, end, step)
        flat_pos = flat_pos[flat_pos < a.size]
    else:
        flat_pos = np.ravel_multi_index((np.arange(n),) * a.ndim, a.shape)
    v = ravel(asarray(val)).astype(a.dtype)
    if v.shape[0] == 0:
        return a
    reps = np.arange(len(flat_pos)) % v.shape[0]
    flat = ravel(a).at[asarray(flat_pos.astype(np.int32))].set(v[asarray(reps.astype(np.int32))])
    return reshape(flat, a.shape)
