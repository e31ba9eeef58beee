"""Elementwise primitives, generated from one table row per op, plus their ``lax`` wrappers."""
from __future__ import annotations

import builtins

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.lax import base
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


def _exp2_lower(ctx, x):
    ln2 = ctx.constant(np.log(2.0), ShapedArray((), x.aval.dtype))
    ln2 = base.broadcast_operand_lowering(ctx, ln2, x.aval.shape)
    y = ctx.op("stablehlo.multiply", [x, ln2], x.aval)
    return ctx.op("stablehlo.exponential", [y], ctx.avals_out[0])


def _square_lower(ctx, x):
    return ctx.op("stablehlo.multiply", [x, x], ctx.avals_out[0])


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


def _integer_pow_lower(ctx, x, *, y):
    out = ctx.avals_out[0]
    if y == 0:
        one = ctx.constant(np.ones((), out.dtype), ShapedArray((), out.dtype))
        return base.broadcast_operand_lowering(ctx, one, out.shape)
    n, acc, power = builtins.abs(y), None, x
    while n:  # square-and-multiply
        if n & 1:
            acc = power if acc is None else ctx.op("stablehlo.multiply", [acc, power], out)
        n >>= 1
        if n:
            power = ctx.op("stablehlo.multiply", [power, power], out)
    if y < 0:
        one = ctx.constant(np.ones((), out.dtype), ShapedArray((), out.dtype))
        one = base.broadcast_operand_lowering(ctx, one, out.shape)
        acc = ctx.op("stablehlo.divide", [one, acc], out)
    return acc


def _pow_lower(ctx, x, y):
    out = ctx.avals_out[0]
    x = base.broadcast_operand_lowering(ctx, x, out.shape)
    y = base.broadcast_operand_lowering(ctx, y, out.shape)
    if y.aval.dtype != out.dtype:
        y = ctx.op("stablehlo.convert", [y], y.aval.update(dtype=out.dtype))
    return ctx.op("stablehlo.power", [x, y], out)


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
    ("exp2", INEXACT, _exp2_lower, None),
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
    ("erf", FLOAT, _std_lower("chlo.erf"), None),
    ("erfc", FLOAT, _std_lower("chlo.erfc"), None),
    ("erf_inv", FLOAT, _std_lower("chlo.erf_inv"), None),
    ("lgamma", FLOAT, _std_lower("chlo.lgamma"), None),
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
    ("div", NUM, _std_lower("stablehlo.divide"), None),
    ("rem", "fiu", _std_lower("stablehlo.remainder"), None),
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

prims: dict[str, Primitive] = {}

for _name, _kinds, _lower, _out in _unary:
    prims[_name] = Primitive(_name, abstract_eval=_same_dtype_rule(_name, _kinds, _out),
                             lower=_lower)

for _name, _kinds, _lower, _out in _binary:
    prims[_name] = Primitive(_name, abstract_eval=_same_dtype_rule(_name, _kinds, _out),
                             lower=_lower)

for _name, _dir, _kinds in _comparisons:
    prims[_name] = Primitive(_name, abstract_eval=_same_dtype_rule(
        _name, _kinds, lambda d: np.dtype(bool)), lower=_compare_lower(_dir))


def _round_abstract_eval(x, *, rounding_method):
    base.check_kinds("round", [x], FLOAT)
    return x


prims["round"] = Primitive("round", abstract_eval=_round_abstract_eval, lower=_round_lower)


def _integer_pow_abstract_eval(x, *, y):
    base.check_kinds("integer_pow", [x], NUM)
    if dtypes.is_integer(x.dtype) and y < 0:
        raise TypeError(f"integer_pow with a negative exponent ({y}) needs a floating or "
                        f"complex operand, got {x.dtype.name}")
    return x


prims["integer_pow"] = Primitive("integer_pow", abstract_eval=_integer_pow_abstract_eval,
                                 lower=_integer_pow_lower)


def _pow_abstract_eval(x, y):
    base.check_kinds("pow", [x], INEXACT)
    if y.dtype != x.dtype and not (dtypes.is_integer(y.dtype)):
        base.check_same_dtypes("pow", [x, y])
    shape = base.broadcasting_shape("pow", [x, y])
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


prims["pow"] = Primitive("pow", abstract_eval=_pow_abstract_eval, lower=_pow_lower)


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


prims["select_n"] = Primitive("select_n", abstract_eval=_select_n_abstract_eval,
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


prims["clamp"] = Primitive("clamp", abstract_eval=_clamp_abstract_eval, lower=_clamp_lower)


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


prims["convert_element_type"] = Primitive(
    "convert_element_type", abstract_eval=_convert_abstract_eval, lower=_convert_lower)


def _bitcast_abstract_eval(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    a, b = x.dtype.itemsize, new_dtype.itemsize
    if dtypes.is_bool(x.dtype) or dtypes.is_bool(new_dtype):
        raise TypeError("bitcast_convert_type does not support bool")
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


prims["bitcast_convert_type"] = Primitive(
    "bitcast_convert_type", abstract_eval=_bitcast_abstract_eval, lower=_bitcast_lower)


def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
    base.check_kinds("reduce_precision", [x], FLOAT)
    return x


def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    return ctx.op("stablehlo.reduce_precision", [x], ctx.avals_out[0], attrs={
        "exponent_bits": f"{exponent_bits} : i32", "mantissa_bits": f"{mantissa_bits} : i32"})


prims["reduce_precision"] = Primitive(
    "reduce_precision", abstract_eval=_reduce_precision_abstract_eval,
    lower=_reduce_precision_lower)

prims["copy"] = Primitive("copy", abstract_eval=lambda x: x, lower=lambda ctx, x: x)
copy_p = prims["copy"]


# ---- the lax-level functions ----

def _weak_coerce(name, args):
    """Make operands' dtypes agree the way lax does: weakly typed operands (Python scalars,
    weak arrays) take the dtype of the strongly typed ones."""
    avals = [aval_of(a) for a in args]
    dts = {a.dtype for a in avals}
    if len(dts) == 1:
        return list(args)
    strong = {a.dtype for a in avals if not a.weak_type}
    if len(strong) > 1:
        base.check_same_dtypes(name, avals)
    target = strong.pop() if strong else dtypes.result_type(*args)
    out = []
    for a, av in zip(args, avals):
        if av.dtype == target:
            out.append(a)
        elif is_python_scalar(a):
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
        return p.bind(*_weak_coerce(name, args))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{name}`` primitive); dtypes must agree."
    return fn


def convert_element_type(operand, new_dtype, weak_type=False):
    """Convert ``operand`` to ``new_dtype`` (canonicalized for the x64 setting)."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if not hasattr(operand, "aval"):  # host value: convert on the host, then stage/upload it
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
    return prims["convert_element_type"].bind(operand, new_dtype=new_dtype,
                                              weak_type=bool(weak_type))


def bitcast_convert_type(operand, new_dtype):
    return prims["bitcast_convert_type"].bind(operand, new_dtype=dtypes.canonicalize_dtype(
        new_dtype))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    return prims["reduce_precision"].bind(operand, exponent_bits=int(exponent_bits),
                                          mantissa_bits=int(mantissa_bits))


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - JAX's name
    return prims["round"].bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    return prims["integer_pow"].bind(x, y=int(y))


def pow(x, y):  # noqa: A001 - JAX's name
    ya = aval_of(y)
    if dtypes.is_integer(ya.dtype) and not ya.weak_type:
        return prims["pow"].bind(x, y)
    x, y = _weak_coerce("pow", [x, y])
    return prims["pow"].bind(x, y)


def select_n(which, *cases):
    return prims["select_n"].bind(which, *_weak_coerce("select_n", cases))


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002 - JAX's names
    return prims["clamp"].bind(*_weak_coerce("clamp", [min, x, max]))


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
