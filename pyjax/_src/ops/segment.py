"""``jax.ops`` segment reductions: ``segment_sum/max/min/prod`` as one XLA scatter each.

``out[s] = reduce(data[i] for i where segment_ids[i] == s)``; segments with no entry hold the
reduction's identity (0, -inf/lowest, +inf/highest, 1). Ids outside ``[0, num_segments)`` are
dropped by default (``mode``), negative ones too: unlike ``x.at[i]``, ids are not wrapped.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import check_arraylike


def _identity(kind, dtype):
    if kind == "sum":
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if kind == "max" else info.max, dtype)


_SCATTER = {"sum": lax.scatter_add, "max": lax.scatter_max, "min": lax.scatter_min,
            "prod": lax.scatter_mul}
_REDUCE = {"sum": jnp.sum, "max": jnp.max, "min": jnp.min, "prod": jnp.prod}


def _num_segments(name, segment_ids, num_segments):
    if num_segments is None:
        try:
            ids = np.asarray(segment_ids)
        except Exception:
            raise TypeError(f"{name}: num_segments=None needs concrete segment_ids (it is "
                            "max(segment_ids) + 1); pass num_segments under jit") from None
        if ids.size == 0:
            raise ValueError(f"{name}: num_segments=None needs non-empty segment_ids")
        return int(ids.max()) + 1
    try:
        num_segments = operator.index(num_segments)
    except TypeError:
        raise TypeError(f"{name}: num_segments must be a concrete integer, got "
                        f"{num_segments!r}") from None
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _segment_reduce(kind, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode):
    name = f"segment_{kind}"
    check_arraylike(name, data, segment_ids)
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not dtypes.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be an integer array, got "
                        f"{segment_ids.dtype}")
    if data.shape[:segment_ids.ndim] != segment_ids.shape:
        raise ValueError(f"{name}: the leading axes of data {data.shape} must equal the shape "
                         f"of segment_ids {segment_ids.shape}")
    num_segments = _num_segments(name, segment_ids, num_segments)
    if bucket_size is not None:
        bucket_size = operator.index(bucket_size)
        if bucket_size <= 0:
            raise ValueError(f"{name}: bucket_size must be positive, got {bucket_size}")
        # reduce buckets of ids separately, then the partial results (better sums)
        num_buckets = max(1, math.ceil(segment_ids.size / bucket_size))
        parts = [_segment_reduce(kind, d, s, num_segments, indices_are_sorted,
                                 unique_indices, None, mode)
                 for d, s in zip(jnp.array_split(data, num_buckets),
                                 jnp.array_split(segment_ids, num_buckets))]
        return _REDUCE[kind](jnp.stack(parts), axis=0)
    window = data.shape[segment_ids.ndim:]
    out = jnp.full((num_segments,) + window, _identity(kind, data.dtype), data.dtype)
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(segment_ids.ndim, data.ndim)),
        inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    return _SCATTER[kind](out, segment_ids[..., None], data, dn,
                          indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode)


def _make(kind, what):
    def segment(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
        return _segment_reduce(kind, data, segment_ids, num_segments, indices_are_sorted,
                               unique_indices, bucket_size, mode)
    segment.__name__ = segment.__qualname__ = f"segment_{kind}"
    segment.__doc__ = (
        f"The {what} of ``data`` over the segments named by ``segment_ids`` (the leading "
        "axes of ``data``).\n\n``num_segments`` (default ``max(segment_ids) + 1``, which "
        "needs concrete ids) sets the output's leading size; ``indices_are_sorted`` and "
        "``unique_indices`` are promises passed to XLA; ``bucket_size`` reduces buckets of "
        "that many ids first; ``mode`` (a ``lax.GatherScatterMode``, default fill/drop) treats "
        "ids outside ``[0, num_segments)``.")
    return segment


segment_sum = _make("sum", "sum")
segment_max = _make("max", "maximum")
segment_min = _make("min", "minimum")
segment_prod = _make("prod", "product")

__all__ = ["segment_sum", "segment_max", "segment_min", "segment_prod"]
