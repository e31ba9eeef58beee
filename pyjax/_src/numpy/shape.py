"""Shape manipulation, joining/splitting and ``unique`` for ``pyjax.numpy`` (reshape, transpose,
concatenate, split, roll, tile, repeat, unique, ...), plus the small helpers the other
``numpy`` modules share (``asarray``, ``convert``, ``const``, ...).

Everything lowers to ``lax`` shape primitives with static shapes. ``unique`` (like ``nonzero``
in reductions.py) has a data-dependent output shape: it runs on the host for concrete inputs
and needs a static ``size=`` under ``jit``, as in JAX.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, NamedTuple

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import composite_ops as lax_composite
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import reductions as lax_red
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax import sorting as lax_sort
from pyjax._src.numpy import key_arrays, util
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = [
    "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "moveaxis", "swapaxes",
    "squeeze", "expand_dims", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
    "concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack", "row_stack",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack",
    "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud", "rot90", "roll",
    "tile", "repeat", "resize", "unique", "unique_values", "unique_counts", "unique_inverse",
    "unique_all",
]

_int = builtins.int
_PY_SCALARS = (bool, int, float, complex)


# ---------------------------------------------------------------------------------------
# helpers shared with reductions.py and products.py
# ---------------------------------------------------------------------------------------

def asarray(x):
    """``x`` as a pyjax array (or tracer). Python scalars keep their weak type."""
    if isinstance(x, (ArrayImpl, Tracer)) or key_arrays.is_key_array(x):
        return x
    if hasattr(x, "__jax_array__"):
        return asarray(x.__jax_array__())
    if isinstance(x, (list, tuple)):
        raise TypeError(f"expected an array or scalar, got {type(x).__name__}; pyjax.numpy "
                        "functions do not accept lists or tuples here (use jnp.array(x)).")
    av = util.aval_of(x)
    if trace_mod.is_eager():
        from pyjax._src.dispatch import eager as dispatch
        return dispatch.to_array(x)
    return lax_ew.convert_element_type(x, av.dtype, av.weak_type)


def convert(x, dtype):
    """Convert to ``dtype`` (a no-op when it already has it), dropping weak types."""
    dtype = np.dtype(dtype)
    av = util.aval_of(x)
    if av.dtype == dtype and not av.weak_type:
        return x
    return lax_ew.convert_element_type(x, dtype)


def to_bool(x):
    """Truthiness as a bool array (complex values are true when either part is non-zero)."""
    dt = util.dtype_of(x)
    if dtypes.is_complex(dt):
        return lax_ew.ne(x, const(dt, 0))
    return convert(x, np.bool_)


def const(dtype, value):
    """A rank-0 NumPy constant of ``dtype`` (inlined as a literal under ``jit``)."""
    return np.asarray(value, dtype)[()]


def isnan(x):
    return lax_ew.ne(x, x)


def is_static_int(x):
    return isinstance(x, (_int, np.integer)) and not isinstance(x, (bool, np.bool_))


def static_int(x, what, *, nonnegative=False):
    """A Python int from a static value; traced values raise a ConcretizationTypeError.
    ``nonnegative``: a negative value raises ValueError (a size)."""
    if isinstance(x, Tracer):
        x = operator.index(x)  # raises the concretization error with context
    try:
        out = operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {x!r}") from None
    if nonnegative and out < 0:
        raise ValueError(f"{what} must be non-negative, got {out}")
    return out


# ---------------------------------------------------------------------------------------
# reshaping and transposing
# ---------------------------------------------------------------------------------------

def reshape(a, shape=None, order="C", *, newshape=None, copy=None, out_sharding=None):
    """Give ``a`` a new shape without changing its data; one dimension may be ``-1``.
    ``out_sharding``: the result's sharding (explicit axes), for reshapes whose sharding
    JAX's rule cannot infer."""
    if (type(a) is ArrayImpl and type(shape) is tuple and order == "C" and newshape is None
            and out_sharding is None):
        new = _plain_shape(shape, a.aval)
        if new is not None:  # the common call: one bind, no checks left to make
            return a if new == a.aval.shape else _bind_reshape(a, new)
    if key_arrays.is_key_array(a) and out_sharding is None:
        return key_arrays.reshape(a, shape if shape is not None else newshape, order)
    util.check_arraylike("reshape", a)
    name = "shape"
    if shape is None:
        if newshape is None:
            raise TypeError("reshape() missing required argument 'shape'")
        shape, name = newshape, "newshape"
    a = asarray(a)
    new = axes_mod.reshape_shape(a.shape, shape, name, "reshape")
    if order == "C":
        if out_sharding is not None:
            return lax_shape.reshape(a, new, out_sharding=out_sharding)
        return a if new == a.shape else lax_shape.reshape(a, new)
    if out_sharding is not None:
        raise NotImplementedError(f"jnp.reshape: out_sharding with order={order!r}")
    if order == "F":
        rev = tuple(range(a.ndim))[::-1]
        t = lax_shape.transpose(a, rev) if a.ndim > 1 else a
        r = lax_shape.reshape(t, new[::-1])
        return lax_shape.transpose(r, tuple(range(len(new)))[::-1]) if len(new) > 1 else r
    if order == "A":
        raise NotImplementedError("reshape with order='A' is not supported.")
    raise ValueError(f"Unexpected value for order argument: {order!r}")


def _plain_shape(shape, aval):
    """``shape`` (one -1 resolved) when it is ints that fit ``aval``'s size, else None (the
    general path raises for the rest)."""
    n, unknown = 1, None
    for i, d in enumerate(shape):
        if type(d) is not int or d < 0:
            if d != -1 or unknown is not None or type(d) is not int:
                return None
            unknown = i
        else:
            n *= d
    size = math.prod(aval.shape)
    if unknown is None:
        return shape if n == size else None
    if n == 0 or size % n:
        return None
    return shape[:unknown] + (size // n,) + shape[unknown + 1:]


def _bind_reshape(a, new):
    return lax_shape.reshape_p.bind(a, new_sizes=new, dimensions=None, sharding=None)


def ravel(a, order="C"):
    """The flattened array (a reshape to one dimension)."""
    if type(a) is ArrayImpl and order == "C":
        shape = a.aval.shape
        return a if len(shape) == 1 else _bind_reshape(a, (math.prod(shape),))
    if key_arrays.is_key_array(a):
        return key_arrays.ravel(a, order)
    util.check_arraylike("ravel", a)
    a = asarray(a)
    if order == "K":
        raise NotImplementedError("ravel with order='K' is not supported.")
    if a.ndim == 1:
        return a
    return reshape(a, (a.size,), order=order)


def transpose(a, axes=None):
    """Permute the axes of ``a`` (reverse them when ``axes`` is None)."""
    if type(a) is ArrayImpl:
        perm = _plain_permutation(axes, a.aval.shape)
        if perm is not None:  # the common call: one bind
            return a if perm == tuple(range(len(perm))) else lax_shape.transpose_p.bind(
                a, permutation=perm)
    if key_arrays.is_key_array(a):
        return key_arrays.transpose(a, axes)
    util.check_arraylike("transpose", a)
    a = asarray(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    else:
        given = axes
        axes = tuple(axes_mod.canonicalize_axis(ax, a.ndim, "axes", "transpose") for ax in
                     (given if isinstance(given, (tuple, list)) else (given,)))
        if len(axes) != a.ndim:
            raise ValueError(f"transpose: axes {given!r} don't match array of rank {a.ndim}")
        if sorted(axes) != list(range(a.ndim)):
            raise ValueError(f"transpose: axes {given!r} is not a permutation of the dimensions "
                             f"of an array of rank {a.ndim} (repeated axis)")
    if axes == tuple(range(a.ndim)):
        return a
    return lax_shape.transpose(a, axes)


def _plain_permutation(axes, shape):
    """``axes`` (None: reversed) as a tuple when it is a permutation of non-negative ints of
    ``len(shape)``, else None (the general path normalizes and checks the rest)."""
    nd = len(shape)
    if axes is None:
        return tuple(range(nd - 1, -1, -1))
    if type(axes) is not tuple and type(axes) is not list or len(axes) != nd:
        return None
    seen = 0
    for ax in axes:
        if type(ax) is not int or not 0 <= ax < nd or seen >> ax & 1:
            return None
        seen |= 1 << ax
    return tuple(axes)


def permute_dims(a, /, axes):
    """Array-API spelling of :func:`transpose` (``axes`` required)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    util.check_arraylike("matrix_transpose", x)
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError("x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return lax_shape.transpose(x, perm)


def moveaxis(a, source, destination):
    """Move axes ``source`` to positions ``destination`` keeping the others in order."""
    util.check_arraylike("moveaxis", a)
    a = asarray(a)
    src = axes_mod.canonicalize_axes(source, a.ndim, "source", "moveaxis", allow_none=False)
    dst = axes_mod.canonicalize_axes(destination, a.ndim, "destination", "moveaxis",
                                     allow_none=False)
    if len(src) != len(dst):
        raise ValueError("moveaxis: Inconsistent number of elements: "
                         f"{len(src)} vs {len(dst)} (source={source!r}, "
                         f"destination={destination!r})")
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(a, perm)


def swapaxes(a, axis1, axis2):
    """Interchange two axes."""
    util.check_arraylike("swapaxes", a)
    a = asarray(a)
    i = axes_mod.canonicalize_axis(axis1, a.ndim, "axis1", "swapaxes")
    j = axes_mod.canonicalize_axis(axis2, a.ndim, "axis2", "swapaxes")
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1)."""
    if key_arrays.is_key_array(a):
        return key_arrays.squeeze(a, axis)
    util.check_arraylike("squeeze", a)
    a = asarray(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        dims = axes_mod.canonicalize_axes(axis, a.ndim, fun="squeeze")
        bad = [i for i in dims if a.shape[i] != 1]
        if bad:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                             f"one, got shape={a.shape} and dimensions={tuple(dims)}")
    if not dims:
        return a
    return lax_shape.reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in dims))


def expand_dims(a, axis):
    """Insert size-1 axes at positions ``axis`` (int or tuple) of the result."""
    if key_arrays.is_key_array(a):
        return key_arrays.expand_dims(a, axis)
    util.check_arraylike("expand_dims", a)
    a = asarray(a)
    out_nd = a.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    axes = axes_mod.canonicalize_axes(axis, out_nd, fun="expand_dims", allow_none=False)
    shape = list(a.shape)
    for ax in sorted(axes):
        shape.insert(ax, 1)
    return lax_shape.reshape(a, tuple(shape))


def broadcast_shapes(*shapes):
    """The shape that NumPy broadcasting of ``shapes`` gives."""
    return util.broadcast_shapes(*[axes_mod.canonicalize_shape(s, "shapes", "broadcast_shapes")
                                   for s in shapes])


def broadcast_to(array, shape):
    """Broadcast ``array`` to ``shape`` (NumPy rules)."""
    if key_arrays.is_key_array(array):
        return key_arrays.broadcast_to(array, shape)
    util.check_arraylike("broadcast_to", array)
    shape = axes_mod.canonicalize_shape(shape, "shape", "broadcast_to")
    return util.broadcast_to(asarray(array), shape)


def broadcast_arrays(*args):
    """Broadcast all arguments against each other; returns a tuple of arrays (the array API
    standard's container, which JAX follows)."""
    util.check_arraylike("broadcast_arrays", *args)
    args = [asarray(a) for a in args]
    shape = util.broadcast_shapes(*[a.shape for a in args])
    return tuple(util.broadcast_to(a, shape) for a in args)


# ---------------------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------------------

def _as_list(arrays, fun):
    if isinstance(arrays, (ArrayImpl, Tracer, np.ndarray)):
        if np.ndim(arrays) == 0:
            raise ValueError(f"{fun}: zero-dimensional arrays cannot be iterated over")
        arrays = asarray(arrays)
        return [lax_shape.index_in_dim(arrays, i, 0, keepdims=False)
                for i in range(arrays.shape[0])]
    try:
        arrays = list(arrays)
    except TypeError:
        raise TypeError(f"{fun} expects a sequence of arrays, got {type(arrays)}") from None
    if not any(map(key_arrays.is_key_array, arrays)):
        util.check_arraylike(fun, *arrays)
    return arrays


def _promote_to(arrays, dtype, fun):
    if dtype is None:
        return util.promote_dtypes(*arrays) if len(arrays) > 1 else arrays
    dtype = dtypes.check_user_dtype(dtype, fun)
    return [convert(a, dtype) for a in arrays]


@compiled_when_eager("axis", "dtype")
def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (``axis=None`` flattens them first)."""
    arrays = _as_list(arrays, "concatenate")
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if any(map(key_arrays.is_key_array, arrays)) and axis is not None and dtype is None:
        return key_arrays.join(arrays, axis, "concatenate", 0)
    arrays = [asarray(a) for a in _promote_to(arrays, dtype, "concatenate")]
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = axes_mod.canonicalize_axis(axis, nd, fun="concatenate")
    for a in arrays[1:]:
        if a.ndim != nd:
            raise ValueError("All the input arrays must have same number of dimensions, got "
                             f"shapes {[x.shape for x in arrays]}")
        if any(a.shape[i] != arrays[0].shape[i] for i in range(nd) if i != axis):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                            f"other than the one being concatenated (axis {axis}): got shapes "
                            f"{[x.shape for x in arrays]}")
    if len(arrays) == 1:
        return arrays[0]
    return lax_shape.concatenate(arrays, axis)


def concat(arrays, /, *, axis=0):
    """Array-API spelling of :func:`concatenate`."""
    return concatenate(arrays, axis=axis)


@compiled_when_eager("axis", "out", "dtype")
def stack(arrays, axis=0, out=None, dtype=None):
    """Join equally shaped arrays along a new axis."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to stack is not supported.")
    arrays = _as_list(arrays, "stack")
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    if any(map(key_arrays.is_key_array, arrays)) and dtype is None:
        return key_arrays.join(arrays, axis, "stack", 1)
    arrays = [asarray(a) for a in arrays]
    shape0 = arrays[0].shape
    if any(a.shape != shape0 for a in arrays):
        raise ValueError(f"All input arrays must have the same shape, got "
                         f"{[a.shape for a in arrays]}")
    axis = axes_mod.canonicalize_axis(axis, len(shape0) + 1, fun="stack")
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis, dtype=dtype)


@compiled_when_eager("dtype")
def vstack(tup, dtype=None):
    """Stack arrays vertically (along axis 0, after ``atleast_2d``)."""
    arrs = _as_list(tup, "vstack")
    return concatenate([atleast_2d(a) for a in arrs], axis=0, dtype=dtype)


row_stack = vstack


@compiled_when_eager("dtype")
def hstack(tup, dtype=None):
    """Stack arrays horizontally (axis 1, or axis 0 for 1-D inputs)."""
    arrs = [atleast_1d(a) for a in _as_list(tup, "hstack")]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis=axis, dtype=dtype)


@compiled_when_eager("dtype")
def dstack(tup, dtype=None):
    """Stack arrays along the third axis (after ``atleast_3d``)."""
    return concatenate([atleast_3d(a) for a in _as_list(tup, "dstack")], axis=2, dtype=dtype)


@compiled_when_eager()
def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D inputs are stacked as they are)."""
    arrs = []
    for a in _as_list(tup, "column_stack"):
        a = asarray(a)
        arrs.append(reshape(a, (-1, 1)) if a.ndim < 2 else a)
    return concatenate(arrs, axis=1)


def _atleast(fun, arys, lift):
    """``lift`` applied to each input as an array; a list when several are given."""
    util.check_arraylike(fun, *arys)
    out = [lift(asarray(a)) for a in arys]
    return out[0] if len(out) == 1 else out


def _lift_3d(a):
    if a.ndim == 0:
        return reshape(a, (1, 1, 1))
    if a.ndim == 1:
        return reshape(a, (1, a.shape[0], 1))
    if a.ndim == 2:
        return reshape(a, a.shape + (1,))
    return a


def atleast_1d(*arys):
    """Views of the inputs with at least one dimension (a list when several are given)."""
    return _atleast("atleast_1d", arys, lambda a: reshape(a, (1,)) if a.ndim == 0 else a)


def atleast_2d(*arys):
    """Inputs with at least two dimensions: (N,) becomes (1, N)."""
    return _atleast("atleast_2d", arys,
                    lambda a: a if a.ndim >= 2 else reshape(a, (1,) * (2 - a.ndim) + a.shape))


def atleast_3d(*arys):
    """Inputs with at least three dimensions: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    return _atleast("atleast_3d", arys, _lift_3d)


# ---------------------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------------------

def _split(fun, ary, indices_or_sections, axis, equal):
    util.check_arraylike(fun, ary)
    ary = asarray(ary)
    if ary.ndim == 0:
        raise ValueError(f"{fun}: zero-dimensional arrays cannot be split")
    axis = axes_mod.canonicalize_axis(axis, ary.ndim, fun=fun)
    n = ary.shape[axis]
    if is_static_int(indices_or_sections) or (np.ndim(indices_or_sections) == 0 and
                                               not isinstance(indices_or_sections, Tracer)):
        sections = static_int(indices_or_sections, f"{fun} sections")
        if sections <= 0:
            raise ValueError(f"{fun}: number of sections must be larger than 0, got {sections}")
        if equal and n % sections:
            raise ValueError(f"array split does not result in an equal division: size {n} "
                             f"along axis {axis} into {sections} sections")
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        idx = [static_int(i, f"{fun} indices") for i in np.asarray(indices_or_sections)
               .reshape(-1).tolist()] if not isinstance(indices_or_sections, (list, tuple)) \
            else [static_int(i, f"{fun} indices") for i in indices_or_sections]
        bounds = [0] + [builtins.min(builtins.max(i if i >= 0 else i + n, 0), n) for i in idx]
        bounds = bounds + [n]
    # slices for NumPy's overlapping pieces (JAX 0.10.2 raises there) and for key arrays
    if bounds != sorted(bounds) or key_arrays.is_key_array(ary):
        return [lax_shape.slice_in_dim(ary, lo, builtins.max(lo, hi), 1, axis)
                for lo, hi in zip(bounds[:-1], bounds[1:])]
    # one split primitive, as JAX 0.10.2: its transpose is one concatenate, where the
    # transposes of separate slices were a zero-padded copy of the operand per piece, summed
    # (docs/speed_vs_jax.md, "JAX's transformer module on pyjax's runtime")
    return lax_composite.split(ary, [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])], axis)


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the given indices (a sequence)."""
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split`, but sections may differ in size by one."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    util.check_arraylike("hsplit", ary)
    return _split("hsplit", ary, indices_or_sections, 1 if np.ndim(ary) > 1 else 0, True)


def vsplit(ary, indices_or_sections):
    """Split along axis 0 (needs at least two dimensions)."""
    util.check_arraylike("vsplit", ary)
    if np.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0, True)


def dsplit(ary, indices_or_sections):
    """Split along axis 2 (needs at least three dimensions)."""
    util.check_arraylike("dsplit", ary)
    if np.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2, True)


def unstack(x, /, *, axis=0):
    """Split into a tuple of arrays along ``axis``, removing it."""
    util.check_arraylike("unstack", x)
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = axes_mod.canonicalize_axis(axis, x.ndim, fun="unstack")
    if key_arrays.is_key_array(x):
        return tuple(lax_shape.index_in_dim(x, i, axis, False) for i in range(x.shape[axis]))
    return tuple(lax_composite.unstack(x, axis))  # one primitive: JAX's sharding rule


# ---------------------------------------------------------------------------------------
# rearranging
# ---------------------------------------------------------------------------------------

def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    util.check_arraylike("flip", m)
    m = asarray(m)
    axes = axes_mod.canonicalize_axes(axis, m.ndim, fun="flip")
    if not axes:
        return m
    return lax_shape.rev(m, tuple(axes))


def fliplr(m):
    """Reverse along axis 1."""
    util.check_arraylike("fliplr", m)
    if np.ndim(m) < 2:
        raise ValueError(f"fliplr requires an array of at least 2 dimensions, got "
                         f"ndim={np.ndim(m)}")
    return flip(m, 1)


def flipud(m):
    """Reverse along axis 0."""
    util.check_arraylike("flipud", m)
    if np.ndim(m) < 1:
        raise ValueError("flipud requires an array of at least 1 dimension, got ndim=0")
    return flip(m, 0)


@compiled_when_eager("k", "axes")
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    util.check_arraylike("rot90", m)
    m = asarray(m)
    ax = axes_mod.canonicalize_axes(axes, m.ndim, "axes", "rot90", allow_none=False)
    if len(ax) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got axes={axes!r}.")
    a0, a1 = ax
    k = static_int(k, "rot90 k") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def _roll_static(a, shift, axis):
    n = a.shape[axis]
    if n == 0:
        return a
    s = shift % n
    if s == 0:
        return a
    return lax_shape.concatenate([lax_shape.slice_in_dim(a, n - s, n, 1, axis),
                                  lax_shape.slice_in_dim(a, 0, n - s, 1, axis)], axis)


def _roll_dynamic(a, shift, axis):
    n = a.shape[axis]
    if n == 0:
        return a
    idx_dt = dtypes.canonicalize_dtype(util.dtype_of(shift))
    shift = convert(shift, idx_dt)
    s = lax_ew.rem(shift, const(idx_dt, n))
    s = lax_ew.select(lax_ew.lt(s, const(idx_dt, 0)), lax_ew.add(s, const(idx_dt, n)), s)
    start = lax_ew.sub(const(idx_dt, n), s)
    start = lax_ew.select(lax_ew.eq(start, const(idx_dt, n)), const(idx_dt, 0), start)
    doubled = lax_shape.concatenate([a, a], axis)
    starts = [const(idx_dt, 0)] * a.ndim
    starts[axis] = start
    return lax_shape.dynamic_slice(doubled, starts, a.shape)


@compiled_when_eager("shift", "axis")
def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (the flattened array when None)."""
    util.check_arraylike("roll", a)
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = tuple(axes_mod.canonicalize_axis(ax, a.ndim, fun="roll") for ax in
                 (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if isinstance(shift, (ArrayImpl, Tracer, np.ndarray)) and np.ndim(shift) > 0:
        shifts = [shift[i] for i in range(shift.shape[0])]
    elif isinstance(shift, (list, tuple)):
        shifts = list(shift)
    else:
        shifts = [shift]
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length")
    for s, ax in zip(shifts, axes):
        if isinstance(s, Tracer):
            a = _roll_dynamic(a, s, ax)
        else:
            a = _roll_static(a, static_int(s, "roll shift"), ax)
    return a


def tile(A, reps):
    """Repeat the whole of ``A`` ``reps`` times along each axis."""
    util.check_arraylike("tile", A)
    A = asarray(A)
    reps = axes_mod.canonicalize_shape(reps, "reps", "tile", allow_negative=True)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions are not allowed, got {reps}")
    nd = builtins.max(len(reps), A.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    A = reshape(A, (1,) * (nd - A.ndim) + A.shape)
    return lax_composite.tile(A, reps)  # one primitive: JAX's sharding rule


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element ``repeats`` times along ``axis`` (the flattened array when None)."""
    util.check_arraylike("repeat", a)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="repeat")
    n = a.shape[axis]
    if isinstance(repeats, Tracer):
        if total_repeat_length is None:
            raise errors.ConcretizationTypeError(
                repeats.aval.str_short(),
                "jnp.repeat with a traced `repeats` needs a static `total_repeat_length`.\n")
        return _repeat_traced(a, repeats, axis, total_repeat_length)
    reps = np.asarray(repeats)
    if reps.ndim == 0 or reps.size == 1:
        r = _int(reps.reshape(()))
        if r < 0:
            raise ValueError(f"repeat: repeats may not be negative, got {r}")
        shape = list(a.shape)
        shape.insert(axis + 1, r)
        dims = tuple(i if i <= axis else i + 1 for i in range(a.ndim))
        b = lax_shape.broadcast_in_dim(a, tuple(shape), dims)
        out_shape = a.shape[:axis] + (n * r,) + a.shape[axis + 1:]
        out = lax_shape.reshape(b, out_shape)
    else:
        if reps.ndim != 1 or reps.shape[0] != n:
            raise ValueError(f"repeat: repeats of shape {reps.shape} cannot be broadcast to "
                             f"the length {n} of axis {axis}")
        if (reps < 0).any():
            raise ValueError("repeat: repeats may not be negative")
        idx = np.repeat(np.arange(n, dtype=np.int32), reps)
        out = take_along(a, idx, axis)
    if total_repeat_length is not None and out.shape[axis] != total_repeat_length:
        total = static_int(total_repeat_length, "total_repeat_length")
        cur = out.shape[axis]
        if cur > total:
            out = lax_shape.slice_in_dim(out, 0, total, 1, axis)
        else:  # pad with the input's last element (even when its repeat is 0), as JAX does
            last = lax_shape.slice_in_dim(a, n - 1, n, 1, axis) if n else None
            if last is None:
                raise ValueError("repeat: cannot pad an empty result to total_repeat_length")
            shape = list(out.shape)
            shape[axis] = total - cur
            out = lax_shape.concatenate([out, util.broadcast_to(last, tuple(shape))], axis)
    return out


def _repeat_traced(a, repeats, axis, total):
    total = static_int(total, "total_repeat_length")
    n = a.shape[axis]
    idt = dtypes.default_int_dtype()
    reps = util.broadcast_to(convert(repeats, idt), (n,))
    ends = lax_red.cumsum(reps, 0)
    j = lax_shape.broadcasted_iota(idt, (total, n), 0)
    # output position j takes the element i with ends[i-1] <= j < ends[i]
    src = lax_red.reduce_sum(convert(lax_ew.ge(j, lax_shape.broadcast_in_dim(
        ends, (total, n), (1,))), idt), (1,))
    src = lax_ew.min(src, const(idt, builtins.max(n - 1, 0)))
    return take_along(a, src, axis)


def take_along(a, idx, axis):
    """Gather ``a`` at a 1-D index array ``idx`` along ``axis`` (indices in range)."""
    from pyjax._src.numpy import indexing
    return indexing.take(a, idx, axis=axis, mode="clip")


@compiled_when_eager("new_shape")
def resize(a, new_shape):
    """A new array of ``new_shape`` filled with repeated copies of ``a``'s data."""
    util.check_arraylike("resize", a)
    a = ravel(asarray(a))
    new_shape = axes_mod.canonicalize_shape(new_shape, "new_shape", "resize")
    size = math.prod(new_shape)
    if a.size == 0 or size == 0:
        return lax_shape.full(new_shape, 0, a.dtype)
    reps = -(-size // a.size)
    return reshape(lax_shape.slice_in_dim(tile(a, reps), 0, size, 1, 0), new_shape)


# ---------------------------------------------------------------------------------------
# data-dependent output shapes: host for concrete inputs, size= under jit
# ---------------------------------------------------------------------------------------

def _concrete_value(x):
    """A NumPy value for a concrete input, or None when it is a tracer."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return np.asarray(x) if not isinstance(x, ArrayImpl) else x._value


def _need_size(x, fun):
    raise errors.ConcretizationTypeError(
        x.aval.str_short(),
        f"The size argument of jnp.{fun} must be statically specified to use jnp.{fun} within "
        "JAX transformations (the output shape depends on the values of the input).\n")


def _upload(v, dtype=None):
    v = np.asarray(v, dtype if dtype is not None else dtypes.canonicalize_dtype(v.dtype))
    return asarray(v)


def _flat_true_positions(mask, size, fill):
    """Positions (in a flattened boolean ``mask``) of its first ``size`` True entries, padded
    with ``fill``; also returns the validity mask of each slot."""
    idt = dtypes.default_int_dtype()
    n = mask.shape[0]
    # slot k holds the number of entries whose running count is <= k: a binary search in the
    # nondecreasing running count (O(size log n), where comparing every pair was O(size * n))
    from pyjax._src.numpy.searching import searchsorted  # searching imports this module
    cs = lax_red.cumsum(convert(mask, idt), 0) if n else mask
    pos = (convert(searchsorted(cs, lax_shape.iota(idt, size), side="right"), idt) if n
           else lax_shape.full((size,), 0, idt))
    count = lax_red.reduce_sum(convert(mask, idt), (0,)) if n else const(idt, 0)
    valid = lax_ew.lt(lax_shape.iota(idt, size), count)
    return pos, valid


def _unique_host(v, return_index, return_inverse, return_counts, axis, equal_nan):
    res = np.unique(v, return_index=return_index, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    if not isinstance(res, tuple):
        return _upload(res, v.dtype)
    idt = dtypes.default_int_dtype()
    return (_upload(res[0], v.dtype),) + tuple(_upload(r, idt) for r in res[1:])


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements of ``ar`` (optionally first indices, inverse, counts).

    Under ``jit`` pass a static ``size``: the result is truncated or padded with
    ``fill_value`` (default: the smallest unique value)."""
    util.check_arraylike("unique", ar)
    if size is None:
        v = _concrete_value(ar)
        if v is None:
            _need_size(ar, "unique")
        v = np.asarray(v, dtypes.canonicalize_dtype(v.dtype))
        if axis is not None:
            axis = axes_mod.canonicalize_axis(axis, v.ndim, fun="unique")
        return _unique_host(v, return_index, return_inverse, return_counts, axis, equal_nan)
    ar = asarray(ar)
    if axis is not None:
        axis = axes_mod.canonicalize_axis(axis, ar.ndim, fun="unique")
    return _unique_sized(ar, axis, static_int(size, "unique size", nonnegative=True),
                         fill_value, equal_nan, return_index, return_inverse, return_counts)


def _take_1d(x, idx):
    """``x[idx]`` for a 1-D ``x`` and in-range 1-D ``idx``."""
    if x.shape[0] == 0:
        return lax_shape.full(idx.shape, 0, x.dtype)
    return take_along(x, idx, 0)


@compiled_when_eager("axis", "size", "fill_value", "equal_nan", "return_index",
                     "return_inverse", "return_counts")  # (an array fill_value: op by op)
def _unique_sized(ar, axis, size, fill_value, equal_nan, return_index, return_inverse,
                  return_counts):
    """``unique`` with a static ``size``: the unique slices along ``axis`` (elements when
    None), found as rows of an (n, m) matrix sorted lexicographically."""
    idt = dtypes.default_int_dtype()
    moved = reshape(ar, (ar.size,)) if axis is None else moveaxis(ar, axis, 0)
    n, slice_shape = moved.shape[0], tuple(moved.shape[1:])
    m = math.prod(slice_shape)
    if n == 0 and size and fill_value is None:  # JAX's error: no value to pad with
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    x = reshape(moved, (n, m))
    iota = lax_shape.iota(idt, n)
    if n and m:
        cols = [lax_shape.reshape(lax_shape.slice_in_dim(x, j, j + 1, 1, 1), (n,))
                for j in range(m)]
        perm = lax_sort.sort(cols + [iota], dimension=0, is_stable=True, num_keys=m)[-1]
        s = take_along(x, perm, 0)
        hi = lax_shape.slice_in_dim(s, 1, n, 1, 0)
        lo = lax_shape.slice_in_dim(s, 0, n - 1, 1, 0)
        diff = lax_ew.ne(hi, lo)
        if equal_nan and dtypes.is_inexact(s.dtype):
            both_nan = lax_ew.bitwise_and(isnan(hi), isnan(lo))
            diff = lax_ew.bitwise_and(diff, lax_ew.bitwise_not(both_nan))
        diff = lax_red.reduce_or(diff, (1,))
        first = lax_shape.concatenate([lax_shape.full((1,), True, np.bool_), diff], 0)
    else:  # no rows, or rows of no elements (all equal)
        s, perm = x, iota
        first = lax_ew.eq(iota, const(idt, 0))
    # one slot past size: where the last kept unique ends (for its count)
    pos_ext, valid_ext = _flat_true_positions(first, size + 1, None)
    pos = lax_shape.slice_in_dim(pos_ext, 0, size, 1, 0)
    valid = lax_shape.slice_in_dim(valid_ext, 0, size, 1, 0)
    safe = lax_ew.min(pos, const(idt, builtins.max(n - 1, 0)))
    vals = take_along(s, safe, 0) if n else lax_shape.full((size, m), 0, s.dtype)
    if fill_value is None:  # the smallest unique slice
        fill = lax_shape.slice_in_dim(s, 0, 1, 1, 0) if n else lax_shape.full((1, m), 0, s.dtype)
    else:
        fill = reshape(util.broadcast_to(convert(fill_value, s.dtype), slice_shape), (1, m))
    fill = lax_shape.broadcast_in_dim(fill, (size, m), (0, 1))
    keep = lax_shape.broadcast_in_dim(valid, (size, m), (0,))
    vals = reshape(lax_ew.select(keep, vals, fill), (size,) + slice_shape)
    outs = [vals if axis is None else moveaxis(vals, 0, axis)]
    if return_index:  # JAX pads with the first unique's index; nothing for an empty input
        idx = _take_1d(perm, safe)
        pad = lax_shape.broadcast_in_dim(lax_shape.slice_in_dim(idx, 0, 1, 1, 0), (size,), (0,)) \
            if size else idx
        outs.append(lax_ew.select(valid, idx, pad) if n else iota)
    if return_inverse:
        gid = lax_ew.sub(lax_red.cumsum(convert(first, idt), 0), const(idt, 1)) if n else iota
        inv_perm = lax_sort.sort((perm, iota), dimension=0, num_keys=1)[1] if n else iota
        inv = _take_1d(gid, inv_perm) if n else iota
        outs.append(reshape(inv, ar.shape) if axis is None else inv)
    if return_counts:
        nxt = lax_ew.select(lax_shape.slice_in_dim(valid_ext, 1, size + 1, 1, 0),
                            lax_shape.slice_in_dim(pos_ext, 1, size + 1, 1, 0),
                            lax_shape.full((size,), n, idt))
        cnt = lax_ew.select(valid, lax_ew.sub(nxt, pos), lax_shape.full((size,), 0, idt))
        outs.append(cnt if n else iota)  # JAX: no counts for an empty input
    return outs[0] if len(outs) == 1 else tuple(outs)


class _UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def unique_values(x, /, *, size=None, fill_value=None):
    """Array-API ``unique_values``: ``unique(x)`` with NaNs collapsed."""
    return unique(x, equal_nan=True, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The named tuple ``(values, counts)`` (array API)."""
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=True, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The named tuple ``(values, inverse_indices)``; the inverse has the shape of ``x``."""
    vals, inv = unique(x, return_inverse=True, equal_nan=True, size=size,
                       fill_value=fill_value)
    return _UniqueInverseResult(vals, reshape(inv, np.shape(x) if not hasattr(x, "shape")
                                              else x.shape))


def unique_all(x, /, *, size=None, fill_value=None):
    """The named tuple ``(values, indices, inverse_indices, counts)`` (array API)."""
    vals, idx, inv, cnt = unique(x, return_index=True, return_inverse=True,
                                 return_counts=True, equal_nan=True, size=size,
                                 fill_value=fill_value)
    return _UniqueAllResult(vals, idx, reshape(inv, np.shape(x) if not hasattr(x, "shape")
                                               else x.shape), cnt)
