"""NumPy's elementwise functions (ufuncs) on pyjax arrays, with JAX's type promotion.

Each function checks its arguments (lists and tuples are rejected, as in JAX), promotes them
with ``util.promote_args*`` (weak Python scalars take the array's dtype) and maps onto the
``lax`` elementwise primitives. Semantics follow NumPy where JAX does: Python's floor rules for
``floor_divide``/``remainder``, half-to-even rounding, lexicographic order for complex
comparisons. Integer division by zero does not trap (the value is XLA's).
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from pyjax._src.core import axes, dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer, _state
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.lax import base as lax_base
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import key_arrays, util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.transformations.custom_derivatives import custom_jvp

_NEAREST_EVEN = lax.RoundingMethod.TO_NEAREST_EVEN


class _NotForComplex(ValueError, TypeError):
    """An operation that is undefined for complex inputs (TypeError in NumPy, ValueError in
    JAX)."""


# ---- helpers ----

def _dt(x):
    return util.dtype_of(x)


def _is_int(dt):
    return dtypes.is_integer(dt)


def _is_intlike(dt):
    return dtypes.is_integer(dt) or dtypes.is_bool(dt)


def _const(x, value):
    """``value`` with the dtype of ``x`` (a weak Python scalar where that is the same)."""
    return lax_base.coerce_scalar(value, _dt(x), wrap=True)


def _asarray(x):
    from pyjax._src.numpy import creation
    return creation.asarray(x)


def _full_like(x, value, dtype=None):
    return lax_shape.full_like(x, value, dtype)


def _where(c, x, y):
    """``select`` with promotion of ``x``/``y`` and broadcasting of all three."""
    x, y = util.promote_dtypes(x, y)
    shape = util.broadcast_shapes(util.shape_of(c), util.shape_of(x), util.shape_of(y))
    c, x, y = (util.broadcast_to(v, shape) for v in (c, x, y))
    return lax.select(c, x, y)


def _to_bool(x):
    if dtypes.is_bool(_dt(x)):
        return x
    if type(x) in (int, float, complex):
        return np.bool_(x != 0)
    return lax.ne(x, _const(x, 0))


def _promote2(name, x, y):
    """``util.promote_args`` with a fast path for two arrays of the same shape and dtype."""
    if type(x) is type(y) and (type(x) is ArrayImpl or isinstance(x, Tracer)) \
            and x.aval == y.aval:
        return x, y
    return util.promote_args(name, x, y)


def _check_not_complex(name, *args):
    for a in args:
        if dtypes.is_complex(_dt(a)):
            raise TypeError(f"jnp.{name} does not support complex-valued inputs, got dtype "
                            f"{_dt(a).name}")


def _named(fn, name, doc, compiled=False):
    """``fn`` as the ufunc ``name`` (compiled as one call when eager, if ``compiled``)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return compiled_when_eager()(fn) if compiled else fn


def _unary_inexact(name, lax_fn, doc):
    # an inexact array needs no promotion: eagerly, straight to PJRT (dispatch.eager_unary)
    eager = dispatch.eager_unary(lax_fn.primitive, "fc")

    def fn(x, /):
        if type(x) is np.ndarray and x.dtype.kind in "fc" and _state.trace is None:
            x = dispatch.to_array(x)  # eager host data: on the device first
        if type(x) is ArrayImpl:
            r = eager(x)
            if r is not None:
                return r
        (x,) = util.promote_args_inexact(name, x)
        return lax_fn(x)
    return _named(fn, name, doc)


def _real_inexact(name, lax_fn, doc, compiled=False):
    """A unary ufunc of real inputs (complex ones are refused) computed in an inexact
    dtype."""
    def fn(x, /):
        _check_not_complex(name, x)
        (x,) = util.promote_args_inexact(name, x)
        return lax_fn(x)
    return _named(fn, name, doc, compiled)


# ---- arithmetic ----

def _arithmetic(name, lax_fn, bool_fn, doc):
    """``lax_fn`` of the promoted operands; ``bool_fn`` (a logical operation) for booleans."""
    def fn(x, y, /):
        x, y = _promote2(name, x, y)
        return bool_fn(x, y) if dtypes.is_bool(_dt(x)) else lax_fn(x, y)
    return _named(fn, name, doc, compiled=True)


add = _arithmetic("add", lax.add, lax.bitwise_or,
                  "Elementwise ``x + y`` (logical or for booleans).")
multiply = _arithmetic("multiply", lax.mul, lax.bitwise_and,
                       "Elementwise ``x * y`` (logical and for booleans).")


@compiled_when_eager()
def subtract(x, y, /):
    """Elementwise ``x - y``."""
    x, y = _promote2("subtract", x, y)
    if dtypes.is_bool(_dt(x)):
        raise TypeError("jnp.subtract (the - operator) is not supported for boolean inputs; "
                        "use jnp.logical_xor or the ^ operator instead.")
    return lax.sub(x, y)


@compiled_when_eager()
def divide(x1, x2, /):
    """Elementwise true division; integers and booleans are promoted to floating point."""
    x1, x2 = util.promote_args_inexact("true_divide", x1, x2)
    return lax.div(x1, x2)


true_divide = divide


def _float_divmod(x1, x2):
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    zero = _const(mod, 0)
    ind = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = _where(ind, lax.add(mod, x2), mod)
    div = _where(ind, lax.sub(div, _const(div, 1)), div)
    div = lax.round(div, _NEAREST_EVEN)
    # x / 0 is +-inf or nan in NumPy's floor_divide
    div = _where(lax.eq(x2, _const(x2, 0)), lax.div(x1, x2), div)
    return div, mod


def _int_floor_divide(x1, x2):
    if dtypes.is_unsigned(_dt(x1)):
        return lax.div(x1, x2)
    quotient = lax.div(x1, x2)
    zero = _const(x1, 0)
    fix = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)),
                          lax.ne(lax.rem(x1, x2), zero))
    return _where(fix, lax.sub(quotient, _const(quotient, 1)), quotient)


@compiled_when_eager()
def floor_divide(x1, x2, /):
    """Elementwise ``x1 // x2``: rounds toward negative infinity (Python's rule)."""
    x1, x2 = util.promote_args_numeric("floor_divide", x1, x2)
    dt = _dt(x1)
    if _is_int(dt):
        return _int_floor_divide(x1, x2)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _promote_for_mod(name, x1, x2):
    """The operands of ``remainder``/``fmod``, promoted, with an integer divisor of 0 replaced
    by 1 (``x % 0`` is then 0, where XLA's value is undefined)."""
    x1, x2 = util.promote_args_numeric(name, x1, x2)
    dt = _dt(x1)
    if dtypes.is_complex(dt):
        raise TypeError(f"{name} does not support complex-valued inputs")
    if _is_int(dt):
        x2 = _where(lax.eq(x2, _const(x2, 0)), _const(x2, 1), x2)
    return x1, x2


@compiled_when_eager()
def remainder(x1, x2, /):
    """Elementwise remainder with the sign of the divisor (Python's ``%``). ``x % 0`` is 0
    for integers."""
    x1, x2 = _promote_for_mod("remainder", x1, x2)
    trunc_mod = lax.rem(x1, x2)
    zero = _const(trunc_mod, 0)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, _const(x2, 0))),
                              lax.ne(trunc_mod, zero))
    return _where(do_plus, lax.add(trunc_mod, x2), trunc_mod)


mod = remainder


@compiled_when_eager()
def fmod(x1, x2, /):
    """Elementwise remainder with the sign of the dividend (C's ``fmod``)."""
    x1, x2 = _promote_for_mod("fmod", x1, x2)
    return lax.rem(x1, x2)


@compiled_when_eager()
def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    x1, x2 = util.promote_args_numeric("divmod", x1, x2)
    if _is_int(_dt(x1)):
        return floor_divide(x1, x2), remainder(x1, x2)
    if dtypes.is_complex(_dt(x1)):
        raise TypeError("divmod does not support complex-valued inputs")
    return _float_divmod(x1, x2)


def _concrete_int_exponent(x):
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        return operator.index(x)
    if isinstance(x, (np.ndarray, ArrayImpl)) and x.ndim == 0 and _is_intlike(x.dtype):
        return operator.index(np.asarray(x)[()])
    return None


def _pow_int_int(x1, x2):
    weak = util.aval_of(x1).weak_type and util.aval_of(x2).weak_type
    shape = util.broadcast_shapes(util.shape_of(x1), util.shape_of(x2))
    x1, x2 = util.broadcast_to(x1, shape), util.broadcast_to(x2, shape)
    zero, one = _const(x1, 0), _const(x1, 1)
    zero2, one2 = _const(x2, 0), _const(x2, 1)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero2)), zero, one)
    for _ in range(6):  # larger exponents overflow for any base other than 0 and +-1
        bit = lax.ne(lax.bitwise_and(x2, one2), zero2)
        acc = _where(bit, lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one2)
    return lax.convert_element_type(acc, _dt(acc), weak)


def power(x1, x2, /):
    """Elementwise ``x1 ** x2``.

    A concrete integer exponent uses ``lax.integer_pow`` (exact repeated multiplication);
    an integer base raised to a concrete negative integer raises a TypeError. Integer arrays
    raised to traced integer powers use binary exponentiation.
    """
    util.check_arraylike("power", x1, x2)
    e = _concrete_int_exponent(x2)
    if e is not None:
        (x1,) = util.promote_dtypes_numeric(x1)
        if _is_int(_dt(x1)) and e < 0:
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"power({_dt(x1).name}, {e})")
        return lax.integer_pow(x1, e)
    x1, x2 = util.promote_args_numeric("power", x1, x2)
    if _is_int(_dt(x1)):
        return _pow_int_int(x1, x2)
    return lax.pow(x1, x2)


pow = power  # noqa: A001 - array API name


def float_power(x, y, /):
    """``x ** y`` computed in an inexact dtype."""
    x, y = util.promote_args_inexact("float_power", x, y)
    return lax.pow(x, y)


def negative(x, /):
    """Elementwise ``-x``."""
    (x,) = util.promote_args("negative", x)
    if dtypes.is_bool(_dt(x)):
        raise TypeError("jnp.negative (the unary - operator) is not supported for boolean "
                        "inputs; use jnp.logical_not or the ~ operator instead.")
    return lax.neg(x)


def positive(x, /):
    """Elementwise ``+x`` (returns ``x`` as an array)."""
    util.check_arraylike("positive", x)
    return _asarray(x)


@compiled_when_eager()
def absolute(x, /):
    """Elementwise absolute value (the magnitude for complex inputs, a real dtype)."""
    util.check_arraylike("absolute", x)
    dt = _dt(x)
    if dtypes.is_bool(dt) or dtypes.is_unsigned(dt):
        return _asarray(x)
    return lax.abs(x)


abs = absolute  # noqa: A001


fabs = _real_inexact("fabs", lax.abs, "Elementwise absolute value in an inexact dtype "
                     "(complex inputs are rejected).", compiled=True)


@compiled_when_eager()
def sign(x, /):
    """-1, 0 or 1 by the sign of ``x``; ``x / |x|`` for complex ``x`` (NumPy 2)."""
    (x,) = util.promote_args("sign", x)
    dt = _dt(x)
    if dtypes.is_complex(dt):
        # each part divided by the real magnitude: a complex division would lose the sign of
        # a zero imaginary part (sign(-1-0j) is -1-0j)
        mag = lax.abs(x)
        zero = lax.eq(x, _const(x, 0))
        mag = _where(zero, np.asarray(1, mag.dtype)[()], mag)
        unit = lax.complex(lax.div(lax.real(x), mag), lax.div(lax.imag(x), mag))
        return _where(zero, _const(x, 0), unit)
    return lax.sign(x)


def _float_only_round(name, lax_fn, doc, compiled=False):
    def fn(x, /):
        util.check_arraylike(name, x)
        if _is_intlike(_dt(x)):
            return _asarray(x)
        _check_not_complex(name, x)
        return lax_fn(x)
    return _named(fn, name, doc, compiled)


floor = _float_only_round("floor", lax.floor,
                          "Elementwise floor (integers and booleans are returned unchanged).")
ceil = _float_only_round("ceil", lax.ceil,
                         "Elementwise ceiling (integers and booleans are returned unchanged).")


def _trunc(x):
    return _where(lax.lt(x, _const(x, 0)), lax.ceil(x), lax.floor(x))


trunc = _float_only_round("trunc", _trunc,
                          "Elementwise rounding toward zero (integers are returned unchanged).",
                          compiled=True)
fix = _float_only_round("fix", _trunc, "Elementwise rounding toward zero (same as ``trunc``).",
                        compiled=True)


def _round_float(x, decimals):
    if decimals == 0:
        return lax.round(x, _NEAREST_EVEN)
    dt = _dt(x)
    work = dtypes.promote_types(dt, np.float32)  # avoid overflow of the factor in f16/bf16
    xw = lax.convert_element_type(x, work) if work != dt else x
    info = dtypes.finfo(work)
    if 10.0 ** decimals > float(info.max):  # no digits that far right: x itself (not inf/inf)
        out = xw
    elif 10.0 ** decimals < float(info.smallest_normal):  # every finite value rounds to zero
        out = _where(lax.is_finite(xw), lax.mul(xw, _const(xw, 0)), xw)
    else:
        factor = lax_base.coerce_scalar(10.0 ** decimals, work)
        out = lax.div(lax.round(lax.mul(xw, factor), _NEAREST_EVEN), factor)
    return lax.convert_element_type(out, dt, util.aval_of(x).weak_type) if work != dt else out


def _round_int(x, decimals):
    dt = _dt(x)
    if decimals >= 0:
        return _asarray(x)
    factor = 10 ** (-decimals)
    if factor > np.iinfo(dt).max:
        return _full_like(x, 0)
    f = _const(x, factor)
    q = floor_divide(x, f)
    r = lax.sub(x, lax.mul(q, f))
    half = _const(x, factor // 2)
    odd = lax.ne(lax.bitwise_and(q, _const(x, 1)), _const(x, 0))
    up = lax.bitwise_or(lax.gt(r, half), lax.bitwise_and(lax.eq(r, half), odd))
    return lax.mul(_where(up, lax.add(q, _const(x, 1)), q), f)


@compiled_when_eager("decimals", "out")
def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Round to ``decimals`` decimal places, halves to even (NumPy's ``round``)."""
    util.check_arraylike("round", a)
    decimals = axes.index(decimals, "decimals", "round")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dt = _dt(a)
    if _is_int(dt):
        return _round_int(a, decimals)
    (a,) = util.promote_args_inexact("round", a)
    if dtypes.is_complex(_dt(a)):
        return lax.complex(_round_float(lax.real(a), decimals),
                           _round_float(lax.imag(a), decimals))
    return _round_float(a, decimals)


around = round


def rint(x, /):
    """Round to the nearest integer (halves to even), in an inexact dtype."""
    (x,) = util.promote_args_inexact("rint", x)
    if dtypes.is_complex(_dt(x)):
        return lax.complex(lax.round(lax.real(x), _NEAREST_EVEN),
                           lax.round(lax.imag(x), _NEAREST_EVEN))
    return lax.round(x, _NEAREST_EVEN)


# ---- exponentials, logarithms, powers, trigonometry ----

exp = _unary_inexact("exp", lax.exp, "Elementwise ``e ** x``.")
exp2 = _unary_inexact("exp2", lax.exp2, "Elementwise ``2 ** x``.")
expm1 = _unary_inexact("expm1", lax.expm1, "Elementwise ``exp(x) - 1`` (accurate near 0).")
log = _unary_inexact("log", lax.log, "Elementwise natural logarithm.")
log1p = _unary_inexact("log1p", lax.log1p, "Elementwise ``log(1 + x)`` (accurate near 0).")
sqrt = _unary_inexact("sqrt", lax.sqrt, "Elementwise square root.")
sin = _unary_inexact("sin", lax.sin, "Elementwise sine.")
cos = _unary_inexact("cos", lax.cos, "Elementwise cosine.")
tan = _unary_inexact("tan", lax.tan, "Elementwise tangent.")
arcsin = _unary_inexact("arcsin", lax.asin, "Elementwise inverse sine.")
arccos = _unary_inexact("arccos", lax.acos, "Elementwise inverse cosine.")
arctan = _unary_inexact("arctan", lax.atan, "Elementwise inverse tangent.")
sinh = _unary_inexact("sinh", lax.sinh, "Elementwise hyperbolic sine.")
cosh = _unary_inexact("cosh", lax.cosh, "Elementwise hyperbolic cosine.")
tanh = _unary_inexact("tanh", lax.tanh, "Elementwise hyperbolic tangent.")
arcsinh = _unary_inexact("arcsinh", lax.asinh, "Elementwise inverse hyperbolic sine.")
arccosh = _unary_inexact("arccosh", lax.acosh, "Elementwise inverse hyperbolic cosine.")
arctanh = _unary_inexact("arctanh", lax.atanh, "Elementwise inverse hyperbolic tangent.")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _log_base(name, base):
    def fn(x, /):
        (x,) = util.promote_args_inexact(name, x)
        return lax.div(lax.log(x), _const(x, np.log(base)))
    return _named(fn, name, f"Elementwise base-{base} logarithm.", compiled=True)


log2 = _log_base("log2", 2)
log10 = _log_base("log10", 10)


cbrt = _real_inexact("cbrt", lax.cbrt, "Elementwise real cube root.")


@compiled_when_eager()
def square(x, /):
    """Elementwise ``x * x`` (booleans are promoted to integers)."""
    (x,) = util.promote_args_numeric("square", x)
    return lax.integer_pow(x, 2)


@compiled_when_eager()
def reciprocal(x, /):
    """Elementwise ``1 / x`` in an inexact dtype."""
    (x,) = util.promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


@compiled_when_eager()
def arctan2(x1, x2, /):
    """Elementwise ``atan(x1 / x2)`` choosing the quadrant by the signs of both."""
    _check_not_complex("arctan2", x1, x2)
    x1, x2 = util.promote_args_inexact("arctan2", x1, x2)
    return lax.atan2(x1, x2)


atan2 = arctan2


@compiled_when_eager()
def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)`` without intermediate overflow."""
    _check_not_complex("hypot", x1, x2)
    x1, x2 = util.promote_args_inexact("hypot", x1, x2)
    x1, x2 = lax.abs(x1), lax.abs(x2)
    inf = _const(x1, np.inf)
    idx_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    zero = lax.eq(big, _const(big, 0))
    safe = _where(zero, _const(big, 1), big)
    r = lax.div(small, safe)
    out = _where(zero, big, lax.mul(big, lax.sqrt(lax.add(_const(r, 1), lax.mul(r, r)))))
    return _where(idx_inf, inf, out)


def _replace_inf(x):
    # only +inf: a -inf input keeps weight exp(-inf - out) == 0 (softplus'(-inf) == 0), and
    # both at -inf give nan, as JAX's
    return _where(lax.eq(x, _const(x, np.inf)), _const(x, 0), x)


def _logaddexp_tangent(x1, x2, t1, t2, out, exp):
    """JAX's derivative of logaddexp(2): each input weighted by exp(x - out), so 1/2 each where
    they are equal (differentiating the max/abs formula would give 0 and 1 there)."""
    w1 = exp(lax.sub(_replace_inf(x1), _replace_inf(out)))
    w2 = exp(lax.sub(_replace_inf(x2), _replace_inf(out)))
    return lax.add(lax.mul(t1, w1), lax.mul(t2, w2))


@custom_jvp
def _logaddexp(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return _where(lax.ne(delta, delta), lax.add(x1, x2), out)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp(x1, x2)
    return out, _logaddexp_tangent(x1, x2, t1, t2, out, lax.exp)


@compiled_when_eager()
def logaddexp(x1, x2, /):
    """Elementwise ``log(exp(x1) + exp(x2))`` without overflow."""
    return _logaddexp(*util.promote_args_inexact("logaddexp", x1, x2))


@custom_jvp
def _logaddexp2(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    ln2 = _const(x1, np.log(2))
    out = lax.add(amax, lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))), ln2))
    return _where(lax.ne(delta, delta), lax.add(x1, x2), out)


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp2(x1, x2)
    return out, _logaddexp_tangent(x1, x2, t1, t2, out, lax.exp2)


@compiled_when_eager()
def logaddexp2(x1, x2, /):
    """Elementwise ``log2(2**x1 + 2**x2)`` without overflow."""
    return _logaddexp2(*util.promote_args_inexact("logaddexp2", x1, x2))


@compiled_when_eager()
def sinc(x, /):
    """Elementwise ``sin(pi x) / (pi x)`` (1 at 0)."""
    (x,) = util.promote_args_inexact("sinc", x)
    zero = lax.eq(x, _const(x, 0))
    pix = lax.mul(x, _const(x, np.pi))
    safe = _where(zero, _const(x, 1), pix)
    return _where(zero, _sinc_at_zero(0, x), lax.div(lax.sin(safe), safe))


def _sinc_at_zero_value(k, x):
    # the k-th derivative of sinc at 0: (-1)^(k/2) pi^k / (k + 1) for even k, 0 for odd k
    v = 0.0 if k % 2 else (-1) ** (k // 2) * np.pi ** k / (k + 1)
    return lax.mul(x, _const(x, 0)) if v == 0 else lax.add(lax.mul(x, _const(x, 0)), _const(x, v))


def _make_sinc_at_zero(k):
    @custom_jvp
    def at_zero(x):
        return _sinc_at_zero_value(k, x)

    @at_zero.defjvp
    def at_zero_jvp(primals, tangents):
        return at_zero(primals[0]), lax.mul(tangents[0], _sinc_at_zero(k + 1, primals[0]))
    return at_zero


_SINC_AT_ZERO = {}


def _sinc_at_zero(k, x):
    """sinc's value at 0 whose derivatives of every order are sinc's at 0 (-pi^2/3 for the
    second, as JAX), where differentiating the guarded quotient would give 0."""
    if k not in _SINC_AT_ZERO:
        _SINC_AT_ZERO[k] = _make_sinc_at_zero(k)
    return _SINC_AT_ZERO[k](x)


deg2rad = _real_inexact("deg2rad", lambda x: lax.mul(x, _const(x, np.pi / 180)),
                        "Degrees to radians.")
rad2deg = _real_inexact("rad2deg", lambda x: lax.mul(x, _const(x, 180 / np.pi)),
                        "Radians to degrees.")


radians, degrees = deg2rad, rad2deg


@compiled_when_eager()
def heaviside(x1, x2, /):
    """Heaviside step: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``."""
    _check_not_complex("heaviside", x1, x2)
    x1, x2 = util.promote_args_inexact("heaviside", x1, x2)
    zero = _const(x1, 0)
    out = _where(lax.lt(x1, zero), zero, _where(lax.gt(x1, zero), _const(x1, 1),
                                                _where(lax.ne(x1, x1), x1, x2)))  # NaN stays
    weak = util.aval_of(x1).weak_type and util.aval_of(x2).weak_type
    return lax.convert_element_type(out, _dt(out), weak)


def _float_bits(dt):
    info = dtypes.finfo(dt)
    return info, np.dtype(f"int{dt.itemsize * 8}"), info.maxexp - 1, info.nmant


def _pow2(e, dt):
    """Exactly ``2.0 ** e`` in dtype ``dt`` for an integer array ``e`` (clamped to the range
    of normal numbers), built from the exponent bits."""
    info, int_dt, bias, nmant = _float_bits(dt)
    e = lax.convert_element_type(e, int_dt)
    e = lax.clamp(np.asarray(1 - bias, int_dt)[()], e, np.asarray(bias, int_dt)[()])
    bits = lax.shift_left(lax.add(e, np.asarray(bias, int_dt)[()]),
                          np.asarray(nmant, int_dt)[()])
    return lax.bitcast_convert_type(bits, dt)


def ldexp(x1, x2, /):
    """Elementwise ``x1 * 2**x2`` for an integer exponent ``x2`` (exact: the power of two is
    built from its bits, applied in three steps so that no partial power overflows)."""
    util.check_arraylike("ldexp", x1, x2)
    if not _is_intlike(_dt(x2)):
        raise TypeError(f"ldexp exponents must be integers, got dtype {_dt(x2).name}")
    _check_not_complex("ldexp", x1)
    (x1,) = util.promote_dtypes_inexact(x1)
    dt = _dt(x1)
    _, int_dt, bias, nmant = _float_bits(dt)
    shape = util.broadcast_shapes(util.shape_of(x1), util.shape_of(x2))
    x1 = util.broadcast_to(x1, shape)
    e = util.broadcast_to(lax.convert_element_type(x2, np.int32), shape)
    lim = 3 * bias
    e = lax.clamp(np.int32(-lim), e, np.int32(lim))
    e1 = lax.div(e, np.int32(3))
    e2 = lax.div(lax.sub(e, e1), np.int32(2))
    e3 = lax.sub(lax.sub(e, e1), e2)
    out = x1
    for part in (e1, e2, e3):
        out = lax.mul(out, _pow2(part, dt))
    return out


@compiled_when_eager()
def frexp(x, /):
    """Mantissa in ``[0.5, 1)`` (with the sign of ``x``) and int32 exponent with
    ``x == m * 2**e``; zeros, infinities and NaNs give ``(x, 0)``."""
    _check_not_complex("frexp", x)
    (x,) = util.promote_args_inexact("frexp", x)
    if type(x) is float:
        x = _asarray(x)
    return _frexp_mantissa(x), _frexp_bits(x)[1]


@custom_jvp
def _frexp_mantissa(x):
    return _frexp_bits(x)[0]


@_frexp_mantissa.defjvp
def _frexp_mantissa_jvp(primals, tangents):
    # m == x * 2**-e, so dm/dx == 2**-e (1 at zeros, infinities, NaNs; inf for the subnormals
    # whose 2**-e overflows), as JAX's; the bit manipulation alone would give 0
    (x,), (t,) = primals, tangents
    m, e = _frexp_bits(x)
    return m, lax.mul(t, lax.exp2(lax.neg(lax.convert_element_type(e, _dt(x)))))


def _frexp_bits(x):
    dt = _dt(x)
    info, int_dt, bias, nmant = _float_bits(dt)
    c = lambda v: np.asarray(v, int_dt)[()]  # noqa: E731
    exp_mask = (1 << info.nexp) - 1
    nbits = dt.itemsize * 8
    # Integer arithmetic only: XLA's CPU code treats subnormal floats as zero in float
    # compares and products, so a float rescale would lose them.
    i = lax.bitcast_convert_type(x, int_dt)
    ebits = lax.bitwise_and(lax.shift_right_logical(i, c(nmant)), c(exp_mask))
    mant = lax.bitwise_and(i, c((1 << nmant) - 1))
    sub = lax.bitwise_and(lax.eq(ebits, c(0)), lax.ne(mant, c(0)))
    special = lax.bitwise_or(lax.bitwise_and(lax.eq(ebits, c(0)), lax.eq(mant, c(0))),
                             lax.eq(ebits, c(exp_mask)))  # zeros, infinities, NaNs
    # a subnormal's leading mantissa bit p becomes the implicit bit: shift by nmant - p
    p = lax.sub(c(nbits - 1), lax.clz(lax.bitwise_or(mant, c(1))))
    shift = lax.sub(c(nmant), p)
    mant = _where(sub, lax.bitwise_and(lax.shift_left(mant, shift), c((1 << nmant) - 1)),
                  mant)
    e = _where(sub, lax.sub(p, c(bias + nmant - 2)), lax.sub(ebits, c(bias - 1)))
    sign_bit = lax.bitwise_and(i, c(np.array(1 << (nbits - 1), np.uint64).astype(int_dt)))
    mbits = lax.bitwise_or(lax.bitwise_or(sign_bit, mant), c((bias - 1) << nmant))
    m = lax.bitcast_convert_type(mbits, dt)
    m = _where(special, x, m)
    e = _where(special, c(0), e)
    return m, lax.convert_element_type(e, np.int32)


@compiled_when_eager()
def modf(x, /):
    """Fractional and integral parts of ``x`` (both with the sign of ``x``)."""
    _check_not_complex("modf", x)
    (x,) = util.promote_args_inexact("modf", x)
    whole = _trunc(x)
    frac = _where(lax.is_finite(x), lax.sub(x, whole), copysign(_const(x, 0), x))
    frac = _where(lax.ne(x, x), x, frac)
    return frac, whole


# ---- comparisons, extrema, logical and bitwise ----

def _comparison(name, lax_fn, ordered):
    def fn(x, y, /):
        x, y = _promote2(name, x, y)
        if ordered and dtypes.is_complex(_dt(x)):  # lexicographic, as NumPy orders complex
            rx, ry = lax.real(x), lax.real(y)
            return _where(lax.eq(rx, ry), lax_fn(lax.imag(x), lax.imag(y)), lax_fn(rx, ry))
        return lax_fn(x, y)
    return _named(fn, name, f"Elementwise ``{name}`` comparison (a boolean array).",
                  compiled=True)


equal = _comparison("equal", lax.eq, False)
not_equal = _comparison("not_equal", lax.ne, False)
less = _comparison("less", lax.lt, True)
less_equal = _comparison("less_equal", lax.le, True)
greater = _comparison("greater", lax.gt, True)
greater_equal = _comparison("greater_equal", lax.ge, True)


# NaNs propagate through lax.max/min itself: the runtime compiles with XLA:CPU's fast min/max
# (which drops NaN operands) turned off.
def _extremum(name, lax_fn, beats, what):
    """``maximum``/``minimum``: ``lax_fn``, or for complex values the lexicographic order of
    ``beats`` (``greater``/``less``)."""
    def fn(x, y, /):
        x, y = _promote2(name, x, y)
        if dtypes.is_complex(_dt(x)):
            return _where(lax.bitwise_or(beats(x, y), isnan(x)), x, y)
        return lax_fn(x, y)
    return _named(fn, name, f"Elementwise {what}; NaNs propagate.", compiled=True)


def _nan_ignoring_extremum(name, beats, what):
    """``fmax``/``fmin``: ``x1`` where it ``beats`` ``x2`` or ``x2`` is NaN."""
    def fn(x1, x2, /):
        x1, x2 = util.promote_args(name, x1, x2)
        return _where(lax.bitwise_or(beats(x1, x2), isnan(x2)), x1, x2)
    return _named(fn, name, f"Elementwise {what} that ignores NaNs (NaN only where both are "
                  "NaN).", compiled=True)


maximum = _extremum("maximum", lax.max, greater, "maximum")
minimum = _extremum("minimum", lax.min, less, "minimum")
fmax = _nan_ignoring_extremum("fmax", greater, "maximum")
fmin = _nan_ignoring_extremum("fmin", less, "minimum")


def _logical(name, lax_fn):
    def fn(x, y, /):
        util.check_arraylike(name, x, y)
        x, y = util.broadcast_arrays(_to_bool(x), _to_bool(y))
        return lax_fn(x, y)
    return _named(fn, name, f"Elementwise ``{name}`` of the truth values.", compiled=True)


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


@compiled_when_eager()
def logical_not(x, /):
    """Elementwise logical not of the truth values."""
    util.check_arraylike("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


def _bitwise(name, lax_fn):
    def fn(x, y, /):
        x, y = _promote2(name, x, y)
        return lax_fn(x, y)
    return _named(fn, name, f"Elementwise ``{name}`` of integers or booleans.", compiled=True)


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)


@compiled_when_eager()
def bitwise_not(x, /):
    """Elementwise bitwise inversion (logical not for booleans)."""
    (x,) = util.promote_args("bitwise_not", x)
    return lax.bitwise_not(x)


invert = bitwise_invert = bitwise_not


def bitwise_count(x, /):
    """Number of 1 bits in the absolute value of each element (uint8 result)."""
    (x,) = util.promote_args("bitwise_count", x)
    dt = _dt(x)
    if dtypes.is_bool(dt):
        return lax.convert_element_type(x, np.uint8)
    if dtypes.is_signed(dt):
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), np.uint8)


@compiled_when_eager()
def left_shift(x1, x2, /):
    """Elementwise ``x1 << x2``."""
    x1, x2 = util.promote_args_numeric("left_shift", x1, x2)
    return lax.shift_left(x1, x2)


@compiled_when_eager()
def right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2`` (arithmetic for signed, logical for unsigned integers)."""
    x1, x2 = util.promote_args_numeric("right_shift", x1, x2)
    if dtypes.is_unsigned(_dt(x1)):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


# ---- floating-point classification ----

def isfinite(x, /):
    """True where ``x`` is neither infinite nor NaN."""
    util.check_arraylike("isfinite", x)
    dt = _dt(x)
    if dtypes.is_floating(dt):
        return lax.is_finite(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return _full_like(x, True, np.bool_)


@compiled_when_eager()
def isinf(x, /):
    """True where ``x`` is +-inf (either part, for complex ``x``)."""
    util.check_arraylike("isinf", x)
    dt = _dt(x)
    if dtypes.is_floating(dt):
        return lax.eq(lax.abs(x), _const(x, np.inf))
    if dtypes.is_complex(dt):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return _full_like(x, False, np.bool_)


def isnan(x, /):
    """True where ``x`` is NaN (either part, for complex ``x``)."""
    util.check_arraylike("isnan", x)
    dt = _dt(x)
    if dtypes.is_inexact(dt):
        return lax.ne(x, x)
    return _full_like(x, False, np.bool_)


def _isposneginf(name, value):
    def fn(x, /):
        util.check_arraylike(name, x)
        dt = _dt(x)
        if dtypes.is_complex(dt):
            raise _NotForComplex(f"jnp.{name} is not well defined for complex-valued inputs")
        if dtypes.is_floating(dt):
            return lax.eq(x, _const(x, value))
        return _full_like(x, False, np.bool_)
    return _named(fn, name, f"True where ``x`` is {'+' if value > 0 else '-'}inf.")


isposinf = _isposneginf("isposinf", np.inf)
isneginf = _isposneginf("isneginf", -np.inf)


@compiled_when_eager()
def signbit(x, /):
    """True where the sign bit is set (negative numbers, -0.0, NaNs with the sign bit)."""
    util.check_arraylike("signbit", x)
    dt = _dt(x)
    if dtypes.is_bool(dt) or dtypes.is_unsigned(dt):
        return _full_like(x, False, np.bool_)
    if dtypes.is_signed(dt):
        return lax.lt(x, _const(x, 0))
    _check_not_complex("signbit", x)
    if type(x) is float:
        x = _asarray(x)
    bits = dt.itemsize * 8
    int_dt = np.dtype(f"int{bits}")
    i = lax.bitcast_convert_type(x, int_dt)
    return lax.lt(i, np.asarray(0, int_dt)[()])


@compiled_when_eager()
def copysign(x1, x2, /):
    """``x1`` with the sign of ``x2``."""
    _check_not_complex("copysign", x1, x2)
    x1, x2 = util.promote_args_inexact("copysign", x1, x2)
    a = lax.abs(x1)
    return _where(signbit(x2), lax.neg(a), a)


@compiled_when_eager()
def nextafter(x1, x2, /):
    """The next representable value after ``x1`` in the direction of ``x2``."""
    _check_not_complex("nextafter", x1, x2)
    x1, x2 = util.promote_args_inexact("nextafter", x1, x2)
    return lax.nextafter(x1, x2)


# ---- complex numbers ----

def real(val, /):
    """Real part (``val`` itself for real inputs)."""
    util.check_arraylike("real", val)
    return lax.real(val) if dtypes.is_complex(_dt(val)) else _asarray(val)


def imag(val, /):
    """Imaginary part (zeros for real inputs)."""
    util.check_arraylike("imag", val)
    return lax.imag(val) if dtypes.is_complex(_dt(val)) else _full_like(val, 0)


def conjugate(x, /):
    """Complex conjugate (``x`` itself for real inputs)."""
    util.check_arraylike("conjugate", x)
    return lax.conj(x) if dtypes.is_complex(_dt(x)) else _asarray(x)


conj = conjugate


@compiled_when_eager("deg")
def angle(z, deg=False):
    """Counterclockwise angle from the positive real axis (radians, or degrees)."""
    util.check_arraylike("angle", z)
    re, im = real(z), imag(z)
    if not dtypes.is_inexact(_dt(re)):
        fdt = dtypes.default_float_dtype()
        re, im = lax.convert_element_type(re, fdt), lax.convert_element_type(im, fdt)
    out = lax.atan2(im, re)
    return lax.mul(out, _const(out, 180 / np.pi)) if deg else out


def iscomplex(x, /):
    """True where ``x`` has a nonzero imaginary part."""
    util.check_arraylike("iscomplex", x)
    key_arrays.refuse("iscomplex", x)
    if not dtypes.is_complex(_dt(x)):
        return _full_like(x, False, np.bool_)
    return lax.ne(lax.imag(x), _const(lax.imag(x), 0))


def isreal(x, /):
    """True where ``x`` has a zero imaginary part."""
    util.check_arraylike("isreal", x)
    key_arrays.refuse("isreal", x)
    if not dtypes.is_complex(_dt(x)):
        return _full_like(x, True, np.bool_)
    return lax.eq(lax.imag(x), _const(lax.imag(x), 0))


# ---- selection and cleaning ----

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` is true, else ``y`` (broadcast together, dtypes promoted).

    With only ``condition``, returns ``nonzero(condition, size=..., fill_value=...)``.
    """
    if x is None and y is None:
        from pyjax._src.numpy import creation
        return creation._lookup("nonzero")(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jax.numpy.where, got "
                         f"{'x' if x is not None else 'y'} only.")
    if key_arrays.is_key_array(x) or key_arrays.is_key_array(y):  # select key data
        from pyjax._src.random import prng
        util.check_arraylike("where", condition)
        return prng.where_keys(_to_bool(condition), x, y)
    return _where3(condition, x, y)


@compiled_when_eager()
def _where3(condition, x, y):
    util.check_arraylike("where", condition, x, y)
    return _where(_to_bool(condition), x, y)


class _NoValue:
    def __repr__(self):
        return "<no value>"


_NOVALUE = _NoValue()


def clip(arr=None, /, min=None, max=None, *, a=_NOVALUE, a_min=_NOVALUE,  # noqa: A002
         a_max=_NOVALUE):
    """Limit the values of ``arr`` to ``[min, max]`` (either bound may be None).

    ``a``, ``a_min`` and ``a_max`` are NumPy's older names, accepted with a
    DeprecationWarning as in JAX.
    """
    old = {"a": a, "a_min": a_min, "a_max": a_max}
    new = {"a": arr, "a_min": min, "a_max": max}
    for name, value in old.items():
        if value is _NOVALUE:
            continue
        warnings.warn("Passing arguments 'a', 'a_min' or 'a_max' to jax.numpy.clip is "
                      "deprecated. Please use 'arr', 'min' or 'max' respectively instead.",
                      DeprecationWarning, stacklevel=2)
        if new[name] is not None:
            raise ValueError(f"clip got both {name!r} and its replacement argument")
        new[name] = value
    if new["a"] is None:
        raise TypeError("clip() missing the array argument 'arr'")
    return _clip(new["a"], new["a_min"], new["a_max"])


@compiled_when_eager()
def _clip(arr, min, max):  # noqa: A002
    util.check_arraylike("clip", arr)
    for v in (arr, min, max):
        if v is not None and dtypes.is_complex(_dt(v)):
            raise ValueError("Clip received a complex value either through the input or the "
                             "min/max keywords. Complex values have no ordering and cannot be "
                             "clipped. Please convert to a real value or array by taking the "
                             "real or imaginary components via jax.numpy.real/imag "
                             "respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return _asarray(arr)


@compiled_when_eager("copy", "nan", "posinf", "neginf")
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by ``nan`` and +-inf by ``posinf``/``neginf`` (default: the largest
    finite values of the dtype)."""
    util.check_arraylike("nan_to_num", x)
    dt = _dt(x)
    if not dtypes.is_inexact(dt):
        return _asarray(x)
    if dtypes.is_complex(dt):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = _where(isnan(x), _replacement(x, nan), x)
    out = _where(isposinf(out), _replacement(x, posinf), out)
    return _where(isneginf(out), _replacement(x, neginf), out)


def _replacement(x, value):
    # a traced or array value (e.g. per example under vmap) is cast to x's dtype, as JAX does
    if isinstance(value, (Tracer, ArrayImpl, np.ndarray)):
        return lax.convert_element_type(_asarray(value), _dt(x))
    return _const(x, value)


@compiled_when_eager("rtol", "atol", "equal_nan")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise; infinities are close only to equal
    infinities; NaNs are close to each other when ``equal_nan``."""
    util.check_arraylike("isclose", a, b)
    if key_arrays.is_key_array(a) or key_arrays.is_key_array(b):  # JAX: keys close if equal
        return equal(a, b)
    a, b = util.promote_args_inexact("isclose", a, b)
    real_dt = dtypes.to_real_dtype(_dt(a))
    rtol = lax_base.coerce_scalar(float(rtol), real_dt)
    atol = lax_base.coerce_scalar(float(atol), real_dt)
    diff = lax.abs(lax.sub(a, b))
    out = lax.le(diff, lax.add(atol, lax.mul(rtol, lax.abs(b))))
    a_inf, b_inf = isinf(a), isinf(b)
    any_inf = lax.bitwise_or(a_inf, b_inf)
    same_inf = lax.bitwise_and(lax.bitwise_and(a_inf, b_inf), lax.eq(a, b))
    out = lax.bitwise_or(lax.bitwise_and(out, lax.bitwise_not(any_inf)), same_inf)
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(isnan(a), isnan(b)))
    return out


__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "fmod", "divmod", "power", "pow", "float_power", "negative", "positive", "absolute", "abs",
    "fabs", "sign", "floor", "ceil", "trunc", "fix", "round", "around", "rint", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "hypot",
    "maximum", "minimum", "fmax", "fmin", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert", "bitwise_invert",
    "bitwise_count", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
    "isfinite", "isinf", "isnan", "isposinf", "isneginf", "signbit", "copysign", "nextafter",
    "real", "imag", "conj", "conjugate", "angle", "iscomplex", "isreal", "deg2rad",
    "rad2deg", "degrees", "radians", "heaviside", "logaddexp", "logaddexp2", "sinc", "ldexp",
    "frexp", "modf", "where", "clip", "nan_to_num", "isclose",
]
