"""Gather and scatter: the primitives behind NumPy indexing and ``.at[]`` updates.

``gather`` and the ``scatter*`` family follow XLA's semantics (the StableHLO spec), with JAX's
parameters: dimension numbers as hashable named tuples, ``slice_sizes``, ``mode`` (how to treat
out-of-bounds indices), ``indices_are_sorted``/``unique_indices`` hints and, for gather, a
``fill_value``. The index vector is always the last dimension of the indices, as in JAX.

Out-of-bounds handling: XLA's native gather clamps start indices and its native scatter skips
any update window that is not fully in bounds. So ``PROMISE_IN_BOUNDS`` lowers to the bare op,
``CLIP`` clamps the indices first, gather's ``FILL_OR_DROP`` masks the clamped result with an
in-bounds predicate, and scatter's ``FILL_OR_DROP`` is the native behaviour.
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive, with_self
from pyjax._src.core.rules import Zero
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import key_ops
from pyjax._src.lax.ad_util import (instantiate, is_undefined_primal, linear_jvp, zero_cts,
                                    typed_zeros, zero_tangent, zeros)
from pyjax._src.lax.base import aval_of, coerce_scalar, is_python_scalar
from pyjax._src.lowering import mlir


class GatherDimensionNumbers(NamedTuple):
    """How the dimensions of a gather's operand, indices and output relate (XLA's names).

    ``offset_dims``: output dimensions that hold the slice (window) dimensions.
    ``collapsed_slice_dims``: operand dimensions of slice size 1 that are dropped from the output.
    ``start_index_map``: for each entry of the index vector, the operand dimension it indexes.
    ``operand_batching_dims`` / ``start_indices_batching_dims``: paired batch dimensions.
    """
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the dimensions of a scatter's operand, indices and updates relate (XLA's names)."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """How gather and scatter treat out-of-bounds indices.

    ``CLIP``: indices are clamped so that the whole slice is in bounds.
    ``FILL_OR_DROP``: a gathered slice that is partly out of bounds is replaced by the fill
    value; a scattered window that is partly out of bounds is dropped.
    ``PROMISE_IN_BOUNDS``: the caller promises the indices are in bounds (with XLA this clamps
    gathers and drops scatters).
    """
    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


_NAN = float("nan")  # one object, so NaN fill values compare equal in executable cache keys


def _ints(xs, what):
    # floats raise (int() would truncate them); ranges are checked by the primitives
    return axes_mod.canonicalize_shape(xs, what, scalar_ok=False, allow_negative=True)


def _check_dims(name, what, dims, rank):
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"{name}: {what} {dims} has a dimension out of range for rank {rank}")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name}: {what} {dims} has repeated dimensions")


def _check_sorted(name, what, dims):
    if list(dims) != sorted(dims):
        raise TypeError(f"{name}: {what} must be sorted, got {dims}")


def _check_indices(name, indices):
    if not (dtypes.is_integer(indices.dtype)):
        raise TypeError(f"{name} indices must have an integer type, got {indices.dtype.name}")
    if indices.ndim < 1:
        raise TypeError(f"{name} indices must have rank at least 1 (the last dimension is the "
                        f"index vector), got shape {indices.shape}")


# ---- batching rules (vmap; see lax/batch_util.py) ----
# The batch axis is moved to the front of each batched operand. A batched operand with
# unbatched indices gains a full-size window dimension; batched indices gain a batch dimension
# of the output; both batched become a pair of operand/indices batching dimensions (no loop).

def _inc(dims):
    return tuple(d + 1 for d in dims)


def _batched_dimension_numbers(dn, indices_batched):
    """Gather's or scatter's dimension numbers (their fields line up: window, collapsed, index
    map, operand batching, indices batching) for an operand batched at axis 0. With unbatched
    indices the batch axis is one more window dimension, at 0; with indices batched at axis 0
    it is a pair of operand/indices batching dimensions."""
    window, collapsed, index_map, operand_batching, indices_batching = dn
    if indices_batched:
        return type(dn)(_inc(window), _inc(collapsed), _inc(index_map),
                        (0,) + _inc(operand_batching), (0,) + _inc(indices_batching))
    return type(dn)((0,) + _inc(window), _inc(collapsed), _inc(index_map),
                    _inc(operand_batching), indices_batching)


def _gather_batch(args, dims, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  unique_indices, mode, fill_value):
    (x, idx), (dx, di) = args, dims
    dn = dimension_numbers
    params = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode, fill_value=fill_value)
    if di is bu.not_mapped:
        x = bu.move_axis(x, dx, 0)
        new = _batched_dimension_numbers(dn, indices_batched=False)
        sizes = (bu.shape_of(x)[0],) + tuple(slice_sizes)
        return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=sizes, **params), 0
    idx = bu.move_axis(idx, di, 0)
    if dx is bu.not_mapped:
        new = dn._replace(offset_dims=_inc(dn.offset_dims),
                          start_indices_batching_dims=_inc(dn.start_indices_batching_dims))
        return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=tuple(slice_sizes),
                             **params), 0
    x = bu.move_axis(x, dx, 0)
    new = _batched_dimension_numbers(dn, indices_batched=True)
    # an operand batching dim takes a slice of 1, or of 0 where the batch is empty (vmap over
    # a size-0 axis): a slice may not exceed its dimension
    batch_slice = min(1, bu.shape_of(x)[0])
    return gather_p.bind(x, idx, dimension_numbers=new,
                         slice_sizes=(batch_slice,) + tuple(slice_sizes), **params), 0


def _scatter_batch(prim):
    def rule(args, dims, *, dimension_numbers, indices_are_sorted, unique_indices, mode,
             update_fn=None):
        (x, idx, upd), (dx, di, du) = args, dims
        dn = dimension_numbers
        size = bu.batch_size(args, dims)
        params = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode)
        if update_fn is not None:
            params.update(update_fn=update_fn)
        # Every example scatters into its own copy of the operand.
        x = bu.bdim_to(x, dx, 0, size)
        upd = bu.bdim_to(upd, du, 0, size)
        if di is not bu.not_mapped:
            idx = bu.move_axis(idx, di, 0)
        new = _batched_dimension_numbers(dn, indices_batched=di is not bu.not_mapped)
        return prim.bind(x, idx, upd, dimension_numbers=new, **params), 0
    rule.__name__ = f"{prim.name}_batch_rule"
    return rule


def _check_window_and_batching_dims(name, operand, indices, operand_batching_dims, window,
                                    collapsed, indices_batching):
    """The dimension-number checks gather and scatter share. Each names the fields its own way:
    ``window`` is (offset_dims or update_window_dims, the dims, their rank bound),
    ``collapsed`` (collapsed_slice_dims or inserted_window_dims, the dims) and
    ``indices_batching`` (start_ or scatter_indices_batching_dims, the dims)."""
    (window_name, window_dims, window_rank), (collapsed_name, collapsed_dims) = window, collapsed
    indices_batching_name, indices_batching_dims = indices_batching
    _check_dims(name, window_name, window_dims, window_rank)
    _check_sorted(name, window_name, window_dims)
    _check_dims(name, collapsed_name, collapsed_dims, operand.ndim)
    _check_sorted(name, collapsed_name, collapsed_dims)
    _check_dims(name, "operand_batching_dims", operand_batching_dims, operand.ndim)
    _check_dims(name, indices_batching_name, indices_batching_dims, indices.ndim - 1)
    if len(operand_batching_dims) != len(indices_batching_dims):
        raise TypeError(f"{name} operand_batching_dims and {indices_batching_name} must have "
                        f"equal lengths, got {operand_batching_dims} and {indices_batching_dims}")
    if set(collapsed_dims) & set(operand_batching_dims):
        raise TypeError(f"{name} {collapsed_name} and operand_batching_dims must be disjoint")


# ---- gather ----

def _gather_shape(operand, indices, dn: GatherDimensionNumbers, slice_sizes):
    name = "gather"
    _check_indices(name, indices)
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather slice_sizes must have one entry per operand dimension: "
                        f"got slice_sizes={slice_sizes} for operand shape {operand.shape}")
    for i, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
        if not 0 <= s <= d:
            raise TypeError(f"gather slice_sizes must be in [0, operand dimension]; got "
                            f"slice_sizes[{i}]={s} for operand dimension {d}")
    _check_window_and_batching_dims(
        name, operand, indices, dn.operand_batching_dims,
        ("offset_dims", dn.offset_dims, operand.ndim + indices.ndim),
        ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("start_indices_batching_dims", dn.start_indices_batching_dims))
    for d in tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise TypeError(f"gather slice_sizes for collapsed or batching operand dimension {d} "
                            f"must be 0 or 1, got {slice_sizes[d]}")
    for od, idd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        if operand.shape[od] != indices.shape[idd]:
            raise TypeError(f"gather batching dimensions must have equal sizes: operand dimension "
                            f"{od} has {operand.shape[od]}, indices dimension {idd} has "
                            f"{indices.shape[idd]}")
    if len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(f"gather start_index_map {dn.start_index_map} must have one entry per "
                        f"element of the index vector (the last dimension of indices, of size "
                        f"{indices.shape[-1]})")
    _check_dims(name, "start_index_map", dn.start_index_map, operand.ndim)
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise TypeError("gather start_index_map and operand_batching_dims must be disjoint")
    window = [slice_sizes[d] for d in range(operand.ndim)
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    if len(window) != len(dn.offset_dims):
        raise TypeError(f"gather offset_dims {dn.offset_dims} must have one entry per operand "
                        f"dimension that is neither collapsed nor batched ({len(window)})")
    batch = list(indices.shape[:-1])
    out, wi, bi = [], iter(window), iter(batch)
    for i in range(len(window) + len(batch)):
        out.append(next(wi) if i in dn.offset_dims else next(bi))
    return tuple(out)


def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes,
                          indices_are_sorted, unique_indices, mode, fill_value):
    shape = _gather_shape(operand, indices, dimension_numbers, slice_sizes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_attr(dn, index_vector_dim):
    parts = [("offset_dims", dn.offset_dims), ("collapsed_slice_dims", dn.collapsed_slice_dims),
             ("operand_batching_dims", dn.operand_batching_dims),
             ("start_indices_batching_dims", dn.start_indices_batching_dims),
             ("start_index_map", dn.start_index_map)]
    return _dimension_numbers_attr("gather", parts, index_vector_dim)


def _dimension_numbers_attr(kind, parts, index_vector_dim):
    """``#stablehlo.<kind><...>`` with the non-empty ``parts`` (name, dims), then the index
    vector dimension."""
    body = ", ".join(f"{k} = {mlir.int_list(v)}" for k, v in parts if v)
    sep = ", " if body else ""
    return f"#stablehlo.{kind}<{body}{sep}index_vector_dim = {index_vector_dim}>"


def _bool_attr(b):
    return "true" if b else "false"


def default_fill_value(dtype):
    """JAX's fill for out-of-bounds gathers: NaN for inexact types, the minimum value for
    signed integers, the maximum for unsigned integers, True for bool."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_bool(dtype):
        return True
    info = np.iinfo(dtype)
    return info.min if dtypes.is_signed(dtype) else info.max


def _bcast(ctx, x, shape, dims):
    return ctx.op("stablehlo.broadcast_in_dim", [x], x.aval.update(shape=tuple(shape)),
                  attrs={"broadcast_dimensions": mlir.i64_array(dims)})


def _index_bounds_vector(ctx, indices, upper):
    """A constant of the indices' shape whose last dimension holds ``upper`` (clipped to the
    indices' dtype so that a huge bound is simply never exceeded)."""
    dt = indices.aval.dtype
    info = np.iinfo(dt)
    vec = np.minimum(np.asarray(upper, np.int64), info.max).astype(dt)
    c = ctx.constant(vec, ShapedArray(vec.shape, dt))
    return _bcast(ctx, c, indices.aval.shape, [indices.aval.ndim - 1])


def _clamp_indices(ctx, indices, upper):
    if indices.aval.shape[-1] == 0:
        return indices
    dt = indices.aval.dtype
    lo = ctx.constant(np.zeros((), dt), ShapedArray((), dt))
    lo = _bcast(ctx, lo, indices.aval.shape, [])
    hi = _index_bounds_vector(ctx, indices, upper)
    return ctx.op("stablehlo.clamp", [lo, indices, hi], indices.aval)


def _in_bounds_mask(ctx, indices, upper):
    """Bool of the indices' batch shape: is every component of the index vector in
    ``[0, upper]``?"""
    shape = indices.aval.shape
    bool_full = ShapedArray(shape, np.bool_)
    hi = _index_bounds_vector(ctx, indices, upper)
    ok = base.compare(ctx, indices, hi, "LE", bool_full)
    if not dtypes.is_unsigned(indices.aval.dtype):
        zero = ctx.constant(np.zeros((), indices.aval.dtype), ShapedArray((), indices.aval.dtype))
        zero = _bcast(ctx, zero, shape, [])
        ge = base.compare(ctx, indices, zero, "GE", bool_full)
        ok = ctx.op("stablehlo.and", [ok, ge], bool_full)
    scalar = ShapedArray((), np.bool_)
    init = ctx.constant(np.array(True), scalar)
    region = ctx.region([scalar, scalar])
    r = region.op("stablehlo.and", region.args, scalar)
    region.ret([r])
    return ctx.op("stablehlo.reduce", [ok, init], ShapedArray(shape[:-1], np.bool_),
                  attrs={"dimensions": mlir.i64_array([len(shape) - 1])}, regions=[region])


def _gather_lower(ctx, operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  unique_indices, mode, fill_value):
    dn = dimension_numbers
    out = ctx.avals_out[0].strip_weak_type()
    upper = [operand.aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
    if mode == GatherScatterMode.CLIP:
        indices = _clamp_indices(ctx, indices, upper)
    attrs = {"dimension_numbers": _gather_attr(dn, indices.aval.ndim - 1),
             "indices_are_sorted": _bool_attr(indices_are_sorted),
             "slice_sizes": mlir.i64_array(slice_sizes)}
    result = ctx.op("stablehlo.gather", [operand, indices], out, attrs=attrs)
    if mode != GatherScatterMode.FILL_OR_DROP or indices.aval.shape[-1] == 0 or out.size == 0:
        return result
    mask = _in_bounds_mask(ctx, indices, upper)
    batch_positions = [i for i in range(out.ndim) if i not in dn.offset_dims]
    mask = _bcast(ctx, mask, out.shape, batch_positions)
    fill = default_fill_value(out.dtype) if fill_value is None else fill_value
    fill = ctx.constant(np.asarray(fill).astype(out.dtype), ShapedArray((), out.dtype))
    fill = _bcast(ctx, fill, out.shape, [])
    return ctx.op("stablehlo.select", [mask, result, fill], out)


def _tangent_gather_params(params):
    # Filled (out-of-bounds) slices do not depend on the operand: their tangent is zero.
    if params["mode"] == GatherScatterMode.FILL_OR_DROP:
        return {**params, "fill_value": 0}
    return params


def _scatter_dnums_of(dn: GatherDimensionNumbers) -> "ScatterDimensionNumbers":
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes,
                      indices_are_sorted, unique_indices, mode, fill_value):
    assert not is_undefined_primal(indices)
    if type(ct) is Zero:
        return zero_cts([operand, indices])
    # Scatter-add drops the windows that gather filled, and clamps where gather clamped.
    out = scatter_add_p.bind(typed_zeros(operand.aval), indices, ct,
                             dimension_numbers=_scatter_dnums_of(dimension_numbers),
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)
    return [out, None]


gather_p = Primitive("gather", abstract_eval=_gather_abstract_eval, lower=_gather_lower,
                     linear=True, jvp=linear_jvp((0,), _tangent_gather_params),
                     transpose=_gather_transpose, batch=_gather_batch)


def _canonical_fill(fill_value, dtype):
    if fill_value is None:
        return None
    if isinstance(fill_value, Tracer) or (hasattr(fill_value, "aval") and
                                          not isinstance(fill_value, (np.ndarray, np.generic))):
        raise TypeError("gather fill_value must be a static scalar, got a traced or device "
                        f"value {fill_value!r}")
    v = np.asarray(fill_value)
    if v.ndim:
        raise TypeError(f"gather fill_value must be a scalar, got shape {v.shape}")
    v = v.item()
    if isinstance(v, float) and v != v:
        return _NAN
    return v


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's Gather: slices of ``operand`` of size ``slice_sizes`` starting at the index vectors
    in the last dimension of ``start_indices``.

    ``mode`` is a :class:`GatherScatterMode` or one of ``"clip"``, ``"fill"``/``"drop"`` and
    ``"promise_in_bounds"``; as in JAX, the default (None) is ``"promise_in_bounds"``, which
    clamps out-of-bounds start indices (XLA's native gather). With ``"fill"``, out-of-bounds
    slices read ``fill_value`` (by default NaN for inexact types, the minimum signed / maximum
    unsigned integer, or True).
    """
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError("gather dimension_numbers must be a GatherDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    dn = GatherDimensionNumbers(*(_ints(f, n) for f, n in zip(dimension_numbers,
                                                              dimension_numbers._fields)))
    # JAX: lax.gather's default is PROMISE_IN_BOUNDS, not from_any(None) (FILL_OR_DROP, the
    # default of the scatters)
    parsed = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
              else GatherScatterMode.from_any(mode))
    fill = _canonical_fill(fill_value, None) if parsed == GatherScatterMode.FILL_OR_DROP else None
    return key_ops.bind(gather_p, operand, start_indices, dimension_numbers=dn,
                        slice_sizes=_ints(slice_sizes, "slice_sizes"),
                        indices_are_sorted=bool(indices_are_sorted),
                        unique_indices=bool(unique_indices), mode=parsed, fill_value=fill)


# ---- scatter ----

def _scatter_check(name, operand, indices, updates, dn: ScatterDimensionNumbers):
    _check_indices(name, indices)
    if updates.dtype != operand.dtype:
        raise TypeError(f"{name} requires the updates to have the operand's dtype, got operand "
                        f"{operand.dtype.name} and updates {updates.dtype.name}")
    _check_window_and_batching_dims(
        name, operand, indices, dn.operand_batching_dims,
        ("update_window_dims", dn.update_window_dims, updates.ndim),
        ("inserted_window_dims", dn.inserted_window_dims),
        ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims))
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(f"{name} scatter_dims_to_operand_dims {dn.scatter_dims_to_operand_dims} "
                        "must have one entry per element of the index vector (the last "
                        f"dimension of indices, of size {indices.shape[-1]})")
    _check_dims(name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims,
                operand.ndim)
    window_operand_dims = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims
                           and d not in dn.operand_batching_dims]
    if len(window_operand_dims) != len(dn.update_window_dims):
        raise TypeError(f"{name} update_window_dims {dn.update_window_dims} must have one entry "
                        "per operand dimension that is neither inserted nor batched "
                        f"({len(window_operand_dims)})")
    for ud, od in zip(dn.update_window_dims, window_operand_dims):
        if updates.shape[ud] > operand.shape[od]:
            raise TypeError(f"{name} update window dimension {ud} (size {updates.shape[ud]}) is "
                            f"larger than operand dimension {od} (size {operand.shape[od]})")
    scatter_dims = [updates.shape[i] for i in range(updates.ndim)
                    if i not in dn.update_window_dims]
    if tuple(scatter_dims) != tuple(indices.shape[:-1]):
        raise TypeError(f"{name} updates shape {updates.shape} does not match: its scatter "
                        f"dimensions {tuple(scatter_dims)} must equal the indices' batch shape "
                        f"{indices.shape[:-1]}")


def _window_sizes(operand_shape, updates_shape, dn):
    """The update window's extent along each operand dimension."""
    sizes = [1] * len(operand_shape)
    win = iter(updates_shape[d] for d in dn.update_window_dims)
    for d in range(len(operand_shape)):
        if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims:
            sizes[d] = next(win)
    return sizes


def _scatter_attr(dn, index_vector_dim):
    parts = [("update_window_dims", dn.update_window_dims),
             ("inserted_window_dims", dn.inserted_window_dims),
             ("input_batching_dims", dn.operand_batching_dims),
             ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
             ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)]
    return _dimension_numbers_attr("scatter", parts, index_vector_dim)


_COMBINE = {"scatter": None, "scatter-add": "stablehlo.add", "scatter-sub": "stablehlo.subtract",
            "scatter-mul": "stablehlo.multiply", "scatter-min": "stablehlo.minimum",
            "scatter-max": "stablehlo.maximum"}
_BOOL_COMBINE = {"scatter-add": "stablehlo.or", "scatter-mul": "stablehlo.and",
                 "scatter-min": "stablehlo.and", "scatter-max": "stablehlo.or"}


def _make_scatter(name):
    def abstract_eval(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                      unique_indices, mode, update_fn=None):
        _scatter_check(name, operand, indices, updates, dimension_numbers)
        if name != "scatter":
            base.check_kinds(name, [operand], "fciub" if name != "scatter-sub" else "fciu")
        return operand

    def lower(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
              unique_indices, mode, update_fn=None):
        dn = dimension_numbers
        out = ctx.avals_out[0].strip_weak_type()
        if mode == GatherScatterMode.CLIP:
            sizes = _window_sizes(operand.aval.shape, updates.aval.shape, dn)
            upper = [operand.aval.shape[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims]
            indices = _clamp_indices(ctx, indices, upper)
        scalar = ShapedArray((), out.dtype)
        region = ctx.region([scalar, scalar])
        if update_fn is not None:  # scatter_apply: the region is update_fn of the old value
            res = ctx.lower_fun(lambda old, _: update_fn(old), region.args, block=region)
            if res.aval.shape != () or res.aval.dtype != out.dtype:
                raise TypeError(f"scatter_apply func must map a {out.dtype.name} scalar to a "
                                f"{out.dtype.name} scalar, got {res.aval.str_short()}")
            region.ret([res])
        else:
            op = _COMBINE[name]
            if dtypes.is_bool(out.dtype):
                op = _BOOL_COMBINE.get(name, op)
            region.ret([region.args[1]] if op is None else
                       [region.op(op, region.args, scalar)])
        attrs = {"scatter_dimension_numbers": _scatter_attr(dn, indices.aval.ndim - 1),
                 "indices_are_sorted": _bool_attr(indices_are_sorted),
                 "unique_indices": _bool_attr(unique_indices)}
        return ctx.op("stablehlo.scatter", [operand, indices, updates], out, attrs=attrs,
                      regions=[region])

    return Primitive(name, abstract_eval=abstract_eval, lower=lower,
                     batch=with_self(_scatter_batch), **_SCATTER_RULES[name])


# ---- differentiation rules of the scatters ----

def _gather_of_scatter(x, indices, updates_shape, dn, params):
    """For each element of a scatter's updates, the element of ``x`` it lands on (0 where
    ``FILL_OR_DROP`` drops the window)."""
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    mode = params["mode"]
    sizes = _window_sizes(aval_of(x).shape, updates_shape, dn)
    return gather_p.bind(x, indices, dimension_numbers=gdn, slice_sizes=tuple(sizes),
                         indices_are_sorted=params["indices_are_sorted"],
                         unique_indices=params["unique_indices"], mode=mode,
                         fill_value=0 if mode == GatherScatterMode.FILL_OR_DROP else None)


def _scatter_params(params):
    if params.get("update_fn") is not None:
        raise NotImplementedError("differentiation of scatter_apply is not supported")
    return {k: params[k] for k in ("dimension_numbers", "indices_are_sorted", "unique_indices",
                                   "mode")}


def _make_scatter_add_transpose(negate):
    def transpose(ct, operand, indices, updates, **params):
        assert not is_undefined_primal(indices)
        params = _scatter_params(params)
        if type(ct) is Zero:
            return zero_cts([operand, indices, updates])
        upd_ct = None
        if is_undefined_primal(updates):
            upd_ct = _gather_of_scatter(ct, indices, updates.aval.shape,
                                        params["dimension_numbers"], params)
            if negate:
                upd_ct = lax_ew.neg(upd_ct)
        return [ct if is_undefined_primal(operand) else None, None, upd_ct]
    return transpose


def _update_ids(updates_shape, dn):
    """1, 2, ... numbering each update window, as an int32 array of the updates' shape."""
    scatter_dims = tuple(d for d in range(len(updates_shape)) if d not in dn.update_window_dims)
    scatter_shape = tuple(updates_shape[d] for d in scatter_dims)
    n = int(np.prod(scatter_shape, dtype=np.int64))
    ids = np.arange(1, n + 1, dtype=np.int32).reshape(scatter_shape)
    return shape_ops.broadcast_in_dim(ids, updates_shape, scatter_dims)


def _scatter_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    t_op, _, t_upd = tangents
    params = _scatter_params(params)
    if type(t_op) is Zero and type(t_upd) is Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, zero_tangent(aval_of(out))
    t_op, t_upd = instantiate(t_op), instantiate(t_upd)
    if params["unique_indices"]:
        return (scatter_p.bind(operand, indices, updates, **params),
                scatter_p.bind(t_op, indices, t_upd, **params))
    # With repeated indices the last writer wins; find it by scattering ids, then scatter-add
    # only the winning updates into the operand with its overwritten positions zeroed, for the
    # value and the tangent alike (so that the two agree, whatever the write order).
    dn = params["dimension_numbers"]
    upd_shape = aval_of(updates).shape
    ids = _update_ids(upd_shape, dn)
    op_ids = scatter_p.bind(zeros(ShapedArray(aval_of(operand).shape, np.int32)), indices, ids,
                            **params)
    won = lax_ew.eq(ids, _gather_of_scatter(op_ids, indices, upd_shape, dn, params))
    kept = lax_ew.eq(op_ids, np.zeros((), np.int32))

    def merge(x, u):
        x = lax_ew.select(kept, x, zeros(aval_of(x)))
        u = lax_ew.select(won, u, zeros(aval_of(u)))
        return scatter_add_p.bind(x, indices, u, **params)
    return merge(operand, updates), merge(t_op, t_upd)


def _scatter_transpose(ct, operand, indices, updates, **params):
    assert not is_undefined_primal(indices)
    params = _scatter_params(params)
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if type(ct) is Zero:
        return zero_cts([operand, indices, updates])
    upd_aval = updates.aval if is_undefined_primal(updates) else aval_of(updates)
    op_ct = upd_ct = None
    if is_undefined_primal(operand):
        op_ct = scatter_p.bind(ct, indices, zeros(upd_aval), **params)
    if is_undefined_primal(updates):
        upd_ct = _gather_of_scatter(ct, indices, upd_aval.shape, params["dimension_numbers"],
                                    params)
    return [op_ct, None, upd_ct]


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    t_op, _, t_upd = tangents
    params = _scatter_params(params)
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    terms = []
    if type(t_op) is not Zero:
        terms.append(scatter_mul_p.bind(t_op, indices, updates, **params))
    if type(t_upd) is not Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        terms.append(lax_ew.mul(operand, scatter_add_p.bind(
            zeros(aval_of(operand)), indices, t_upd, **params)))
    if not terms:
        return out, zero_tangent(aval_of(out))
    return out, terms[0] if len(terms) == 1 else lax_ew.add(*terms)


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    assert not is_undefined_primal(indices)
    params = _scatter_params(params)
    if type(ct) is Zero:
        return zero_cts([operand, indices, updates])
    if is_undefined_primal(updates):
        # The positions no update reaches keep the operand: not linear in the updates (the
        # JVP differentiates the updates with a scatter-add instead).
        raise NotImplementedError("scatter_mul is linear in its operand only")
    # A diagonal map: each position is scaled by the product of the updates landing on it.
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


def _scatter_extremal_jvp(prim):
    """scatter-min/max: the tangent of whichever of the operand and the updates that land on
    a position equal the result there, split equally among ties (as for reduce_max)."""
    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        t_op, _, t_upd = tangents
        params = _scatter_params(params)
        out = prim.bind(operand, indices, updates, **params)
        if type(t_op) is Zero and type(t_upd) is Zero:
            return out, zero_tangent(aval_of(out))
        t_op, t_upd = instantiate(t_op), instantiate(t_upd)
        dn = params["dimension_numbers"]
        dt = aval_of(out).dtype
        at_dest = _gather_of_scatter(out, indices, aval_of(updates).shape, dn, params)
        upd_hit = lax_ew.convert_element_type(lax_ew.eq(updates, at_dest), dt)
        op_hit = lax_ew.convert_element_type(lax_ew.eq(operand, out), dt)
        z = zeros(aval_of(out))
        count = lax_ew.add(op_hit, scatter_add_p.bind(z, indices, upd_hit, **params))
        total = lax_ew.add(lax_ew.mul(op_hit, t_op), scatter_add_p.bind(
            z, indices, lax_ew.mul(upd_hit, t_upd), **params))
        return out, lax_ew.div(total, count)
    return jvp


_SCATTER_RULES = {
    "scatter": dict(linear=True, jvp=_scatter_jvp, transpose=_scatter_transpose),
    "scatter-add": dict(linear=True, jvp=linear_jvp((0, 2)),
                        transpose=_make_scatter_add_transpose(False)),
    "scatter-sub": dict(linear=True, jvp=linear_jvp((0, 2)),
                        transpose=_make_scatter_add_transpose(True)),
    "scatter-mul": dict(linear=True, jvp=_scatter_mul_jvp, transpose=_scatter_mul_transpose),
    "scatter-min": dict(jvp=with_self(_scatter_extremal_jvp)),
    "scatter-max": dict(jvp=with_self(_scatter_extremal_jvp)),
}


scatter_p = _make_scatter("scatter")
scatter_add_p = _make_scatter("scatter-add")
scatter_sub_p = _make_scatter("scatter-sub")
scatter_mul_p = _make_scatter("scatter-mul")
scatter_min_p = _make_scatter("scatter-min")
scatter_max_p = _make_scatter("scatter-max")


def _match_updates(name, operand, updates):
    """lax does not promote: a Python scalar or weakly typed update takes the operand's dtype."""
    op_dtype = aval_of(operand).dtype
    if is_python_scalar(updates):
        return coerce_scalar(updates, op_dtype)
    ua = aval_of(updates)
    if ua.dtype != op_dtype and ua.weak_type:
        return lax_ew.convert_element_type(updates, op_dtype)
    return updates


def _scatter_bind(prim, operand, scatter_indices, updates, dimension_numbers,
                  indices_are_sorted, unique_indices, mode, **extra):
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{prim.name} dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    dn = ScatterDimensionNumbers(*(_ints(f, n) for f, n in zip(dimension_numbers,
                                                               dimension_numbers._fields)))
    if not (key_ops.is_key(operand) or key_ops.is_key(updates)):
        updates = _match_updates(prim.name, operand, updates)
    return key_ops.bind(prim, operand, scatter_indices, updates, dimension_numbers=dn,
                        indices_are_sorted=bool(indices_are_sorted),
                        unique_indices=bool(unique_indices),
                        mode=GatherScatterMode.from_any(mode), **extra)


def _make_scatter_fn(prim, fn_name, what):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        return _scatter_bind(prim, operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)
    fn.__name__ = fn_name
    fn.__doc__ = (f"XLA's Scatter that {what} ``updates`` into ``operand`` at the windows "
                  "given by ``scatter_indices`` (index vector in the last dimension).\n\n"
                  "``mode``: ``\"fill\"``/``\"drop\"`` (the default) drops updates whose window "
                  "is out of bounds; ``\"clip\"`` clamps the indices; ``\"promise_in_bounds\"`` "
                  "trusts them.")
    return fn


scatter = _make_scatter_fn(scatter_p, "scatter", "writes")
scatter_add = _make_scatter_fn(scatter_add_p, "scatter_add", "adds")
scatter_sub = _make_scatter_fn(scatter_sub_p, "scatter_sub", "subtracts")
scatter_mul = _make_scatter_fn(scatter_mul_p, "scatter_mul", "multiplies")
scatter_min = _make_scatter_fn(scatter_min_p, "scatter_min", "takes the minimum of")
scatter_max = _make_scatter_fn(scatter_max_p, "scatter_max", "takes the maximum of")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """Apply the unary ``func`` to the windows of ``operand`` chosen by ``scatter_indices``
    (once per occurrence of an index). ``update_shape`` is the shape the updates would have.

    ``func`` is traced when the scatter is lowered (its update region is a ``lower_fun``), so
    it may close over concrete values but not over traced ones."""
    av = aval_of(operand)
    zero = np.zeros((), av.dtype)
    updates = shape_ops.broadcast_in_dim(zero, tuple(update_shape), ())
    return _scatter_bind(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode, update_fn=func)


__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
           "scatter_apply", "gather_p", "scatter_p", "scatter_add_p", "scatter_sub_p",
           "scatter_mul_p", "scatter_min_p", "scatter_max_p"]


# Last, and read only inside rules: shape_ops imports this module back.
from pyjax._src.lax import shape_ops  # noqa: E402
