"""Elementwise primitives: lowering against NumPy/SciPy, abstract eval against the real result,
eagerly and under jit, over the dtypes each accepts; dtype and shape errors."""
import ml_dtypes
import numpy as np
import pytest
import scipy.special as sps

import pyjax
import pyjax.lax as lax

F32, F16, BF16, C64 = np.float32, np.float16, ml_dtypes.bfloat16, np.complex64
I8, I32, U8, U32, BOOL = np.int8, np.int32, np.uint8, np.uint32, np.bool_


def _data(dtype, shape, lo=-3.0, hi=3.0, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dt)
    x = rng.uniform(lo, hi, shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.uniform(lo, hi, shape)
    return x.astype(dt)


def _tol(dtype):
    dt = np.dtype(dtype)
    if dt in (np.dtype(F16), np.dtype(BF16)):
        return 2e-2
    return 2e-5 if dt.kind in "fc" else 0


# name, numpy reference, dtypes, input range
UNARY = [
    ("neg", np.negative, [F32, I32, I8, C64, BF16], None),
    ("sign", np.sign, [F32, I32, U8], None),
    ("floor", np.floor, [F32, F16], None),
    ("ceil", np.ceil, [F32], None),
    ("is_finite", np.isfinite, [F32], None),
    ("exp", np.exp, [F32, C64, BF16], None),
    ("exp2", np.exp2, [F32], None),
    ("log", np.log, [F32, C64], (0.1, 5.0)),
    ("log1p", np.log1p, [F32], (-0.5, 3.0)),
    ("expm1", np.expm1, [F32], None),
    ("tanh", np.tanh, [F32, C64], None),
    ("logistic", sps.expit, [F32], None),
    ("sin", np.sin, [F32, C64, F16], None),
    ("cos", np.cos, [F32], None),
    ("tan", np.tan, [F32], (-1.2, 1.2)),
    ("asin", np.arcsin, [F32], (-0.99, 0.99)),
    ("acos", np.arccos, [F32], (-0.99, 0.99)),
    ("atan", np.arctan, [F32], None),
    ("sinh", np.sinh, [F32], None),
    ("cosh", np.cosh, [F32], None),
    ("asinh", np.arcsinh, [F32], None),
    ("acosh", np.arccosh, [F32], (1.0, 5.0)),
    ("atanh", np.arctanh, [F32], (-0.95, 0.95)),
    ("sqrt", np.sqrt, [F32, C64], (0.0, 9.0)),
    ("rsqrt", lambda x: 1 / np.sqrt(x), [F32], (0.1, 9.0)),
    ("cbrt", np.cbrt, [F32], None),
    ("square", np.square, [F32, I32, C64], None),
    ("erf", sps.erf, [F32], None),
    ("erfc", sps.erfc, [F32], None),
    ("erf_inv", sps.erfinv, [F32], (-0.99, 0.99)),
    ("lgamma", sps.gammaln, [F32], (0.1, 6.0)),
    ("digamma", sps.digamma, [F32], (0.1, 6.0)),
    ("abs", np.abs, [F32, I32, I8, C64], None),
    ("population_count", lambda x: np.bitwise_count(x.view(f"u{x.dtype.itemsize}")).astype(x.dtype),
     [I32, U8], None),
    ("real", np.real, [C64], None),
    ("imag", np.imag, [C64], None),
    ("conj", np.conj, [C64, F32], None),
]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name,ref,dts,rng", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, ref, dts, rng, jit):
    fn = getattr(lax, name)
    f = pyjax.jit(fn) if jit else fn
    for dt in dts:
        for shape in [(), (0,), (2, 3)]:
            lo, hi = rng or (-3.0, 3.0)
            x = _data(dt, shape, lo, hi)
            out = f(pyjax.device_put(x))
            want = ref(x.astype(np.complex128 if np.dtype(dt).kind == "c" else
                                np.float64 if np.dtype(dt).kind == "f" else dt))
            want_dt = np.asarray(ref(x[:0] if x.ndim else x.reshape(1)[:0])).dtype
            shape_dtype = pyjax.eval_shape(fn, pyjax.ShapeDtypeStruct(shape, dt))
            assert out.shape == shape_dtype.shape == shape
            assert out.dtype == shape_dtype.dtype
            if np.dtype(dt) in (np.dtype(F16), np.dtype(BF16)):
                want_dt = np.dtype(dt) if want_dt.kind != "b" else want_dt
            np.testing.assert_allclose(np.asarray(out).astype(np.complex128 if out.dtype.kind == "c"
                                                              else np.float64),
                                       np.asarray(want).astype(np.complex128 if out.dtype.kind == "c"
                                                               else np.float64),
                                       rtol=_tol(dt), atol=_tol(dt) * 10)


def test_clz_and_not():
    x = np.array([1, 2, 255, 0, 1 << 20], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.clz(x)), [31, 30, 24, 32, 11])
    np.testing.assert_array_equal(np.asarray(lax.bitwise_not(x)), ~x)
    b = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(lax.bitwise_not(b)), ~b)


BINARY = [
    ("add", np.add, [F32, I32, U8, C64, BF16]),
    ("sub", np.subtract, [F32, I32, C64]),
    ("mul", np.multiply, [F32, I32, I8, C64]),
    ("div", None, [F32, I32, C64]),
    ("rem", np.fmod, [F32, I32]),
    ("max", np.maximum, [F32, I32, BOOL]),
    ("min", np.minimum, [F32, U8, BOOL]),
    ("nextafter", np.nextafter, [F32]),
    ("atan2", np.arctan2, [F32]),
    ("and", np.bitwise_and, [I32, BOOL, U8]),
    ("or", np.bitwise_or, [I32, BOOL]),
    ("xor", np.bitwise_xor, [I32, BOOL]),
    ("complex", lambda a, b: a + 1j * b, [F32]),
    ("pow", np.power, [F32]),
    ("eq", np.equal, [F32, I32, BOOL, C64]),
    ("ne", np.not_equal, [F32, I32]),
    ("lt", np.less, [F32, I32, U32]),
    ("le", np.less_equal, [F32, I8]),
    ("gt", np.greater, [F32, I32]),
    ("ge", np.greater_equal, [F32, I32]),
]

_LAX_NAME = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}


def _int_div(a, b):
    return np.trunc(a / b).astype(a.dtype)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name,ref,dts", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, ref, dts, jit):
    fn = getattr(lax, _LAX_NAME.get(name, name))
    f = pyjax.jit(fn) if jit else fn
    for dt in dts:
        for shape in [(), (0,), (2, 3)]:
            x = _data(dt, shape, 0.5 if name == "pow" else -3, 3, seed=1)
            y = _data(dt, shape, seed=2)
            if name in ("div", "rem") and np.dtype(dt).kind in "iu":
                y = np.where(y == 0, 1, y).astype(dt)
            out = f(pyjax.device_put(x), pyjax.device_put(y))
            r = ref or (_int_div if np.dtype(dt).kind in "iu" else np.divide)
            want = r(x, y)
            assert out.shape == np.shape(want)
            np.testing.assert_allclose(np.asarray(out).astype(np.complex128),
                                       np.asarray(want).astype(np.complex128),
                                       rtol=_tol(dt) * 5, atol=_tol(dt) * 10)


def test_shifts():
    x = np.array([-8, 1, 1 << 20, 7], np.int32)
    s = np.array([1, 3, 4, 0], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.shift_left(x, s)), x << s)
    np.testing.assert_array_equal(np.asarray(lax.shift_right_arithmetic(x, s)), x >> s)
    np.testing.assert_array_equal(np.asarray(lax.shift_right_logical(x, s)),
                                  (x.view(np.uint32) >> s.astype(np.uint32)).view(np.int32))


def test_round_integer_pow_select_clamp():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.round(x)), [-3, -2, -1, 1, 2, 3, 0])
    np.testing.assert_array_equal(
        np.asarray(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)), np.round(x))
    for y in (0, 1, 2, 3, 5, -2):
        np.testing.assert_allclose(np.asarray(pyjax.jit(lambda a: lax.integer_pow(a, y))(x)),
                                   x.astype(np.float64) ** y, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(lax.integer_pow(np.arange(5, dtype=np.int32), 3)),
                                  np.arange(5) ** 3)
    p = np.array([True, False, True])
    a, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    np.testing.assert_array_equal(np.asarray(lax.select(p, a, b)), [1, 0, 1])
    which = np.array([0, 1, 2, 2, 1], np.int32)
    cases = [np.full(5, k, np.float32) for k in (10, 20, 30)]
    np.testing.assert_array_equal(np.asarray(lax.select_n(which, *cases)), [10, 20, 30, 30, 20])
    np.testing.assert_array_equal(np.asarray(lax.clamp(np.float32(0), x, np.float32(1))),
                                  np.clip(x, 0, 1))


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.int32, np.float32),
                                     (np.float32, np.bool_), (np.bool_, np.float32),
                                     (np.complex64, np.float32), (np.float32, ml_dtypes.bfloat16),
                                     (np.int32, np.uint8), (np.float32, np.complex64)])
def test_convert_element_type(src, dst):
    x = _data(src, (6,), -3, 3)
    out = pyjax.jit(lambda a: lax.convert_element_type(a, dst))(pyjax.device_put(x))
    assert out.dtype == np.dtype(dst)
    want = (x.real if np.dtype(src).kind == "c" and np.dtype(dst).kind != "c" else x)
    want = want != 0 if np.dtype(dst) == np.bool_ else want.astype(dst)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_complex_to_bool_looks_at_both_parts():
    x = np.array([0j, 1j, 1 + 0j, 0.5 - 2j], np.complex64)
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(x, np.bool_)),
                                  x.astype(bool))


def test_bitcast_and_reduce_precision_and_copy():
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.bitcast_convert_type(x, np.int32)),
                                  x.view(np.int32))
    wide = lax.bitcast_convert_type(x, np.uint8)
    assert wide.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(wide), x.view(np.uint8).reshape(3, 4))
    back = lax.bitcast_convert_type(wide, np.float32)
    np.testing.assert_array_equal(np.asarray(back), x)
    y = np.array([1.0 + 2 ** -20, 3.14159], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.reduce_precision(y, 8, 7)),
                                  y.astype(ml_dtypes.bfloat16).astype(np.float32))
    from pyjax._src.lax.elementwise import copy_p
    np.testing.assert_array_equal(np.asarray(copy_p.bind(pyjax.device_put(x))), x)


def test_weak_type_rules():
    x = pyjax.device_put(np.ones(3, ml_dtypes.bfloat16))
    assert lax.add(x, 1.0).dtype == ml_dtypes.bfloat16
    assert not lax.add(x, 1.0).weak_type
    assert lax.add(1.0, 2.0).weak_type
    assert lax.add(np.int8(1), 1).dtype == np.int8
    assert lax.mul(2, 3).dtype == np.int32


def test_max_min_propagate_nan():
    # XLA:CPU's fast min/max would drop these NaNs; pyjax compiles with them disabled.
    a = np.ones(4096, np.float32)
    a[5] = np.nan
    b = np.ones(4096, np.float32)
    b[7] = np.nan
    for fn in (lax.max, lax.min):
        assert np.isnan(np.asarray(fn(a, b))).sum() == 2


def test_errors():
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(np.float32(1), np.int32(1))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.add(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        lax.sin(np.int32(1))
    with pytest.raises(TypeError, match="does not accept dtype float32"):
        lax.bitwise_and(np.float32(1), np.float32(1))
    with pytest.raises(TypeError, match="select_n"):
        lax.select_n(np.float32(1), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="negative exponent"):
        lax.integer_pow(np.int32(2), -1)
    with pytest.raises(OverflowError):
        lax.add(np.int8(1), 1000)


TESTED_PRIMITIVES = ({u[0] for u in UNARY} | {b[0] for b in BINARY} | {
    "clz", "not", "shift_left", "shift_right_arithmetic", "shift_right_logical", "round",
    "integer_pow", "select_n", "clamp", "convert_element_type", "bitcast_convert_type",
    "reduce_precision", "copy"})
