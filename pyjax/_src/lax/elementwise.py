"""Elementwise primitives, generated from one table row per op, plus their ``lax`` wrappers."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from pyjax._src.core import axes, dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.primitive import Primitive, with_self
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, lower_fun
from pyjax._src.lax import ad_util
from pyjax._src.lax import base
from pyjax._src.lax import key_ops
from pyjax._src.lax import batch_util
from pyjax._src.lax.base import aval_of, coerce_scalar, is_python_scalar

FLOAT, COMPLEX, INT, UINT, BOOL = "f", "c", "i", "u", "b"
INEXACT = "fc"
NUM = "fciu"
ALL = "fciub"
INTEGRAL = "iu"
LOGICAL = "iub"


# ---- abstract evaluation ----

def _same_dtype_rule(name, kinds, out_dtype=None):
    def abstract_eval(*avals, **params):
        base.check_kinds(name, avals, kinds)
        base.check_same_dtypes(name, avals)
        shape = base.broadcasting_shape(name, avals)
        dt = avals[0].dtype if out_dtype is None else out_dtype(avals[0].dtype)
        return ShapedArray(shape, dt, base.all_weak(avals) and out_dtype is None)
    return abstract_eval


# ---- lowering ----

def _std_lower(op_name):
    def lower(ctx, *args, **params):
        out = ctx.avals_out[0]
        args = [base.broadcast_operand_lowering(ctx, a, out.shape) for a in args]
        return ctx.op(op_name, args, out)
    return lower


def _with_operands_broadcast(fn):
    def lower(ctx, *args, **params):
        out = ctx.avals_out[0]
        args = [base.broadcast_operand_lowering(ctx, a, out.shape) for a in args]
        return fn(ctx, *args, **params)
    return lower


def _exp2(x):  # lowered through lower_fun: exp(x * ln 2)
    return exp_p.bind(mul_p.bind(x, _c(x, np.log(2.0))))


def _square_lower(ctx, x):
    return ctx.op("stablehlo.multiply", [x, x], ctx.avals_out[0])


# The plugin's float32 chlo.erf clamps its argument near 3.83 and so never reaches 1:
# erf(inf) came out 0.99999982 (JAX: 1.0), which put truncated_normal's far-tail draws at
# the wrong end of their interval. Past 3.7 the result is what 1 - erfc(|x|) gives in
# float32 (erfc matches JAX bit for bit): a step down to 1 in ulps of 1, monotone, never
# above 1 (JAX's own chlo.erf there scatters between 1 - 7 ulps and 1 + 1 ulp). The steps
# are written out as thresholds (found by evaluating 1 - erfc at every float32 from 3.7 to
# 10: 1 - 3 ulps, then 1 - 2 ulps from 0x406dc240, 1 - 1 ulp from 0x4071faab, 1 from
# 0x407ad445), so the far tail costs a few compares instead of an erfc per element (erf of
# 10^6 floats: 785 -> 345 us, 152 with 512-bit vectors; JAX 222-235); below 3.7, chlo.erf
# gives JAX's bits.
_ERF_VIA_ERFC_FROM = 3.7
_ERF_TAIL_STEPS = ((0x407ad445, 1.0), (0x4071faab, 1 - 2.0 ** -24),
                   (0x406dc240, 1 - 2 * 2.0 ** -24))
_ERF_TAIL_FIRST = 1 - 3 * 2.0 ** -24


def _erf_lower(ctx, x):
    out = ctx.avals_out[0]
    erf = ctx.op("chlo.erf", [x], out)
    if out.dtype != np.float32:
        return erf

    def const(v):
        return ctx.constant(np.full(out.shape, v, np.float32), out)
    ax = ctx.op("stablehlo.abs", [x], out)
    tail = const(_ERF_TAIL_FIRST)
    for threshold, value in reversed(_ERF_TAIL_STEPS):  # the lowest step first
        at = base.compare(ctx, ax, const(np.int32(threshold).view(np.float32)), "GE")
        tail = ctx.op("stablehlo.select", [at, const(value), tail], out)
    tail = ctx.op("stablehlo.multiply", [ctx.op("stablehlo.sign", [x], out), tail], out)
    far = base.compare(ctx, ax, const(_ERF_VIA_ERFC_FROM), "GT")
    return ctx.op("stablehlo.select", [far, tail, erf], out)


def _conj_lower(ctx, x):
    out = ctx.avals_out[0]
    if not dtypes.is_complex(x.aval.dtype):
        x = ctx.op("stablehlo.convert", [x], x.aval.update(dtype=out.dtype))
    real_aval = out.update(dtype=dtypes.to_real_dtype(out.dtype))
    re = ctx.op("stablehlo.real", [x], real_aval)
    im = ctx.op("stablehlo.imag", [x], real_aval)
    im = ctx.op("stablehlo.negate", [im], real_aval)
    return ctx.op("stablehlo.complex", [re, im], out)


def _round_lower(ctx, x, *, rounding_method):
    op = "stablehlo.round_nearest_even" if int(rounding_method) == 1 else \
        "stablehlo.round_nearest_afz"
    return ctx.op(op, [x], ctx.avals_out[0])


def _integer_pow(x, *, y):
    """x ** y by square-and-multiply, from mul and div (lowered through lower_fun)."""
    if y == 0:
        return _full(x, 1)
    n, acc, power = builtins.abs(y), None, x
    while n:
        if n & 1:
            acc = power if acc is None else mul_p.bind(acc, power)
        n >>= 1
        if n:
            power = mul_p.bind(power, power)
    return div_p.bind(_c(x, 1), acc) if y < 0 else acc


def _pow_lower(ctx, x, y):
    out = ctx.avals_out[0]
    x = base.broadcast_operand_lowering(ctx, x, out.shape)
    y = base.broadcast_operand_lowering(ctx, y, out.shape)
    if y.aval.dtype != out.dtype:
        y = ctx.op("stablehlo.convert", [y], y.aval.update(dtype=out.dtype))
    return ctx.op("stablehlo.power", [x, y], out)


def _integer_division_lower(op_name):
    """``div``/``rem`` with XLA's results for a zero divisor (``x / 0`` is all ones: -1, or
    the maximum unsigned value; ``x % 0`` is ``x``), computed without dividing by zero: XLA's
    constant folder divides natively and kills the process on an integer division by zero."""
    std = _std_lower(op_name)

    def lower(ctx, x, y):
        out = ctx.avals_out[0]
        if out.dtype.kind not in "iu":
            return std(ctx, x, y)
        x = base.broadcast_operand_lowering(ctx, x, out.shape)
        y = base.broadcast_operand_lowering(ctx, y, out.shape)
        scalar = ShapedArray((), out.dtype)
        zero = base.broadcast_operand_lowering(ctx, ctx.constant(np.zeros((), out.dtype),
                                                                 scalar), out.shape)
        one = base.broadcast_operand_lowering(ctx, ctx.constant(np.ones((), out.dtype),
                                                                scalar), out.shape)
        is_zero = base.compare(ctx, y, zero, "EQ", out.update(dtype=np.dtype(bool)))
        safe = ctx.op("stablehlo.select", [is_zero, one, y], out)
        result = ctx.op(op_name, [x, safe], out)
        if op_name == "stablehlo.remainder":
            return ctx.op("stablehlo.select", [is_zero, x, result], out)
        all_ones = base.broadcast_operand_lowering(
            ctx, ctx.constant(np.array(-1).astype(out.dtype), scalar), out.shape)
        return ctx.op("stablehlo.select", [is_zero, all_ones, result], out)
    return lower


def _compare_lower(direction):
    def lower(ctx, x, y):
        out = ctx.avals_out[0]
        x = base.broadcast_operand_lowering(ctx, x, out.shape)
        y = base.broadcast_operand_lowering(ctx, y, out.shape)
        return base.compare(ctx, x, y, direction, out)
    return lower


def _abs_lower(ctx, x):
    return ctx.op("stablehlo.abs", [x], ctx.avals_out[0])


def _is_finite_lower(ctx, x):
    return ctx.op("stablehlo.is_finite", [x], ctx.avals_out[0])


def _not_lower(ctx, x):
    return ctx.op("stablehlo.not", [x], ctx.avals_out[0])


def _sign_lower(ctx, x):
    out = ctx.avals_out[0]
    if dtypes.is_unsigned(out.dtype):  # stablehlo.sign takes signed ints only
        zero = base.broadcast_operand_lowering(ctx, base.zeros_like_value(ctx, out), out.shape)
        ne = base.compare(ctx, x, zero, "NE")
        return ctx.op("stablehlo.convert", [ne], out)
    return ctx.op("stablehlo.sign", [x], out)


# ---- the table ----
# (name, kinds, lowering, out_dtype transform or None)
_unary = [
    ("neg", NUM, _std_lower("stablehlo.negate"), None),
    ("sign", NUM, _sign_lower, None),
    ("floor", FLOAT, _std_lower("stablehlo.floor"), None),
    ("ceil", FLOAT, _std_lower("stablehlo.ceil"), None),
    ("is_finite", FLOAT, _is_finite_lower, lambda d: np.dtype(bool)),
    ("exp", INEXACT, _std_lower("stablehlo.exponential"), None),
    ("exp2", INEXACT, lower_fun(_exp2), None),
    ("log", INEXACT, _std_lower("stablehlo.log"), None),
    ("log1p", INEXACT, _std_lower("stablehlo.log_plus_one"), None),
    ("expm1", INEXACT, _std_lower("stablehlo.exponential_minus_one"), None),
    ("tanh", INEXACT, _std_lower("stablehlo.tanh"), None),
    ("logistic", INEXACT, _std_lower("stablehlo.logistic"), None),
    ("sin", INEXACT, _std_lower("stablehlo.sine"), None),
    ("cos", INEXACT, _std_lower("stablehlo.cosine"), None),
    ("tan", INEXACT, _std_lower("chlo.tan"), None),
    ("asin", INEXACT, _std_lower("chlo.asin"), None),
    ("acos", INEXACT, _std_lower("chlo.acos"), None),
    ("atan", INEXACT, _std_lower("chlo.atan"), None),
    ("sinh", INEXACT, _std_lower("chlo.sinh"), None),
    ("cosh", INEXACT, _std_lower("chlo.cosh"), None),
    ("asinh", INEXACT, _std_lower("chlo.asinh"), None),
    ("acosh", INEXACT, _std_lower("chlo.acosh"), None),
    ("atanh", INEXACT, _std_lower("chlo.atanh"), None),
    ("sqrt", INEXACT, _std_lower("stablehlo.sqrt"), None),
    ("rsqrt", INEXACT, _std_lower("stablehlo.rsqrt"), None),
    ("cbrt", FLOAT, _std_lower("stablehlo.cbrt"), None),
    ("square", NUM, _square_lower, None),
    ("erf", FLOAT, _with_operands_broadcast(lambda ctx, x: _erf_lower(ctx, x)), None),
    ("erfc", FLOAT, _std_lower("chlo.erfc"), None),
    ("erf_inv", FLOAT, lambda ctx, x: lgamma_erfinv.lower_erf_inv(ctx, x), None),
    ("lgamma", FLOAT, lambda ctx, x: lgamma_erfinv.lower_lgamma(ctx, x), None),
    ("digamma", FLOAT, _std_lower("chlo.digamma"), None),
    ("abs", NUM, _abs_lower, lambda d: dtypes.to_real_dtype(d)),
    ("not", LOGICAL, _not_lower, None),
    ("population_count", INTEGRAL, _std_lower("stablehlo.popcnt"), None),
    ("clz", INTEGRAL, _std_lower("stablehlo.count_leading_zeros"), None),
    ("real", COMPLEX, _std_lower("stablehlo.real"), lambda d: dtypes.to_real_dtype(d)),
    ("imag", COMPLEX, _std_lower("stablehlo.imag"), lambda d: dtypes.to_real_dtype(d)),
    ("conj", INEXACT, _conj_lower, lambda d: dtypes.to_complex_dtype(d)),
]

_binary = [
    ("add", NUM, _std_lower("stablehlo.add"), None),
    ("sub", NUM, _std_lower("stablehlo.subtract"), None),
    ("mul", NUM, _std_lower("stablehlo.multiply"), None),
    ("div", NUM, _integer_division_lower("stablehlo.divide"), None),
    ("rem", "fiu", _integer_division_lower("stablehlo.remainder"), None),
    ("max", ALL, _std_lower("stablehlo.maximum"), None),
    ("min", ALL, _std_lower("stablehlo.minimum"), None),
    ("nextafter", FLOAT, _std_lower("chlo.next_after"), None),
    ("atan2", INEXACT, _std_lower("stablehlo.atan2"), None),
    ("and", LOGICAL, _std_lower("stablehlo.and"), None),
    ("or", LOGICAL, _std_lower("stablehlo.or"), None),
    ("xor", LOGICAL, _std_lower("stablehlo.xor"), None),
    ("shift_left", INTEGRAL, _std_lower("stablehlo.shift_left"), None),
    ("shift_right_arithmetic", INTEGRAL, _std_lower("stablehlo.shift_right_arithmetic"), None),
    ("shift_right_logical", INTEGRAL, _std_lower("stablehlo.shift_right_logical"), None),
    ("complex", FLOAT, _std_lower("stablehlo.complex"), lambda d: dtypes.to_complex_dtype(d)),
]

_comparisons = [("eq", "EQ", ALL), ("ne", "NE", ALL), ("lt", "LT", "fiub"),
                ("le", "LE", "fiub"), ("gt", "GT", "fiub"), ("ge", "GE", "fiub")]


# ---- differentiation rules: a jvp for every op, a transpose for the linear ones ----
# Signatures in core/rules.py. Nonlinear work happens on the primals (computed now, kept as
# residuals); tangents only meet linear ops (mul by a residual, add, neg, select, ...).

def _c(x, v):
    """The constant ``v`` as a NumPy scalar of ``x``'s dtype."""
    return np.array(v, aval_of(x).dtype)[()]


def _bcast_to(t, shape):
    if aval_of(t).shape == tuple(shape):
        return t
    return shape_ops.broadcast_in_dim_p.bind(t, shape=tuple(shape), broadcast_dimensions=(),
                                             sharding=None)


def _unbcast(ct, aval):
    """Sum a cotangent down to a rank-0 operand that the op broadcast implicitly."""
    if aval_of(ct).shape == aval.shape:
        return ct
    return reductions.reduce_sum_p.bind(ct, axes=tuple(range(len(aval_of(ct).shape))))


def _jvp_unary(tangent):
    """jvp of y = f(x): ``tangent(t, x, y)`` (linear in t)."""
    def make(prim):
        def jvp(primals, tangents, **params):
            (x,), (t,) = primals, tangents
            y = prim.bind(x, **params)
            if ad_util.is_zero(t):
                return y, ad_util.zero_tangent(aval_of(y))
            return y, tangent(t, x, y)
        return jvp
    return with_self(make)


def _jvp_nary(*partials):
    """jvp of y = f(*xs): the sum over operands i of ``partials[i](t_i, y, *xs)``."""
    def make(prim):
        def jvp(primals, tangents, **params):
            y = prim.bind(*primals, **params)
            out = None
            for t, d in zip(tangents, partials):
                if d is not None and type(t) is not ad_util.Zero:
                    ti = d(t, y, *primals)
                    out = ti if out is None else add_p.bind(out, ti)
            if out is None:
                return y, ad_util.zero_tangent(aval_of(y))
            shape = y.aval.shape if type(y) is ArrayImpl else aval_of(y).shape
            return y, out if aval_of(out).shape == shape else _bcast_to(out, shape)
        return jvp
    return with_self(make)


def _full(x, v):
    return _bcast_to(_c(x, v), aval_of(x).shape)


def _replace_zero(x):
    return select_n_p.bind(eq_p.bind(x, _c(x, 0)), x, _full(x, 1))


def _trigamma(x):
    """polygamma(1, x) from lax ops (digamma's derivative): reflection below 1/2, six steps of
    the recurrence, then the asymptotic series."""
    mul, add, sub, div, one = mul_p.bind, add_p.bind, sub_p.bind, div_p.bind, _c(x, 1)
    reflect = lt_p.bind(x, _c(x, 0.5))
    z = select_n_p.bind(reflect, x, sub(one, x))
    acc = div(one, mul(z, z))
    for k in range(1, 6):
        zk = add(z, _c(x, k))
        acc = add(acc, div(one, mul(zk, zk)))
    iw = div(one, add(z, _c(x, 6)))
    iw2 = mul(iw, iw)  # 1/w + 1/2w^2 + 1/6w^3 - 1/30w^5 + 1/42w^7 - 1/30w^9
    tail = sub(_c(x, 1 / 6), mul(iw2, sub(_c(x, 1 / 30), mul(iw2, sub(_c(x, 1 / 42), mul(
        iw2, _c(x, 1 / 30)))))))
    psi1 = add(acc, add(add(iw, mul(iw2, _c(x, 0.5))), mul(mul(iw2, iw), tail)))
    s = sin_p.bind(mul(x, _c(x, np.pi)))
    out = select_n_p.bind(reflect, psi1, sub(div(_c(x, np.pi ** 2), mul(s, s)), psi1))
    # the poles 0, -1, -2, ...: sin(pi x) is not exactly 0 there, so say inf (as JAX)
    pole = and_p.bind(le_p.bind(x, _c(x, 0)), eq_p.bind(x, floor_p.bind(x)))
    return select_n_p.bind(pole, out, _full(x, np.inf))


def _abs_tangent(t, x, y):
    if dtypes.is_complex(aval_of(x).dtype):
        mag = _replace_zero(convert_element_type(y, aval_of(x).dtype))
        return real_p.bind(mul_p.bind(t, div_p.bind(conj_p.bind(x), mag)))
    return select_n_p.bind(ge_p.bind(x, _c(x, 0)), neg_p.bind(t), t)


def _pow_dx(t, y_out, x, y):
    if dtypes.is_integer(aval_of(y).dtype):
        yf = convert_element_type(y, aval_of(x).dtype)
        jac = mul_p.bind(yf, pow_p.bind(x, sub_p.bind(y, np.array(1, aval_of(y).dtype)[()])))
        jac = select_n_p.bind(eq_p.bind(yf, _c(x, 0)), jac, _full(jac, 0))
    else:
        jac = mul_p.bind(y, pow_p.bind(x, sub_p.bind(y, _c(y, 1))))
    return mul_p.bind(t, jac)


def _max_min_partial(first):
    # JAX's balanced rule: where both operands equal the result each gets half the tangent
    def d(t, ans, x, y):
        a, b = (x, y) if first else (y, x)
        dt = aval_of(ans).dtype
        ea = convert_element_type(eq_p.bind(a, ans), dt)
        eb = convert_element_type(eq_p.bind(b, ans), dt)
        w = mul_p.bind(ea, sub_p.bind(_c(ans, 1), mul_p.bind(eb, _c(ans, 0.5))))
        return mul_p.bind(t, w)
    return d


def _rem_dy(t, ans, x, y):
    q = div_p.bind(x, y)
    trunc = mul_p.bind(sign_p.bind(q), floor_p.bind(abs_p.bind(q)))
    return mul_p.bind(t, neg_p.bind(trunc))


def _div_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = div_p.bind(x, y)
    if ad_util.is_zero(ty):
        t = div_p.bind(tx, y)
    else:
        t = mul_p.bind(ty, out)
        t = neg_p.bind(t) if ad_util.is_zero(tx) else sub_p.bind(tx, t)
        t = div_p.bind(t, y)
    return out, _bcast_to(t, aval_of(out).shape)


def _atan2_partial(first):
    def d(t, ans, x, y):
        den = add_p.bind(mul_p.bind(x, x), mul_p.bind(y, y))
        num = y if first else neg_p.bind(x)
        return mul_p.bind(t, div_p.bind(num, den))
    return d


def _complex_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = complex_p.bind(x, y)
    tx = _c(x, 0) if ad_util.is_zero(tx) else tx
    ty = _c(y, 0) if ad_util.is_zero(ty) else ty
    return out, _bcast_to(complex_p.bind(tx, ty), aval_of(out).shape)


_EXP = {  # unary: name -> tangent(t, x, y)
    "exp": lambda t, x, y: mul_p.bind(t, y),
    "exp2": lambda t, x, y: mul_p.bind(t, mul_p.bind(y, _c(x, np.log(2)))),
    "log": lambda t, x, y: div_p.bind(t, x),
    "log1p": lambda t, x, y: div_p.bind(t, add_p.bind(x, _c(x, 1))),
    "expm1": lambda t, x, y: mul_p.bind(t, add_p.bind(y, _c(x, 1))),
    "tanh": lambda t, x, y: mul_p.bind(t, sub_p.bind(_c(x, 1), mul_p.bind(y, y))),
    "logistic": lambda t, x, y: mul_p.bind(t, mul_p.bind(y, sub_p.bind(_c(x, 1), y))),
    "sin": lambda t, x, y: mul_p.bind(t, cos_p.bind(x)),
    "cos": lambda t, x, y: mul_p.bind(t, neg_p.bind(sin_p.bind(x))),
    "tan": lambda t, x, y: mul_p.bind(t, add_p.bind(_c(x, 1), mul_p.bind(y, y))),
    "asin": lambda t, x, y: mul_p.bind(t, rsqrt_p.bind(sub_p.bind(_c(x, 1), mul_p.bind(x, x)))),
    "acos": lambda t, x, y: mul_p.bind(t, neg_p.bind(
        rsqrt_p.bind(sub_p.bind(_c(x, 1), mul_p.bind(x, x))))),
    "atan": lambda t, x, y: div_p.bind(t, add_p.bind(_c(x, 1), mul_p.bind(x, x))),
    "sinh": lambda t, x, y: mul_p.bind(t, cosh_p.bind(x)),
    "cosh": lambda t, x, y: mul_p.bind(t, sinh_p.bind(x)),
    "asinh": lambda t, x, y: mul_p.bind(t, rsqrt_p.bind(add_p.bind(mul_p.bind(x, x), _c(x, 1)))),
    "acosh": lambda t, x, y: mul_p.bind(t, rsqrt_p.bind(
        mul_p.bind(sub_p.bind(x, _c(x, 1)), add_p.bind(x, _c(x, 1))))),
    "atanh": lambda t, x, y: div_p.bind(t, sub_p.bind(_c(x, 1), mul_p.bind(x, x))),
    "sqrt": lambda t, x, y: div_p.bind(t, mul_p.bind(y, _c(x, 2))),
    "rsqrt": lambda t, x, y: mul_p.bind(t, mul_p.bind(div_p.bind(y, x), _c(x, -0.5))),
    "cbrt": lambda t, x, y: mul_p.bind(t, mul_p.bind(
        integer_pow_p.bind(y, y=-2), _c(x, 1 / 3))),
    "square": lambda t, x, y: mul_p.bind(t, mul_p.bind(x, _c(x, 2))),
    "erf": lambda t, x, y: mul_p.bind(t, mul_p.bind(
        exp_p.bind(neg_p.bind(mul_p.bind(x, x))), _c(x, 2 / np.sqrt(np.pi)))),
    "erfc": lambda t, x, y: mul_p.bind(t, mul_p.bind(
        exp_p.bind(neg_p.bind(mul_p.bind(x, x))), _c(x, -2 / np.sqrt(np.pi)))),
    "erf_inv": lambda t, x, y: mul_p.bind(t, mul_p.bind(
        exp_p.bind(mul_p.bind(y, y)), _c(x, np.sqrt(np.pi) / 2))),
    "lgamma": lambda t, x, y: mul_p.bind(t, digamma_p.bind(x)),
    "digamma": lambda t, x, y: mul_p.bind(t, _trigamma(x)),
    "abs": _abs_tangent,
}

_LINEAR_UNARY = ("neg", "real", "imag", "conj", "reduce_precision", "copy")

_BINARY_PARTIALS = {  # name -> (d/dx, d/dy) as partial(t, out, x, y)
    "add": (lambda t, o, x, y: t, lambda t, o, x, y: t),
    "sub": (lambda t, o, x, y: t, lambda t, o, x, y: neg_p.bind(t)),
    "mul": (lambda t, o, x, y: mul_p.bind(t, y), lambda t, o, x, y: mul_p.bind(x, t)),
    "rem": (lambda t, o, x, y: t, _rem_dy),
    "max": (_max_min_partial(True), _max_min_partial(False)),
    "min": (_max_min_partial(True), _max_min_partial(False)),
    "atan2": (_atan2_partial(True), _atan2_partial(False)),
    "pow": (_pow_dx, lambda t, o, x, y: mul_p.bind(t, mul_p.bind(log_p.bind(_replace_zero(x)), o))),
}

_NOT_DIFFERENTIABLE = {"sign", "floor", "ceil", "round", "is_finite", "not",
                       "population_count", "clz", "nextafter", "and", "or", "xor",
                       "shift_left", "shift_right_arithmetic", "shift_right_logical",
                       "bitcast_convert_type", "eq", "ne", "lt", "le", "gt", "ge"}


def _jvp_rule(name):
    if name in _NOT_DIFFERENTIABLE:
        return NOT_DIFFERENTIABLE
    if name in _LINEAR_UNARY:
        return ad_util.linear_jvp()
    if name in _EXP:
        return _jvp_unary(_EXP[name])
    if name == "div":
        return _div_jvp
    if name == "complex":
        return _complex_jvp
    return _jvp_nary(*_BINARY_PARTIALS[name])


def _t_neg(ct, x):
    return [ad_util.Zero(x.aval) if ad_util.is_zero(ct) else neg_p.bind(ct)]


def _t_add_sub(negate_y):
    def transpose(ct, x, y):
        if ad_util.is_zero(ct):
            return ad_util.zero_cts([x, y])
        out = []
        for a, sign in ((x, False), (y, negate_y)):
            if not ad_util.is_undefined_primal(a):
                out.append(None)
                continue
            c = neg_p.bind(ct) if sign else ct
            out.append(_unbcast(c, a.aval))
        return out
    return transpose


def _t_mul(ct, x, y):
    ux, uy = ad_util.is_undefined_primal(x), ad_util.is_undefined_primal(y)
    if ux and uy:
        raise TypeError("mul of two linear values cannot be transposed (the function being "
                        "transposed is not linear)")
    if ad_util.is_zero(ct):
        return ad_util.zero_cts([x, y])
    if ux:
        return [_unbcast(mul_p.bind(ct, y), x.aval), None]
    return [None, _unbcast(mul_p.bind(x, ct), y.aval)]


def _t_div(ct, x, y):
    if ad_util.is_undefined_primal(y):
        raise TypeError("div with a linear divisor cannot be transposed (the function being "
                        "transposed is not linear)")
    if ad_util.is_zero(ct):
        return [ad_util.Zero(x.aval), None]
    return [_unbcast(div_p.bind(ct, y), x.aval), None]


def _t_real(ct, x):
    return [complex_p.bind(ct, _c(ct, 0))]


def _t_imag(ct, x):
    return [complex_p.bind(_c(ct, 0), neg_p.bind(ct))]


def _t_conj(ct, x):
    if dtypes.is_complex(x.aval.dtype):
        return [conj_p.bind(ct)]
    return [real_p.bind(ct)]


def _t_complex(ct, x, y):
    if ad_util.is_zero(ct):
        return ad_util.zero_cts([x, y])
    return [_unbcast(real_p.bind(ct), x.aval) if ad_util.is_undefined_primal(x) else None,
            _unbcast(imag_p.bind(neg_p.bind(ct)), y.aval)
            if ad_util.is_undefined_primal(y) else None]


def _t_self(prim):
    def transpose(ct, x, **params):
        if ad_util.is_zero(ct):
            return [ad_util.Zero(x.aval)]
        return [prim.bind(ct, **params)]
    return transpose


_TRANSPOSE = {"neg": _t_neg, "add": _t_add_sub(False), "sub": _t_add_sub(True),
              "mul": _t_mul, "div": _t_div, "real": _t_real, "imag": _t_imag,
              "conj": _t_conj, "complex": _t_complex, "copy": with_self(_t_self),
              "reduce_precision": with_self(_t_self)}
_LINEAR = {"neg", "add", "sub", "real", "imag", "conj", "complex", "copy", "reduce_precision",
           "convert_element_type"}

prims: dict[str, Primitive] = {}

for _name, _kinds, _lower, _out in _unary:
    prims[_name] = Primitive(_name, abstract_eval=_same_dtype_rule(_name, _kinds, _out),
                             lower=_lower, batch=batch_util.elementwise_rule(),
                             jvp=_jvp_rule(_name), transpose=_TRANSPOSE.get(_name),
                             linear=_name in _LINEAR)

for _name, _kinds, _lower, _out in _binary:
    prims[_name] = Primitive(_name, abstract_eval=_same_dtype_rule(_name, _kinds, _out),
                             lower=_lower, batch=batch_util.elementwise_rule(),
                             jvp=_jvp_rule(_name), transpose=_TRANSPOSE.get(_name),
                             linear=_name in _LINEAR)

for _name, _dir, _kinds in _comparisons:
    prims[_name] = Primitive(_name, abstract_eval=_same_dtype_rule(
        _name, _kinds, lambda d: np.dtype(bool)), lower=_compare_lower(_dir),
        batch=batch_util.elementwise_rule(), jvp=NOT_DIFFERENTIABLE)


def _round_abstract_eval(x, *, rounding_method):
    base.check_kinds("round", [x], FLOAT)
    return x


prims["round"] = Primitive("round", abstract_eval=_round_abstract_eval, lower=_round_lower,
                           jvp=NOT_DIFFERENTIABLE,
                           batch=batch_util.elementwise_rule())


def _integer_pow_abstract_eval(x, *, y):
    base.check_kinds("integer_pow", [x], NUM)
    if dtypes.is_integer(x.dtype) and y < 0:
        raise TypeError(f"integer_pow with a negative exponent ({y}) needs a floating or "
                        f"complex operand, got {x.dtype.name}")
    return x


def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow_p.bind(x, y=y)
    if y == 0 or ad_util.is_zero(t):
        return out, ad_util.zero_tangent(aval_of(out))
    d = _c(x, y) if y == 1 else mul_p.bind(_c(x, y), x if y == 2 else
                                          integer_pow_p.bind(x, y=y - 1))
    return out, mul_p.bind(t, d)


prims["integer_pow"] = Primitive("integer_pow", abstract_eval=_integer_pow_abstract_eval,
                                 jvp=_integer_pow_jvp,
                                 batch=batch_util.elementwise_rule(),
                                 lower=lower_fun(_integer_pow))


def _pow_abstract_eval(x, y):
    base.check_kinds("pow", [x], INEXACT)
    if y.dtype != x.dtype and not (dtypes.is_integer(y.dtype)):
        base.check_same_dtypes("pow", [x, y])
    shape = base.broadcasting_shape("pow", [x, y])
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


prims["pow"] = Primitive("pow", abstract_eval=_pow_abstract_eval, lower=_pow_lower,
                         jvp=_jvp_nary(*_BINARY_PARTIALS["pow"]),
                         batch=batch_util.elementwise_rule())


# select_n(which, *cases): picks cases[which] elementwise; which is bool (2 cases) or int32.
def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    if not (dtypes.is_bool(which.dtype) or which.dtype == np.int32):
        raise TypeError(f"select_n `which` must be boolean or int32, got {which.dtype.name}")
    if dtypes.is_bool(which.dtype) and len(cases) > 2:
        raise TypeError("select_n with a boolean `which` takes at most two cases, got "
                        f"{len(cases)}")
    base.check_same_dtypes("select_n", list(cases))
    shape = cases[0].shape
    for c in cases:
        if c.shape != shape:
            raise TypeError("select_n cases must have the same shapes, got "
                            f"{[c.shape for c in cases]}")
    if which.shape not in ((), shape):
        raise TypeError(f"select_n `which` must be scalar or have the same shape as cases, "
                        f"got which shape {which.shape} for case shape {shape}")
    return ShapedArray(shape, cases[0].dtype, base.all_weak(cases))


def _select_n_lower(ctx, which, *cases):
    out = ctx.avals_out[0]
    if len(cases) == 1:
        return cases[0]
    which = base.broadcast_operand_lowering(ctx, which, out.shape)
    if dtypes.is_bool(which.aval.dtype):
        return ctx.op("stablehlo.select", [which, cases[1], cases[0]], out)
    # int which: a balanced tree of selects on `which < mid`
    def build(lo, hi):
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        m = ctx.constant(np.array(mid, np.int32), ShapedArray((), np.int32))
        m = base.broadcast_operand_lowering(ctx, m, out.shape)
        pred = base.compare(ctx, which, m, "LT", ShapedArray(out.shape, np.bool_))
        return ctx.op("stablehlo.select", [pred, build(lo, mid), build(mid, hi)], out)
    return build(0, len(cases))


def _select_n_jvp(primals, tangents):
    which, cases = primals[0], primals[1:]
    out = select_n_p.bind(which, *cases)
    if all(ad_util.is_zero(t) for t in tangents[1:]):
        return out, ad_util.zero_tangent(aval_of(out))
    ts = [ad_util.instantiate(t) for t in tangents[1:]]
    return out, select_n_p.bind(which, *ts)


def _select_n_transpose(ct, which, *cases):
    if ad_util.is_undefined_primal(which):
        raise TypeError("select_n cannot be transposed with respect to its predicate")
    if ad_util.is_zero(ct):
        return ad_util.zero_cts([which, *cases])
    zeros = ad_util.zeros(aval_of(ct))
    return [None] + [select_n_p.bind(which, *[ct if j == i else zeros
                                                    for j in range(len(cases))])
                     if ad_util.is_undefined_primal(c) else None
                     for i, c in enumerate(cases)]


prims["select_n"] = Primitive("select_n", abstract_eval=_select_n_abstract_eval,
                              jvp=_select_n_jvp, transpose=_select_n_transpose,
                              # only `which` may stay rank 0 among full-rank cases
                              batch=batch_util.elementwise_rule(lambda i, n: i == 0),
                              lower=_select_n_lower)


def _clamp_abstract_eval(lo, x, hi):
    base.check_kinds("clamp", [x], "fiu")
    base.check_same_dtypes("clamp", [lo, x, hi])
    for b in (lo, hi):
        if b.shape not in ((), x.shape):
            raise TypeError(f"clamp requires min and max to be scalars or have the operand's "
                            f"shape {x.shape}, got {b.shape}")
    return x.update(weak_type=x.weak_type)


def _clamp_lower(ctx, lo, x, hi):
    out = ctx.avals_out[0]
    lo = base.broadcast_operand_lowering(ctx, lo, out.shape)
    hi = base.broadcast_operand_lowering(ctx, hi, out.shape)
    return ctx.op("stablehlo.clamp", [lo, x, hi], out)


def _clamp_partial(which):
    def d(t, out, lo, x, hi):
        sel = select_n_p.bind
        if which == 0:
            pred = and_p.bind(gt_p.bind(lo, x), lt_p.bind(lo, hi))
        elif which == 1:
            pred = and_p.bind(gt_p.bind(x, lo), lt_p.bind(x, hi))
        else:
            pred = lt_p.bind(hi, x)
        t = _bcast_to(t, aval_of(out).shape)
        return sel(pred, ad_util.zeros(aval_of(t)), t)
    return d


prims["clamp"] = Primitive("clamp", abstract_eval=_clamp_abstract_eval, lower=_clamp_lower,
                           jvp=_jvp_nary(*[_clamp_partial(i) for i in range(3)]),
                           batch=batch_util.elementwise_rule(lambda i, n: i != 1))


# ---- conversions ----

def _convert_abstract_eval(x, *, new_dtype, weak_type, sharding=None):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_lower(ctx, x, *, new_dtype, weak_type, sharding=None):
    out = ctx.avals_out[0]
    src = x.aval.dtype
    if src == out.dtype:
        return x
    if dtypes.is_bool(out.dtype):  # x != 0 (for complex, either part nonzero)
        zero = base.broadcast_operand_lowering(ctx, base.zeros_like_value(ctx, x.aval),
                                               x.aval.shape)
        return base.compare(ctx, x, zero, "NE", out)
    if dtypes.is_complex(src) and not dtypes.is_complex(out.dtype):
        x = ctx.op("stablehlo.real", [x], x.aval.update(dtype=dtypes.to_real_dtype(src)))
        src = x.aval.dtype
        if src == out.dtype:
            return x
    return ctx.op("stablehlo.convert", [x], out)


def _convert_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, **params)
    if ad_util.is_zero(t) or not dtypes.is_inexact(params["new_dtype"]):
        return out, ad_util.zero_tangent(aval_of(out))
    return out, convert_element_type_p.bind(t, **params)


def _convert_transpose(ct, x, **params):
    if ad_util.is_zero(ct):
        return [ad_util.Zero(x.aval)]
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype,
                                               weak_type=x.aval.weak_type)]


prims["convert_element_type"] = Primitive(
    "convert_element_type", jvp=_convert_jvp, transpose=_convert_transpose, linear=True,
    abstract_eval=_convert_abstract_eval, lower=_convert_lower,
    batch=batch_util.elementwise_rule())


def _bitcast_abstract_eval(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if new_dtype.kind not in "biufcV":  # 'a' (bytes, itemsize 0) divided by zero below
        raise TypeError(f"bitcast_convert_type: new_dtype must be a numeric dtype, got "
                        f"{new_dtype}")
    a, b = x.dtype.itemsize, new_dtype.itemsize
    if dtypes.is_bool(x.dtype) or dtypes.is_bool(new_dtype):
        raise TypeError("bitcast_convert_type does not support bool")
    if dtypes.is_complex(x.dtype) != dtypes.is_complex(new_dtype):
        raise TypeError(f"bitcast_convert_type cannot convert between complex and real types: "
                        f"operand dtype {x.dtype.name}, new_dtype {new_dtype.name}; a complex "
                        "operand needs a complex new_dtype and a real one a real new_dtype")
    if a == b:
        shape = x.shape
    elif a > b:
        shape = x.shape + (a // b,)
    else:
        if not x.shape or x.shape[-1] != b // a:
            raise TypeError(f"bitcast_convert_type from {x.dtype.name} to {new_dtype.name} needs "
                            f"a last dimension of size {b // a}, got shape {x.shape}")
        shape = x.shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_lower(ctx, x, *, new_dtype):
    return ctx.op("stablehlo.bitcast_convert", [x], ctx.avals_out[0])


def _bitcast_batch(args, dims, *, new_dtype):
    (x,), (d,) = args, dims
    # A narrowing bitcast appends a dimension and a widening one consumes the last: keep the
    # batch axis off the end when the last dimension changes.
    if d == len(batch_util.shape_of(x)) - 1 and \
            aval_of(x).dtype.itemsize != np.dtype(new_dtype).itemsize:
        x, d = batch_util.move_axis(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


prims["bitcast_convert_type"] = Primitive(
    "bitcast_convert_type", jvp=NOT_DIFFERENTIABLE,
    abstract_eval=_bitcast_abstract_eval, lower=_bitcast_lower,
    batch=_bitcast_batch)


def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
    base.check_kinds("reduce_precision", [x], FLOAT)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive (at least 1), got "
                         f"{exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative, got "
                         f"{mantissa_bits}")
    for name, bits in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if bits > 2**31 - 1:  # an i32 attribute: else a raw StableHLO parser error
            raise ValueError(f"reduce_precision: {name} must fit in int32, got {bits}")
    return x


def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    return ctx.op("stablehlo.reduce_precision", [x], ctx.avals_out[0], attrs={
        "exponent_bits": f"{exponent_bits} : i32", "mantissa_bits": f"{mantissa_bits} : i32"})


prims["reduce_precision"] = Primitive(
    "reduce_precision", jvp=_jvp_rule("reduce_precision"),
    transpose=_TRANSPOSE["reduce_precision"], linear=True,
    abstract_eval=_reduce_precision_abstract_eval,
    lower=_reduce_precision_lower, batch=batch_util.elementwise_rule())

prims["copy"] = Primitive("copy", abstract_eval=lambda x: x, lower=lambda ctx, x: x,
                          jvp=_jvp_rule("copy"), transpose=_TRANSPOSE["copy"], linear=True,
                          batch=batch_util.elementwise_rule())

# Every primitive of this module as ``<name>_p`` (``mul_p``, ``and_p``, ``select_n_p``): the
# objects that rules here and in other modules bind (tests/core/test_primitive.py checks them).
(neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p,
 logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p,
 atanh_p, sqrt_p, rsqrt_p, cbrt_p, square_p, erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p,
 abs_p, not_p, population_count_p, clz_p, real_p, imag_p, conj_p) = \
    [prims[r[0]] for r in _unary]
(add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, nextafter_p, atan2_p, and_p, or_p, xor_p,
 shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, complex_p) = \
    [prims[r[0]] for r in _binary]
(eq_p, ne_p, lt_p, le_p, gt_p, ge_p) = \
    [prims[r[0]] for r in _comparisons]
(round_p, integer_pow_p, pow_p, select_n_p, clamp_p, convert_element_type_p,
 bitcast_convert_type_p, reduce_precision_p, copy_p) = [prims[n] for n in (
    "round", "integer_pow", "pow", "select_n", "clamp", "convert_element_type",
    "bitcast_convert_type", "reduce_precision", "copy")]


# ---- the lax-level functions ----

def _weak_coerce(name, args):
    """Make operands' dtypes agree the way lax does: weakly typed operands (Python scalars,
    weak arrays) take the dtype of the strongly typed ones."""
    avals = [aval_of(a) for a in args]
    dts = {a.dtype for a in avals}
    if len(dts) == 1:
        return list(args)
    strong = {a.dtype for a in avals if not a.weak_type}
    if len(strong) != 1:  # lax does not promote: lax.add(1, 1.0) raises, as in JAX
        base.check_same_dtypes(name, avals)
    target = strong.pop()
    out = []
    for a, av in zip(args, avals):
        if av.dtype == target:
            out.append(a)
        elif is_python_scalar(a):
            base.check_scalar_fits(name, a, target)
            out.append(coerce_scalar(a, target))
        elif av.weak_type:
            out.append(convert_element_type(a, target))
        else:
            base.check_same_dtypes(name, avals)
    return out


def _make_unary(name):
    p = prims[name]

    def fn(x):
        return p.bind(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{name}`` primitive)."
    fn.primitive = p  # the primitive it binds (for jnp's eager fast paths)
    return fn


_PY_SCALAR_TYPES = (int, float, complex)


def _natural_dtype(t):
    """The weak dtype of a Python scalar type under the current x64 setting."""
    return _NATURAL[dtypes.x64_enabled()][t]


_NATURAL = {False: {int: np.dtype(np.int32), float: np.dtype(np.float32),
                    complex: np.dtype(np.complex64)},
            True: {int: np.dtype(np.int64), float: np.dtype(np.float64),
                   complex: np.dtype(np.complex128)}}


def _make_nary(name):
    p = prims[name]

    def fn(*args):
        if len(args) == 2:  # fast path: operands whose dtypes already agree
            x, y = args
            xa = getattr(x, "aval", None)
            if xa is not None:
                ya = getattr(y, "aval", None)
                if ya is not None:
                    if xa.dtype == ya.dtype:
                        return p.bind(x, y)
                elif type(y) in _PY_SCALAR_TYPES and _natural_dtype(type(y)) == xa.dtype:
                    return p.bind(x, y)
        if name in ("eq", "ne") and any(map(key_ops.is_key, args)):  # keys compare their data
            return key_ops.compare(name, p, *args)
        return p.bind(*_weak_coerce(name, args))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{name}`` primitive); dtypes must agree."
    fn.primitive = p
    return fn


def convert_element_type(operand, new_dtype, weak_type=False):
    """Convert ``operand`` to ``new_dtype`` (canonicalized for the x64 setting)."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if not hasattr(operand, "aval"):  # host value: convert on the host, then stage/upload it
        if key_ops.is_key(operand):  # JAX's error
            raise ValueError(f"Cannot convert_element_type from {operand.dtype} to "
                             f"{new_dtype.name}")
        val = np.asarray(operand)
        if dtypes.is_bool(new_dtype):
            val = val != 0
        elif dtypes.is_complex(val.dtype) and not dtypes.is_complex(new_dtype):
            val = val.real
        operand = np.asarray(val, new_dtype)
    else:
        av = operand.aval
        if av.dtype == new_dtype and av.weak_type == bool(weak_type):
            return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype,
                                              weak_type=bool(weak_type))


def bitcast_convert_type(operand, new_dtype):
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(
        new_dtype))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    # operator.index as JAX: int() would truncate exponent_bits=2.5 silently
    return reduce_precision_p.bind(
        operand, exponent_bits=axes.index(exponent_bits, "exponent_bits", "reduce_precision"),
        mantissa_bits=axes.index(mantissa_bits, "mantissa_bits", "reduce_precision"))


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - JAX's name
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    """``x ** y`` for a static integer ``y``; a non-integer ``y`` is a TypeError, as in JAX."""
    try:
        y = operator.index(y)
    except TypeError:
        raise TypeError(f"integer_pow requires an integer exponent, got {y!r} of type "
                        f"{type(y).__name__}") from None
    return integer_pow_p.bind(x, y=y)


def pow(x, y):  # noqa: A001 - JAX's name
    ya = aval_of(y)
    if dtypes.is_integer(ya.dtype) and not ya.weak_type:
        return pow_p.bind(x, y)
    x, y = _weak_coerce("pow", [x, y])
    return pow_p.bind(x, y)


def select_n(which, *cases):
    if cases and (key_ops.is_key(cases[0]) or key_ops.is_key(cases[-1])):
        return key_ops.bind(select_n_p, which, *cases)
    return select_n_p.bind(which, *_weak_coerce("select_n", cases))


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002 - JAX's names
    return clamp_p.bind(*_weak_coerce("clamp", [min, x, max]))


for _name in [r[0] for r in _unary]:
    globals()[_name if _name != "not" else "bitwise_not"] = _make_unary(_name)
for _name in [r[0] for r in _binary] + [c[0] for c in _comparisons]:
    globals()[_name] = _make_nary(_name)

bitwise_and = globals()["and"]
bitwise_or = globals()["or"]
bitwise_xor = globals()["xor"]
logical_not = bitwise_not = globals()["bitwise_not"]

__all__ = [r[0] for r in _unary if r[0] != "not"] + [
    r[0] for r in _binary if r[0] not in ("and", "or", "xor")] + [c[0] for c in _comparisons] + [
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "convert_element_type",
    "bitcast_convert_type", "reduce_precision", "RoundingMethod", "round", "integer_pow", "pow",
    "select_n", "select", "clamp"]


# Last, and read only inside rules: these modules declare their primitives with this one's.
from pyjax._src.lax import reductions  # noqa: E402
from pyjax._src.lax import shape_ops  # noqa: E402
from pyjax._src.lax import lgamma_erfinv  # noqa: E402  (lowerings of lgamma, erf_inv)
