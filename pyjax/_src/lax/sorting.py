"""``sort`` (several operands, lexicographic over the first ``num_keys``) and ``top_k``.

Both lower to ``stablehlo.sort`` with a comparator region implementing JAX's total order for
floats: NaNs (of either sign) sort after everything else and compare equal to each other;
-0.0 and 0.0 compare equal (a stable sort keeps their input order). Complex numbers order
lexicographically by (real, imag), each part in that float order.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import shape_ops
from pyjax._src.lax import slicing
from pyjax._src.lax.ad_util import zero_tangent
from pyjax._src.core.axes import canonicalize_axis
from pyjax._src.lax.base import aval_of
from pyjax._src.lowering import mlir

__all__ = ["sort", "sort_key_val", "top_k"]

_BOOL = ShapedArray((), np.bool_)


# ---- batching (vmap) ----

def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    size = bu.batch_size(args, dims)
    d = next(d for d in dims if d is not bu.not_mapped)
    xs = [bu.bdim_to(x, dx, d, size) for x, dx in zip(args, dims)]
    outs = sort_p.bind(*xs, dimension=bu.to_batched_axis(dimension, d), is_stable=is_stable,
                       num_keys=num_keys)
    return outs, [d] * len(outs)


def _top_k_batch(args, dims, *, k):
    (x,), (d,) = args, dims
    if d == len(bu.shape_of(x)) - 1:  # top_k works on the last axis
        x, d = bu.move_axis(x, d, 0), 0
    return top_k_p.bind(x, k=k), [d, d]


# ---- the comparator ----

def _real_lt_eq(region, a, b):
    """(a < b, a == b) in the sort order, for rank-0 real or integer values."""
    lt = base.compare(region, a, b, "LT")
    eq = base.compare(region, a, b, "EQ")
    if dtypes.is_floating(a.aval.dtype):
        a_nan = base.compare(region, a, a, "NE")
        b_nan = base.compare(region, b, b, "NE")
        a_num = region.op("stablehlo.not", [a_nan], _BOOL)
        lt = region.op("stablehlo.or", [lt, region.op("stablehlo.and", [a_num, b_nan], _BOOL)],
                       _BOOL)
        eq = region.op("stablehlo.or", [eq, region.op("stablehlo.and", [a_nan, b_nan], _BOOL)],
                       _BOOL)
    return lt, eq


def _lt_eq(region, a, b):
    dt = a.aval.dtype
    if not dtypes.is_complex(dt):
        return _real_lt_eq(region, a, b)
    part = ShapedArray((), dtypes.to_real_dtype(dt))
    re_lt, re_eq = _real_lt_eq(region, region.op("stablehlo.real", [a], part),
                               region.op("stablehlo.real", [b], part))
    im_lt, im_eq = _real_lt_eq(region, region.op("stablehlo.imag", [a], part),
                               region.op("stablehlo.imag", [b], part))
    lt = region.op("stablehlo.or", [re_lt, region.op("stablehlo.and", [re_eq, im_lt], _BOOL)],
                   _BOOL)
    return lt, region.op("stablehlo.and", [re_eq, im_eq], _BOOL)


def _comparator(ctx, dtypes_, num_keys, descending=False):
    """A sort comparator over ``len(dtypes_)`` operands: lexicographic ``a < b`` (``a > b``
    when ``descending``) on the first ``num_keys`` of them."""
    args = []
    for dt in dtypes_:
        args += [ShapedArray((), dt), ShapedArray((), dt)]
    region = ctx.region(args)
    result = None
    for i in reversed(range(num_keys)):
        a, b = region.args[2 * i], region.args[2 * i + 1]
        if descending:
            a, b = b, a
        lt, eq = _lt_eq(region, a, b)
        if result is None:
            result = lt
        else:
            result = region.op("stablehlo.or", [lt, region.op("stablehlo.and", [eq, result],
                                                                 _BOOL)], _BOOL)
    region.ret([result])
    return region


# ---- sort ----

def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands[1:]):
        raise TypeError(f"sort arrays must have equal shapes, got "
                        f"{', '.join(str(o.shape) for o in operands)}")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape "
                         f"{shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(operands)})")
    return list(operands)


def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
    if ctx.platform == "cpu" and packs([o.aval for o in operands], dimension, num_keys):
        return _packed_sort(ctx, operands, dimension)
    region = _comparator(ctx, [o.aval.dtype for o in operands], num_keys)
    return ctx.op("stablehlo.sort", list(operands), list(ctx.avals_out), regions=[region],
                  attrs={"dimension": f"{dimension} : i64",
                         "is_stable": "true" if is_stable else "false"})


# ---- the CPU's fast sort: one 64-bit integer operand ----
# XLA:CPU sorts a single integer operand whose comparator is a plain ``<`` with a library
# sort, 15-40x faster than a sort that calls a comparator region per comparison (which every
# float key needs, for the order of NaNs and signed zeros, and every sort of several operands
# does). So a sort by one 32-bit-or-narrower key is done as: the key mapped to an int32 of the
# same order (floats: -0.0 as 0.0, every NaN as the canonical one, negative values' magnitude
# bits flipped), shifted into the high half of an int64 whose low half is the element's index,
# those int64 sorted (all distinct: the index breaks ties, so the order is the stable one),
# and every operand gathered by the indices in the low halves. The values are the operands'
# own (a -0.0 stays -0.0, a NaN keeps its payload): the result is bit for bit the
# comparator's. Measured (jit, float32, this machine): n=128 26 -> 7.3 us, 4096 710 -> 59 us,
# 100000 27.8 -> 2.8 ms; argsort 36 -> 2.4 ms at 100000 (docs/performance.md).

_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)
# float dtype name -> (int type of its width, canonical NaN's bits, magnitude mask)
_FLOAT_KEYS = {"float32": (_I32, 0x7FC00000, 0x7FFFFFFF),
               "float16": (np.dtype(np.int16), 0x7E00, 0x7FFF),
               "bfloat16": (np.dtype(np.int16), 0x7FC0, 0x7FFF)}
_INT_KEYS = {np.dtype(t) for t in (np.int32, np.int16, np.int8, np.uint32, np.uint16, np.uint8)}
_U32 = np.dtype(np.uint32)


def packs(avals, dimension, num_keys):
    """Whether the CPU lowering sorts operands of ``avals`` with ``_packed_sort``: one key of
    a 16- or 32-bit float or an integer of 32 bits or fewer, when it is not a single integer
    operand (which XLA sorts fast as it is), along a non-empty dimension."""
    shape, dt = avals[0].shape, avals[0].dtype
    if num_keys != 1 or not 0 < shape[dimension] < 2 ** 31 or 0 in shape:
        return False
    return dt.name in _FLOAT_KEYS or (dt in _INT_KEYS and len(avals) > 1)


def packed_sort_flops(key_aval):
    """Elementwise operations per element of the packed sort, as XLA counts them (the cost
    model's figure; xla-cpu-pjrt's counts): packing and unpacking 5; widening a narrow integer
    1; a uint32's flip and bitcast 2; a float's canonical bits and order 8, one more for a
    16-bit float."""
    dt = key_aval.dtype
    if dt.name in _FLOAT_KEYS:
        return 5 + 8 + (dt.itemsize < 4)
    return 5 + (2 if dt == _U32 else dt != _I32)


def _const(ctx, value, dtype, shape):
    c = ctx.constant(np.array(value, dtype), ShapedArray((), dtype))
    return base.broadcast_operand_lowering(ctx, c, shape)


def _ordered_int32(ctx, key):
    """An int32 array ordered as ``key`` is in the sort's order."""
    aval = key.aval
    shape, dt = aval.shape, aval.dtype
    if dt == _U32:  # flipping the top bit maps unsigned order onto signed order
        flipped = ctx.op("stablehlo.xor", [key, _const(ctx, 0x80000000, _U32, shape)], aval)
        return ctx.op("stablehlo.bitcast_convert", [flipped], ShapedArray(shape, _I32))
    if dt in _INT_KEYS:
        return ctx.op("stablehlo.convert", [key], ShapedArray(shape, _I32))
    int_dt, nan_bits, magnitude = _FLOAT_KEYS[dt.name]
    int_aval = ShapedArray(shape, int_dt)
    bits = ctx.op("stablehlo.bitcast_convert", [key], int_aval)
    zero = base.compare(ctx, key, _const(ctx, 0, dt, shape), "EQ")
    bits = ctx.op("stablehlo.select", [zero, _const(ctx, 0, int_dt, shape), bits], int_aval)
    nan = base.compare(ctx, key, key, "NE")
    bits = ctx.op("stablehlo.select", [nan, _const(ctx, nan_bits, int_dt, shape), bits],
                  int_aval)
    sign = ctx.op("stablehlo.shift_right_arithmetic",
                  [bits, _const(ctx, int_dt.itemsize * 8 - 1, int_dt, shape)], int_aval)
    flip = ctx.op("stablehlo.and", [sign, _const(ctx, magnitude, int_dt, shape)], int_aval)
    ordered = ctx.op("stablehlo.xor", [bits, flip], int_aval)
    if int_dt != _I32:
        ordered = ctx.op("stablehlo.convert", [ordered], ShapedArray(shape, _I32))
    return ordered


def _packed_sort(ctx, operands, dimension):
    shape = operands[0].aval.shape
    wide = ShapedArray(shape, _I64)
    high = ctx.op("stablehlo.convert", [_ordered_int32(ctx, operands[0])], wide)
    high = ctx.op("stablehlo.shift_left", [high, _const(ctx, 32, _I64, shape)], wide)
    index = ctx.op("stablehlo.iota", [], wide, attrs={"iota_dimension": f"{dimension} : i64"})
    packed = ctx.op("stablehlo.or", [high, index], wide)
    region = ctx.region([ShapedArray((), _I64), ShapedArray((), _I64)])
    region.ret([base.compare(region, region.args[0], region.args[1], "LT")])
    packed = ctx.op("stablehlo.sort", [packed], [wide], regions=[region],
                    attrs={"dimension": f"{dimension} : i64", "is_stable": "false"})
    if isinstance(packed, (list, tuple)):
        (packed,) = packed
    low = ctx.op("stablehlo.and", [packed, _const(ctx, 0xFFFFFFFF, _I64, shape)], wide)
    perm = ctx.op("stablehlo.convert", [low], ShapedArray(shape, _I32))
    return [ctx.lower_fun(_take_along, [x, perm], {"axis": dimension}) for x in operands]


# ---- differentiation: the tangents follow the primal's permutation ----

def _take_along(x, idx, axis):
    """``x`` permuted along ``axis`` by ``idx`` (in-bounds int32 indices of ``x``'s shape except
    along ``axis``): a gather whose other dimensions are batching dimensions, so that it is
    linear in ``x`` and transposes to a scatter-add."""
    shape = aval_of(idx).shape
    others = tuple(d for d in range(len(shape)) if d != axis)
    dn = slicing.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                        start_index_map=(axis,), operand_batching_dims=others,
                                        start_indices_batching_dims=others)
    return slicing.gather_p.bind(
        x, shape_ops.reshape(idx, shape + (1,)), dimension_numbers=dn,
        slice_sizes=(1,) * len(shape), indices_are_sorted=False, unique_indices=False,
        mode=slicing.GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = aval_of(primals[0]).shape
    if all(type(t) is Zero for t in tangents):
        outs = sort_p.bind(*primals, dimension=dimension, is_stable=is_stable,
                           num_keys=num_keys)
        return outs, [zero_tangent(aval_of(o)) for o in outs]
    # Sort an iota along with the operands to learn the permutation.
    iota = shape_ops.broadcasted_iota(np.int32, shape, dimension)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                              num_keys=num_keys)
    t_outs = [zero_tangent(aval_of(o)) if type(t) is Zero else _take_along(t, perm, dimension)
              for o, t in zip(outs, tangents)]
    return outs, t_outs


sort_p = Primitive("sort", abstract_eval=_sort_abstract_eval, lower=_sort_lower,
                   multiple_results=True, jvp=_sort_jvp, batch=_sort_batch)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort ``operand`` along ``dimension``.

    ``operand`` may be one array (returns one array) or a sequence of equally shaped arrays
    (returns a tuple): they are sorted together, lexicographically by the first ``num_keys``.
    NaNs sort to the end.
    """
    if isinstance(operand, (tuple, list)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dim = canonicalize_axis(dimension, aval_of(operand[0]).ndim, "dimension", "sort")
        return tuple(sort_p.bind(*operand, dimension=dim,
                                 is_stable=bool(is_stable), num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dim = canonicalize_axis(dimension, aval_of(operand).ndim, "dimension", "sort")
    out, = sort_p.bind(operand, dimension=dim,
                       is_stable=bool(is_stable), num_keys=1)
    return out




def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort ``keys`` along ``dimension`` and permute ``values`` the same way; returns
    ``(sorted_keys, sorted_values)``."""
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


# ---- top_k ----

def _top_k_abstract_eval(operand, *, k):
    if operand.ndim < 1:
        raise ValueError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > operand.shape[-1]:
        raise ValueError(f"k argument to top_k must be no larger than minor dimension; {k} vs "
                         f"{operand.shape}")
    shape = operand.shape[:-1] + (k,)
    return [ShapedArray(shape, operand.dtype, operand.weak_type),
            ShapedArray(shape, np.int32, False)]


def _top_k_lower(ctx, x, *, k):
    vals_aval, idx_aval = ctx.avals_out
    shape = x.aval.shape
    if not dtypes.is_complex(x.aval.dtype) and x.aval.dtype != np.bool_:
        # chlo.top_k, as JAX lowers it: XLA's CPU runtime top-k (a partial sort, 4x faster
        # than the full sort below at 128 elements) in XLA's total order, as JAX 0.10.2:
        # NaN above +inf but -NaN below -inf, +0.0 above -0.0, lower index first among equals
        return list(ctx.op("chlo.top_k", [x], [vals_aval, idx_aval], attrs={"k": f"{k} : i64"}))
    dim = len(shape) - 1
    idx = ctx.op("stablehlo.iota", [], ShapedArray(shape, np.int32),
                 attrs={"iota_dimension": f"{dim} : i64"})
    # A stable descending sort keeps equal values in index order (lowest index first).
    region = _comparator(ctx, [x.aval.dtype, np.dtype(np.int32)], 1, descending=True)
    vals, idx = ctx.op("stablehlo.sort", [x, idx], [x.aval, idx.aval], regions=[region],
                       attrs={"dimension": f"{dim} : i64", "is_stable": "true"})
    if k == shape[-1]:
        return [vals, idx]
    limits = list(shape[:-1]) + [k]
    attrs = {"start_indices": mlir.i64_array([0] * len(shape)),
             "limit_indices": mlir.i64_array(limits),
             "strides": mlir.i64_array([1] * len(shape))}
    return [ctx.op("stablehlo.slice", [vals], vals_aval, attrs=attrs),
            ctx.op("stablehlo.slice", [idx], idx_aval, attrs=attrs)]


def _top_k_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    vals, idx = top_k_p.bind(x, k=k)
    t_vals = (zero_tangent(aval_of(vals)) if type(t) is Zero
              else _take_along(t, idx, aval_of(x).ndim - 1))
    return [vals, idx], [t_vals, zero_tangent(aval_of(idx))]


top_k_p = Primitive("top_k", abstract_eval=_top_k_abstract_eval, lower=_top_k_lower,
                    multiple_results=True, jvp=_top_k_jvp, batch=_top_k_batch)


def top_k(operand, k):
    """The ``k`` largest entries along the last axis, largest first, and their int32 indices
    (lower index first among equal values; in XLA's total order, as JAX: NaN above +inf, -NaN
    below -inf, +0.0 above -0.0)."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"top_k: k must be an int, got {k!r}")
    vals, idx = top_k_p.bind(operand, k=int(k))
    return vals, idx
