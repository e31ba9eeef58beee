"""Windowed reductions: ``reduce_window`` (pooling) and the max-pooling gradient primitives.

``reduce_window_sum``/``max``/``min`` are the monoid reductions, lowered to
``stablehlo.reduce_window`` with a one-op body (max/min of small windows: strided slices); ``reduce_window`` with any other computation
binds the generic ``reduce_window`` primitive, whose body is the user's Python function traced
where it is lowered (as ``scatter_apply``'s). Gradients as JAX computes them: the sum's
transpose is a padded, strided sum again; the max/min JVP gathers the tangent at each window's
chosen element (``select_and_gather_add``), whose transpose scatters the cotangent there
(``select_and_scatter_add``, lowered as JAX does on CPU: the operand padded with the select
identity, then ``stablehlo.select_and_scatter``, or strided slices for small windows).
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive, with_self
from pyjax._src.core.rules import Zero
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import shape_ops
from pyjax._src.lax import user_reductions as uc
from pyjax._src.lax.ad_util import linear_jvp, zero_cts, zero_tangent
from pyjax._src.lax.base import aval_of
from pyjax._src.lax.convolution import _dilate_shape, _vjp_lhs_padding, padtype_to_pads
from pyjax._src.lowering import mlir

__all__ = ["reduce_window", "reduce_window_shape_tuple", "reduce_window_sum_p",
           "reduce_window_max_p", "reduce_window_min_p", "reduce_window_p",
           "select_and_scatter_add_p", "select_and_gather_add_p"]

_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The result shape of ``reduce_window`` (``padding`` as explicit pairs)."""
    if base_dilation is not None:
        operand_shape = _dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate_shape(window_dimensions, window_dilation)
    out = []
    for d, w, s, (lo, hi) in zip(operand_shape, window_dimensions, window_strides, padding):
        padded = int(d) + int(lo) + int(hi)
        out.append(0 if padded < int(w) else (padded - int(w)) // int(s) + 1)
    return tuple(out)


def _check_window(name, aval, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
    nd = aval.ndim
    for what, vals in (("window_dimensions", window_dimensions),
                       ("window_strides", window_strides), ("base_dilation", base_dilation),
                       ("window_dilation", window_dilation)):
        if len(vals) != nd:
            raise TypeError(f"{name}: {what} must have one entry per operand dimension "
                            f"({nd} for shape {aval.shape}), got {tuple(vals)}.")
        if any(v <= 0 for v in vals):
            raise TypeError(f"{name}: {what} must be positive, got {tuple(vals)}.")
    if len(padding) != nd:
        raise TypeError(f"{name}: padding must have one (low, high) pair per operand dimension "
                        f"({nd} for shape {aval.shape}), got {padding}.")
    for d, (lo, hi) in zip(_dilate_shape(aval.shape, base_dilation), padding):
        if d + lo + hi < 0:
            raise ValueError(f"{name}: negative padding {padding} is larger than the operand "
                             f"of shape {aval.shape}.")
    return reduce_window_shape_tuple(aval.shape, window_dimensions, window_strides, padding,
                                     base_dilation, window_dilation)


def _window_attrs(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    n = len(window_dimensions)
    pads = np.asarray(padding, np.int64).reshape(n, 2)
    return {"window_dimensions": mlir.i64_array(window_dimensions),
            "window_strides": mlir.i64_array(window_strides),
            "base_dilations": mlir.i64_array(base_dilation),
            "window_dilations": mlir.i64_array(window_dilation),
            "padding": f"{mlir.dense_attr(pads, np.int64)} : tensor<{n}x2xi64>"}


def _scalar(dt):
    return ShapedArray((), dt)


# ---- the monoid reductions ----

# name -> (dtype kinds, identity(dtype), region maker(ctx, dtype))
_MONOIDS = {
    "reduce_window_sum": ("fciu", lambda dt: np.zeros((), dt),
                          lambda ctx, dt: red._binary_region(ctx, dt, "stablehlo.add")),
    "reduce_window_max": ("fciub", red.max_identity,
                          lambda ctx, dt: red._binary_region(ctx, dt, "stablehlo.or")
                          if dtypes.is_bool(dt) else
                          red._minmax_region(ctx, dt, "stablehlo.maximum")),
    "reduce_window_min": ("fciub", red.min_identity,
                          lambda ctx, dt: red._binary_region(ctx, dt, "stablehlo.and")
                          if dtypes.is_bool(dt) else
                          red._minmax_region(ctx, dt, "stablehlo.minimum")),
}


def _monoid_abstract_eval(name, kinds):
    def abstract_eval(x, **window):
        base.check_kinds(name, [x], kinds)
        shape = _check_window(name, x, **window)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract_eval


def _monoid_lower(name):
    _, identity, make_region = _MONOIDS[name]
    elementwise = {"reduce_window_max": ew.max, "reduce_window_min": ew.min}.get(name)

    def lower(ctx, x, **window):
        dt = x.aval.dtype
        if elementwise is not None and _sliceable(x.aval, dt, **window):
            return ctx.lower_fun(_max_min_by_slices, [x], dict(
                window, op=elementwise, init=identity(dt)))
        init = ctx.constant(identity(dt), _scalar(dt))
        return ctx.op("stablehlo.reduce_window", [x, init], ctx.avals_out[0],
                      regions=[make_region(ctx, dt)], attrs=_window_attrs(**window))
    return lower


# ---- max/min windows as elementwise max/min of strided slices ----
# The plugin does not vectorize a reduce_window whose body is max/min, NaN-checking selects or
# bare: a 3x3 stride-1 max pool of 8x64x64x32 float32 took 70 ms (JAX 19 ms). Elementwise
# maximum/minimum are vectorized and propagate NaNs (fast min/max is off, see reductions.py),
# and as IEEE maximum/minimum they treat +0/-0 symmetrically (+0 for max, -0 for min, in
# either order, checked against JAX), so any order of combination gives the same bits: the
# window is reduced one dimension at a time, as the max of its strided slices (1.1 ms).
# Windows up to _SLICED_WINDOW elements per dimension (larger ones keep reduce_window).
_SLICED_WINDOW = 32


def _sliceable(aval, dt, window_dimensions, window_strides, padding, base_dilation,
               window_dilation):
    return (not dtypes.is_complex(dt) and not dtypes.is_bool(dt) and aval.size > 0
            and all(1 <= w <= _SLICED_WINDOW for w in window_dimensions)
            and all(lo >= 0 and hi >= 0 for lo, hi in padding))


def _window_view(x, d, k, count, stride):
    """``count`` elements of ``x`` along dimension ``d`` from ``k`` with ``stride``."""
    shape = bu.shape_of(x)
    start, limit, strides = [0] * len(shape), list(shape), [1] * len(shape)
    start[d], limit[d], strides[d] = k, k + (count - 1) * stride + 1, stride
    return shape_ops.slice(x, tuple(start), tuple(limit), tuple(strides))


def _max_min_by_slices(x, *, op, init, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation):
    out_shape = reduce_window_shape_tuple(bu.shape_of(x), window_dimensions, window_strides,
                                          padding, base_dilation, window_dilation)
    if any(map(any, padding)) or any(d != 1 for d in base_dilation):
        x = shape_ops.pad(x, np.asarray(init, aval_of(x).dtype),
                          tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation)))
    for d, (w, s, wd, n) in enumerate(zip(window_dimensions, window_strides, window_dilation,
                                          out_shape)):
        if n == 0:
            return shape_ops.full_like(x, init, shape=out_shape)
        if w == 1 and s == 1 and bu.shape_of(x)[d] == n:
            continue
        y = _window_view(x, d, 0, n, s)
        for k in range(1, w):
            y = op(y, _window_view(x, d, k * wd, n, s))
        x = y
    return x


def _window_batch_rule():
    """Batching of a primitive whose operands all have the window's rank: the batch axes go
    first, with a window of 1 over them."""
    def make(prim):
        def rule(args, dims, *, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation, **params):
            size = bu.batch_size(args, dims)
            args = [bu.bdim_to(x, d, 0, size) for x, d in zip(args, dims)]
            out = prim.bind(*args, window_dimensions=(1,) + window_dimensions,
                            window_strides=(1,) + window_strides,
                            padding=((0, 0),) + padding, base_dilation=(1,) + base_dilation,
                            window_dilation=(1,) + window_dilation, **params)
            if prim.multiple_results:
                return out, [0] * len(out)
            return out, 0
        rule.__name__ = f"{prim.name}_batch_rule"
        return rule
    return with_self(make)


def _reduce_window_sum_transpose(ct, operand, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    if type(ct) is Zero:
        return zero_cts([operand])
    in_shape = operand.aval.shape
    pads = _vjp_lhs_padding(in_shape, window_dimensions, window_strides, aval_of(ct).shape,
                            padding, base_dilation, window_dilation)
    config = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides))
    padded = shape_ops.pad(ct, np.zeros((), aval_of(ct).dtype), config)
    nd = len(in_shape)
    out = reduce_window_sum_p.bind(padded, window_dimensions=window_dimensions,
                                   window_strides=base_dilation, padding=((0, 0),) * nd,
                                   base_dilation=(1,) * nd, window_dilation=window_dilation)
    return [out]


def _chooser_jvp(select):
    def make(prim):
        def jvp(primals, tangents, **window):
            (x,), (t,) = primals, tangents
            out = prim.bind(x, **window)
            if type(t) is Zero:
                return out, zero_tangent(aval_of(out))
            return out, select_and_gather_add_p.bind(t, x, select=select, **window)
        jvp.__name__ = f"{prim.name}_jvp"
        return jvp
    return with_self(make)


def _declare(name, **rules):
    kinds = _MONOIDS[name][0]
    return Primitive(name, abstract_eval=_monoid_abstract_eval(name, kinds),
                     lower=_monoid_lower(name), batch=_window_batch_rule(), **rules)


reduce_window_sum_p = _declare("reduce_window_sum", linear=True, jvp=linear_jvp(),
                               transpose=_reduce_window_sum_transpose)
reduce_window_max_p = _declare("reduce_window_max", jvp=_chooser_jvp("ge"))
reduce_window_min_p = _declare("reduce_window_min", jvp=_chooser_jvp("le"))


# ---- max/min pooling gradients ----

def _select_region(ctx, dt, select):
    s = _scalar(dt)
    region = ctx.region([s, s])
    a, b = region.args
    region.ret([base.compare(region, a, b, "GE" if select == "ge" else "LE")])
    return region


def _select_identity(select, dt):
    return red.max_identity(dt) if select == "ge" else red.min_identity(dt)


def _gather_abstract_eval(tangents, operand, *, select, **window):
    if tangents.shape != operand.shape:
        raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                        f"{tangents.shape} and {operand.shape}.")
    shape = _check_window("select_and_gather_add", operand, **window)
    return ShapedArray(shape, tangents.dtype)


def _gather_lower(ctx, tangents, operand, *, select, **window):
    """A two-operand reduce_window over (operand, tangent) pairs keeping the pair whose
    operand the select comparison prefers; padding holds (identity, 0)."""
    out = ctx.avals_out[0]
    odt, tdt = operand.aval.dtype, tangents.aval.dtype
    so, st = _scalar(odt), _scalar(tdt)
    region = ctx.region([so, st, so, st])
    a, ta, b, tb = region.args
    pick = base.compare(region, a, b, "GE" if select == "ge" else "LE")
    if dtypes.is_inexact(odt):  # a NaN is the max (min): it wins, as in reduce_window_max
        pick = region.op("stablehlo.or", [pick, base.compare(region, a, a, "NE")], pick.aval)
    region.ret([region.op("stablehlo.select", [pick, a, b], so),
                region.op("stablehlo.select", [pick, ta, tb], st)])
    inits = [ctx.constant(_select_identity(select, odt), so), ctx.constant(np.zeros((), tdt), st)]
    res = ctx.op("stablehlo.reduce_window", [operand, tangents] + inits,
                 [out.update(dtype=odt), out], regions=[region], attrs=_window_attrs(**window))
    return res[1]


def _gather_transpose(ct, tangents, operand, *, select, window_dimensions, window_strides,
                      padding, base_dilation, window_dilation):
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with "
                                  f"window dilation, got window_dilation={window_dilation}.")
    if type(ct) is Zero:
        return [Zero(tangents.aval), None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:  # the holes of the dilated operand are never selected
        ident = _select_identity(select, aval_of(operand).dtype)
        operand = shape_ops.pad(operand, ident, tuple((0, 0, d - 1) for d in base_dilation))
    res = select_and_scatter_add_p.bind(ct, operand, select=select,
                                        window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding)
    if dilated:
        shape = bu.shape_of(res)
        res = shape_ops.slice(res, (0,) * len(shape), shape, base_dilation)
    return [res, None]


def _scatter_abstract_eval(source, operand, *, select, window_dimensions, window_strides,
                           padding):
    nd = operand.ndim
    shape = _check_window("select_and_scatter_add", operand, window_dimensions, window_strides,
                          padding, (1,) * nd, (1,) * nd)
    if source.shape != shape:
        raise TypeError(f"select_and_scatter_add source must have the window reduction's shape "
                        f"{shape}, got {source.shape}.")
    return ShapedArray(operand.shape, source.dtype)


def _scatter_lower(ctx, source, operand, *, select, window_dimensions, window_strides, padding):
    """As JAX lowers it on CPU: the operand padded with the select identity (the padding
    elements are candidates like any other: a NaN before one passes the selection to it, and
    its cotangent is dropped), then select_and_scatter, or, for windows of up to
    _SCATTER_SLICED elements, the same selection written with strided slices."""
    params = dict(select=select, window_dimensions=window_dimensions,
                  window_strides=window_strides, padding=padding)
    if (int(np.prod(window_dimensions)) <= _SCATTER_SLICED and source.aval.size > 0
            and all(lo >= 0 and hi >= 0 for lo, hi in padding)):
        return ctx.lower_fun(_scatter_by_slices, [source, operand], params)
    if any(lo < 0 or hi < 0 for lo, hi in padding):  # (cropping: XLA's padding attribute)
        return _select_and_scatter_op(ctx, source, operand, select, window_dimensions,
                                      window_strides, padding, ctx.avals_out[0])
    shape = operand.aval.shape
    padded = any(map(any, padding))
    if padded:
        operand = ctx.lower_fun(lambda x: _pad_with_identity(x, select, padding), [operand], {})
    out = _select_and_scatter_op(ctx, source, operand, select, window_dimensions,
                                 window_strides, ((0, 0),) * len(shape),
                                 ctx.avals_out[0].update(shape=operand.aval.shape))
    return ctx.lower_fun(lambda y: _unpad(y, padding, shape), [out], {}) if padded else out


def _pad_with_identity(operand, select, padding):
    ident = np.asarray(_select_identity(select, aval_of(operand).dtype))
    return shape_ops.pad(operand, ident, tuple((lo, hi, 0) for lo, hi in padding))


def _unpad(x, padding, shape):
    return shape_ops.slice(x, tuple(lo for lo, _ in padding),
                           tuple(lo + n for (lo, _), n in zip(padding, shape)))


# select_and_scatter is not vectorized by the plugin (a 3x3 stride-1 max-pool gradient of
# 8x64x64x32 float32: about 90 ms of CPU). The same result from strided slices: the window
# elements visited in row-major order, keeping the selected one unless it is not ``ge``
# (``le``) the next (XLA's rule: ties keep the first, a NaN gives way to the next element, a
# NaN next takes over), then each window's cotangent placed at its selected offset with a
# strided pad and added up in the order of the windows (the order XLA adds them in).
_SCATTER_SLICED = 64


def _scatter_by_slices(source, operand, *, select, window_dimensions, window_strides,
                       padding):
    import itertools
    shape, out_shape = bu.shape_of(operand), bu.shape_of(source)
    if any(map(any, padding)):
        operand = _pad_with_identity(operand, select, padding)
    padded = bu.shape_of(operand)
    offsets = list(itertools.product(*[range(w) for w in window_dimensions]))
    limits = [tuple(o + (n - 1) * st + 1 for o, n, st in zip(off, out_shape, window_strides))
              for off in offsets]
    prefer = ew.ge if select == "ge" else ew.le
    best, which = None, None
    for i, (off, lim) in enumerate(zip(offsets, limits)):
        v = shape_ops.slice(operand, off, lim, window_strides)
        if best is None:
            best, which = v, shape_ops.full_like(source, 0, dtype=np.int32)
            continue
        keep = prefer(best, v)
        best = ew.select(keep, best, v)
        which = ew.select(keep, which, shape_ops.full_like(which, i))
    zero = np.zeros((), aval_of(source).dtype)
    acc = shape_ops.full_like(source, 0, shape=padded)
    for i in reversed(range(len(offsets))):
        mine = ew.select(ew.eq(which, shape_ops.full_like(which, i)), source,
                         shape_ops.full_like(source, 0))
        acc = ew.add(acc, shape_ops.pad(mine, zero, tuple(
            (o, p - lim, st - 1) for o, p, lim, st in zip(offsets[i], padded, limits[i],
                                                          window_strides))))
    return _unpad(acc, padding, shape) if any(map(any, padding)) else acc


def _select_and_scatter_op(ctx, source, operand, select, window_dimensions, window_strides,
                           padding, out):
    dt = source.aval.dtype
    init = ctx.constant(np.zeros((), dt), _scalar(dt))
    n = len(window_dimensions)
    pads = np.asarray(padding, np.int64).reshape(n, 2)
    return ctx.op("stablehlo.select_and_scatter", [operand, source, init], out,
                  regions=[_select_region(ctx, operand.aval.dtype, select),
                           red._binary_region(ctx, dt, "stablehlo.add")],
                  attrs={"window_dimensions": mlir.i64_array(window_dimensions),
                         "window_strides": mlir.i64_array(window_strides),
                         "padding": f"{mlir.dense_attr(pads, np.int64)} : tensor<{n}x2xi64>"})


def _scatter_transpose(ct, source, operand, *, select, window_dimensions, window_strides,
                       padding):
    if type(ct) is Zero:
        return [Zero(source.aval), None]
    nd = len(window_dimensions)
    return [select_and_gather_add_p.bind(ct, operand, select=select,
                                         window_dimensions=window_dimensions,
                                         window_strides=window_strides, padding=padding,
                                         base_dilation=(1,) * nd, window_dilation=(1,) * nd),
            None]


def _scatter_batch(args, dims, *, select, window_dimensions, window_strides, padding):
    size = bu.batch_size(args, dims)
    args = [bu.bdim_to(x, d, 0, size) for x, d in zip(args, dims)]
    return select_and_scatter_add_p.bind(*args, select=select,
                                         window_dimensions=(1,) + window_dimensions,
                                         window_strides=(1,) + window_strides,
                                         padding=((0, 0),) + padding), 0


select_and_gather_add_p = Primitive(
    "select_and_gather_add", abstract_eval=_gather_abstract_eval, lower=_gather_lower,
    linear=True, jvp=linear_jvp((0,)), transpose=_gather_transpose,
    batch=_window_batch_rule())
select_and_scatter_add_p = Primitive(
    "select_and_scatter_add", abstract_eval=_scatter_abstract_eval, lower=_scatter_lower,
    linear=True, jvp=linear_jvp((0,)), transpose=_scatter_transpose, batch=_scatter_batch)


# ---- the generic reduce_window: a user computation as the body ----

def _generic_abstract_eval(*args, computation, **window):
    n = len(args) // 2
    uc.check_inits("reduce_window", args[:n], args[n:])
    shape = _check_window("reduce_window", args[0], **window)
    return [ShapedArray(shape, x.dtype) for x in args[:n]]


def _generic_lower(ctx, *args, computation, **window):
    n = len(args) // 2
    region = uc.body_region(ctx, computation, [x.aval.dtype for x in args[:n]],
                            "reduce_window")
    return ctx.op("stablehlo.reduce_window", list(args), list(ctx.avals_out), regions=[region],
                  attrs=_window_attrs(**window))


def _generic_batch(args, dims, *, computation, window_dimensions, window_strides, padding,
                   base_dilation, window_dilation):
    n = len(args) // 2
    if any(d is not bu.not_mapped for d in dims[n:]):
        raise NotImplementedError("vmap of lax.reduce_window over its init values is not "
                                  "supported")
    size = bu.batch_size(args, dims)
    xs = [bu.bdim_to(x, d, 0, size) for x, d in zip(args[:n], dims[:n])]
    out = reduce_window_p.bind(*xs, *args[n:], computation=computation,
                               window_dimensions=(1,) + window_dimensions,
                               window_strides=(1,) + window_strides,
                               padding=((0, 0),) + padding, base_dilation=(1,) + base_dilation,
                               window_dilation=(1,) + window_dilation)
    return out, [0] * n


reduce_window_p = Primitive("reduce_window", abstract_eval=_generic_abstract_eval,
                            lower=_generic_lower, multiple_results=True,
                            jvp=uc.not_differentiable("reduce_window"),
                            batch=_generic_batch)


# ---- the lax function ----

def _int_tuple(name, values, nd, default):
    if values is None:
        return default
    try:
        out = tuple(values)
    except TypeError:
        raise TypeError(f"reduce_window {name} must be a sequence of ints, got "
                        f"{values!r}") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in out):
        raise TypeError(f"reduce_window {name} must be a sequence of ints, got {values!r}")
    return tuple(int(v) for v in out)


def _monoid_prim(computation, init, dt):
    """The monoid primitive for ``computation`` when ``init`` is its identity, else None."""
    if computation is ew.add:
        prim, ident = reduce_window_sum_p, np.zeros((), dt)
    elif computation is ew.max:
        prim, ident = reduce_window_max_p, red.max_identity(dt)
    elif computation is ew.min:
        prim, ident = reduce_window_min_p, red.min_identity(dt)
    else:
        return None
    if base.is_tracer(init):
        init = init.to_concrete_value() if hasattr(init, "to_concrete_value") else None
        if init is None:
            return None
    try:
        v = np.asarray(init)
        same = v.shape == () and bool(np.asarray(v, dt) == ident)
    except (TypeError, ValueError, OverflowError):
        return None
    return prim if same else None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with ``computation`` (``lax.reduce_window``).

    ``operand`` and ``init_value`` may be matching pytrees of arrays and scalars (a variadic
    reduction; ``computation(x_tree, y_tree)`` returns a tree). ``padding`` is ``'SAME'``,
    ``'VALID'`` or ``(low, high)`` pairs; padding and base-dilation holes hold the init value.
    ``lax.add``/``lax.max``/``lax.min`` with their identity bind the differentiable monoid
    primitives; any other computation is traced as the body (it may close over concrete
    values, not over traced ones, and is not differentiable)."""
    flat, tree = pytree.tree_flatten(operand)
    flat_init, init_tree = pytree.tree_flatten(init_value)
    if tree != init_tree:
        raise TypeError("reduce_window: operand tree structure must match init_value's, got "
                        f"{tree} and {init_tree}.")
    if not flat:
        raise TypeError("reduce_window: operand must contain at least one array")
    shape = bu.shape_of(flat[0])
    nd = len(shape)
    window_dimensions = _int_tuple("window_dimensions", window_dimensions, nd, None)
    if window_dimensions is None:
        raise TypeError("reduce_window: window_dimensions is required")
    window_strides = _int_tuple("window_strides", window_strides, nd, None)
    if window_strides is None:
        raise TypeError("reduce_window: window_strides is required")
    base_dilation = _int_tuple("base_dilation", base_dilation, nd, (1,) * nd)
    window_dilation = _int_tuple("window_dilation", window_dilation, nd, (1,) * nd)
    if len(window_dimensions) != nd or len(window_strides) != nd:
        raise TypeError(f"reduce_window: window_dimensions {window_dimensions} and "
                        f"window_strides {window_strides} must have one entry per operand "
                        f"dimension ({nd} for shape {tuple(shape)}).")
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "SAME_LOWER", "VALID"):
            raise ValueError(f"reduce_window: padding must be 'SAME', 'SAME_LOWER', 'VALID' or "
                             f"(low, high) pairs, got {padding!r}.")
        # as JAX: the window is dilated, the operand is not (its base dilation is ignored)
        padding = padtype_to_pads(shape, _dilate_shape(window_dimensions, window_dilation),
                                  window_strides, padding)
    try:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"reduce_window: padding must be 'SAME', 'VALID' or a sequence of "
                        f"(low, high) pairs, got {padding!r}.") from None
    window = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
    if len(flat) == 1:
        prim = _monoid_prim(computation, flat_init[0], aval_of(flat[0]).dtype)
        if prim is not None:
            return pytree.tree_unflatten(tree, [prim.bind(flat[0], **window)])
    inits = []
    for x, init in zip(flat, flat_init):
        dt = aval_of(x).dtype
        if base.is_python_scalar(init):
            init = np.asarray(init, dt)
        inits.append(init)

    outs = reduce_window_p.bind(*flat, *inits, computation=uc.Computation(computation, tree),
                                **window)
    return pytree.tree_unflatten(tree, outs)

