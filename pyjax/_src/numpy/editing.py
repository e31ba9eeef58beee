"""Building and editing arrays: ``append``, ``delete``, ``insert``, ``trim_zeros``,
``choose``, ``compress``, ``extract``, ``place``, ``put``, ``put_along_axis``, ``rollaxis``,
``block``; and ordering: ``partition``, ``argpartition``, ``lexsort``, ``sort_complex``.

Functions whose output length depends on values (``delete`` with traced indices,
``compress``, ``extract``, ``trim_zeros``) are exact eagerly and need a static ``size=``
(or ``assume_unique_indices``) under ``jit``, as in JAX. The in-place NumPy functions
return a copy and require ``inplace=False``, as in JAX.
"""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax import sorting as lax_sort
from pyjax._src.numpy import dtypes_api, util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.creation import asarray, zeros
from pyjax._src.numpy.indexing import take, take_along_axis
from pyjax._src.numpy.reductions import argsort, cumsum, nonzero, sort
from pyjax._src.numpy.setops import isin
from pyjax._src.numpy.shape import (broadcast_arrays, broadcast_to, concatenate, moveaxis,
                                    ravel, reshape, stack)
from pyjax._src.numpy.ufuncs import clip, remainder, where

__all__ = ["append", "delete", "insert", "trim_zeros", "choose", "compress", "extract",
           "place", "put", "put_along_axis", "rollaxis", "block", "partition",
           "argpartition", "lexsort", "sort_complex"]


def _concrete(x):
    """A NumPy value of ``x``, or None for an abstract tracer."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return None if v is None else np.asarray(v)
    return np.asarray(x)


def _need_concrete(x, fun, hint):
    raise errors.ConcretizationTypeError(
        x.aval.str_short(), f"The error occurred in jnp.{fun}(): {hint}\n")


def _need_inplace_false(fun, inplace):
    if inplace:
        raise ValueError(f"jax.numpy.{fun} cannot modify arrays in-place, because JAX arrays "
                         f"are immutable. Pass inplace=False to instead return an updated "
                         f"array.")


@compiled_when_eager("axis")
def append(arr, values, axis=None):
    """``arr`` followed by ``values`` (both flattened when ``axis`` is None)."""
    util.check_arraylike("append", arr, values)
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concatenate(util.promote_dtypes(ravel(arr), ravel(values)))
    return concatenate(util.promote_dtypes(arr, values), axis=axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` (int, slice or indices) along ``axis`` (the
    flattened array when None). Traced indices need ``assume_unique_indices=True`` (the
    output then has a static length)."""
    util.check_arraylike("delete", arr)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="delete")
    n = a.shape[axis]
    if isinstance(obj, slice):
        keep = np.delete(np.arange(n), obj)
        return take(a, asarray(keep.astype(np.int32)), axis=axis)
    v = _concrete(obj)
    if v is not None:
        if v.dtype == np.bool_:
            if v.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            keep = np.nonzero(~v)[0]
        else:
            if v.size and not np.issubdtype(v.dtype, np.integer):
                raise IndexError(f"arrays used as indices must be of integer (or boolean) "
                                 f"type, got {v.dtype}")
            vi = v.astype(np.int64)
            if vi.size and (vi.min() < -n or vi.max() >= n):
                raise IndexError(f"index out of bounds for axis {axis} with size {n} in "
                                 f"jnp.delete (got {v})")
            keep = np.delete(np.arange(n), vi)
        return take(a, asarray(keep.astype(np.int32)), axis=axis)
    if not assume_unique_indices:
        _need_concrete(obj, "delete", "traced indices need assume_unique_indices=True (then "
                       "the output length is the input length minus the number of indices)")
    idx = ravel(asarray(obj))
    idx = where(idx < 0, idx + n, idx)
    remove = isin(lax_shape.iota(idx.dtype, n), idx)
    (keep,) = nonzero(~remove, size=n - idx.shape[0])
    return take(a, keep, axis=axis)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the index or indices ``obj`` along ``axis``
    (the flattened array when None). ``obj`` must be concrete; ``values`` may be traced."""
    util.check_arraylike("insert", arr, values)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="insert")
    n = a.shape[axis]
    if isinstance(obj, slice):
        obj = np.arange(*obj.indices(n))
    ind = _concrete(obj)
    if ind is None:
        _need_concrete(obj, "insert", "the insertion indices must be concrete")
    if ind.dtype == np.bool_ or (ind.size and not np.issubdtype(ind.dtype, np.integer)):
        raise IndexError(f"jnp.insert: index must be integers, got {ind.dtype}")
    ind = ind.astype(np.int64)
    if ind.size and (ind.min() < -n or ind.max() > n):
        raise IndexError(f"index {ind} is out of bounds for axis {axis} with size {n}")
    vals = asarray(values, dtype=a.dtype)  # (key arrays have no astype method, as in JAX)
    if ind.ndim == 0:
        # a block of values before one index: values get a's rank, their first axis at axis
        vals = reshape(vals, (1,) * (a.ndim - vals.ndim) + tuple(vals.shape))
        vals = moveaxis(vals, 0, axis)
        m = vals.shape[axis]
        start = int(ind) + n if ind < 0 else int(ind)
        new_pos = np.arange(start, start + m)
        old_pos = np.concatenate([np.arange(start), np.arange(start + m, n + m)])
    else:
        ind = np.where(ind < 0, ind + n, ind).ravel()
        m = ind.shape[0]
        order = np.argsort(ind, kind="stable")
        new_pos = np.empty(m, np.int64)
        new_pos[order] = ind[order] + np.arange(m)
        old_pos = np.setdiff1d(np.arange(n + m), new_pos)
    shape = list(a.shape)
    shape[axis] = m
    vals = broadcast_to(vals, tuple(shape))
    out_shape = list(a.shape)
    out_shape[axis] = n + m
    out = moveaxis(zeros(tuple(out_shape), a.dtype), axis, 0)
    out = out.at[asarray(old_pos.astype(np.int32))].set(moveaxis(a, axis, 0))
    out = out.at[asarray(new_pos.astype(np.int32))].set(moveaxis(vals, axis, 0))
    return moveaxis(out, 0, axis)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading ("f") and/or trailing ("b") zeros along ``axis`` (an int,
    a tuple, or None for every axis): the slices that are all zero at either end are cut
    (NumPy 2.2's and JAX's N-D form). Needs a concrete ``filt`` (the output shape depends on
    its values)."""
    util.check_arraylike("trim_zeros", filt)
    a = asarray(filt)
    if not isinstance(trim, str) or set(trim.lower()) - set("fb"):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = (tuple(range(a.ndim)) if axis is None
            else axes_mod.canonicalize_axes(axis, a.ndim, fun="trim_zeros"))
    v = _concrete(a)
    if v is None:
        _need_concrete(a, "trim_zeros", "the output length depends on the values")
    index = [slice(None)] * a.ndim
    for ax in axes:
        others = tuple(d for d in range(v.ndim) if d != ax)
        nz = np.nonzero(np.any(v != 0, axis=others))[0]
        if nz.size == 0:  # all zero along this axis: nothing is kept
            index[ax] = slice(0, 0)
            continue
        lo = int(nz[0]) if "f" in trim.lower() else 0
        hi = int(nz[-1]) + 1 if "b" in trim.lower() else v.shape[ax]
        index[ax] = slice(lo, hi)
    return a[tuple(index)]


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for every position of the broadcast ``a`` and ``choices``.
    ``mode``: "raise" (checks concrete indices), "wrap" or "clip"."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    util.check_arraylike("choose", a, *choices)
    a = asarray(a)
    if not dtypes.issubdtype(a.dtype, np.integer):
        raise ValueError(f"jnp.choose: index array must be integer typed, got {a.dtype}")
    n = len(choices)
    if mode == "raise":
        v = _concrete(a)
        if v is None:
            _need_concrete(a, "choose", "mode='raise' needs concrete indices; use mode='wrap' "
                           "or mode='clip' under transformations")
        if v.size and (v.min() < 0 or v.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"jnp.choose: invalid mode {mode!r}; expected 'raise', 'wrap' or "
                         "'clip'")
    a, *chs = broadcast_arrays(a, *util.promote_dtypes(*(asarray(c) for c in choices)))
    stacked = stack(chs, 0)
    return take_along_axis(stacked, a[None].astype(np.int32), axis=0)[0]


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (flattened when None) where the 1-D ``condition``
    is true; under ``jit`` a static ``size`` (padded with ``fill_value``)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    util.check_arraylike("compress", condition, a)
    cond = asarray(condition)
    if cond.ndim != 1:
        raise ValueError(f"condition must be a 1D array, got shape {cond.shape}")
    arr = asarray(a)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = axes_mod.canonicalize_axis(axis, arr.ndim, fun="compress")
    n = arr.shape[axis]
    cond = cond.astype(bool)
    cv = _concrete(cond)
    if cv is not None and cv[n:].any():
        raise IndexError(f"condition has a True beyond the array's length {n} along axis "
                         f"{axis}")
    cond = cond[:n] if cond.shape[0] >= n else concatenate([cond, zeros(n - cond.shape[0],
                                                                       bool)])
    if size is None:
        if cv is None:
            _need_concrete(cond, "compress", "pass a static size= under transformations")
        (pos,) = nonzero(cond)
        return take(arr, pos, axis=axis)
    (pos,) = nonzero(cond, size=size, fill_value=-1)
    got = take(arr, clip(pos, 0, max(n - 1, 0)), axis=axis) if n else \
        zeros(arr.shape[:axis] + (size,) + arr.shape[axis + 1:], arr.dtype)
    shape = [1] * arr.ndim
    shape[axis] = size
    valid = reshape(pos >= 0, tuple(shape))
    return where(valid, got, asarray(fill_value).astype(arr.dtype))


def extract(condition, arr, *, size=None, fill_value=0):
    """The entries of ``arr`` (flattened) where ``condition`` (flattened) is true."""
    util.check_arraylike("extract", condition, arr)
    return compress(ravel(asarray(condition)), ravel(asarray(arr)), size=size,
                    fill_value=fill_value)


def place(arr, mask, vals, *, inplace=True):
    """A copy of ``arr`` whose entries where ``mask`` is true take ``vals`` in order
    (cycled when too few)."""
    _need_inplace_false("place", inplace)
    util.check_arraylike("place", arr, mask, vals)
    a, m = asarray(arr), asarray(mask).astype(bool)
    if m.size != a.size:
        raise ValueError(f"place: mask and data must be the same size, got {m.size} and "
                         f"{a.size}")
    v = ravel(asarray(vals)).astype(a.dtype)
    if v.shape[0] == 0:
        return a
    flat_m = ravel(m)
    k = remainder(cumsum(flat_m.astype(np.int32)) - 1, v.shape[0])
    return reshape(where(flat_m, v[clip(k, 0, None)], ravel(a)), a.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of ``a`` with ``a.flat[ind] = v`` (``v`` cycled to ``ind``'s length).
    ``mode``: "clip" (default) or "wrap" for out-of-range indices."""
    _need_inplace_false("put", inplace)
    util.check_arraylike("put", a, ind, v)
    arr = asarray(a)
    idx, vals = ravel(asarray(ind)), ravel(asarray(v)).astype(arr.dtype)
    if idx.shape[0] == 0 or vals.shape[0] == 0:
        return arr
    if mode is None or mode == "clip":
        idx = clip(idx, 0, arr.size - 1)
    elif mode == "wrap":
        idx = remainder(idx, arr.size)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"jnp.put: mode must be 'clip' or 'wrap', got {mode!r}")
    reps = -(-idx.shape[0] // vals.shape[0])
    vals = concatenate([vals] * reps)[:idx.shape[0]] if reps > 1 else vals[:idx.shape[0]]
    return reshape(ravel(arr).at[idx].set(vals), arr.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """A copy of ``arr`` with ``values`` put at ``indices`` along ``axis`` (the 1-D slices
    matched as in ``take_along_axis``)."""
    _need_inplace_false("put_along_axis", inplace)
    util.check_arraylike("put_along_axis", arr, indices, values)
    a, idx = asarray(arr), asarray(indices)
    if axis is None:
        a_flat = ravel(a)
        return reshape(put_along_axis(a_flat, ravel(idx), ravel(asarray(values)), 0,
                                      inplace=False, mode=mode), a.shape)
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="put_along_axis")
    if idx.ndim != a.ndim:
        raise ValueError(f"put_along_axis: indices must have the same number of dimensions "
                         f"as arr ({a.ndim}), got {idx.ndim}")
    shape = util.broadcast_shapes(
        tuple(idx.shape[d] if d == axis else a.shape[d] for d in range(a.ndim)), idx.shape)
    idx = broadcast_to(idx, shape)
    grid = []
    for d in range(a.ndim):
        if d == axis:
            n = a.shape[axis]
            grid.append(where(idx < 0, idx + n, idx))
        else:
            grid.append(lax_shape.broadcasted_iota(idx.dtype, shape, d))
    vals = broadcast_to(asarray(values).astype(a.dtype), shape)
    return a.at[tuple(grid)].set(vals, mode=mode)


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to just before position ``start`` (NumPy's older form of
    ``moveaxis``)."""
    util.check_arraylike("rollaxis", a)
    a = asarray(a)
    n = a.ndim
    axis = axes_mod.canonicalize_axis(axis, n, fun="rollaxis")
    start = operator.index(start)
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: start={start} must satisfy {-n} <= start <= {n}")
    if start < 0:
        start += n
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def _block_depth(x, path=()):
    if isinstance(x, tuple):
        raise TypeError(f"jnp.block: arrays is a tuple at {list(path)}; only lists may be "
                        "used to arrange blocks")
    if isinstance(x, list):
        if not x:
            raise ValueError(f"jnp.block: list at {list(path)} cannot be empty")
        depths = {_block_depth(e, path + (i,)) for i, e in enumerate(x)}
        if len(depths) != 1:
            raise ValueError(f"jnp.block: list depths are mismatched under {list(path)}")
        return depths.pop() + 1
    return 0


def block(arrays):
    """Assemble an array from nested lists of blocks: the innermost lists are joined along
    the last axis, the next ones along the second-to-last, and so on."""
    depth = _block_depth(arrays)

    def leaves(x):
        return [y for e in x for y in leaves(e)] if isinstance(x, list) else [asarray(x)]
    all_leaves = leaves(arrays)
    util.check_arraylike("block", *all_leaves)
    ndim = max([depth] + [leaf.ndim for leaf in all_leaves])
    dtype = dtypes_api.result_type(*all_leaves)  # (a key dtype for blocks of keys)

    def build(x, level):
        if not isinstance(x, list):
            x = asarray(x, dtype=dtype)
            return reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))
        return concatenate([build(e, level + 1) for e in x], axis=-(depth - level))
    return build(arrays, 0)


# ---------------------------------------------------------------------------------------
# ordering
# ---------------------------------------------------------------------------------------

def _kth(kth, n, fun):
    try:
        k = operator.index(kth)
    except TypeError:
        raise TypeError(f"jnp.{fun}: kth must be a static integer, got {kth!r}") from None
    if not -n <= k < n:
        raise ValueError(f"kth(={kth}) out of bounds ({n})")
    return k + n if k < 0 else k


def partition(a, kth, axis=-1):
    """A copy of ``a`` with the element that would be ``kth`` in sorted order in place,
    smaller ones before it and the others after (here: fully sorted along ``axis``)."""
    util.check_arraylike("partition", a)
    a = asarray(a)
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="partition")
    _kth(kth, a.shape[axis], "partition")
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    """Indices that ``partition`` ``a`` (here: a stable sort along ``axis``)."""
    util.check_arraylike("argpartition", a)
    a = asarray(a)
    axis = axes_mod.canonicalize_axis(axis, a.ndim, fun="argpartition")
    _kth(kth, a.shape[axis], "argpartition")
    return argsort(a, axis=axis)


@compiled_when_eager("axis")
def lexsort(keys, axis=-1):
    """Indices that sort by several keys: the last key is the primary one (stable)."""
    keys = list(keys) if not hasattr(keys, "shape") else [keys[i] for i in range(keys.shape[0])]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    util.check_arraylike("lexsort", *keys)
    keys = [asarray(k) for k in keys]
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError(f"all keys need to be the same shape, got {[k.shape for k in keys]}")
    if not shape:
        return asarray(np.int32(0)).astype(dtypes.default_int_dtype())
    axis = axes_mod.canonicalize_axis(axis, len(shape), fun="lexsort")
    iota = lax_shape.broadcasted_iota(dtypes.default_int_dtype(), shape, axis)
    ops = [k.astype(np.int32) if k.dtype == np.bool_ else k for k in keys[::-1]]
    return lax_sort.sort(tuple(ops) + (iota,), dimension=axis, is_stable=True,
                         num_keys=len(keys))[-1]


@compiled_when_eager()
def sort_complex(a):
    """``a`` sorted (by real part, then imaginary part) as a complex array."""
    util.check_arraylike("sort_complex", a)
    a = sort(asarray(a), axis=0 if np.ndim(a) == 1 else -1)
    return a.astype(dtypes.to_complex_dtype(a.dtype))
