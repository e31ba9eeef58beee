"""``dot_general`` and the functions built on it (``dot``, ``batch_matmul``), plus ``Precision``.

The result's dimensions are ordered (batch, lhs free, rhs free), as in JAX and StableHLO.
Operands must have equal dtypes (``jnp.dot``/``jnp.matmul`` promote before calling);
``preferred_element_type`` sets the result dtype (int8 x int8 -> int32, bf16 -> f32, ...).
"""
from __future__ import annotations

import enum

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.config import config
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.sharded_array import ShardedShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import dot_algorithms
from pyjax._src.lax import shape_ops
from pyjax._src.lax import ad_util
from pyjax._src.lax.ad_util import is_undefined_primal, zero_cts
from pyjax._src.lax.base import aval_of, coerce_scalar, is_python_scalar
from pyjax._src.lax.elementwise import convert_element_type

__all__ = ["Precision", "dot_general", "dot", "batch_matmul"]


class Precision(enum.Enum):
    """Matmul precision (``lax.Precision``), lowered as the dot's ``precision_config``. XLA:CPU
    computes float32 dots in float32 whatever it says (as it does for JAX)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __repr__(self):
        return f"Precision.{self.name}"

    __str__ = __repr__


def canonicalize_precision(precision):
    """None, one precision (for both operands) or a pair, as None or a pair of ``Precision``.
    None takes the ``jax_default_matmul_precision`` config (as JAX)."""
    if precision is None:
        precision = config.jax_default_matmul_precision
    if precision is None:
        return None
    if isinstance(precision, (Precision, str)):
        p = Precision(precision)
        return (p, p)
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return tuple(Precision(p) if p is not None else Precision.DEFAULT for p in precision)
    raise ValueError(f"Precision argument must be None, a string in {{'default', 'high', "
                     f"'highest'}}, a lax.Precision value or a tuple of two lax.Precision "
                     f"values or strings; got {precision!r}.")


# ---- abstract evaluation ----

def _check_dims(side, dims, ndim, what):
    for d in dims:
        if not 0 <= d < ndim:
            raise TypeError(f"dot_general requires {side} {what} dimension numbers to be "
                            f"nonnegative and less than the number of axes of the {side} value, "
                            f"got {side}_{what}_dimensions of {tuple(dims)} for {side} of rank "
                            f"{ndim}")
    if len(set(dims)) != len(dims):
        raise TypeError(f"dot_general requires no repeated {side} {what} dimensions, got "
                        f"{tuple(dims)}")


def _validate_preferred(in_dt, pref):
    if dtypes.is_bool(in_dt):
        if not dtypes.is_bool(pref):
            raise TypeError("dot_general of bool operands takes no preferred_element_type other "
                            f"than bool, got {pref.name}")
        return
    ok = ((dtypes.is_integer(in_dt) and (dtypes.is_integer(pref) or dtypes.is_floating(pref)))
          or (dtypes.is_floating(in_dt) and dtypes.is_floating(pref))
          or (dtypes.is_complex(in_dt) and dtypes.is_complex(pref)))
    if not ok:
        raise TypeError(
            f"Input type {in_dt.name} is incompatible with `preferred_element_type` "
            f"{pref.name}. The compatible combinations of (input_type, preferred_element_type) "
            "are (integral, integral), (integral, floating), (floating, floating), "
            "(complex, complex).")
    if dtypes.is_integer(in_dt) and dtypes.is_integer(pref):
        if dtypes.is_signed(in_dt) != dtypes.is_signed(pref):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            f"original type, got {pref.name} for inputs of type {in_dt.name}.")
        if pref.itemsize < in_dt.itemsize:
            raise TypeError("`preferred_element_type` must not be narrower than the original "
                            f"type, got preferred_element_type of {pref.name} for result type "
                            f"of {in_dt.name}.")


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.dot_general requires arguments to have the same dtypes, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}. (Tip: jnp.dot and jnp.matmul "
                        "promote their operands' dtypes.)")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {tuple(lb)} and rhs_batch {tuple(rb)}.")
    if len(lc) != len(rc):
        raise TypeError("dot_general requires equal numbers of lhs_contracting and "
                        f"rhs_contracting dimensions, got {tuple(lc)} and {tuple(rc)}.")
    _check_dims("lhs", lb, lhs.ndim, "batch")
    _check_dims("rhs", rb, rhs.ndim, "batch")
    _check_dims("lhs", lc, lhs.ndim, "contracting")
    _check_dims("rhs", rc, rhs.ndim, "contracting")
    if set(lb) & set(lc):
        raise TypeError("dot_general requires lhs batch dimensions to be disjoint from its "
                        f"contracting dimensions, got lhs_batch {tuple(lb)} and "
                        f"lhs_contracting {tuple(lc)}.")
    if set(rb) & set(rc):
        raise TypeError("dot_general requires rhs batch dimensions to be disjoint from its "
                        f"contracting dimensions, got rhs_batch {tuple(rb)} and "
                        f"rhs_contracting {tuple(rc)}.")
    lb_shape = tuple(lhs.shape[d] for d in lb)
    rb_shape = tuple(rhs.shape[d] for d in rb)
    if lb_shape != rb_shape:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {lb_shape} and {rb_shape}.")
    lc_shape = tuple(lhs.shape[d] for d in lc)
    rc_shape = tuple(rhs.shape[d] for d in rc)
    if lc_shape != rc_shape:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lc_shape} and {rc_shape}.")
    lfree = tuple(s for i, s in enumerate(lhs.shape) if i not in lb and i not in lc)
    rfree = tuple(s for i, s in enumerate(rhs.shape) if i not in rb and i not in rc)
    dt = lhs.dtype
    weak = lhs.weak_type and rhs.weak_type
    if preferred_element_type is not None:
        pref = np.dtype(preferred_element_type)
        _validate_preferred(dt, pref)
        weak = weak and pref == dt
        dt = pref
    return ShapedArray(lb_shape + lfree + rfree, dt, weak)


# ---- batching (vmap): the batch axis becomes a batch dimension or a free dimension ----

def _dot_general_batch(args, dims, *, dimension_numbers, precision, preferred_element_type,
                       out_sharding=None):
    (lhs, rhs), (dl, dr) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = dict(precision=precision, preferred_element_type=preferred_element_type,
                  out_sharding=out_sharding)

    def shift(ds, d):
        return tuple(bu.to_batched_axis(i, d) for i in ds)
    if dl is not bu.not_mapped and dr is not bu.not_mapped:
        dn = ((shift(lc, dl), shift(rc, dr)), ((dl,) + shift(lb, dl), (dr,) + shift(rb, dr)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
    if dl is not bu.not_mapped:  # a free dimension of lhs: (batch, lhs free, rhs free)
        lc2, lb2 = shift(lc, dl), shift(lb, dl)
        before = sum(1 for i in range(dl) if i not in lc2 and i not in lb2)
        dn = ((lc2, rc), (lb2, rb))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), len(lb) + before
    rc2, rb2 = shift(rc, dr), shift(rb, dr)
    lhs_free = len(bu.shape_of(lhs)) - len(lc) - len(lb)
    before = sum(1 for i in range(dr) if i not in rc2 and i not in rb2)
    dn = ((lc, rc2), (lb, rb2))
    return (dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params),
            len(lb) + lhs_free + before)


# ---- lowering ----

def _dims_attr(lb, rb, lc, rc):
    fields = [("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
              ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)]
    body = ", ".join(f"{k} = [{', '.join(str(int(d)) for d in v)}]" for k, v in fields if v)
    return f"#stablehlo.dot<{body}>"


def _convert(ctx, x, dt):
    if x.aval.dtype == dt:
        return x
    if dtypes.is_bool(dt):
        zero = base.broadcast_operand_lowering(ctx, base.zeros_like_value(ctx, x.aval),
                                               x.aval.shape)
        return base.compare(ctx, x, zero, "NE", x.aval.update(dtype=dt))
    return ctx.op("stablehlo.convert", [x], x.aval.update(dtype=dt))


# YNNPACK (the CPU plugin build pyjax prefers) takes a product's left operand only when it is
# contracted on its minor dimension; XLA sends the others (a weight gradient, xᵀ·g, contracts
# both operands on their leading batch axes) to Eigen, whose oneDNN GEMM generates its kernels
# on first use (~21 ms once per process, the bulk of a warm-cache first call) and, in steady
# state, is no faster. Written-out transposes behind an optimization barrier (XLA folds a bare
# transpose back into the product) give YNNPACK all of an MLP's products: the SGD step
# 1.65 -> 1.43-1.60 ms, its warm-cache first call ~35 -> ~22 ms (docs/first_call.md).
def _row_major_operands(ctx, lhs, rhs, lc, rc, lb):
    """``(lhs, rhs, lc, rc)`` with the transposes written out (a 2-D product whose result is
    the original one's, reshaped), or None when the
    product is left as it is: only float32 products without batch dimensions, on the CPU with
    YNNPACK, whose left operand is contracted on leading dimensions (and then the right one
    too, or XLA swaps the operands back)."""
    if (ctx.platform != "cpu" or lb or lhs.aval.dtype != np.float32
            or rhs.aval.dtype != np.float32 or _spmd()
            or ShardedShapedArray in (type(lhs.aval), type(rhs.aval), type(ctx.avals_out[0]))):
        return None
    k = len(lc)
    if not k or tuple(lc) != tuple(range(k)) or lhs.aval.ndim == k:
        return None
    from pyjax._src import runtime  # (lowering only: the plugin decides)
    if not runtime.cpu_dots_want_row_major():
        return None
    both = tuple(rc) == tuple(range(k)) and rhs.aval.ndim > k
    if not both and not (lhs.aval.ndim == 2 and rhs.aval.ndim == 2):
        return None
    lhs = _transposed_2d(ctx, lhs, k)
    if both:
        return lhs, _transposed_2d(ctx, rhs, k), (1,), (1,)
    return lhs, rhs, (1,), tuple(rc)


def _spmd():
    from pyjax._src.lax import collective_lowering
    return collective_lowering.in_spmd_lowering()


def _transposed_2d(ctx, x, k):
    """``x`` with its ``k`` leading dimensions merged (K) and the rest merged (M), as a
    written-out M x K array."""
    shape = x.aval.shape
    kk, m = int(np.prod(shape[:k])), int(np.prod(shape[k:]))
    if len(shape) != 2:
        x = ctx.op("stablehlo.reshape", [x], x.aval.update(shape=(kk, m)))
    t_aval = x.aval.update(shape=(m, kk))
    t = ctx.op("stablehlo.transpose", [x], t_aval, attrs={"permutation": "array<i64: 1, 0>"})
    (t,) = ctx.op("stablehlo.optimization_barrier", [t], [t_aval])
    return t


def _dot_general_lower(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                       out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out = ctx.avals_out[0]
    final = out
    row_major = _row_major_operands(ctx, lhs, rhs, lc, rc, lb)
    if row_major is not None:
        lhs, rhs, lc, rc = row_major
        n = rhs.aval.shape[1 - rc[0]]
        out = out.update(shape=(lhs.aval.shape[0], n))
    in_dt = lhs.aval.dtype
    # Compute in the wider of the input and result dtypes (converting first is exact when the
    # result is wider); bool is computed as an int32 count of true products, then tested != 0.
    if dtypes.is_bool(in_dt):
        comp_dt = np.dtype(np.int32)
    elif out.dtype.itemsize >= in_dt.itemsize or not dtypes.is_floating(out.dtype):
        comp_dt = out.dtype
    else:
        comp_dt = in_dt
    lhs, rhs = _convert(ctx, lhs, comp_dt), _convert(ctx, rhs, comp_dt)
    attrs = {"dot_dimension_numbers": _dims_attr(lb, rb, lc, rc)}
    if precision is not None:
        attrs["precision_config"] = "[" + ", ".join(
            f"#stablehlo<precision {Precision(p).name}>" for p in precision) + "]"
    res = ctx.op("stablehlo.dot_general", [lhs, rhs], out.update(dtype=comp_dt), attrs=attrs)
    res = _convert(ctx, res, out.dtype)
    if out.shape != final.shape:
        res = ctx.op("stablehlo.reshape", [res], final)
    return res


# ---- differentiation: bilinear, so the JVP is the product rule and each operand transposes ----

from pyjax._src.core.sharding import NamedSharding, PartitionSpec  # noqa: E402
from pyjax._src.core.sharding_rules import (  # noqa: E402
    as_named_sharding, explicit_spec, place_if_eager)


def _transpose_lhs(ct, x_aval, y, dimension_numbers, precision, swap_ans):
    """The cotangent of ``x`` in ``dot_general(x, y)`` (``swap_ans``: of ``y`` in
    ``dot_general(y, x)``, whose result has ``x``'s free dimensions last)."""
    (xc, yc), (xb, yb) = dimension_numbers
    y_aval = aval_of(y)
    x_kept = [d for d in range(x_aval.ndim) if d not in xc and d not in xb]
    y_kept = [d for d in range(y_aval.ndim) if d not in yc and d not in yb]
    nb = len(xb)
    start = nb if swap_ans else nb + len(x_kept)
    ct_y = tuple(range(start, start + len(y_kept)))
    dims = ((ct_y, tuple(y_kept)), (tuple(range(nb)), tuple(yb)))
    # Compute in the cotangent's dtype (the result's, which preferred_element_type may widen).
    if y_aval.dtype != aval_of(ct).dtype:
        y = convert_element_type(y, aval_of(ct).dtype)
    # explicit sharding: the cotangent has the primal's type, as JAX passes it (the
    # contracting dimensions of ct and y are often both split, e.g. a data-parallel batch)
    typed = explicit_spec(aval_of(ct)) is not None or explicit_spec(y_aval) is not None
    r = dot_general_p.bind(ct, y, dimension_numbers=dims, precision=precision,
                           preferred_element_type=None,
                           out_sharding=_transposed_sharding(x_aval, xb, xc, x_kept, yc,
                                                             aval_of(ct), y_aval)
                           if typed else None)
    # r's dimensions are x's batch, kept, then contracting dimensions in the order of y's.
    order = list(xb) + x_kept + [xc[i] for i in np.argsort(yc)]
    r = shape_ops.transpose(r, tuple(int(i) for i in np.argsort(order)))
    if aval_of(r).dtype != x_aval.dtype:
        r = convert_element_type(r, x_aval.dtype)
    return r


def _transposed_sharding(x_aval, xb, xc, x_kept, yc, ct_aval, y_aval):
    """The out_sharding of the cotangent product: ``x``'s own spec, in the order of the
    product's dimensions (batch, kept, contracting in y's order)."""
    import numpy as _np
    spec = explicit_spec(x_aval) or ((),) * x_aval.ndim
    order = list(xb) + list(x_kept) + [xc[i] for i in _np.argsort(yc)]
    mesh = next(a.sharding.mesh for a in (x_aval, ct_aval, y_aval)
                if explicit_spec(a) is not None)
    parts = [None if not spec[d] else (spec[d][0] if len(spec[d]) == 1 else spec[d])
             for d in order]
    return NamedSharding(mesh, PartitionSpec(*parts))


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision, preferred_element_type,
                           out_sharding=None):
    if is_undefined_primal(x) and is_undefined_primal(y):
        raise ValueError("dot_general is linear in one operand at a time, not both")
    if type(ct) is Zero:
        return zero_cts([x, y])
    if is_undefined_primal(x):
        return [_transpose_lhs(ct, x.aval, y, dimension_numbers, precision, False), None]
    (xc, yc), (xb, yb) = dimension_numbers
    swapped = ((yc, xc), (yb, xb))
    return [None, _transpose_lhs(ct, y.aval, x, swapped, precision, True)]


dot_general_p = Primitive("dot_general", abstract_eval=_dot_general_abstract_eval,
                          lower=_dot_general_lower, linear=True, jvp=ad_util.bilinear_jvp(),
                          transpose=_dot_general_transpose, batch=_dot_general_batch)


# ---- the lax-level functions ----

def _as_dims(x, what):
    try:
        dims = tuple(x)
    except TypeError:
        raise TypeError(f"dot_general {what} must be a sequence of ints, got {x!r}") from None
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"dot_general {what} must be a sequence of ints, got {x!r}")
    return tuple(int(d) for d in dims)


def _canonical_dimension_numbers(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("dot_general dimension_numbers must be ((lhs_contracting, "
                        "rhs_contracting), (lhs_batch, rhs_batch)), got "
                        f"{dimension_numbers!r}") from None
    return ((_as_dims(lc, "lhs_contracting_dimensions"),
             _as_dims(rc, "rhs_contracting_dimensions")),
            (_as_dims(lb, "lhs_batch_dimensions"), _as_dims(rb, "rhs_batch_dimensions")))


def _match_weak(lhs, rhs):
    """A weakly typed operand (e.g. a Python scalar) takes the other operand's dtype."""
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.dtype == ra.dtype:
        return lhs, rhs

    def cast(x, dt):
        if is_python_scalar(x):
            return coerce_scalar(x, dt)
        return convert_element_type(x, dt)
    if la.weak_type and not ra.weak_type:
        return cast(lhs, ra.dtype), rhs
    if ra.weak_type and not la.weak_type:
        return lhs, cast(rhs, la.dtype)
    return lhs, rhs


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """General dot product (``lax.dot_general``).

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
    The result has the batch dimensions first, then the free dimensions of ``lhs``, then those
    of ``rhs``. Operands must have equal dtypes; ``preferred_element_type`` sets the result
    dtype. ``precision`` is accepted and ignored on CPU.
    """
    out_sharding = as_named_sharding(out_sharding, "dot_general")
    dims = _canonical_dimension_numbers(dimension_numbers)
    pref = (None if preferred_element_type is None
            else dtypes.canonicalize_dtype(preferred_element_type))
    lhs, rhs = _match_weak(lhs, rhs)
    if dot_algorithms.is_algorithm(precision):  # honoured only where it is the CPU's dot
        dot_algorithms.check_algorithm(precision, aval_of(lhs).dtype, aval_of(rhs).dtype)
        precision = None
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                             precision=canonicalize_precision(precision),
                             preferred_element_type=pref, out_sharding=out_sharding)
    return out if out_sharding is None else place_if_eager(out, out_sharding)


def dot(lhs, rhs, precision=None, preferred_element_type=None, out_sharding=None):
    """Vector/matrix product (``lax.dot``): both operands of rank 1 or 2, contracting the last
    dimension of ``lhs`` with the first of ``rhs``."""
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
        raise TypeError(f"Incompatible shapes for dot: got {ls} and {rs}.")
    return dot_general(lhs, rhs, (((len(ls) - 1,), (0,)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type,
                       out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product: ``lhs[..., i, j] @ rhs[..., j, k]`` with equal leading dims."""
    ln, rn = aval_of(lhs).ndim, aval_of(rhs).ndim
    if min(ln, rn) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ln}, {rn}")
    if ln != rn:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {ln}, {rn}")
    batch = tuple(range(ln - 2))
    return dot_general(lhs, rhs, (((ln - 1,), (rn - 2,)), (batch, batch)), precision=precision)
