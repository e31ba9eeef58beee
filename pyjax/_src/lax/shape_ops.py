"""Shape primitives (broadcast_in_dim, reshape, squeeze, transpose, rev, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad, iota) and the ``lax`` functions built on them.

Each primitive is declared once with its abstract evaluation (which validates its params the way
JAX does) and its StableHLO lowering. The ``lax`` wrappers canonicalize arguments (negative axes,
lists to tuples, index dtypes) and skip binding for no-op cases on arrays and tracers, as JAX does.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import Array
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Tracer, shape_of
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, Zero
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import key_ops
from pyjax._src.lax import reductions as _red
from pyjax._src.lax.ad_util import is_undefined_primal, linear_jvp, typed_zeros, zero_cts, zeros
from pyjax._src.lax.base import aval_of, coerce_scalar, is_python_scalar
from pyjax._src.lowering import mlir

__all__ = [
    "broadcast", "broadcast_in_dim", "broadcast_to_rank", "reshape", "squeeze", "expand_dims",
    "transpose", "rev", "slice", "slice_in_dim", "index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "concatenate", "pad", "iota",
    "broadcasted_iota", "full", "full_like", "zeros_like_array", "collapse",
    "broadcast_in_dim_p", "reshape_p", "squeeze_p", "transpose_p", "rev_p", "slice_p",
    "dynamic_slice_p", "dynamic_update_slice_p", "concatenate_p", "pad_p", "iota_p",
]

_builtin_slice = slice


# ---- shared checks ----

def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_shapelike(fn, arg, obj, nonneg=True):
    """Params that are tuples of ints (shapes, dimensions, indices), as JAX checks them."""
    if not isinstance(obj, (tuple, list)):
        raise TypeError(f"{fn} {arg} must be a tuple of integers, got {type(obj).__name__} "
                        f"{obj!r}.")
    if not all(_is_int(d) for d in obj):
        raise TypeError(f"{fn} {arg} must have every element be an integer, got {obj}.")
    if nonneg and not all(d >= 0 for d in obj):
        raise TypeError(f"{fn} {arg} must have every element be nonnegative, got {obj}.")


def _shape_arg(shape, name, fn):
    """A shape-like lax param (a sequence of ints); signs and ranges are judged by the
    primitive's abstract evaluation, with JAX's messages."""
    return axes_mod.canonicalize_shape(shape, name, fn, scalar_ok=False, allow_negative=True)


def _is_array(x):
    return isinstance(x, (Array, Tracer))


def _ndim(x):
    return len(shape_of(x))


def _as_scalar_of(value, dtype, weak):
    """``value`` (a scalar) as a value whose aval is ``()``, ``dtype``, ``weak``. Host values
    are converted on the host; only a weak result of a non-default dtype needs a primitive."""
    dtype = np.dtype(dtype)
    if _is_array(value):
        av = value.aval
        if av.dtype == dtype and av.weak_type == weak:
            return value
        return ew.convert_element_type(value, dtype, weak)
    if weak and is_python_scalar(value):
        c = coerce_scalar(value, dtype)
        av = aval_of(c)
        if av.dtype == dtype and av.weak_type:
            return c
    val = np.asarray(value)
    if dtypes.is_complex(val.dtype) and not dtypes.is_complex(dtype):
        val = val.real
    val = np.asarray(val, dtype)[()]
    return ew.convert_element_type(val, dtype, True) if weak else val


def _match_dtype(value, dtype, name):
    """Weakly typed ``value`` (Python scalar, weak array) takes ``dtype``; others are unchanged
    (the primitive's abstract evaluation reports a mismatch). A Python scalar that would lose
    its value (a float padding an int array) is a TypeError."""
    av = aval_of(value)
    if av.dtype == dtype:
        return value
    if is_python_scalar(value):
        base.check_scalar_fits(name, value, dtype, tip=False)
        return coerce_scalar(value, dtype)
    if av.weak_type:
        return ew.convert_element_type(value, dtype, True)
    return value


# ---- batching rules (vmap; see lax/batch_util.py) ----
# Each keeps the batch axis where it is and rewrites the params around it, except reshape
# (which needs it in front) and dynamic slicing with batched indices (which becomes gather /
# scatter with a batching dimension).

def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions, sharding=None):
    (x,), (d,) = args, dims
    bdims = tuple(broadcast_dimensions)
    # The batch axis goes right after the output dimension of the operand axis before it, so
    # broadcast_dimensions stay increasing.
    p = bdims[d - 1] + 1 if d > 0 else 0
    new_bdims = bdims[:d] + (p,) + tuple(b + 1 for b in bdims[d:])
    new_shape = tuple(shape[:p]) + (bu.shape_of(x)[d],) + tuple(shape[p:])
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_bdims,
                                   sharding=sharding), p


def _reshape_batch(args, dims, *, new_sizes, dimensions=None, sharding=None):
    (x,), (d,) = args, dims
    x = bu.move_axis(x, d, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(i + 1 for i in dimensions)
    return reshape_p.bind(x, new_sizes=(bu.shape_of(x)[0],) + tuple(new_sizes),
                          dimensions=dimensions, sharding=sharding), 0


def _squeeze_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    new = tuple(bu.to_batched_axis(a, d) for a in dimensions)
    return squeeze_p.bind(x, dimensions=new), d - sum(1 for a in dimensions if a < d)


def _transpose_batch(args, dims, *, permutation):
    (x,), (d,) = args, dims
    perm = [bu.to_batched_axis(p, d) for p in permutation]
    perm.insert(d, d)
    return transpose_p.bind(x, permutation=tuple(perm)), d


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return rev_p.bind(x, dimensions=tuple(bu.to_batched_axis(a, d) for a in dimensions)), d


def _slice_batch(args, dims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = args, dims
    start, limit = list(start_indices), list(limit_indices)
    start.insert(d, 0)
    limit.insert(d, bu.shape_of(x)[d])
    if strides is not None:
        strides = tuple(strides[:d]) + (1,) + tuple(strides[d:])
    return slice_p.bind(x, start_indices=tuple(start), limit_indices=tuple(limit),
                        strides=strides), d


def _stacked_indices(idx, idims, size):
    """Scalar start indices (some batched) as one (size, len(idx)) index array."""
    cols = [broadcast_in_dim_p.bind(i, shape=(size, 1), broadcast_dimensions=(0,) if d == 0
                                    else (), sharding=None) for i, d in zip(idx, idims)]
    return cols[0] if len(cols) == 1 else concatenate_p.bind(*cols, dimension=1)


def _index_zero(idx):
    return np.zeros((), aval_of(idx[0]).dtype if idx else np.int32)[()]


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    x, *idx = args
    d, *idims = dims
    size = bu.batch_size(args, dims)
    if all(i is bu.not_mapped for i in idims):
        zero = _index_zero(idx)
        idx.insert(d, zero)
        sizes = tuple(slice_sizes[:d]) + (size,) + tuple(slice_sizes[d:])
        return dynamic_slice_p.bind(x, *idx, slice_sizes=sizes), d
    # Batched start indices: a gather of one slice per example (clamped like dynamic_slice).
    n = len(idx)
    indices = _stacked_indices(idx, idims, size)
    window = tuple(range(1, n + 1))
    if d is bu.not_mapped:
        dn = slicing.GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=(),
                                            start_index_map=tuple(range(n)))
        sizes = tuple(slice_sizes)
    else:
        x = bu.move_axis(x, d, 0)
        dn = slicing.GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=(),
                                            start_index_map=window, operand_batching_dims=(0,),
                                            start_indices_batching_dims=(0,))
        sizes = (min(1, size),) + tuple(slice_sizes)  # 0 where vmap's axis is empty
    out = slicing.gather_p.bind(x, indices, dimension_numbers=dn, slice_sizes=sizes,
                                indices_are_sorted=False, unique_indices=False,
                                mode=slicing.GatherScatterMode.CLIP, fill_value=None)
    return out, 0


def _dynamic_update_slice_batch(args, dims):
    x, upd, *idx = args
    dx, du, *idims = dims
    size = bu.batch_size(args, dims)
    if all(i is bu.not_mapped for i in idims):
        d = dx if dx is not bu.not_mapped else du
        x, upd = bu.bdim_to(x, dx, d, size), bu.bdim_to(upd, du, d, size)
        idx.insert(d, _index_zero(idx))
        return dynamic_update_slice_p.bind(x, upd, *idx), d
    # Batched start indices: a scatter of one window per example into its own operand.
    n = len(idx)
    x, upd = bu.bdim_to(x, dx, 0, size), bu.bdim_to(upd, du, 0, size)
    window = tuple(range(1, n + 1))
    dn = slicing.ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=(),
                                         scatter_dims_to_operand_dims=window,
                                         operand_batching_dims=(0,),
                                         scatter_indices_batching_dims=(0,))
    out = slicing.scatter_p.bind(x, _stacked_indices(idx, idims, size), upd,
                                 dimension_numbers=dn, indices_are_sorted=True,
                                 unique_indices=True, mode=slicing.GatherScatterMode.CLIP)
    return out, 0


def _concatenate_batch(args, dims, *, dimension):
    size = bu.batch_size(args, dims)
    d = next(d for d in dims if d is not bu.not_mapped)
    xs = [bu.bdim_to(x, dx, d, size) for x, dx in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=bu.to_batched_axis(dimension, d)), d


def _pad_batch(args, dims, *, padding_config):
    (x, pv), (dx, dpv) = args, dims
    if dpv is bu.not_mapped:
        cfg = list(padding_config)
        cfg.insert(dx, (0, 0, 0))
        return pad_p.bind(x, pv, padding_config=tuple(cfg)), dx
    # A batched padding value: pad with zeros, then select each example's padding value
    # wherever the result is not the operand.
    size = bu.batch_size(args, dims)
    d = 0 if dx is bu.not_mapped else dx
    x = bu.bdim_to(x, dx, d, size)
    cfg = list(padding_config)
    cfg.insert(d, (0, 0, 0))
    dt = aval_of(x).dtype
    padded = pad_p.bind(x, np.zeros((), dt)[()], padding_config=tuple(cfg))
    out_shape = bu.shape_of(padded)
    per_example = bu.shape_of(x)[:d] + bu.shape_of(x)[d + 1:]
    inside = pad_p.bind(np.ones(per_example, np.bool_), np.False_,
                        padding_config=tuple(padding_config))
    rest = tuple(i for i in range(len(out_shape)) if i != d)
    inside = broadcast_in_dim_p.bind(inside, shape=out_shape, broadcast_dimensions=rest,
                                     sharding=None)
    pv = broadcast_in_dim_p.bind(pv, shape=out_shape, broadcast_dimensions=(d,), sharding=None)
    return ew.select_n(inside, pv, padded), d


# ---- broadcast_in_dim ----

def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions, sharding=None):
    _check_shapelike("broadcast_in_dim", "shape", shape)
    _check_shapelike("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    bdims = tuple(broadcast_dimensions)
    if operand.ndim != len(bdims):
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to operand "
                        f"ndim; got broadcast_dimensions {bdims} for operand ndim "
                        f"{operand.ndim}.")
    if len(shape) < operand.ndim:
        raise TypeError("broadcast_in_dim target broadcast shape must have equal or higher rank "
                        f"to the operand shape; got operand ndim {operand.ndim} and target "
                        f"broadcast ndim {len(shape)}.")
    if any(d >= len(shape) for d in bdims):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {bdims} for operand ndim {operand.ndim} and shape "
                        f"{tuple(shape)}.")
    if any(operand.shape[i] != 1 and operand.shape[i] != shape[d] for i, d in enumerate(bdims)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be equal "
                        "to their corresponding dimensions in the target broadcast shape; got "
                        f"operand of shape {operand.shape}, target broadcast shape "
                        f"{tuple(shape)}, broadcast_dimensions {bdims}.")
    if any(a >= b for a, b in zip(bdims, bdims[1:])):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
                        f"broadcast_dimensions {bdims}.")
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions, sharding=None):
    return ctx.op("stablehlo.broadcast_in_dim", [x], ctx.avals_out[0],
                  attrs={"broadcast_dimensions": mlir.i64_array(broadcast_dimensions)})


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding=None):
    if type(ct) is Zero:
        return zero_cts([operand])
    op_shape = operand.aval.shape
    # Sum over the new dimensions and over the stretched size-1 ones, then restore the 1s.
    kept = {d for i, d in enumerate(broadcast_dimensions) if op_shape[i] == shape[d]}
    axes = tuple(d for d in range(len(shape)) if d not in kept)
    summed = _red.reduce_sum_p.bind(ct, axes=axes) if axes else ct
    return [reshape(summed, op_shape)]


broadcast_in_dim_p = Primitive("broadcast_in_dim",
                               abstract_eval=_broadcast_in_dim_abstract_eval,
                               lower=_broadcast_in_dim_lower, linear=True,
                               jvp=linear_jvp((0,)),
                               transpose=_broadcast_in_dim_transpose,
                               batch=_broadcast_in_dim_batch)


# ---- reshape ----

def _reshape_abstract_eval(operand, *, new_sizes, dimensions=None, sharding=None):
    _check_shapelike("reshape", "new_sizes", new_sizes, nonneg=False)
    if not all(d >= 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be nonnegative, got {tuple(new_sizes)}.")
    if math.prod(new_sizes) != operand.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes "
                        f"{tuple(new_sizes)} for shape {operand.shape}.")
    if dimensions is not None:
        _check_shapelike("reshape", "dimensions", dimensions)
        if tuple(sorted(dimensions)) != tuple(range(operand.ndim)):
            raise TypeError("reshape dimensions must be a permutation of operand dimensions, "
                            f"got dimensions {tuple(dimensions)} for shape {operand.shape}.")
    return ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def _reshape_lower(ctx, x, *, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None and tuple(dimensions) != tuple(range(x.aval.ndim)):
        shape = tuple(x.aval.shape[p] for p in dimensions)  # transpose first, as in JAX
        x = ctx.op("stablehlo.transpose", [x], x.aval.update(shape=shape),
                   attrs={"permutation": mlir.i64_array(dimensions)})
    return ctx.op("stablehlo.reshape", [x], ctx.avals_out[0])


def _typed_sharding(aval, ct):
    """``aval``'s sharding when the transposition involves Explicit shardings, else None."""
    from pyjax._src.core.sharding_rules import explicit_spec
    if explicit_spec(aval) is None and explicit_spec(aval_of(ct)) is None:
        return None
    if explicit_spec(aval) is not None:
        return aval.sharding
    return aval_of(ct).sharding.update(spec=None)  # replicated on the cotangent's mesh


def _reshape_transpose(ct, operand, *, new_sizes, dimensions=None, sharding=None):
    if type(ct) is Zero:
        return zero_cts([operand])
    shape = operand.aval.shape
    if dimensions is None:  # explicit sharding: the cotangent has the operand's type (JAX's)
        return [reshape(ct, shape, out_sharding=_typed_sharding(operand.aval, ct))]
    ct = reshape(ct, tuple(shape[p] for p in dimensions))
    return [transpose(ct, tuple(int(i) for i in np.argsort(dimensions)))]


reshape_p = Primitive("reshape", abstract_eval=_reshape_abstract_eval, lower=_reshape_lower,
                      linear=True, jvp=linear_jvp(), transpose=_reshape_transpose,
                      batch=_reshape_batch)


# ---- squeeze ----

def _squeeze_abstract_eval(operand, *, dimensions):
    _check_shapelike("squeeze", "dimensions", dimensions, nonneg=False)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"squeeze dimensions are not unique: {tuple(dimensions)}")
    if not all(0 <= d < operand.ndim for d in dimensions):
        raise ValueError(f"squeeze dimensions outside range [0, ndim): {tuple(dimensions)} "
                         f"for operand of shape {operand.shape}")
    if any(operand.shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={operand.shape} and dimensions={tuple(dimensions)}")
    shape = tuple(s for i, s in enumerate(operand.shape) if i not in set(dimensions))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _squeeze_transpose(ct, operand, *, dimensions):
    return zero_cts([operand]) if type(ct) is Zero else [reshape(ct, operand.aval.shape)]


squeeze_p = Primitive("squeeze", abstract_eval=_squeeze_abstract_eval,
                      lower=lambda ctx, x, **_: ctx.op("stablehlo.reshape", [x], ctx.avals_out[0]),
                      linear=True, jvp=linear_jvp(), transpose=_squeeze_transpose,
                      batch=_squeeze_batch)


# ---- transpose ----

def _transpose_abstract_eval(operand, *, permutation):
    _check_shapelike("transpose", "permutation", permutation, nonneg=False)
    if tuple(sorted(permutation)) != tuple(range(operand.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {tuple(permutation)} for operand shape {operand.shape}.")
    shape = tuple(operand.shape[p] for p in permutation)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _transpose_lower(ctx, x, *, permutation):
    nd = len(permutation)
    # a swap of the last two axes is noted (base.note_transpose_of: host kernels read the
    # original in place), and undoes a noted one
    swap = nd >= 2 and tuple(permutation) == tuple(range(nd - 2)) + (nd - 1, nd - 2)
    if swap:
        src = base.transpose_source(ctx, x)
        if src is not None:
            return src
    out = ctx.op("stablehlo.transpose", [x], ctx.avals_out[0],
                 attrs={"permutation": mlir.i64_array(permutation)})
    if swap:
        base.note_transpose_of(ctx, out, x)
    return out


def _transpose_transpose(ct, operand, *, permutation):
    if type(ct) is Zero:
        return zero_cts([operand])
    return [transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


transpose_p = Primitive("transpose", abstract_eval=_transpose_abstract_eval,
                        lower=_transpose_lower, linear=True, jvp=linear_jvp(),
                        transpose=_transpose_transpose, batch=_transpose_batch)


# ---- rev ----

def _rev_abstract_eval(operand, *, dimensions):
    _check_shapelike("rev", "dimensions", dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {tuple(dimensions)}.")
    if any(d >= operand.ndim for d in dimensions):
        raise TypeError(f"rev dimensions must all be less than the operand rank "
                        f"{operand.ndim}, got {tuple(dimensions)}.")
    return operand


def _rev_lower(ctx, x, *, dimensions):
    return ctx.op("stablehlo.reverse", [x], ctx.avals_out[0],
                  attrs={"dimensions": mlir.i64_array(dimensions)})


def _rev_transpose(ct, operand, *, dimensions):
    return zero_cts([operand]) if type(ct) is Zero else [rev(ct, dimensions)]


rev_p = Primitive("rev", abstract_eval=_rev_abstract_eval, lower=_rev_lower, linear=True,
                  jvp=linear_jvp(), transpose=_rev_transpose, batch=_rev_batch)


# ---- slice ----

def _slice_abstract_eval(operand, *, start_indices, limit_indices, strides=None):
    _check_shapelike("slice", "start_indices", start_indices, nonneg=False)
    _check_shapelike("slice", "limit_indices", limit_indices, nonneg=False)
    start, limit = tuple(start_indices), tuple(limit_indices)
    if operand.ndim != len(start):
        raise TypeError("slice start_indices must have length equal to the number of dimensions "
                        f"of the operand, got indices {start} for operand shape "
                        f"{operand.shape}.")
    if len(start) != len(limit):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start} and limit_indices {limit}.")
    if not all(lim <= d for lim, d in zip(limit, operand.shape)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit} for operand shape {operand.shape}.")
    if not all(s >= 0 for s in start):
        raise TypeError("slice start_indices must be greater than or equal to zero, got "
                        f"start_indices of {start}.")
    if not all(lim >= s for s, lim in zip(start, limit)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, got "
                        f"start_indices {start} and limit_indices {limit}.")
    if strides is None:
        strides = (1,) * operand.ndim
    _check_shapelike("slice", "strides", strides, nonneg=False)
    if len(strides) != operand.ndim:
        raise TypeError("slice strides must have length equal to the number of dimensions of "
                        f"the operand, got strides {tuple(strides)} for operand shape "
                        f"{operand.shape}.")
    if not all(s > 0 for s in strides):
        raise TypeError(f"slice strides must be positive, got {tuple(strides)}. (To reverse "
                        "an axis use lax.rev.)")
    shape = tuple(-(-(lim - s) // st) for s, lim, st in zip(start, limit, strides))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _slice_lower(ctx, x, *, start_indices, limit_indices, strides=None):
    strides = (1,) * x.aval.ndim if strides is None else strides
    return ctx.op("stablehlo.slice", [x], ctx.avals_out[0], attrs={
        "start_indices": mlir.i64_array(start_indices),
        "limit_indices": mlir.i64_array(limit_indices),
        "strides": mlir.i64_array(strides)})


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides=None):
    if type(ct) is Zero:
        return zero_cts([operand])
    shape = operand.aval.shape
    strides = (1,) * len(shape) if strides is None else strides
    out_shape = aval_of(ct).shape
    # Zeros around the slice and between its strided elements.
    config = []
    for s, st, n, d in zip(start_indices, strides, out_shape, shape):
        end = s + (n - 1) * st + 1 if n else s
        config.append((s, d - end, st - 1 if n else 0))
    return [pad_p.bind(ct, np.zeros((), aval_of(ct).dtype), padding_config=tuple(config))]


slice_p = Primitive("slice", abstract_eval=_slice_abstract_eval, lower=_slice_lower,
                    linear=True, jvp=linear_jvp(), transpose=_slice_transpose,
                    batch=_slice_batch)


# ---- dynamic_slice / dynamic_update_slice ----

def _check_start_indices(fn, operand, indices):
    if operand.ndim != len(indices):
        raise TypeError(f"{fn} start_indices must have length equal to the number of dimensions "
                        f"of the operand, got {len(indices)} indices for operand shape "
                        f"{operand.shape}.")
    if any(i.ndim != 0 for i in indices):
        raise TypeError(f"{fn} start_indices must be scalars, got indices of shapes "
                        f"{[i.shape for i in indices]}.")
    if indices and (not all(dtypes.is_integer(i.dtype) for i in indices)
                    or len({i.dtype for i in indices}) != 1):
        raise TypeError(f"index arguments to {fn} must be integers of the same type, got: "
                        f"{', '.join(i.dtype.name for i in indices)}.")


def _dynamic_slice_abstract_eval(operand, *start_indices, slice_sizes):
    _check_start_indices("dynamic_slice", operand, start_indices)
    _check_shapelike("dynamic_slice", "slice_sizes", slice_sizes, nonneg=False)
    sizes = tuple(slice_sizes)
    if len(sizes) != operand.ndim:
        raise TypeError("dynamic_slice slice_sizes must have the same length as start_indices, "
                        f"got start_indices length {len(start_indices)} and slice_sizes "
                        f"{sizes}.")
    if not all(s >= 0 for s in sizes):
        raise TypeError("dynamic_slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {sizes}.")
    if not all(s <= d for s, d in zip(sizes, operand.shape)):
        raise TypeError("dynamic_slice slice_sizes must be less than or equal to operand shape, "
                        f"got slice_sizes {sizes} for operand shape {operand.shape}.")
    return ShapedArray(sizes, operand.dtype, operand.weak_type)


def _dynamic_slice_lower(ctx, x, *starts, slice_sizes):
    return ctx.op("stablehlo.dynamic_slice", [x, *starts], ctx.avals_out[0],
                  attrs={"slice_sizes": mlir.i64_array(slice_sizes)})


def _dynamic_slice_transpose(ct, operand, *start_indices, slice_sizes):
    assert not any(is_undefined_primal(i) for i in start_indices)
    if type(ct) is Zero:
        return zero_cts([operand, *start_indices])
    # The same clamped start indices place the cotangent into zeros.
    out = dynamic_update_slice_p.bind(typed_zeros(operand.aval), ct, *start_indices)
    return [out] + [None] * len(start_indices)


dynamic_slice_p = Primitive("dynamic_slice", abstract_eval=_dynamic_slice_abstract_eval,
                            lower=_dynamic_slice_lower, linear=True,
                            jvp=linear_jvp((0,)),
                            transpose=_dynamic_slice_transpose, batch=_dynamic_slice_batch)


def _dynamic_update_slice_abstract_eval(operand, update, *start_indices):
    if operand.dtype != update.dtype:
        raise TypeError("dynamic_update_slice update and operand dtypes must match, got "
                        f"operand {operand.dtype.name} and update {update.dtype.name}.")
    if operand.ndim != update.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {operand.shape}.")
    _check_start_indices("dynamic_update_slice", operand, start_indices)
    if not all(u <= d for u, d in zip(update.shape, operand.shape)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {operand.shape}.")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type and update.weak_type)


def _dynamic_update_slice_lower(ctx, x, update, *starts):
    return ctx.op("stablehlo.dynamic_update_slice", [x, update, *starts], ctx.avals_out[0])


def _dynamic_update_slice_transpose(ct, operand, update, *start_indices):
    assert not any(is_undefined_primal(i) for i in start_indices)
    if type(ct) is Zero:
        return zero_cts([operand, update, *start_indices])
    upd_aval = update.aval if is_undefined_primal(update) else aval_of(update)
    op_ct = upd_ct = None
    if is_undefined_primal(operand):
        op_ct = dynamic_update_slice_p.bind(ct, typed_zeros(upd_aval), *start_indices)
    if is_undefined_primal(update):
        upd_ct = dynamic_slice_p.bind(ct, *start_indices, slice_sizes=upd_aval.shape)
    return [op_ct, upd_ct] + [None] * len(start_indices)


dynamic_update_slice_p = Primitive(
    "dynamic_update_slice", abstract_eval=_dynamic_update_slice_abstract_eval,
    lower=_dynamic_update_slice_lower, linear=True,
    jvp=linear_jvp((0, 1)),
    transpose=_dynamic_update_slice_transpose, batch=_dynamic_update_slice_batch)


# ---- concatenate ----

def _concatenate_abstract_eval(*operands, dimension):
    if not operands:
        raise TypeError("concatenate expects at least one operand, got 0.")
    if not _is_int(dimension):
        raise TypeError(f"concatenate dimension must be an integer, got {dimension!r}.")
    shapes = ", ".join(str(o.shape) for o in operands)
    if len({o.ndim for o in operands}) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{shapes}.")
    if not 0 <= dimension < operands[0].ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{shapes}.")
    rest = {o.shape[:dimension] + o.shape[dimension + 1:] for o in operands}
    if len(rest) != 1:
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        f"than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes {shapes}.")
    base.check_same_dtypes("concatenate", operands)
    shape = list(operands[0].shape)
    shape[dimension] = sum(o.shape[dimension] for o in operands)
    return ShapedArray(shape, operands[0].dtype, base.all_weak(operands))


def _concatenate_lower(ctx, *xs, dimension):
    return ctx.op("stablehlo.concatenate", list(xs), ctx.avals_out[0],
                  attrs={"dimension": f"{int(dimension)} : i64"})


def _concatenate_transpose(ct, *operands, dimension):
    if type(ct) is Zero:
        return zero_cts(operands)
    cts, start = [], 0
    shape = aval_of(ct).shape
    for x in operands:
        n = (x.aval if is_undefined_primal(x) else aval_of(x)).shape[dimension]
        if is_undefined_primal(x):
            starts = [0] * len(shape)
            limits = list(shape)
            starts[dimension], limits[dimension] = start, start + n
            cts.append(slice(ct, starts, limits))
        else:
            cts.append(None)
        start += n
    return cts


concatenate_p = Primitive("concatenate", abstract_eval=_concatenate_abstract_eval,
                          lower=_concatenate_lower, linear=True, jvp=linear_jvp(),
                          transpose=_concatenate_transpose, batch=_concatenate_batch)


# ---- pad ----

def _pad_abstract_eval(operand, padding_value, *, padding_config):
    if operand.dtype != padding_value.dtype:
        raise TypeError("pad operand and padding_value must be same dtype: got "
                        f"{operand.dtype.name} and {padding_value.dtype.name}.")
    if padding_value.ndim != 0:
        raise ValueError(f"pad padding_value must be a scalar, got shape {padding_value.shape}.")
    config = tuple(padding_config)
    if len(config) != operand.ndim:
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {config} for operand shape {operand.shape}")
    if not all(isinstance(c, (tuple, list)) and len(c) == 3 and all(_is_int(v) for v in c)
               for c in config):
        raise TypeError("padding_config must be a sequence of (low, high, interior) integer "
                        f"triples, got {config}")
    if not all(i >= 0 for _, _, i in config):
        raise ValueError("interior padding in padding_config must be nonnegative, got "
                         f"padding_config {config}")
    shape = tuple(lo + hi + (0 if d == 0 else d + (d - 1) * i)
                  for (lo, hi, i), d in zip(config, operand.shape))
    if not all(d >= 0 for d in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {config} and operand shape "
                         f"{operand.shape}")
    return ShapedArray(shape, operand.dtype, operand.weak_type and padding_value.weak_type)


def _pad_lower(ctx, x, pv, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return ctx.op("stablehlo.pad", [x, pv], ctx.avals_out[0], attrs={
        "edge_padding_low": mlir.i64_array(lo), "edge_padding_high": mlir.i64_array(hi),
        "interior_padding": mlir.i64_array(interior)})


def _pad_transpose(ct, operand, padding_value, *, padding_config):
    if type(ct) is Zero:
        return zero_cts([operand, padding_value])
    dt = aval_of(ct).dtype
    # Undo the edge padding (cropped edges get zeros back), then take every (interior+1)-th.
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    unpadded = pad_p.bind(ct, np.zeros((), dt), padding_config=unpad)
    op_ct = slice(unpadded, (0,) * len(unpad), unpadded.shape,
                  tuple(i + 1 for _, _, i in padding_config))
    pv_ct = None
    if is_undefined_primal(padding_value):
        every = tuple(range(len(unpad)))
        total = _red.reduce_sum_p.bind(ct, axes=every)
        pv_ct = ew.sub(total, _red.reduce_sum_p.bind(op_ct, axes=every))
    return [op_ct if is_undefined_primal(operand) else None, pv_ct]


pad_p = Primitive("pad", abstract_eval=_pad_abstract_eval, lower=_pad_lower, linear=True,
                  jvp=linear_jvp((0, 1)), transpose=_pad_transpose, batch=_pad_batch)


# ---- iota ----

def _iota_abstract_eval(*, dtype, shape, dimension, sharding=None):
    dtype = np.dtype(dtype)
    if base.kind(dtype) not in "fciu":
        raise TypeError(f"iota does not accept dtype {dtype.name}. Accepted dtypes are "
                        "subtypes of floating, complex, signed integer, unsigned integer.")
    _check_shapelike("iota", "shape", shape)
    if not _is_int(dimension) or not 0 <= dimension < len(shape):
        raise ValueError("iota dimension must be between 0 and len(shape), got "
                         f"dimension={dimension} for shape {tuple(shape)}")
    return ShapedArray(shape, dtype, False)


def _iota_lower(ctx, *, dtype, shape, dimension, sharding=None):
    return ctx.op("stablehlo.iota", [], ctx.avals_out[0],
                  attrs={"iota_dimension": f"{int(dimension)} : i64"})


iota_p = Primitive("iota", abstract_eval=_iota_abstract_eval, lower=_iota_lower,
                   jvp=NOT_DIFFERENTIABLE, batch=bu.unbatched_rule())


# ---- the lax-level functions ----

def _out_sharding(s, what):
    from pyjax._src.core.sharding_rules import as_named_sharding
    return None if s is None else as_named_sharding(s, what)


def _place(x, s):
    if s is None:
        return x
    from pyjax._src.core.sharding_rules import place_if_eager
    return place_if_eager(x, s)


def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    """Broadcast ``operand`` to ``shape``; operand dimension ``i`` becomes output dimension
    ``broadcast_dimensions[i]`` (operand dimensions of size 1 are stretched)."""
    shape = _shape_arg(shape, "shape", "broadcast_in_dim")
    bdims = _shape_arg(broadcast_dimensions, "broadcast_dimensions",
                       "broadcast_in_dim")
    out_sharding = _out_sharding(out_sharding, "broadcast_in_dim")
    if (out_sharding is None and _is_array(operand) and operand.shape == shape
            and bdims == tuple(range(len(shape)))):
        return operand
    return _place(key_ops.bind(broadcast_in_dim_p, operand, shape=shape,
                               broadcast_dimensions=bdims, sharding=out_sharding), out_sharding)


def broadcast(operand, sizes, out_sharding=None):
    """Add leading dimensions of ``sizes`` to ``operand``: the result has shape
    ``sizes + operand.shape``."""
    sizes = _shape_arg(sizes, "sizes", "broadcast")
    nd = _ndim(operand)
    dims = tuple(range(len(sizes), len(sizes) + nd))
    return broadcast_in_dim(operand, sizes + tuple(shape_of(operand)), dims,
                            out_sharding=out_sharding)


def broadcast_to_rank(x, rank):
    """Add leading size-1 dimensions to ``x`` until it has rank ``rank``."""
    nd = _ndim(x)
    rank = axes_mod.index(rank, "rank", "broadcast_to_rank")
    if nd == rank and _is_array(x):
        return x
    return broadcast(x, (1,) * max(rank - nd, 0))


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    """Reshape ``operand`` to ``new_sizes`` (row-major). With ``dimensions``, the operand is
    first transposed by that permutation (JAX's ``lax.reshape`` semantics)."""
    new_sizes = _shape_arg(new_sizes, "new_sizes", "reshape")
    shape = shape_of(operand)
    if dimensions is not None:
        dimensions = _shape_arg(dimensions, "dimensions", "reshape")
        if dimensions == tuple(range(len(shape))):
            dimensions = None
    out_sharding = _out_sharding(out_sharding, "reshape")
    if (dimensions is None and out_sharding is None and _is_array(operand)
            and tuple(shape) == new_sizes):
        return operand
    return _place(key_ops.bind(reshape_p, operand, new_sizes=new_sizes, dimensions=dimensions,
                               sharding=out_sharding), out_sharding)


def squeeze(array, dimensions):
    """Remove the size-1 ``dimensions`` (negative values count from the end)."""
    nd = _ndim(array)
    # repeated dimensions are left to the primitive ("not unique", as in JAX)
    dims = tuple(sorted(axes_mod.canonicalize_axes(dimensions, nd, "dimensions", "squeeze",
                                                   allow_none=False, unique=False)))
    if not dims and _is_array(array):
        return array
    return key_ops.bind(squeeze_p, array, dimensions=dims)


def expand_dims(array, dimensions):
    """Insert size-1 dimensions at ``dimensions`` (positions in the result; negative values
    count from the end of the result)."""
    shape = list(shape_of(array))
    nd_out = len(shape) + (len(dimensions) if isinstance(dimensions, (tuple, list)) else 1)
    dims = axes_mod.canonicalize_axes(dimensions, nd_out, "dimensions", "expand_dims",
                                      allow_none=False)
    for d in sorted(dims):
        shape.insert(d, 1)
    kept = tuple(i for i in range(nd_out) if i not in set(dims))
    return broadcast_in_dim(array, shape, kept)


def transpose(operand, permutation):
    """Permute the dimensions of ``operand``: output dimension ``i`` is operand dimension
    ``permutation[i]``."""
    perm = _shape_arg(permutation, "permutation", "transpose")
    if perm == tuple(range(_ndim(operand))) and _is_array(operand):
        return operand
    return key_ops.bind(transpose_p, operand, permutation=perm)


def rev(operand, dimensions):
    """Reverse ``operand`` along each of ``dimensions``."""
    return key_ops.bind(rev_p, operand, dimensions=_shape_arg(dimensions, "dimensions", "rev"))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - JAX's name
    """The static slice ``operand[start:limit:stride, ...]``; strides must be positive."""
    start = _shape_arg(start_indices, "start_indices", "slice")
    limit = _shape_arg(limit_indices, "limit_indices", "slice")
    strides = None if strides is None else _shape_arg(strides, "strides", "slice")
    if strides is not None and all(s == 1 for s in strides) and len(strides) == len(start):
        strides = None
    if (_is_array(operand) and strides is None and all(s == 0 for s in start)
            and limit == tuple(operand.shape)):
        return operand
    return key_ops.bind(slice_p, operand, start_indices=start, limit_indices=limit,
                        strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``slice`` along one axis; ``None`` and negative indices behave as in Python slices."""
    shape = shape_of(operand)
    axis = axes_mod.canonicalize_axis(axis, len(shape), "axis", "slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """``operand[..., index, ...]`` along ``axis`` for a static ``index``."""
    shape = shape_of(operand)
    index = operator.index(index)
    axis = axes_mod.canonicalize_axis(axis, len(shape), "axis", "index_in_dim")
    n = shape[axis]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    index = index + n if index < 0 else index
    result = slice_in_dim(operand, index, index + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


def _split_indices(start_indices, nd):
    """A sequence (or 1-D array) of scalar indices as a list of scalars."""
    if isinstance(start_indices, (tuple, list)):
        idx = list(start_indices)
    elif isinstance(start_indices, np.ndarray) or _is_array(start_indices):
        if _ndim(start_indices) != 1:
            raise ValueError("Slice indices must be a 1D sequence, got "
                             f"{shape_of(start_indices)}")
        if isinstance(start_indices, np.ndarray):
            idx = list(start_indices)
        else:
            idx = [reshape(slice(start_indices, (i,), (i + 1,)), ())
                   for i in range(shape_of(start_indices)[0])]
    else:
        raise TypeError("start_indices must be a sequence of scalar indices or a 1-D integer "
                        f"array, got {type(start_indices).__name__}")
    if len(idx) != nd:
        raise ValueError("Length of slice indices must match number of operand dimensions "
                         f"({len(idx)} vs {nd})")
    return idx


def _dynamic_indices(operand_shape, start_indices, allow_negative_indices=True):
    """Scalar start indices of one common integer dtype; negative ones count from the end
    where ``allow_negative_indices`` (a bool or one bool per dimension) says so."""
    nd = len(operand_shape)
    idx = _split_indices(start_indices, nd)
    if isinstance(allow_negative_indices, (bool, np.bool_)):
        allow = [bool(allow_negative_indices)] * nd
    else:
        allow = [bool(a) for a in allow_negative_indices]
        if len(allow) != nd:
            raise ValueError("allow_negative_indices must have one entry per operand dimension, "
                             f"got {len(allow)} for {nd} dimensions")
    avals = [aval_of(i) for i in idx]
    for i, av in zip(idx, avals):
        if av.ndim != 0:
            raise TypeError(f"dynamic slice indices must be scalars, got an index of shape "
                            f"{av.shape}")
        if not dtypes.is_integer(av.dtype):
            raise TypeError(f"dynamic slice indices must be integers, got {av.dtype.name} "
                            f"index {i!r}")
    if not idx:
        return []
    # Static Python/NumPy ints that are negative wrap on the host.
    static = [_is_int(i) and not _is_array(i) for i in idx]
    idx = [int(i) + d if s and a and int(i) < 0 else i
           for i, s, a, d in zip(idx, static, allow, operand_shape)]
    dt = dtypes.result_type(*idx)
    if not dtypes.is_integer(dt):
        dt = dtypes.default_int_dtype()
    info = np.iinfo(dt)
    if any(s and not info.min <= int(i) <= info.max for i, s in zip(idx, static)):
        dt = dtypes.promote_types(dt, dtypes.default_int_dtype())
    out = []
    for i, s, a, d in zip(idx, static, allow, operand_shape):
        if s:
            out.append(np.asarray(int(i), dt)[()])
            continue
        if aval_of(i).dtype != dt:
            i = ew.convert_element_type(i, dt)
        if a and not dtypes.is_unsigned(dt):
            zero, size = np.asarray(0, dt)[()], np.asarray(d, dt)[()]
            i = ew.select(ew.lt(i, zero), ew.add(i, size), i)
        out.append(i)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The slice of ``operand`` of static size ``slice_sizes`` at (possibly traced)
    ``start_indices``. Starts are clamped so the slice fits inside ``operand``, as in XLA."""
    shape = shape_of(operand)
    idx = _dynamic_indices(shape, start_indices, allow_negative_indices)
    sizes = _shape_arg(slice_sizes, "slice_sizes", "dynamic_slice")
    return key_ops.bind(dynamic_slice_p, operand, *idx, slice_sizes=sizes)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """``dynamic_slice`` along one axis: ``operand[..., start:start + slice_size, ...]``."""
    shape = shape_of(operand)
    axis = axes_mod.canonicalize_axis(axis, len(shape), "axis", "dynamic_slice_in_dim")
    starts = [0] * len(shape)
    sizes = list(shape)
    starts[axis] = start_index
    sizes[axis] = axes_mod.index(slice_size, "slice_size", "dynamic_slice_in_dim")
    allow = [True] * len(shape)
    allow[axis] = bool(allow_negative_indices)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """``operand[..., index, ...]`` along ``axis`` for a (possibly traced) ``index``."""
    axis = axes_mod.canonicalize_axis(axis, _ndim(operand), "axis", "dynamic_index_in_dim")
    result = dynamic_slice_in_dim(operand, index, 1, axis,
                                  allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``operand`` with ``update`` written at (possibly traced) ``start_indices``; starts are
    clamped so ``update`` fits inside ``operand``."""
    shape = shape_of(operand)
    if not key_ops.is_key(operand):
        update = _match_dtype(update, aval_of(operand).dtype, "dynamic_update_slice")
    idx = _dynamic_indices(shape, start_indices, allow_negative_indices)
    return key_ops.bind(dynamic_update_slice_p, operand, update, *idx)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """``dynamic_update_slice`` with a start index along ``axis`` only (zeros elsewhere)."""
    nd = _ndim(operand)
    axis = axes_mod.canonicalize_axis(axis, nd, "axis", "dynamic_update_slice_in_dim")
    starts = [0] * nd
    starts[axis] = start_index
    allow = [True] * nd
    allow[axis] = bool(allow_negative_indices)
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """Write ``update`` (of rank ``operand.ndim`` or one less) at ``index`` along ``axis``."""
    nd = _ndim(operand)
    axis = axes_mod.canonicalize_axis(axis, nd, "axis", "dynamic_update_index_in_dim")
    if _ndim(update) != nd:
        if _ndim(update) + 1 != nd:
            raise TypeError("dynamic_update_index_in_dim update must have rank equal to the "
                            f"operand rank {nd} or one less, got update shape {shape_of(update)}")
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def concatenate(operands, dimension):
    """Join ``operands`` (same dtype, same shape except along ``dimension``)."""
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequence of arrays")
    dimension = axes_mod.index(dimension, "dimension", "concatenate")
    if len(operands) == 1 and _is_array(operands[0]):
        op = operands[0]
        if not 0 <= dimension < op.ndim:  # still report a bad dimension
            _concatenate_abstract_eval(key_ops.logical_aval(op), dimension=int(dimension))
        return op
    return key_ops.bind(concatenate_p, *operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    """Pad ``operand`` with ``padding_value``: ``padding_config`` holds one
    ``(low, high, interior)`` triple per dimension; low/high may be negative (cropping)."""
    try:
        config = tuple(tuple(operator.index(v) for v in c) for c in padding_config)
    except TypeError:
        raise TypeError("padding_config must be a sequence of (low, high, interior) integer "
                        f"triples, got {padding_config!r}") from None
    padding_value = _match_dtype(padding_value, aval_of(operand).dtype, "pad")
    return pad_p.bind(operand, padding_value, padding_config=config)


def broadcasted_iota(dtype, shape, dimension, out_sharding=None):
    """An array of ``shape`` whose values count up along ``dimension``."""
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = _shape_arg(shape, "shape", "broadcasted_iota")
    out_sharding = _out_sharding(out_sharding, "broadcasted_iota")
    return _place(iota_p.bind(dtype=dtype, shape=shape,
                              dimension=axes_mod.index(dimension, "dimension",
                                                       "broadcasted_iota"),
                              sharding=out_sharding), out_sharding)


def iota(dtype, size, out_sharding=None):
    """``[0, 1, ..., size - 1]`` as ``dtype`` (like ``numpy.arange``)."""
    return broadcasted_iota(dtype, (axes_mod.index(size, "size", "iota"),), 0, out_sharding)


def _scalar_check(fn, fill_value):
    shape = fill_value.shape if _is_array(fill_value) else np.shape(fill_value)
    if shape:
        raise TypeError(f"{fn} must be called with scalar fill_value, got fill_value.shape "
                        f"{tuple(shape)}.")


def full(shape, fill_value, dtype=None, out_sharding=None, *, sharding=None):
    """An array of ``shape`` filled with the scalar ``fill_value``. With ``dtype=None`` the
    result has ``fill_value``'s dtype and is weakly typed when ``fill_value`` is.
    ``sharding=`` (JAX's name) and ``out_sharding`` both ask for the result's sharding."""
    if sharding is not None:
        if out_sharding is not None:
            raise TypeError("lax.full: pass sharding= or out_sharding=, not both")
        out_sharding = sharding
    shape = _shape_arg(shape, "shape", "full")
    _scalar_check("full", fill_value)
    if key_ops.is_key(fill_value) and dtype in (None, fill_value.dtype):
        if out_sharding is not None:
            raise NotImplementedError("full of a key array with out_sharding=")
        return key_ops.full_like(fill_value, fill_value, shape)
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    dtype = dtypes.canonicalize_dtype(aval_of(fill_value).dtype if dtype is None else dtype)
    return broadcast(_as_scalar_of(fill_value, dtype, weak), shape, out_sharding=out_sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``;
    weakly typed when ``dtype`` is None and ``x`` is weakly typed. ``x`` may be an array, a
    scalar or anything with ``shape`` and ``dtype`` (e.g. a ``ShapeDtypeStruct``)."""
    if shape is None:
        shape = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
    shape = _shape_arg(shape, "shape", "full_like")
    _scalar_check("full_like", fill_value)
    if key_ops.is_key(x) and dtype in (None, x.dtype) or key_ops.is_key(fill_value):
        if sharding is not None:
            raise NotImplementedError("full_like of a key array with sharding=")
        return key_ops.full_like(x if key_ops.is_key(x) else fill_value, fill_value, shape)
    weak = dtype is None and dtypes.is_weakly_typed(x)
    if dtype is None:
        dtype = x.dtype if hasattr(x, "dtype") else aval_of(x).dtype
    dtype = dtypes.canonicalize_dtype(dtype)
    return broadcast(_as_scalar_of(fill_value, dtype, weak), shape, out_sharding=sharding)


def zeros_like_array(x):
    """Zeros with the shape, dtype and weak type of ``x``."""
    return full_like(x, 0)


def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions ``[start_dimension, stop_dimension)`` of ``operand`` into one."""
    shape = tuple(shape_of(operand))
    lo, hi, st = _builtin_slice(start_dimension, stop_dimension).indices(len(shape))
    if st != 1 or hi < lo:
        raise ValueError(f"collapse: invalid dimension range [{start_dimension}, "
                         f"{stop_dimension}) for operand of shape {shape}")
    size = math.prod(shape[lo:hi])
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


# Last, and read only inside rules: slicing imports this module back.
from pyjax._src.lax import slicing  # noqa: E402
