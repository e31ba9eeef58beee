"""Reduction primitives: monoid reductions over axes, argmax/argmin, cumulative reductions.

``reduce_*`` lower to ``stablehlo.reduce`` with a one-op body (float max/min, and float32/64
sums over trailing axes, first fold the reduced axes in halves with elementwise ops: faster on
the CPU plugin); ``argmax``/``argmin`` to a two-operand reduce over (value, index); the
cumulative ops to ``stablehlo.reduce_window`` with a window as long as the scanned axis and
padding on one side (prefix semantics), as JAX does on CPU and GPU.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.config import config
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive, with_self
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, Zero
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.ad_util import linear_jvp, zero_cts, zero_tangent, zeros
from pyjax._src.core.axes import canonicalize_axes, canonicalize_axis
from pyjax._src.lax.base import aval_of
from pyjax._src.lowering import mlir

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
           "reduce_xor", "reduce", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
           "cumlogsumexp"]

NUM, ORDERED, LOGICAL = "fciu", "fiub", "iub"
MAXMIN = ORDERED + "c"  # complex numbers order lexicographically (real, then imag), as in JAX


# ---- identities and scalar bodies ----

def _has_inf(dt):
    """Whether a floating dtype has infinities: float8_e4m3fn and the ``fnuz`` float8 types
    do not (their -inf is NaN), so their max/min identities are the lowest/highest finite
    values, as in JAX."""
    return bool(np.isinf(np.array(np.inf, dt).astype(np.float32)))


def max_identity(dt):
    """The identity of ``max``: -inf (the lowest finite value for floating types without
    infinities), the smallest integer, or False."""
    if dtypes.is_bool(dt):
        return np.array(False)
    if dtypes.is_complex(dt) or (dtypes.is_inexact(dt) and _has_inf(dt)):
        return np.array(-np.inf, dt)
    if dtypes.is_inexact(dt):
        return np.array(dtypes.finfo(dt).min, dt)
    return np.array(dtypes.iinfo(dt).min, dt)


def min_identity(dt):
    """The identity of ``min``: inf (the highest finite value for floating types without
    infinities), the largest integer, or True."""
    if dtypes.is_bool(dt):
        return np.array(True)
    if dtypes.is_complex(dt) or (dtypes.is_inexact(dt) and _has_inf(dt)):
        return np.array(np.inf, dt)
    if dtypes.is_inexact(dt):
        return np.array(dtypes.finfo(dt).max, dt)
    return np.array(dtypes.iinfo(dt).max, dt)


def _all_ones(dt):
    return np.array(True) if dtypes.is_bool(dt) else ~np.zeros((), dt)


# name -> (accepted kinds, identity(dtype), stablehlo body op(dtype))
_MONOIDS = {
    "reduce_sum": (NUM, lambda dt: np.zeros((), dt), lambda dt: "stablehlo.add"),
    "reduce_prod": (NUM, lambda dt: np.ones((), dt), lambda dt: "stablehlo.multiply"),
    "reduce_max": (MAXMIN, max_identity,
                   lambda dt: "stablehlo.or" if dtypes.is_bool(dt) else "stablehlo.maximum"),
    "reduce_min": (MAXMIN, min_identity,
                   lambda dt: "stablehlo.and" if dtypes.is_bool(dt) else "stablehlo.minimum"),
    "reduce_and": (LOGICAL, _all_ones, lambda dt: "stablehlo.and"),
    "reduce_or": (LOGICAL, lambda dt: np.zeros((), dt), lambda dt: "stablehlo.or"),
    "reduce_xor": (LOGICAL, lambda dt: np.zeros((), dt), lambda dt: "stablehlo.xor"),
}


def _scalar(dt):
    return ShapedArray((), dt)


def _binary_region(ctx, dt, op_name):
    """A reducer body ``(a, b) -> op(a, b)`` on rank-0 tensors of ``dt``."""
    region = ctx.region([_scalar(dt), _scalar(dt)])
    a, b = region.args
    region.ret([region.op(op_name, [a, b], _scalar(dt))])
    return region


def _nan_propagating_region(ctx, dt, op_name):
    """``max``/``min`` that return NaN when either side is NaN, written out with selects: the
    body of float ``reduce_max``/``reduce_min`` after their fold (``_float_minmax``). A bare
    body propagates NaNs too in XLA's own code (fast min/max is off), but not once XLA gives
    the reduce to YNNPACK, which it does not with this body."""
    s = _scalar(dt)
    region = ctx.region([s, s])
    a, b = region.args
    m = region.op(op_name, [a, b], s)
    b_nan = base.compare(region, b, b, "NE")
    m = region.op("stablehlo.select", [b_nan, b, m], s)
    a_nan = base.compare(region, a, a, "NE")
    region.ret([region.op("stablehlo.select", [a_nan, a, m], s)])
    return region


def _complex_minmax_region(ctx, dt, op_name):
    """``max``/``min`` of complex numbers in JAX's lexicographic order (real part, then
    imaginary part), NaN-propagating; XLA's own complex maximum compares real parts only."""
    s, r = _scalar(dt), _scalar(dtypes.to_real_dtype(dt))
    region = ctx.region([s, s])
    a, b = region.args
    direction = "GT" if op_name == "stablehlo.maximum" else "LT"
    ra, rb = region.op("stablehlo.real", [a], r), region.op("stablehlo.real", [b], r)
    ia, ib = region.op("stablehlo.imag", [a], r), region.op("stablehlo.imag", [b], r)
    first = base.compare(region, ra, rb, direction)
    tie = region.op("stablehlo.and", [base.compare(region, ra, rb, "EQ"),
                                      base.compare(region, ia, ib, direction)], first.aval)
    m = region.op("stablehlo.select", [region.op("stablehlo.or", [first, tie], first.aval), a, b],
                  s)
    for x in (b, a):  # a NaN in either part of either side wins (a's last, so it wins ties)
        rx, ix = (rb, ib) if x is b else (ra, ia)
        nan = region.op("stablehlo.or", [base.compare(region, rx, rx, "NE"),
                                         base.compare(region, ix, ix, "NE")], first.aval)
        m = region.op("stablehlo.select", [nan, x, m], s)
    region.ret([m])
    return region


def _in_spmd_lowering():
    from pyjax._src.lax import collective_lowering as cl
    return cl.in_spmd_lowering()


def _partitionable_minmax(ctx, x, init, out, axes, op_name):
    """Float max/min in an SPMD program: XLA's partitioner refuses the select-written
    NaN-propagating reducer ("Unsupported reduction computation") when a reduced dimension
    is split, so reduce with the bare op and put the NaNs back from a separate
    ``or``-reduction of ``x != x`` (the CPU codegen's bare max/min drops NaNs)."""
    dt = x.aval.dtype
    dims = {"dimensions": mlir.i64_array(sorted(axes))}
    m = ctx.op("stablehlo.reduce", [x, init], out,
               regions=[_binary_region(ctx, dt, op_name)], attrs=dims)
    isnan = base.compare(ctx, x, x, "NE")
    false = ctx.constant(np.bool_(False), _scalar(np.dtype(np.bool_)))
    anynan = ctx.op("stablehlo.reduce", [isnan, false], out.update(dtype=np.dtype(np.bool_)),
                    regions=[_binary_region(ctx, np.dtype(np.bool_), "stablehlo.or")],
                    attrs=dims)
    nan = base.broadcast_operand_lowering(ctx, ctx.constant(np.array(np.nan, dt)[()],
                                                            _scalar(dt)), out.shape)
    return ctx.op("stablehlo.select", [anynan, nan, m], out)


def _minmax_region(ctx, dt, op_name):
    if dtypes.is_complex(dt):
        return _complex_minmax_region(ctx, dt, op_name)
    if dtypes.is_inexact(dt):
        return _nan_propagating_region(ctx, dt, op_name)
    return _binary_region(ctx, dt, op_name)


def _logaddexp_region(ctx, dt):
    """``log(exp(a) + exp(b))`` computed stably; infinities of equal sign give NaN deltas, for
    which ``a + b`` is the right answer (-inf + -inf = -inf, inf + inf = inf)."""
    s = _scalar(dt)
    region = ctx.region([s, s])
    a, b = region.args
    amax = region.op("stablehlo.maximum", [a, b], s)
    delta = region.op("stablehlo.subtract", [a, b], s)
    isnan = base.compare(region, delta, delta, "NE")
    neg_abs = region.op("stablehlo.negate", [region.op("stablehlo.abs", [delta], s)], s)
    soft = region.op("stablehlo.add", [amax, region.op(
        "stablehlo.log_plus_one", [region.op("stablehlo.exponential", [neg_abs], s)], s)], s)
    total = region.op("stablehlo.add", [a, b], s)
    region.ret([region.op("stablehlo.select", [isnan, total, soft], s)])
    return region


# ---- monoid reductions ----

def _check_axes(name, aval, axes):
    for a in axes:
        if not 0 <= a < aval.ndim:
            raise ValueError(f"{name}: reduction axes {tuple(axes)} contains out-of-bounds "
                             f"indices for an operand of shape {aval.shape}.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {tuple(axes)}")


# the half-precision floats that jax_allow_f16_reductions=False keeps out of reduce_sum (by
# name: naming bfloat16 here would import ml_dtypes with pyjax)
_HALF_FLOATS = ("float16", "bfloat16")


def _make_reduce_abstract_eval(name, kinds):
    def abstract_eval(x, *, axes):
        base.check_kinds(name, [x], kinds)
        _check_axes(name, x, axes)
        if (name == "reduce_sum" and not config.jax_allow_f16_reductions
                and x.dtype.name in _HALF_FLOATS and any(x.shape[a] != 1 for a in axes)):
            raise ValueError(f"reduce_sum on operand {x.str_short()} is not allowed when "
                             "jax_allow_f16_reductions=False.")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract_eval


def _make_reduce_lower(name):
    _, identity, body = _MONOIDS[name]

    def lower(ctx, x, *, axes):
        out = ctx.avals_out[0]
        if not axes:
            return x
        dt = x.aval.dtype
        init = ctx.constant(identity(dt), _scalar(dt))
        op_name = body(dt)
        if (op_name in ("stablehlo.maximum", "stablehlo.minimum") and dtypes.is_floating(dt)
                and _in_spmd_lowering()):
            return _partitionable_minmax(ctx, x, init, out, axes, op_name)
        if op_name in ("stablehlo.maximum", "stablehlo.minimum"):
            if dtypes.is_floating(dt):
                return _float_minmax(ctx, x, init, axes, op_name, out)
            region = _minmax_region(ctx, dt, op_name)
        elif (name == "reduce_sum" and _sum_folds(x.aval, axes)
              and not _in_spmd_lowering()):  # slices of a split axis would need collectives
            return _float_sum(ctx, x, axes, out)
        else:
            region = _binary_region(ctx, dt, op_name)
        return ctx.op("stablehlo.reduce", [x, init], out, regions=[region],
                      attrs={"dimensions": mlir.i64_array(sorted(axes))})
    return lower


# ---- float max/min: a halving tree of elementwise max/min, then a bare reduce ----
# pyjax compiles with ``xla_cpu_enable_fast_min_max`` off (runtime/compile_options.py), so
# ``maximum``/``minimum`` propagate NaNs, elementwise and as a bare reducer body (checked on
# the plugin for f16, bf16, f32 and f64, row, column and whole reductions, XLA's reduce-window
# rewrite of a 64x33 reduce, and the low compile tier), as in JAX. The plugin does not
# vectorize such a reduce: the max over the last axis of 8x4x128x128 float32 (softmax's)
# took 2.7 ms, a sum 0.15 ms, JAX 0.07 ms. (The selects of ``_nan_propagating_region``,
# written before that option was set, were as slow.) Elementwise max/min is vectorized, so
# every reduced axis of up to _TREE_ROW elements is first folded in halves,
# ``max(x[:c], x[L-c:])`` with ``c = ceil(L/2)`` (the halves overlap by one element when L is
# odd, harmless for max/min), down to _TREE_TO elements, then reduced with a bare body: 0.12 ms
# for that softmax max; a column max of 1000x1000 4.0 -> 0.3 ms. Reduced trailing axes are
# merged into one first, and one of over _TREE_ROW elements is split into rows of a divisor
# in [256, _TREE_ROW] (10^6 floats: 3 ms as one row, 0.5 ms as 1000 rows); longer leading
# axes are reduced as they are (a fold of many levels would be one huge fusion).
_TREE_TO = 8
_TREE_ROW = 4096


def _row_length(m):
    """The largest divisor of ``m`` in [256, _TREE_ROW], or None."""
    return next((d for d in range(_TREE_ROW, 255, -1) if m % d == 0), None)


def _float_minmax(ctx, x, init, axes, op_name, out):
    # The reduce after the fold has the select-written body: XLA hands reduces with a bare
    # max/min body to YNNPACK on plugins that have it (compile_options.py asks for YNNPACK
    # reductions), and YNNPACK's max/min drop NaNs. After the fold it sees at most _TREE_TO
    # elements per output (more only along a long axis with no divisor), so the selects cost
    # little.
    dt = x.aval.dtype
    x, axes = _fold_halves(ctx, x, axes, op_name, None)
    return ctx.op("stablehlo.reduce", [x, init], out,
                  regions=[_nan_propagating_region(ctx, dt, op_name)],
                  attrs={"dimensions": mlir.i64_array(axes)})


def _fold_halves(ctx, x, axes, op_name, pad_value):
    """Fold every reduced axis of up to _TREE_ROW elements in halves with the elementwise
    ``op_name`` down to _TREE_TO elements (reduced trailing axes merged into one first, split
    into rows when longer); returns the folded operand and its axes still to reduce. An odd
    length either overlaps its halves by one element (``pad_value`` None: max/min) or pads the
    upper half with ``pad_value`` (sums: every element counted once)."""
    shape = x.aval.shape
    ndim, k = len(shape), len(axes)
    axes = sorted(axes)
    m = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    row = m if m <= _TREE_ROW else _row_length(m)
    if axes == list(range(ndim - k, ndim)) and row and row > _TREE_TO:
        # trailing axes: one axis of ``row`` elements (rows of it when longer)
        keep = shape[:ndim - k]
        rows = (m // row, row) if row < m else (m,)
        x = ctx.op("stablehlo.reshape", [x], x.aval.update(shape=keep + rows))
        axes = list(range(len(keep), x.aval.ndim))
    for ax in axes:
        while _TREE_TO < x.aval.shape[ax] <= _TREE_ROW:
            length = x.aval.shape[ax]
            c = (length + 1) // 2
            lo = _axis_slice(ctx, x, ax, 0, c)
            if pad_value is None or length == 2 * c:
                hi = _axis_slice(ctx, x, ax, length - c, length)
            else:
                hi = _pad_axis_end(ctx, _axis_slice(ctx, x, ax, c, length), ax, pad_value)
            x = ctx.op(op_name, [lo, hi], lo.aval)
    return x, axes


def _pad_axis_end(ctx, x, axis, value):
    """``x`` with one more element, ``value``, at the end of ``axis``."""
    shape, n = x.aval.shape, x.aval.ndim
    high = [int(d == axis) for d in range(n)]
    pad = ctx.constant(np.array(value, x.aval.dtype), _scalar(x.aval.dtype))
    return ctx.op("stablehlo.pad", [x, pad], x.aval.update(shape=tuple(
        s + h for s, h in zip(shape, high))), attrs={
            "edge_padding_low": mlir.i64_array([0] * n),
            "edge_padding_high": mlir.i64_array(high),
            "interior_padding": mlir.i64_array([0] * n)})


# ---- float sums: the same halving tree, where it is faster (measured, docs/performance.md) ----
# Pairwise summation is at least as accurate as the plugin's reduce (error growing with log n
# rather than n). Only float32 and float64: a float16/bfloat16 ``reduce_sum`` keeps its plain
# reduce, whose accumulation XLA decides (neither float32 throughout nor a rounding per add:
# 17 bfloat16 0.1s sum to 1.71875, as in JAX's lax.reduce_sum); jnp.sum and friends convert
# half floats to float32 before reduce_sum (as JAX does), so they take the folded path.
_FOLDED_SUM_DTYPES = ("float32", "float64")


def _sum_folds(aval, axes):
    """Whether the folded sum is used: reductions over trailing axes only (row sums and whole
    sums); a leading-axis (column) sum is already vectorized across the kept columns."""
    k = len(axes)
    trailing = sorted(axes) == list(range(aval.ndim - k, aval.ndim))
    length = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    return aval.dtype.name in _FOLDED_SUM_DTYPES and trailing and length > _TREE_TO


def _float_sum(ctx, x, axes, out):
    dt = x.aval.dtype
    x, axes = _fold_halves(ctx, x, axes, "stablehlo.add", 0)
    return ctx.op("stablehlo.reduce", [x, ctx.constant(np.zeros((), dt), _scalar(dt))], out,
                  regions=[_binary_region(ctx, dt, "stablehlo.add")],
                  attrs={"dimensions": mlir.i64_array(axes)})


def _axis_slice(ctx, x, axis, start, limit):
    shape = x.aval.shape
    starts = [0] * len(shape)
    starts[axis] = start
    limits = list(shape)
    limits[axis] = limit
    return ctx.op("stablehlo.slice", [x], x.aval.update(shape=tuple(
        limit - start if d == axis else n for d, n in enumerate(shape))),
                  attrs={"start_indices": mlir.i64_array(starts),
                         "limit_indices": mlir.i64_array(limits),
                         "strides": mlir.i64_array([1] * len(shape))})


# ---- differentiation rules of the monoid reductions ----

def _reduce_sum_transpose(ct, operand, *, axes):
    if type(ct) is Zero:
        return zero_cts([operand])
    shape = operand.aval.shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    return [shape_ops.broadcast_in_dim(ct, shape, kept)]


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero:
        return out, zero_tangent(aval_of(out))
    so = shape_ops
    shape = aval_of(x).shape
    out_shape = aval_of(out).shape
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0 or aval_of(x).size == 0:
        return out, zeros(aval_of(out))
    if n == 1:
        return out, so.reshape(t, out_shape)
    # d prod = sum_i t_i * prod_{j != i} x_j, with the products of the others formed as
    # exclusive prefix times exclusive suffix products (exact when some x_j are zero).
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    perm = tuple(sorted(axes)) + kept
    flat = (n,) + out_shape
    xs = so.reshape(so.transpose(x, perm), flat)
    ts = so.reshape(so.transpose(t, perm), flat)
    one = np.ones((), aval_of(x).dtype)
    rest = ((0, 0, 0),) * len(out_shape)
    before = so.pad(so.slice_in_dim(cumprod_p.bind(xs, axis=0, reverse=False), 0, n - 1),
                    one, ((1, 0, 0),) + rest)
    after = so.pad(so.slice_in_dim(cumprod_p.bind(xs, axis=0, reverse=True), 1, n),
                   one, ((0, 1, 0),) + rest)
    others = ew.mul(before, after)
    return out, reduce_sum_p.bind(ew.mul(ts, others), axes=(0,))


def _chooser_jvp(prim):
    """max/min: the tangent at the chosen location, split equally among ties (as JAX)."""
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if type(t) is Zero:
            return out, zero_tangent(aval_of(out))
        shape = aval_of(x).shape
        kept = tuple(d for d in range(len(shape)) if d not in axes)
        at = ew.eq(x, shape_ops.broadcast_in_dim(out, shape, kept))
        at = ew.convert_element_type(at, aval_of(t).dtype)
        count = reduce_sum_p.bind(at, axes=axes)
        return out, ew.div(reduce_sum_p.bind(ew.mul(t, at), axes=axes), count)
    return jvp


_REDUCE_RULES = {
    "reduce_sum": dict(linear=True, jvp=linear_jvp(),
                       transpose=_reduce_sum_transpose),
    "reduce_prod": dict(jvp=_reduce_prod_jvp),
    "reduce_max": dict(jvp=with_self(_chooser_jvp)),
    "reduce_min": dict(jvp=with_self(_chooser_jvp)),
    "reduce_and": dict(jvp=NOT_DIFFERENTIABLE),
    "reduce_or": dict(jvp=NOT_DIFFERENTIABLE),
    "reduce_xor": dict(jvp=NOT_DIFFERENTIABLE),
}

prims: dict[str, Primitive] = {}


def _declare_family(table, rules, make_abstract_eval, make_lower, make_batch):
    """One primitive per entry of ``table`` (name -> (dtype kinds, ...)), with the family's
    rule makers and its own entry of ``rules``; returns them in the table's order."""
    for name, (kinds, _, _) in table.items():
        prims[name] = Primitive(name, abstract_eval=make_abstract_eval(name, kinds),
                                lower=make_lower(name), batch=make_batch(), **rules[name])
    return [prims[name] for name in table]


(reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
 reduce_xor_p) = _declare_family(_MONOIDS, _REDUCE_RULES, _make_reduce_abstract_eval,
                                 _make_reduce_lower, bu.reduce_axes_rule)


def _canonical_axes(name, operand, axes, what="axes"):
    # out-of-range and repeated axes are left to abstract_eval (JAX's lax messages)
    return canonicalize_axes(axes, aval_of(operand).ndim, what, name, allow_none=False,
                             strict=False)


def _make_reduce_fn(name):
    p = prims[name]

    def fn(operand, axes):
        return p.bind(operand, axes=_canonical_axes(name, operand, axes))
    fn.__name__ = name
    fn.__doc__ = (f"``{name}`` of ``operand`` over ``axes`` (a sequence of ints); the result "
                  "drops the reduced axes and keeps the operand's dtype and weak type.")
    return fn


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or, reduce_xor = map(
    _make_reduce_fn, _MONOIDS)


def _monoid_for(computation, dt):
    """The specialised reduction for ``computation`` on ``dt`` and its identity, or None."""
    if computation is ew.add:
        return None if dtypes.is_bool(dt) else ("reduce_sum", np.zeros((), dt))
    if computation is ew.mul:
        return None if dtypes.is_bool(dt) else ("reduce_prod", np.ones((), dt))
    if computation is ew.max:
        return "reduce_max", max_identity(dt)
    if computation is ew.min:
        return "reduce_min", min_identity(dt)
    if computation is ew.bitwise_and:
        return "reduce_and", _all_ones(dt)
    if computation is ew.bitwise_or:
        return "reduce_or", np.zeros((), dt)
    if computation is ew.bitwise_xor:
        return "reduce_xor", np.zeros((), dt)
    return None


def _is_identity(init, identity):
    """Whether ``init`` is concretely the monoid's ``identity``."""
    if base.is_tracer(init):
        init = getattr(init, "to_concrete_value", lambda: None)()
        if init is None:
            return False
    try:
        v = np.asarray(init)
        return v.shape == () and bool(np.asarray(v, identity.dtype) == identity) and (
            not np.issubdtype(v.dtype, np.floating) or v == v)
    except (TypeError, ValueError, OverflowError):
        return False


def reduce(operands, init_values, computation, dimensions):  # noqa: A001 - JAX's name
    """Reduce ``operands`` over ``dimensions`` with ``computation`` (``lax.reduce``).

    ``operands`` and ``init_values`` are matching pytrees (several operands reduce together:
    ``computation(x_tree, y_tree)`` returns a tree). ``lax.add``, ``lax.mul``, ``lax.max``,
    ``lax.min``, ``lax.bitwise_and``/``or``/``xor`` on one operand with their identity as init
    value bind the specialised, differentiable primitive (``reduce_sum`` and so on), as JAX
    does; any other computation is traced into the body of the generic ``reduce`` primitive
    (it may close over concrete values, not traced ones, and is not differentiable).
    """
    from pyjax._src.core import pytree
    from pyjax._src.lax import user_reductions as uc
    flat, tree = pytree.tree_flatten(operands)
    flat_init, init_tree = pytree.tree_flatten(init_values)
    if len(flat) != len(flat_init) or tree != init_tree:
        raise ValueError(f"reduce: operands and init values must have the same tree "
                         f"structure, got {tree} and {init_tree}")
    if not flat:
        raise TypeError("reduce: operands must contain at least one array")
    axes = _canonical_axes("reduce", flat[0], dimensions, "dimensions")
    if len(flat) == 1:
        monoid = _monoid_for(computation, aval_of(flat[0]).dtype)
        if monoid is not None and _is_identity(flat_init[0], monoid[1]):
            return pytree.tree_unflatten(tree, [prims[monoid[0]].bind(flat[0], axes=axes)])
    inits = [np.asarray(i, aval_of(x).dtype)
             if base.is_python_scalar(i) else i
             for x, i in zip(flat, flat_init)]
    outs = uc.reduce_p.bind(*flat, *inits, computation=uc.Computation(computation, tree),
                            dimensions=axes)
    return pytree.tree_unflatten(tree, outs)


# ---- argmax / argmin ----

def _argminmax_abstract_eval(name):
    def abstract_eval(x, *, axes, index_dtype):
        base.check_kinds(name, [x], ORDERED)
        if not dtypes.is_integer(np.dtype(index_dtype)):
            raise TypeError(f"{name}: index_dtype must be an integer type, got "
                            f"{np.dtype(index_dtype).name}")
        if len(axes) != 1:
            raise ValueError(f"{name} takes exactly one axis, got axes={axes}")
        axis, = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] < 1:
            raise ValueError(f"argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={x.shape} axis={axis}")
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return ShapedArray(shape, index_dtype, False)
    return abstract_eval


def _argminmax_lower(is_max):
    def lower(ctx, x, *, axes, index_dtype):
        out = ctx.avals_out[0]
        axis, = axes
        dt, idt = x.aval.dtype, np.dtype(index_dtype)
        idx = ctx.op("stablehlo.iota", [], ShapedArray(x.aval.shape, idt),
                     attrs={"iota_dimension": f"{axis} : i64"})
        init_v = ctx.constant(max_identity(dt) if is_max else min_identity(dt), _scalar(dt))
        init_i = ctx.constant(np.zeros((), idt), _scalar(idt))
        sv, si, sb = _scalar(dt), _scalar(idt), _scalar(np.bool_)
        region = ctx.region([sv, si, sv, si])
        av, ai, bv, bi = region.args
        # a wins when strictly better, or a is NaN and b is not; ties (both NaN counts as a
        # tie) go to the lower index, so the first occurrence wins whatever the reduction order.
        better = base.compare(region, av, bv, "GT" if is_max else "LT")
        eq = base.compare(region, av, bv, "EQ")
        if dtypes.is_floating(dt):
            a_nan = base.compare(region, av, av, "NE")
            b_nan = base.compare(region, bv, bv, "NE")
            b_num = region.op("stablehlo.not", [b_nan], sb)
            better = region.op("stablehlo.or", [better, region.op(
                "stablehlo.and", [a_nan, b_num], sb)], sb)
            eq = region.op("stablehlo.or", [eq, region.op("stablehlo.and", [a_nan, b_nan], sb)],
                           sb)
        lower_idx = base.compare(region, ai, bi, "LT")
        take_a = region.op("stablehlo.or", [better, region.op(
            "stablehlo.and", [eq, lower_idx], sb)], sb)
        region.ret([region.op("stablehlo.select", [take_a, av, bv], sv),
                    region.op("stablehlo.select", [take_a, ai, bi], si)])
        res = ctx.op("stablehlo.reduce", [x, idx, init_v, init_i],
                     [out.update(dtype=dt), out], regions=[region],
                     attrs={"dimensions": mlir.i64_array([axis])})
        return res[1]
    return lower


argmax_p = Primitive("argmax", abstract_eval=_argminmax_abstract_eval("argmax"),
                     lower=_argminmax_lower(True), jvp=NOT_DIFFERENTIABLE,
                     batch=bu.reduce_axes_rule())
argmin_p = Primitive("argmin", abstract_eval=_argminmax_abstract_eval("argmin"),
                     lower=_argminmax_lower(False), jvp=NOT_DIFFERENTIABLE,
                     batch=bu.reduce_axes_rule())


def _canonical_axis(name, operand, axis):
    return canonicalize_axis(axis, aval_of(operand).ndim, "axis", name, strict=False)


def argmax(operand, axis, index_dtype):
    """Index of the largest element along ``axis`` (the first one on ties; NaN counts as the
    largest value, so the first NaN wins, as in NumPy)."""
    return argmax_p.bind(operand, axes=(_canonical_axis("argmax", operand, axis),),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the smallest element along ``axis`` (the first one on ties; NaN counts as the
    smallest value, so the first NaN wins, as in NumPy)."""
    return argmin_p.bind(operand, axes=(_canonical_axis("argmin", operand, axis),),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


# ---- cumulative reductions ----

# name -> (accepted kinds, identity(dtype), region builder(ctx, dtype))
_CUMULATIVE = {
    "cumsum": (NUM, lambda dt: np.zeros((), dt),
               lambda ctx, dt: _binary_region(ctx, dt, "stablehlo.add")),
    "cumprod": (NUM, lambda dt: np.ones((), dt),
                lambda ctx, dt: _binary_region(ctx, dt, "stablehlo.multiply")),
    "cummax": ("fiu", max_identity,
               lambda ctx, dt: _minmax_region(ctx, dt, "stablehlo.maximum")),
    "cummin": ("fiu", min_identity,
               lambda ctx, dt: _minmax_region(ctx, dt, "stablehlo.minimum")),
    "cumlogsumexp": ("f", max_identity, _logaddexp_region),
}


def _make_cumulative_abstract_eval(name, kinds):
    def abstract_eval(x, *, axis, reverse):
        base.check_kinds(name, [x], kinds)
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for array of shape "
                             f"{x.shape}")
        return x
    return abstract_eval


def _make_cumulative_lower(name):
    _, identity, make_region = _CUMULATIVE[name]

    def lower(ctx, x, *, axis, reverse):
        out = ctx.avals_out[0]
        shape = x.aval.shape
        n = shape[axis]
        if n <= 1 or x.aval.size == 0:
            return x
        dt = x.aval.dtype
        if name in _SCANNED:
            return ctx.lower_fun(_scanned_cumulative, [x], dict(
                op=_SCANNED[name], axis=axis, reverse=reverse))
        init = ctx.constant(identity(dt), _scalar(dt))
        window = [1] * len(shape)
        window[axis] = n
        pads = np.zeros((len(shape), 2), np.int64)
        pads[axis] = (0, n - 1) if reverse else (n - 1, 0)
        return ctx.op("stablehlo.reduce_window", [x, init], out,
                      regions=[make_region(ctx, dt)], attrs={
                          "window_dimensions": mlir.i64_array(window),
                          "window_strides": mlir.i64_array([1] * len(shape)),
                          "padding": f"{mlir.dense_attr(pads, np.int64)} : "
                                     f"tensor<{len(shape)}x2xi64>"})
    return lower


# cummax/cummin as JAX lowers them on CPU: an associative scan of elementwise max/min, in
# O(log n) rounds of strided slices. The plugin does not vectorize the reduce_window form
# (a window of n elements at every position): 8x4096 float32 took 1.1 ms, the scan 0.3 ms
# (docs/performance.md). Elementwise max/min propagate NaNs and treat +0/-0 symmetrically,
# so the values are the same bits.
_SCANNED = {"cummax": ew.max, "cummin": ew.min}


def _scanned_cumulative(x, *, op, axis, reverse):
    if reverse:
        x = shape_ops.rev(x, (axis,))
    (y,) = _prefix_scan(lambda a, b: [op(a[0], b[0])], [x], axis)
    return shape_ops.rev(y, (axis,)) if reverse else y


# ---- differentiation rules of the cumulative reductions ----

def _prefix_scan(combine, elems, axis):
    """Inclusive prefix combination of the arrays ``elems`` (combined together, as a tuple)
    along ``axis`` with the associative ``combine(list_a, list_b) -> list``, in O(log n)
    rounds of strided slices: combine neighbouring pairs, scan those, then fill in the rest."""
    n = aval_of(elems[0]).shape[axis]
    if n < 2:
        return list(elems)
    so = shape_ops

    def sl(x, start, stop, stride=1):
        return so.slice_in_dim(x, start, stop, stride, axis)

    m = n // 2
    pairs = combine([sl(e, 0, 2 * m, 2) for e in elems], [sl(e, 1, 2 * m, 2) for e in elems])
    odd = _prefix_scan(combine, pairs, axis)  # odd[j]: the prefix through position 2j + 1
    k = (n - 1) // 2  # even positions after the first
    if k:
        rest = combine([sl(o, 0, k) for o in odd], [sl(e, 2, n, 2) for e in elems])
        even = [so.concatenate([sl(e, 0, 1), r], axis) for e, r in zip(elems, rest)]
    else:
        even = [sl(e, 0, 1) for e in elems]
    return [_interleave(ev, od, axis) for ev, od in zip(even, odd)]


def _interleave(ev, od, axis):
    """``ev[0], od[0], ev[1], od[1], ...`` along ``axis`` (``ev`` may be one longer)."""
    so = shape_ops
    m = aval_of(od).shape[axis]
    head = so.slice_in_dim(ev, 0, m, 1, axis)
    shape = list(aval_of(od).shape)
    split = shape[:axis + 1] + [1] + shape[axis + 1:]
    both = so.concatenate([so.reshape(head, split), so.reshape(od, split)], axis + 1)
    out = so.reshape(both, shape[:axis] + [2 * m] + shape[axis + 1:])
    if aval_of(ev).shape[axis] > m:
        out = so.concatenate([out, so.slice_in_dim(ev, m, m + 1, 1, axis)], axis)
    return out


def _prod_combine(a, b):
    (x, dx), (y, dy) = a, b
    return [ew.mul(x, y), ew.add(ew.mul(dx, y), ew.mul(x, dy))]


def _make_chooser_combine(choose):
    def combine(a, b):
        (x, dx), (y, dy) = a, b
        out = choose(x, y)
        dt = aval_of(dx).dtype
        wx = ew.convert_element_type(ew.eq(x, out), dt)
        wy = ew.convert_element_type(ew.eq(y, out), dt)
        # Ties split the tangent equally (JAX's max/min JVP).
        cx = ew.sub(wx, ew.mul(ew.mul(wx, wy), 0.5))
        cy = ew.sub(wy, ew.mul(ew.mul(wx, wy), 0.5))
        return [out, ew.add(ew.mul(dx, cx), ew.mul(dy, cy))]
    return combine


def _finite_or_zero_at_posinf(x):
    return ew.select(ew.eq(x, np.array(np.inf, aval_of(x).dtype)), zeros(aval_of(x)), x)


def _logaddexp_combine(a, b):
    (x, dx), (y, dy) = a, b
    delta = ew.sub(x, y)
    soft = ew.add(ew.max(x, y), ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    out = ew.select(ew.ne(delta, delta), ew.add(x, y), soft)  # infinities of one sign
    r = _finite_or_zero_at_posinf(out)
    wx = ew.exp(ew.sub(_finite_or_zero_at_posinf(x), r))
    wy = ew.exp(ew.sub(_finite_or_zero_at_posinf(y), r))
    return [out, ew.add(ew.mul(dx, wx), ew.mul(dy, wy))]


def _make_cumulative_jvp(combine):
    """The tangent of a cumulative reduction is the prefix scan of (value, tangent) pairs
    with the JVP of the binary operation (exact at zeros, unlike formulas that divide)."""
    def make(prim):
        def jvp(primals, tangents, *, axis, reverse):
            (x,), (t,) = primals, tangents
            out = prim.bind(x, axis=axis, reverse=reverse)
            if type(t) is Zero:
                return out, zero_tangent(aval_of(out))
            if reverse:
                x, t = shape_ops.rev(x, (axis,)), shape_ops.rev(t, (axis,))
            _, t_out = _prefix_scan(combine, [x, t], axis)
            return out, shape_ops.rev(t_out, (axis,)) if reverse else t_out
        return jvp
    return with_self(make)


def _cumsum_transpose(ct, operand, *, axis, reverse):
    if type(ct) is Zero:
        return zero_cts([operand])
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


_CUMULATIVE_RULES = {
    "cumsum": dict(linear=True, jvp=linear_jvp(), transpose=_cumsum_transpose),
    "cumprod": dict(jvp=_make_cumulative_jvp(_prod_combine)),
    "cummax": dict(jvp=_make_cumulative_jvp(_make_chooser_combine(ew.max))),
    "cummin": dict(jvp=_make_cumulative_jvp(_make_chooser_combine(ew.min))),
    "cumlogsumexp": dict(jvp=_make_cumulative_jvp(_logaddexp_combine)),
}

cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p = _declare_family(
    _CUMULATIVE, _CUMULATIVE_RULES, _make_cumulative_abstract_eval, _make_cumulative_lower,
    bu.axis_param_rule)


def _make_cumulative_fn(name, what):
    p = prims[name]

    def fn(operand, axis=0, reverse=False):
        return p.bind(operand, axis=_canonical_axis(name, operand, axis), reverse=bool(reverse))
    fn.__name__ = name
    fn.__doc__ = (f"Cumulative {what} of ``operand`` along ``axis``; with ``reverse=True`` "
                  "the scan runs from the end of the axis.")
    return fn


cumsum = _make_cumulative_fn("cumsum", "sum")
cumprod = _make_cumulative_fn("cumprod", "product")
cummax = _make_cumulative_fn("cummax", "maximum")
cummin = _make_cumulative_fn("cummin", "minimum")
cumlogsumexp = _make_cumulative_fn("cumlogsumexp", "log-sum-exp")


# Last, and read only inside rules: shape_ops declares its primitives with this module's.
from pyjax._src.lax import shape_ops  # noqa: E402
