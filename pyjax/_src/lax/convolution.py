"""Convolutions: the ``conv_general_dilated`` primitive and the functions built on it.

Dimension numbers are kept as ``ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)``: each spec
lists the operand's dimensions in the canonical order (batch, feature, spatial...) for lhs/out
and (out feature, in feature, spatial...) for rhs, as JAX does. The spatial order is the rhs
spec's (for string specs, lhs and out spatial dims are sorted by their letter's place in rhs).

The convolution is bilinear: its JVP is the product rule and each operand transposes to another
convolution (JAX's rules: the lhs cotangent convolves the output cotangent with the reversed
kernel, strides becoming lhs dilation; the rhs cotangent convolves lhs with the output cotangent,
strides becoming rhs dilation). ``vmap`` folds the mapped axis into the batch or feature
dimension (feature groups when both operands are mapped).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import shape_ops
from pyjax._src.lax import ad_util
from pyjax._src.lax.ad_util import is_undefined_primal, zero_cts
from pyjax._src.lax.base import aval_of
from pyjax._src.lax.dot import Precision, _match_weak, _validate_preferred, \
    canonicalize_precision
from pyjax._src.lowering import mlir

__all__ = ["ConvDimensionNumbers", "conv_general_dilated", "conv_general_dilated_p", "conv",
           "conv_with_general_padding", "conv_transpose", "conv_dimension_numbers",
           "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose_shape_tuple", "padtype_to_pads", "conv_general_dilated_patches",
           "conv_general_dilated_local"]


class ConvDimensionNumbers(NamedTuple):
    """Where each operand keeps its batch/feature/spatial dimensions: ``lhs_spec`` is (batch,
    feature, spatial...), ``rhs_spec`` (out feature, in feature, spatial...), ``out_spec``
    (batch, feature, spatial...), each a tuple of dimension indices."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


# ---- shape helpers (public in JAX's lax) ----

def _dilate_dim(d, dilation):
    return 0 if d == 0 else 1 + dilation * (d - 1)


def _dilate_shape(shape, dilation):
    return tuple(_dilate_dim(int(d), int(r)) for d, r in zip(shape, dilation))


def _ceil_divide(a, b):
    return -(-a // b)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit ``(low, high)`` pads for the padding type ``'SAME'``, ``'SAME_LOWER'`` or
    ``'VALID'`` (``SAME``: the output has ``ceil(in / stride)`` elements, the extra padding
    going high; ``SAME_LOWER``: going low)."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads: padding must be a string, got {padding!r}")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got "
                           f"{padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = _ceil_divide(int(n), int(s))
        total = max((out - 1) * int(s) + int(w) - int(n), 0)
        lo, hi = total // 2, total - total // 2
        pads.append((lo, hi) if kind == "SAME" else (hi, lo))
    return pads


def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) permutations of string dimension numbers such as
    ``('NHWC', 'HWIO', 'NHWC')``."""
    try:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("convolution dimension_numbers must be a tuple/list of 3 strings, got "
                        f"{dimension_numbers!r}") from None
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        spec = dimension_numbers[i]
        if not isinstance(spec, str):
            raise TypeError("convolution dimension_numbers must be a tuple/list of 3 strings, "
                            f"got {dimension_numbers!r}")
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    if not (set(lhs_spec) - set("NC") == set(rhs_spec) - set("OI") == set(out_spec) - set("NC")):
        raise TypeError("convolution dimension_numbers elements must each have the same set of "
                        f"spatial characters, got {dimension_numbers}.")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return tuple(perm(s, p) for s, p in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` (None, a ``ConvDimensionNumbers`` or three strings) as a
    ``ConvDimensionNumbers`` for operands of these shapes."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    n = len(lhs_shape)
    if dimension_numbers is None:
        iota = tuple(range(n))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        specs = dimension_numbers
    elif (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3
          and all(isinstance(s, str) for s in dimension_numbers)):
        for s in dimension_numbers:
            if len(s) != n:
                raise TypeError(f"convolution dimension_numbers {tuple(dimension_numbers)} "
                                f"do not match operands of rank {n}: each string must have "
                                f"{n} characters, got {s!r}.")
        specs = conv_general_permutations(dimension_numbers)
    elif isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3:
        specs = dimension_numbers
    else:
        raise TypeError("convolution dimension_numbers must be None, a ConvDimensionNumbers "
                        f"or a tuple of three strings, got {dimension_numbers!r}.")
    out = []
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), specs):
        try:
            spec = tuple(int(i) for i in spec)
        except (TypeError, ValueError):
            raise TypeError(f"convolution {name} must be a sequence of ints, got "
                            f"{spec!r}") from None
        if sorted(spec) != list(range(n)):
            raise TypeError(f"convolution {name} must be a permutation of range({n}) for "
                            f"operands of rank {n}, got {spec}.")
        out.append(spec)
    return ConvDimensionNumbers(*out)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of a convolution in the canonical layout (N, C, spatial...)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise ValueError(f"Wrong number of explicit pads for convolution: expected "
                         f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={list(pads)} for lhs_shape[2:]="
                         f"{tuple(lhs_shape[2:])}")
    space = [max(0, (p - int(k)) // int(s) + 1) if p >= int(k) else 0
             for p, k, s in zip(padded, rhs_shape[2:], strides)]
    batch = int(lhs_shape[0]) // batch_group_count
    return (batch, int(rhs_shape[0])) + tuple(space)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """Output shape of ``conv_general_dilated`` (without dilation or groups)."""
    lp, rp, op = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lp), np.take(rhs_shape, rp), window_strides,
                           padding)
    return tuple(int(d) for d in np.take(out, np.argsort(op)))


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(math.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or explicit pairs, "
                         f"got {padding!r}.")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """Output shape of ``conv_transpose`` (without kernel dilation)."""
    lp, rp, op = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lt, rt = np.take(lhs_shape, lp), np.take(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(int(k), int(s), padding)
                   for k, s in zip(rt[2:], window_strides)]
    space = [(int(i) - 1) * int(s) - int(k) + 2 + int(lo) + int(hi)
             for i, k, s, (lo, hi) in zip(lt[2:], rt[2:], window_strides, padding)]
    out = (int(lt[0]), int(rt[0])) + tuple(space)
    return tuple(int(d) for d in np.take(out, np.argsort(op)))


# ---- abstract evaluation ----

def _check_positive(name, values, n):
    if len(values) != n:
        raise ValueError(f"conv_general_dilated {name} must have {n} entries (one per spatial "
                         f"dimension), got {tuple(values)}.")
    if any(v <= 0 for v in values):
        raise ValueError(f"conv_general_dilated {name} must be positive, got {tuple(values)}.")


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type):
    if lhs.ndim != rhs.ndim:
        raise TypeError("conv_general_dilated requires lhs and rhs ndim to be equal, got "
                        f"{lhs.ndim} and {rhs.ndim}.")
    if lhs.ndim < 2:
        raise TypeError(f"conv_general_dilated requires operands of rank >= 2 (batch and "
                        f"feature dimensions), got rank {lhs.ndim}.")
    base.check_kinds("conv_general_dilated", [lhs, rhs], "fciu")
    if lhs.dtype != rhs.dtype:
        raise TypeError("conv_general_dilated requires arguments to have the same dtypes, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}.")
    n = lhs.ndim - 2
    _check_positive("window_strides", window_strides, n)
    _check_positive("lhs_dilation", lhs_dilation, n)
    _check_positive("rhs_dilation", rhs_dilation, n)
    if len(padding) != n:
        raise ValueError(f"conv_general_dilated padding must have {n} (low, high) pairs, got "
                         f"{padding}.")
    lspec, rspec, ospec = dimension_numbers
    fgc, bgc = feature_group_count, batch_group_count
    if fgc < 1 or bgc < 1:
        raise ValueError("conv_general_dilated feature_group_count and batch_group_count must "
                         f"be positive integers, got {fgc} and {bgc}.")
    if fgc > 1 and bgc > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, "
                         f"got batch_group_count={bgc} and feature_group_count={fgc}.")
    lhs_feat, rhs_in, rhs_out = lhs.shape[lspec[1]], rhs.shape[rspec[1]], rhs.shape[rspec[0]]
    if lhs_feat % fgc:
        raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {fgc} does not divide {lhs_feat}.")
    if lhs_feat // fgc != rhs_in:
        raise ValueError(f"conv_general_dilated lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension "
                         f"size, but {lhs_feat} // {fgc} != {rhs_in}.")
    if rhs_out % fgc:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {rhs_out} is not a multiple of "
                         f"{fgc}.")
    lhs_batch = lhs.shape[lspec[0]]
    if lhs_batch % bgc:
        raise ValueError(f"conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {bgc} does not divide {lhs_batch}.")
    if rhs_out % bgc:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {rhs_out} is not a multiple of "
                         f"{bgc}.")
    lt = _dilate_shape(np.take(lhs.shape, lspec), (1, 1) + tuple(lhs_dilation))
    rt = _dilate_shape(np.take(rhs.shape, rspec), (1, 1) + tuple(rhs_dilation))
    out_t = conv_shape_tuple(lt, rt, window_strides, padding, bgc)
    shape = tuple(int(d) for d in np.take(out_t, np.argsort(ospec)))
    dt, weak = lhs.dtype, lhs.weak_type and rhs.weak_type
    if preferred_element_type is not None:
        pref = np.dtype(preferred_element_type)
        _validate_preferred(dt, pref)
        weak = weak and pref == dt
        dt = pref
    return ShapedArray(shape, dt, weak)


# ---- lowering ----

def _dims_letters(spec, first, second):
    letters = [""] * len(spec)
    letters[spec[0]], letters[spec[1]] = first, second
    for k, d in enumerate(spec[2:]):
        letters[d] = str(k)
    return "[" + ", ".join(letters) + "]"


def _conv_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count, precision,
                preferred_element_type):
    out = ctx.avals_out[0]
    lspec, rspec, ospec = dimension_numbers
    in_dt = lhs.aval.dtype
    # As dot_general: compute in the wider of the input and result dtypes.
    comp_dt = out.dtype if (out.dtype.itemsize >= in_dt.itemsize
                            or not dtypes.is_floating(out.dtype)) else in_dt
    if comp_dt != in_dt:
        lhs = ctx.op("stablehlo.convert", [lhs], lhs.aval.update(dtype=comp_dt))
        rhs = ctx.op("stablehlo.convert", [rhs], rhs.aval.update(dtype=comp_dt))
    n = len(window_strides)
    dn = (f"#stablehlo.conv<{_dims_letters(lspec, 'b', 'f')}x{_dims_letters(rspec, 'o', 'i')}"
          f"->{_dims_letters(ospec, 'b', 'f')}>")
    attrs = {
        "window_strides": mlir.i64_array(window_strides),
        "padding": f"{mlir.dense_attr(np.asarray(padding, np.int64).reshape(n, 2), np.int64)}"
                   f" : tensor<{n}x2xi64>",
        "lhs_dilation": mlir.i64_array(lhs_dilation),
        "rhs_dilation": mlir.i64_array(rhs_dilation),
        "dimension_numbers": dn,
        "feature_group_count": f"{int(feature_group_count)} : i64",
        "batch_group_count": f"{int(batch_group_count)} : i64",
    }
    if precision is not None:
        attrs["precision_config"] = "[" + ", ".join(
            f"#stablehlo<precision {Precision(p).name}>" for p in precision) + "]"
    res = ctx.op("stablehlo.convolution", [lhs, rhs], out.update(dtype=comp_dt), attrs=attrs)
    if comp_dt != out.dtype:
        res = ctx.op("stablehlo.convert", [res], out)
    return res


# ---- reshaping helpers of the transpose and batching rules (JAX's) ----

def _reshape_axis_into(src, dst, x):
    """Merge axis ``src`` of ``x`` into axis ``dst`` (numbered after ``src`` is removed), as
    its major part."""
    shape = bu.shape_of(x)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [shape[i] for i in range(len(shape)) if i != src]
    new_shape[dst] *= shape[src]
    return shape_ops.reshape(shape_ops.transpose(x, tuple(perm)), tuple(new_shape))


def _reshape_axis_out_of(src, size1, x):
    """Split axis ``src`` of ``x`` into ``(size1, rest)``."""
    shape = list(bu.shape_of(x))
    shape[src:src + 1] = [size1, shape[src] // size1]
    return shape_ops.reshape(x, tuple(shape))


def _spec_transpose(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


# ---- differentiation ----

def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
    lhs_d = _dilate_shape(in_shape, lhs_dil)
    rhs_d = _dilate_shape(window, rhs_dil)
    out_d = _dilate_shape(out_shape, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
    after = [l + k - 1 - o - b for l, k, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
    lhs_d = _dilate_shape(in_shape, lhs_dil)
    rhs_d = _dilate_shape(window, rhs_dil)
    out_d = _dilate_shape(out_shape, strides)
    return tuple((lo, o - l + k - lo - 1)
                 for l, k, o, (lo, _) in zip(lhs_d, rhs_d, out_d, padding))


def _cast(x, dt):
    return x if aval_of(x).dtype == dt else ew.convert_element_type(x, dt)


def _transpose_lhs(g, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    lspec, rspec, ospec = dimension_numbers
    rhs = _cast(rhs, aval_of(g).dtype)
    if feature_group_count > 1:
        # the groups move from the kernel's output features into its input features
        rhs = _reshape_axis_out_of(rspec[0], feature_group_count, rhs)
        rhs = _reshape_axis_into(rspec[0], rspec[1], rhs)
    elif batch_group_count > 1:
        rhs = _reshape_axis_out_of(rspec[0], batch_group_count, rhs)
        rhs = _reshape_axis_into(rspec[0], rspec[1], rhs)
        feature_group_count = batch_group_count
    rshape = bu.shape_of(rhs)
    pads = _vjp_lhs_padding([lhs_aval.shape[d] for d in lspec[2:]],
                            [rshape[d] for d in rspec[2:]], window_strides,
                            [bu.shape_of(g)[d] for d in ospec[2:]], padding, lhs_dilation,
                            rhs_dilation)
    out = conv_general_dilated_p.bind(
        g, shape_ops.rev(rhs, tuple(rspec[2:])), window_strides=tuple(lhs_dilation),
        padding=pads, lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(ospec, _spec_transpose(rspec), lspec),
        feature_group_count=feature_group_count, batch_group_count=1, precision=precision,
        preferred_element_type=None)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lspec[1], batch_group_count, out)
        out = _reshape_axis_into(lspec[1], lspec[0], out)
    return _cast(out, lhs_aval.dtype)


def _transpose_rhs(g, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    if aval_of(g).size == 0:
        return Zero(rhs_aval)
    lspec, rspec, ospec = dimension_numbers
    lhs = _cast(lhs, aval_of(g).dtype)
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        feature_group_count, batch_group_count = 1, feature_group_count
    # a split spatial dimension is contracted here: gathered first (XLA's partitioner gives a
    # sum over the other mesh axes' copies there, measured 2x on a (4, 2) mesh)
    lhs, g = _spatially_unsplit(lhs, lspec[2:]), _spatially_unsplit(g, ospec[2:])
    lshape = bu.shape_of(lhs)
    pads = _vjp_rhs_padding([lshape[d] for d in lspec[2:]],
                            [rhs_aval.shape[d] for d in rspec[2:]], window_strides,
                            [bu.shape_of(g)[d] for d in ospec[2:]], padding, lhs_dilation,
                            rhs_dilation)
    dn = ConvDimensionNumbers(_spec_transpose(lspec), _spec_transpose(ospec),
                              _spec_transpose(rspec))
    out = conv_general_dilated_p.bind(
        lhs, g, window_strides=tuple(rhs_dilation), padding=pads,
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
        dimension_numbers=dn, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision, preferred_element_type=None)
    return _cast(out, rhs_aval.dtype)


def _spatially_unsplit(x, spatial):
    """``x`` with its Explicit splits of the ``spatial`` dimensions removed (a resharding
    constraint), or ``x`` itself when none is split."""
    from pyjax._src.core.sharding import NamedSharding, PartitionSpec
    from pyjax._src.core.sharding_rules import explicit_spec
    from pyjax._src.lax.sharding_constraint import with_sharding_constraint
    spec = explicit_spec(aval_of(x))
    if spec is None or not any(spec[d] for d in spatial):
        return x
    parts = [None if (not p or d in spatial) else (p[0] if len(p) == 1 else p)
             for d, p in enumerate(spec)]
    return with_sharding_constraint(
        x, NamedSharding(aval_of(x).sharding.mesh, PartitionSpec(*parts)))


def _conv_transpose_rule(ct, lhs, rhs, **params):
    if is_undefined_primal(lhs) and is_undefined_primal(rhs):
        raise ValueError("conv_general_dilated is linear in one operand at a time, not both")
    if type(ct) is Zero:
        return zero_cts([lhs, rhs])
    if is_undefined_primal(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


# ---- batching: the mapped axis joins the batch or feature dimension ----

def _conv_batch(args, dims, **params):
    (lhs, rhs), (ld, rd) = args, dims
    lspec, rspec, ospec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    bind = conv_general_dilated_p.bind
    if ld is not bu.not_mapped and rd is not bu.not_mapped:
        size = bu.shape_of(lhs)[ld]
        if bgc > 1:
            new_lhs = _reshape_axis_into(ld, lspec[0], lhs)
            params = dict(params, batch_group_count=bgc * size)
        else:
            new_lhs = _reshape_axis_into(ld, lspec[1], lhs)
            params = dict(params, feature_group_count=fgc * size)
        out = bind(new_lhs, _reshape_axis_into(rd, rspec[0], rhs), **params)
        return _reshape_axis_out_of(ospec[1], size, out), ospec[1]
    if ld is not bu.not_mapped:
        size = bu.shape_of(lhs)[ld]
        if bgc == 1:
            new_lhs = _reshape_axis_into(ld, lspec[0], lhs)
        else:  # the groups stay outermost in the batch dimension, the mapped axis inside them
            new_lhs = _reshape_axis_out_of(lspec[0] + int(ld <= lspec[0]), bgc, lhs)
            new_lhs = _reshape_axis_into(ld + int(lspec[0] < ld), lspec[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(lspec[0], lspec[0], new_lhs)
        out = bind(new_lhs, rhs, **params)
        return _reshape_axis_out_of(ospec[0], size, out), ospec[0]
    size = bu.shape_of(rhs)[rd]
    if fgc == 1 and bgc == 1:
        out = bind(lhs, _reshape_axis_into(rd, rspec[0], rhs), **params)
        return _reshape_axis_out_of(ospec[1], size, out), ospec[1]
    groups = fgc if fgc > 1 else bgc
    new_rhs = _reshape_axis_out_of(rspec[0] + int(rd <= rspec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rd + int(rspec[0] < rd), rspec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rspec[0], rspec[0], new_rhs)
    out = bind(lhs, new_rhs, **params)
    out = _reshape_axis_out_of(ospec[1], groups, out)
    out = _reshape_axis_out_of(ospec[1] + 1, size, out)
    out = _reshape_axis_into(ospec[1], ospec[1] + 1, out)
    return out, ospec[1]


conv_general_dilated_p = Primitive(
    "conv_general_dilated", abstract_eval=_conv_abstract_eval, lower=_conv_lower, linear=True,
    jvp=ad_util.bilinear_jvp(), transpose=_conv_transpose_rule, batch=_conv_batch)


# ---- the lax-level functions ----

def _int_tuple(name, values, n, default=None):
    if values is None:
        return (1,) * n if default is None else default
    try:
        out = tuple(values)
    except TypeError:
        raise TypeError(f"conv_general_dilated {name} must be a sequence of {n} ints, got "
                        f"{values!r}") from None
    for v in out:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"conv_general_dilated {name} must be a sequence of {n} ints, got "
                            f"{values!r}")
    if len(out) != n:
        raise ValueError(f"conv_general_dilated {name} must have {n} entries (one per spatial "
                         f"dimension), got {tuple(values)}.")
    return tuple(int(v) for v in out)


def _explicit_padding(padding, n):
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
        ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                 for pair in padding for v in pair)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise TypeError("conv_general_dilated padding must be 'SAME', 'SAME_LOWER', 'VALID' or "
                        f"a sequence of {n} (low, high) integer pairs, got {padding!r}.")
    if len(pads) != n:
        raise ValueError(f"conv_general_dilated padding must have {n} (low, high) pairs (one per "
                         f"spatial dimension), got {padding!r}.")
    return pads


def _group_count(name, value):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"conv_general_dilated {name} must be an int, got {value!r}.")
    return int(value)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-dimensional convolution (``lax.conv_general_dilated``): cross-correlation of
    ``lhs`` with the kernel ``rhs``, with strides, padding (``'SAME'``, ``'SAME_LOWER'``,
    ``'VALID'`` or explicit ``(low, high)`` pairs), input (``lhs_dilation``) and kernel
    (``rhs_dilation``) dilation, feature and batch groups; ``dimension_numbers`` is None
    (NCHW/OIHW/NCHW), a ``ConvDimensionNumbers`` or three strings such as
    ``('NHWC', 'HWIO', 'NHWC')``. ``out_sharding``: the result's sharding (a sharding
    constraint on it; None or the empty mesh's sharding, what flax passes, ask for nothing)."""
    from pyjax._src.core.sharding_rules import as_named_sharding
    out_sharding = as_named_sharding(out_sharding, "conv_general_dilated")
    if out_sharding is not None:
        from pyjax._src.lax.sharding_constraint import with_sharding_constraint
        out = conv_general_dilated(
            lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
            feature_group_count, batch_group_count, precision, preferred_element_type)
        return with_sharding_constraint(out, out_sharding)
    lshape, rshape = bu.shape_of(lhs), bu.shape_of(rhs)
    dnums = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    n = len(lshape) - 2
    if n < 0:
        raise TypeError(f"conv_general_dilated requires operands of rank >= 2, got shapes "
                        f"{tuple(lshape)} and {tuple(rshape)}.")
    strides = _int_tuple("window_strides", window_strides, n)
    lhs_dil = _int_tuple("lhs_dilation", lhs_dilation, n)
    rhs_dil = _int_tuple("rhs_dilation", rhs_dilation, n)
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "SAME_LOWER", "VALID"):
            raise ValueError(f"conv_general_dilated padding must be 'SAME', 'SAME_LOWER', "
                             f"'VALID' or a sequence of (low, high) pairs, got {padding!r}.")
        if any(r <= 0 for r in rhs_dil) or any(s <= 0 for s in strides):
            raise ValueError(f"conv_general_dilated window_strides and rhs_dilation must be "
                             f"positive, got {strides} and {rhs_dil}.")
        in_space = [lshape[d] for d in dnums.lhs_spec[2:]]
        k_space = _dilate_shape([rshape[d] for d in dnums.rhs_spec[2:]], rhs_dil)
        pads = tuple(tuple(p) for p in padtype_to_pads(in_space, k_space, strides, padding))
    else:
        pads = _explicit_padding(padding, n)
    pref = (None if preferred_element_type is None
            else dtypes.canonicalize_dtype(preferred_element_type))
    lhs, rhs = _match_weak(lhs, rhs)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=pads, lhs_dilation=lhs_dil,
        rhs_dilation=rhs_dil, dimension_numbers=dnums,
        feature_group_count=_group_count("feature_group_count", feature_group_count),
        batch_group_count=_group_count("batch_group_count", batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=pref)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution in the NCHW/OIHW layout without dilation (``lax.conv``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """Convolution in the NCHW/OIHW layout with dilation (``lax.conv_with_general_padding``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_DEFAULT_DNUMS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                            4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """Transposed convolution (``lax.conv_transpose``): a convolution of ``lhs`` dilated by
    ``strides``; with ``transpose_kernel=True`` it is the gradient of ``conv_general_dilated``
    with respect to its input (kernel flipped spatially, in/out features swapped)."""
    lshape, rshape = bu.shape_of(lhs), bu.shape_of(rhs)
    nd = len(lshape)
    if nd != len(rshape) or nd < 2:
        raise TypeError(f"conv_transpose requires operands of equal rank >= 2, got shapes "
                        f"{tuple(lshape)} and {tuple(rshape)}.")
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_DEFAULT_DNUMS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULT_DNUMS[nd]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    strides = _int_tuple("strides", strides, nd - 2)
    rhs_dilation = _int_tuple("rhs_dilation", rhs_dilation, nd - 2)
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or explicit "
                             f"pairs, got {padding!r}.")
        k = _dilate_shape([rshape[d] for d in dn.rhs_spec[2:]], rhs_dilation)
        padding = [_conv_transpose_padding(kk, s, padding) for kk, s in zip(k, strides)]
    if transpose_kernel:
        rhs = shape_ops.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = shape_ops.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), padding, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches that ``conv_general_dilated`` would multiply with a kernel of spatial shape
    ``filter_shape``, flattened into the output feature dimension (channel-major, then the
    filter positions in the rhs spec's spatial order)."""
    lshape = bu.shape_of(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(lshape, (1, 1) + filter_shape, dimension_numbers)
    dt = aval_of(lhs).dtype
    size = math.prod(filter_shape)
    channels = lshape[dn.lhs_spec[1]]
    # one-hot kernel: output feature c * size + s copies input feature c at filter position s
    eye = np.eye(size, dtype=dt).reshape((size, 1) + filter_shape)
    kernel = np.tile(eye, (channels,) + (1,) * (len(filter_shape) + 1))
    kernel = np.transpose(kernel, np.argsort(dn.rhs_spec))
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """Locally connected (unshared) convolution: a separate kernel for each output position.
    ``rhs``'s spatial dimensions are the output's; its input-feature dimension holds the input
    features times the filter positions (channel-major)."""
    from pyjax._src.lax import dot as dot_mod
    if isinstance(precision, (tuple, list)):
        lhs_prec, rhs_prec = precision
    else:
        lhs_prec = rhs_prec = precision
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision=lhs_prec)
    lspec, rspec, ospec = conv_dimension_numbers(bu.shape_of(lhs),
                                                 (1, 1) + tuple(filter_shape),
                                                 dimension_numbers)
    lhs_b = list(ospec[2:])
    rhs_b = [rspec[2:][i] for i in sorted(range(len(lhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    out = dot_mod.dot_general(patches, rhs, (((ospec[1],), (rspec[1],)),
                                             (tuple(lhs_b), tuple(rhs_b))),
                              precision=rhs_prec)
    # out is (out spatial in sorted order, batch, out features); move the last two into place
    nd = len(bu.shape_of(out))
    src = list(range(nd - 2))
    perm = [None] * nd
    perm[ospec[0]], perm[ospec[1]] = nd - 2, nd - 1
    rest = iter(src)
    perm = [p if p is not None else next(rest) for p in perm]
    return shape_ops.transpose(out, tuple(perm))
