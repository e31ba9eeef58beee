"""``lax`` functions that JAX has and pyjax builds from its existing primitives: ``tile``,
``stack``, ``unstack``, ``split``, ``broadcast_shapes``, ``reciprocal``, ``mulhi``,
``index_take``, ``dtype``, ``platform_dependent``, ``composite``, ``approx_max_k`` /
``approx_min_k`` and ``ragged_dot``.

Each gives JAX's result; ``tile``, ``stack``, ``unstack``, ``split`` and ``mulhi`` bind the
primitives JAX has for them (``lax/split_stack_tile.py``), the others show in a Jaxpr as the
primitives they are made of."""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.lax import dot as lax_dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import key_ops
from pyjax._src.lax import reductions as red
from pyjax._src.lax import shape_ops
from pyjax._src.lax import slicing
from pyjax._src.lax import sorting
from pyjax._src.lax import split_stack_tile as sst
from pyjax._src.lax.base import aval_of
from pyjax._src.core.trace import shape_of
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, lower_fun
from pyjax._src.lax import batch_util
from pyjax._src.lax.ad_util import zero_tangent

__all__ = ["tile", "stack", "unstack", "split", "broadcast_shapes", "reciprocal", "mulhi",
           "index_take", "dtype", "platform_dependent", "composite", "approx_max_k",
           "approx_min_k", "ragged_dot", "approx_top_k_p"]


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each dimension ``i`` (``len(reps)`` must be
    ``operand.ndim``)."""
    shape = tuple(shape_of(operand))
    reps = axes_mod.canonicalize_shape(reps, "reps", "lax.tile")
    if len(reps) != len(shape):
        raise ValueError(f"lax.tile: len(reps) must equal operand.ndim, got reps={reps} for an "
                         f"operand of shape {shape}")
    # (r0, d0, r1, d1, ...) then merge each pair
    return key_ops.bind(sst.tile_p, operand, reps=tuple(reps))


def stack(operands, axis=0):
    """Join arrays of one shape along a new axis ``axis``."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack requires at least one operand")
    nd = len(aval_of(operands[0]).shape)
    axis = axes_mod.canonicalize_axis(axis, nd + 1, fun="lax.stack")
    return sst.stack_p.bind(*operands, axis=axis)


def unstack(operand, axis=0):
    """The slices of ``operand`` along ``axis``, as a list."""
    shape = tuple(aval_of(operand).shape)
    axis = axes_mod.canonicalize_axis(axis, len(shape), fun="lax.unstack")
    return list(sst.unstack_p.bind(operand, axis=axis))


def split(operand, sizes, axis=0):
    """Consecutive pieces of ``operand`` along ``axis`` of the given ``sizes`` (which must sum
    to the axis' length), as a list."""
    shape = tuple(aval_of(operand).shape)
    axis = axes_mod.canonicalize_axis(axis, len(shape), fun="lax.split")
    sizes = axes_mod.canonicalize_shape(sizes, "sizes", "lax.split")
    if sum(sizes) != shape[axis]:
        raise ValueError(f"lax.split: sum of sizes {sizes} must equal the size of axis {axis} "
                         f"of the operand, {shape[axis]} (shape {shape})")
    return list(sst.split_p.bind(operand, sizes=tuple(sizes), axis=axis))


def broadcast_shapes(*shapes):
    """The shape that arrays of ``shapes`` broadcast to (NumPy's rule, ranks promoted)."""
    shapes = [axes_mod.canonicalize_shape(s, "shape", "lax.broadcast_shapes") for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def reciprocal(x):
    """``1 / x`` elementwise (``integer_pow(x, -1)``, as JAX)."""
    return ew.integer_pow(x, -1)


def mulhi(x, y):
    """The high half of the double-width product of two integer arrays of one dtype (signed
    or unsigned): ``(x * y) >> bits`` (the ``mulhi`` primitive)."""
    dt = aval_of(x).dtype
    if dt != aval_of(y).dtype or not dtypes.is_integer(dt) or dt == np.bool_:
        raise TypeError(f"lax.mulhi requires two integer operands of the same dtype, got "
                        f"{aval_of(x).dtype} and {aval_of(y).dtype}")
    return sst.mulhi_p.bind(x, y)


def mulhi_value(x, y):
    """``mulhi`` written with the existing primitives (its lowering)."""
    dt = aval_of(x).dtype
    bits = dt.itemsize * 8
    signed = dtypes.is_signed(dt)
    if bits < 32:  # exact in a 32-bit product
        wide = np.dtype(np.int32 if signed else np.uint32)
        p = ew.mul(ew.convert_element_type(x, wide), ew.convert_element_type(y, wide))
        shift = ew.shift_right_arithmetic if signed else ew.shift_right_logical
        return ew.convert_element_type(shift(p, wide.type(bits)), dt)
    # 32 and 64 bits: no wider type (64-bit types may be off), so half-width limbs
    return _mulhi_limbs(x, y, signed, bits)


def _mulhi_limbs(x, y, signed, bits):
    """``mulhi`` from half-width limbs (schoolbook) in the unsigned type, then the signed
    correction."""
    udt = np.dtype(f"u{bits // 8}")
    xu = ew.bitcast_convert_type(x, udt) if signed else x
    yu = ew.bitcast_convert_type(y, udt) if signed else y
    half = udt.type(bits // 2)
    mask = udt.type((1 << (bits // 2)) - 1)
    x_lo, x_hi = ew.bitwise_and(xu, mask), ew.shift_right_logical(xu, half)
    y_lo, y_hi = ew.bitwise_and(yu, mask), ew.shift_right_logical(yu, half)
    lo_lo, hi_lo = ew.mul(x_lo, y_lo), ew.mul(x_hi, y_lo)
    lo_hi, hi_hi = ew.mul(x_lo, y_hi), ew.mul(x_hi, y_hi)
    cross = ew.add(ew.add(ew.shift_right_logical(lo_lo, half), ew.bitwise_and(hi_lo, mask)),
                   lo_hi)
    hi = ew.add(ew.add(hi_hi, ew.shift_right_logical(hi_lo, half)),
                ew.shift_right_logical(cross, half))
    if not signed:
        return hi
    # two's complement: subtract y where x < 0 and x where y < 0 (mod 2**bits)
    sdt = np.dtype(f"i{bits // 8}")
    zero = sdt.type(0)
    hi = ew.sub(hi, ew.mul(yu, ew.convert_element_type(ew.lt(x, zero), udt)))
    hi = ew.sub(hi, ew.mul(xu, ew.convert_element_type(ew.lt(y, zero), udt)))
    return ew.bitcast_convert_type(hi, sdt)


def index_take(src, idxs, axes):
    """``src`` gathered at the points whose coordinates along ``axes`` are given by the 1-d
    integer arrays ``idxs`` (one per axis): shape ``(n,) + the other dimensions``."""
    idxs, axes = list(idxs), tuple(axes)
    if len(idxs) != len(axes):
        raise ValueError(f"lax.index_take: {len(idxs)} index arrays for {len(axes)} axes")
    shape = tuple(aval_of(src).shape)
    axes = tuple(axes_mod.canonicalize_axis(a, len(shape), fun="lax.index_take") for a in axes)
    indices = shape_ops.concatenate([shape_ops.expand_dims(i, (1,)) for i in idxs], 1)
    slice_sizes = tuple(1 if d in axes else s for d, s in enumerate(shape))
    offset_dims = tuple(range(1, len(shape) - len(axes) + 1))
    dnums = slicing.GatherDimensionNumbers(offset_dims=offset_dims,
                                           collapsed_slice_dims=tuple(sorted(axes)),
                                           start_index_map=axes)
    return slicing.gather(src, indices, dnums, slice_sizes)


def dtype(x, *, canonicalize=False):
    """The dtype of ``x`` (an array, a scalar or a dtype-like); Python scalars get the
    default dtypes. ``canonicalize`` applies the x64 setting."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return dtypes.dtype_of(x)
    d = getattr(x, "dtype", None)
    d = d if isinstance(d, np.dtype) and not isinstance(x, type) else np.dtype(x)
    return dtypes.canonicalize_dtype(d) if canonicalize else d


def platform_dependent(*args, default=None, **per_platform):
    """Run the branch for the current platform (``cpu=`` here), else ``default``."""
    branch = per_platform.get("cpu", default)
    for name in per_platform:
        if name not in ("cpu", "cuda", "rocm", "tpu", "gpu", "metal"):
            raise ValueError(f"platform_dependent: unknown platform {name!r}")
    if branch is None:
        raise NotImplementedError(
            "platform_dependent: no branch for platform 'cpu' and no default; got branches "
            f"for {sorted(per_platform)}")
    return branch(*args)


def composite(decomposition, name, version=0):
    """Mark ``decomposition`` as the composite op ``name``: calling the result computes
    ``decomposition`` (pyjax lowers the decomposition inline; XLA sees the same program)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"composite: name must be a non-empty string, got {name!r}")
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"composite: version must be a non-negative int, got {version!r}")

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)
    return call


def _approx_k(operand, k, reduction_dimension, largest):
    shape = tuple(aval_of(operand).shape)
    if not shape:
        raise ValueError("approx_max_k/approx_min_k: operand must have at least one dimension")
    axis = axes_mod.canonicalize_axis(reduction_dimension, len(shape), fun="approx_top_k")
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= shape[axis]:
        raise ValueError(f"approx_top_k: k must be an int in [0, {shape[axis]}], got {k!r}")
    last = len(shape) - 1
    x = shape_ops.transpose(operand, _swap(last, axis)) if axis != last else operand
    if largest:
        vals, idx = sorting.top_k(x, int(k))
    else:
        iota = shape_ops.broadcasted_iota(np.int32, tuple(aval_of(x).shape), last)
        vals, idx = sorting.sort_key_val(x, iota, last)  # stable: lower index first on ties
        vals = shape_ops.slice_in_dim(vals, 0, k, axis=last)
        idx = shape_ops.slice_in_dim(idx, 0, k, axis=last)
    if axis != last:
        vals = shape_ops.transpose(vals, _swap(last, axis))
        idx = shape_ops.transpose(idx, _swap(last, axis))
    return vals, idx


def _swap(n_last, axis):
    perm = list(range(n_last + 1))
    perm[axis], perm[n_last] = perm[n_last], perm[axis]
    return tuple(perm)


def _check_approx_options(recall_target, reduction_input_size_override, aggregate_to_topk):
    if not 0 < recall_target <= 1:
        raise ValueError(f"recall_target must be in (0, 1], got {recall_target}")
    if reduction_input_size_override != -1:
        raise NotImplementedError("approx_max_k/approx_min_k: reduction_input_size_override "
                                  "applies to TPU's approximate algorithm only")
    if not aggregate_to_topk:
        raise NotImplementedError("approx_max_k/approx_min_k: aggregate_to_topk=False "
                                  "(TPU's partial result) is not supported")


# ---- the approx_top_k primitive (JAX's, behind approx_max_k / approx_min_k) ----

def _approx_axis(shape, reduction_dimension):
    if not shape:
        raise ValueError("approx_max_k/approx_min_k: operand must have at least one dimension")
    return axes_mod.canonicalize_axis(reduction_dimension, len(shape), fun="approx_top_k")


def _approx_top_k_abstract_eval(x, *, k, reduction_dimension, **_):
    axis = _approx_axis(x.shape, reduction_dimension)
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= x.shape[axis]:
        raise ValueError(f"approx_top_k: k must be an int in [0, {x.shape[axis]}], got {k!r}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, np.int32, False)]


def _approx_top_k_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    vals, idx = approx_top_k_p.bind(x, **params)
    axis = _approx_axis(aval_of(x).shape, params["reduction_dimension"])
    t_vals = (zero_tangent(aval_of(vals)) if type(t) is Zero
              else sorting._take_along(t, idx, axis))
    return [vals, idx], [t_vals, zero_tangent(aval_of(idx))]


def _approx_top_k_batch(args, dims, *, reduction_dimension, **params):
    (x,), (d,) = args, dims
    axis = _approx_axis(tuple(aval_of(x).shape)[:d] + tuple(aval_of(x).shape)[d + 1:],
                        reduction_dimension)
    outs = approx_top_k_p.bind(x, reduction_dimension=batch_util.to_batched_axis(axis, d),
                               **params)
    return outs, [d, d]


# exact on the CPU, as JAX there: lowered as a sort (top_k for the largest)
approx_top_k_p = Primitive(
    "approx_top_k", abstract_eval=_approx_top_k_abstract_eval, multiple_results=True,
    lower=lower_fun(lambda x, *, k, reduction_dimension, is_max_k, **_:
                    list(_approx_k(x, k, reduction_dimension, is_max_k)),
                    multiple_results=True),
    jvp=_approx_top_k_jvp, batch=_approx_top_k_batch)


def _bind_approx(operand, k, reduction_dimension, recall_target, is_max_k,
                 reduction_input_size_override, aggregate_to_topk):
    _check_approx_options(recall_target, reduction_input_size_override, aggregate_to_topk)
    return tuple(approx_top_k_p.bind(
        operand, k=k, reduction_dimension=reduction_dimension,
        recall_target=float(recall_target), is_max_k=is_max_k,
        reduction_input_size_override=reduction_input_size_override,
        aggregate_to_topk=aggregate_to_topk))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices. On CPU (as
    JAX there) the result is exact, so any ``recall_target`` is met."""
    return _bind_approx(operand, k, reduction_dimension, recall_target, True,
                        reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact on
    CPU)."""
    return _bind_approx(operand, k, reduction_dimension, recall_target, False,
                        reduction_input_size_override, aggregate_to_topk)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """``lhs[m, k]`` rows split into consecutive groups of ``group_sizes[g]`` rows, each
    multiplied by its own ``rhs[g, k, n]``: ``out[m, n]``. Rows past ``sum(group_sizes)`` are
    zero."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported")
    ls, rs, gs = (tuple(aval_of(v).shape) for v in (lhs, rhs, group_sizes))
    if len(ls) != 2 or len(rs) != 3 or len(gs) != 1 or rs[0] != gs[0] or ls[1] != rs[1]:
        raise ValueError(f"ragged_dot expects lhs[m, k], rhs[g, k, n] and group_sizes[g], got "
                         f"shapes {ls}, {rs} and {gs}")
    if not dtypes.is_integer(aval_of(group_sizes).dtype):
        raise TypeError(f"ragged_dot: group_sizes must be integers, got "
                        f"{aval_of(group_sizes).dtype}")
    m, g = ls[0], rs[0]
    ends = red.cumsum(group_sizes, 0)
    starts = ew.sub(ends, group_sizes)
    rows = shape_ops.broadcasted_iota(aval_of(ends).dtype, (g, m), 1)
    b = functools.partial(shape_ops.broadcast_in_dim, shape=(g, m), broadcast_dimensions=(0,))
    member = ew.bitwise_and(ew.ge(rows, b(starts)), ew.lt(rows, b(ends)))  # (g, m)
    dt = aval_of(lhs).dtype
    masked = ew.mul(shape_ops.broadcast_in_dim(lhs, (g, m, ls[1]), (1, 2)),
                    shape_ops.broadcast_in_dim(ew.convert_element_type(member, dt),
                                               (g, m, ls[1]), (0, 1)))
    # contract the group and k dimensions together: one dot
    return lax_dot.dot_general(masked, rhs, (((0, 2), (0, 1)), ((), ())), precision=precision,
                               preferred_element_type=preferred_element_type)
