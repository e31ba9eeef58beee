"""``pyjax.numpy`` elementwise functions against NumPy: values, result dtypes (JAX's promotion)
and weak types, over bool/int/uint/float16/bfloat16/float32/complex64 inputs, 0-d and empty
arrays, eagerly and under ``jit``."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

bf16 = np.dtype(ml_dtypes.bfloat16)
B, I8, I32, U8, U32 = (np.dtype(d) for d in (np.bool_, np.int8, np.int32, np.uint8, np.uint32))
F16, F32, C64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
ALL = [B, I8, I32, U8, U32, F16, bf16, F32, C64]
INEXACT = [F16, bf16, F32, C64]
TOL = {F16: 2e-3, bf16: 1e-2, F32: 2e-5, C64: 2e-5}

rng = np.random.default_rng(0)
# The NumPy oracle warns on out-of-domain inputs (nan results); pyjax itself must not warn.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def sample(dtype, shape=(7,), lo=-3.0, hi=3.0):
    dtype = np.dtype(dtype)
    if dtype == B:
        return rng.random(shape) > 0.5
    if dtype.kind == "u":
        return rng.integers(0, max(int(hi), 1) + 1, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(int(np.floor(lo)), int(np.ceil(hi)) + 1, shape).astype(dtype)
    x = rng.uniform(lo, hi, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(lo, hi, shape)
    return x.astype(dtype)


def inexact_of(dt):
    return dt if dt in INEXACT else F32


def wide(x):
    """A float64/complex128/int64 copy of a test input for the NumPy oracle."""
    x = np.asarray(x)
    if x.dtype == bf16 or x.dtype.kind == "f":
        return x.astype(np.float64)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    return x


def assert_close(out, ref, dtype, tol=None):
    assert isinstance(out, pyjax.Array)
    assert out.dtype == np.dtype(dtype), (out.dtype, dtype)
    ref = np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    got = np.asarray(out)
    if np.dtype(dtype) == bf16:
        got = got.astype(np.float32)
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(got, ref.astype(dtype))
    else:
        t = tol if tol is not None else TOL.get(np.dtype(dtype), 1e-6)
        refc = ref.astype(np.complex128 if np.iscomplexobj(ref) else np.float64)
        np.testing.assert_allclose(got, refc, rtol=t, atol=t, equal_nan=True)


# ---- unary functions computed in an inexact dtype ----

UNARY_INEXACT = {
    "exp": (np.exp, -3, 3), "exp2": (np.exp2, -3, 3), "expm1": (np.expm1, -1, 1),
    "log": (np.log, 0.1, 5), "log2": (np.log2, 0.1, 5), "log10": (np.log10, 0.1, 5),
    "log1p": (np.log1p, 0, 3), "sqrt": (np.sqrt, 0, 5), "sin": (np.sin, -3, 3),
    "cos": (np.cos, -3, 3), "tan": (np.tan, -1.2, 1.2), "arcsin": (np.arcsin, -0.9, 0.9),
    "arccos": (np.arccos, -0.9, 0.9), "arctan": (np.arctan, -3, 3),
    "sinh": (np.sinh, -2, 2), "cosh": (np.cosh, -2, 2), "tanh": (np.tanh, -2, 2),
    "arcsinh": (np.arcsinh, -3, 3), "arccosh": (np.arccosh, 1.1, 4),
    "arctanh": (np.arctanh, -0.9, 0.9), "reciprocal": (lambda x: 1 / x, 0.5, 3),
    "deg2rad": (np.deg2rad, -180, 180), "rad2deg": (np.rad2deg, -3, 3),
    "sinc": (np.sinc, -2, 2), "rint": (np.rint, -4, 4), "fabs": (np.fabs, -3, 3),
    "cbrt": (np.cbrt, -8, 8),
}
NO_COMPLEX = {"fabs", "cbrt", "deg2rad", "rad2deg"}


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY_INEXACT))
def test_unary_inexact(name, dtype):
    np_fn, lo, hi = UNARY_INEXACT[name]
    if dtype == C64 and name in NO_COMPLEX:
        with pytest.raises(TypeError):
            getattr(jnp, name)(sample(dtype))
        return
    if name in ("arccosh",) and dtype.kind in "bu":
        lo = 1
    x = sample(dtype, lo=lo, hi=hi)
    out = getattr(jnp, name)(x)
    ref = np_fn(wide(x).astype(np.complex128 if dtype == C64 else np.float64))
    assert_close(out, ref, inexact_of(dtype))


@pytest.mark.parametrize("name", ["sqrt", "exp", "sin", "log1p"])
def test_unary_zero_d_empty_and_weak(name):
    fn = getattr(jnp, name)
    np_fn = getattr(np, name)
    out = fn(0.5)
    assert out.shape == () and out.dtype == F32 and out.weak_type
    np.testing.assert_allclose(np.asarray(out), np_fn(0.5), rtol=1e-6)
    out = fn(np.float16(0.5))
    assert out.dtype == F16 and not out.weak_type
    out = fn(jnp.ones((0, 3), jnp.bfloat16))
    assert out.shape == (0, 3) and out.dtype == bf16
    assert fn(2).dtype == F32 and fn(2).weak_type


def test_aliases_are_the_same_functions():
    assert jnp.asin is jnp.arcsin and jnp.acosh is jnp.arccosh and jnp.atan2 is jnp.arctan2
    assert jnp.pow is jnp.power and jnp.abs is jnp.absolute and jnp.conj is jnp.conjugate
    assert jnp.true_divide is jnp.divide and jnp.mod is jnp.remainder
    assert jnp.around is jnp.round and jnp.invert is jnp.bitwise_not


def test_lists_rejected():
    with pytest.raises(TypeError):
        jnp.sin([1.0, 2.0])
    with pytest.raises(TypeError):
        jnp.add([1], 2)


# ---- binary arithmetic with JAX's promotion ----

PAIRS = [  # (x dtype, y dtype, JAX result dtype with x64 off)
    (B, B, B), (B, I8, I8), (I8, U8, np.int16), (I8, I32, I32), (U8, U32, U32),
    (U32, I32, I32), (I32, F16, F16), (U8, bf16, bf16), (F16, bf16, F32), (bf16, F32, F32),
    (F32, C64, C64), (bf16, C64, C64), (I8, F32, F32), (B, F16, F16), (I32, C64, C64),
]


def _np_binop(name, x, y, out_dtype):
    out_dtype = np.dtype(out_dtype)
    if out_dtype.kind in "biu":
        return getattr(np, name)(x.astype(out_dtype), y.astype(out_dtype))
    wd = np.complex128 if out_dtype.kind == "c" else np.float64
    return getattr(np, name)(wide(x).astype(wd), wide(y).astype(wd))


@pytest.mark.parametrize("xd,yd,rd", PAIRS, ids=lambda d: str(np.dtype(d)))
@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "minimum"])
def test_binary_promotion(name, xd, yd, rd):
    x, y = sample(xd, (3, 4)), sample(yd, (4,))
    if name == "subtract" and rd == B:
        with pytest.raises(TypeError):
            jnp.subtract(x, y)
        return
    out = getattr(jnp, name)(x, y)
    if rd == B and name in ("add", "multiply"):
        ref = (np.logical_or if name == "add" else np.logical_and)(x, y)
    else:
        ref = _np_binop(name, x, y, rd)
    assert_close(out, ref, rd)
    assert not out.weak_type


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_weak_python_scalars_keep_dtype(dtype):
    x = sample(dtype, (5,))
    if dtype != B:
        assert jnp.add(x, 1).dtype == dtype
        assert jnp.multiply(2, x).dtype == dtype
    assert jnp.add(x, 1.0).dtype == inexact_of(dtype) if dtype != B else True
    assert jnp.add(x, 1j).dtype == C64
    out = jnp.add(jnp.ones(3, jnp.bfloat16), 1.0)
    assert out.dtype == bf16 and not out.weak_type
    w = jnp.add(1.0, 2)
    assert w.dtype == F32 and w.weak_type


@pytest.mark.parametrize("xd,yd,rd", [(I32, I32, F32), (I8, U8, F32), (F16, F16, F16),
                                      (bf16, bf16, bf16), (C64, F32, C64), (B, B, F32)],
                         ids=str)
def test_true_divide(xd, yd, rd):
    x, y = sample(xd), sample(yd, lo=1, hi=4)
    y = np.where(y == 0, np.ones_like(y), y)
    assert_close(jnp.divide(x, y), _np_binop("true_divide", x, y, rd), rd)


@pytest.mark.parametrize("dtype", [I8, I32, U8, U32, F16, bf16, F32], ids=str)
def test_floor_divide_remainder_fmod_divmod(dtype):
    x = sample(dtype, (40,), -9, 9)
    y = sample(dtype, (40,), -4, 4)
    y = np.where(y == 0, np.ones_like(y), y)
    if dtype.kind == "f" or dtype == bf16:
        x, y = x.astype(np.float32).astype(dtype), y.astype(np.float32).astype(dtype)
        ref_x, ref_y = x.astype(np.float64), y.astype(np.float64)
        tol = 0.1 if dtype == bf16 else TOL[np.dtype(dtype)]
    else:
        ref_x, ref_y, tol = x, y, None
    for name in ("floor_divide", "remainder", "fmod"):
        assert_close(getattr(jnp, name)(x, y), getattr(np, name)(ref_x, ref_y), dtype, tol)
    q, r = jnp.divmod(x, y)
    rq, rr = np.divmod(ref_x, ref_y)
    assert_close(q, rq, dtype, tol)
    assert_close(r, rr, dtype, tol)


def test_floor_divide_python_semantics():
    x = jnp.array([7, -7, 7, -7])
    y = jnp.array([2, 2, -2, -2])
    np.testing.assert_array_equal(np.asarray(x // y), [3, -4, -4, 3])
    np.testing.assert_array_equal(np.asarray(x % y), [1, 1, -1, -1])
    np.testing.assert_array_equal(np.asarray(jnp.fmod(x, y)), [1, -1, 1, -1])
    f = jnp.array([7.5, -7.5])
    np.testing.assert_allclose(np.asarray(f // 2), [3, -4])
    np.testing.assert_allclose(np.asarray(f % 2), [1.5, 0.5])
    np.testing.assert_allclose(np.asarray(jnp.floor_divide(jnp.array([1.0, -1.0]), 0.0)),
                               [np.inf, -np.inf])
    assert jnp.floor_divide(True, True).dtype == I32


def test_integer_division_by_zero_does_not_crash():
    x = jnp.array([5, -5, 0], jnp.int32)
    z = jnp.zeros(3, jnp.int32)
    for fn in (jnp.floor_divide, jnp.remainder, jnp.fmod, jnp.divide):
        out = fn(x, z)
        np.asarray(out)  # computed without trapping
    np.testing.assert_array_equal(np.asarray(jnp.remainder(x, z)), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(jnp.fmod(x, z)), [0, 0, 0])
    u = jnp.floor_divide(jnp.array([3], jnp.uint8), jnp.array([0], jnp.uint8))
    assert u.dtype == U8


@pytest.mark.parametrize("dtype", [I8, I32, U8, U32, F16, bf16, F32, C64], ids=str)
def test_power(dtype):
    x = sample(dtype, (10,), -2, 3)
    for e in (0, 1, 2, 3, 5):
        assert_close(jnp.power(x, e), np.power(wide(x), e).astype(wide(x).dtype), dtype)
    if dtype.kind in "iu":
        y = sample(dtype, (10,), 0, 4)
        assert_close(jnp.power(x, y), np.power(x, y), dtype)
        with pytest.raises(TypeError):
            jnp.power(x, -1)
    else:
        y = sample(dtype, (10,), 0.5, 2)
        xp = np.abs(wide(x)) + 0.5 if dtype != C64 else wide(x)
        xp = xp.astype(dtype)
        assert_close(jnp.power(xp, y), np.power(wide(xp), wide(y)), dtype,
                     tol=3 * TOL[np.dtype(dtype)])
        assert_close(jnp.power(x, -2), np.power(wide(x), -2.0), dtype,
                     tol=3 * TOL[np.dtype(dtype)])


def test_power_uses_integer_pow_for_concrete_int_exponent():
    jaxpr = str(pyjax.make_jaxpr(lambda a: a ** 3)(jnp.ones(3)))
    assert "integer_pow" in jaxpr and "y=3" in jaxpr
    jaxpr = str(pyjax.make_jaxpr(lambda a, b: a ** b)(jnp.ones(3), jnp.ones(3)))
    assert "integer_pow" not in jaxpr and "pow" in jaxpr
    out = jnp.power(jnp.array([3.0]), 2)
    assert float(out[0]) == 9.0
    w = jnp.power(2, 3)
    assert int(w) == 8 and w.dtype == I32 and w.weak_type
    assert jnp.power(jnp.arange(3, dtype=jnp.int8), 2).dtype == I8
    assert jnp.power(jnp.array([True, False]), 2).dtype == I32
    np.testing.assert_array_equal(np.asarray(jnp.power(2, jnp.arange(5))), 2 ** np.arange(5))
    assert not jnp.power(2, jnp.arange(5)).weak_type


def test_float_power():
    x, y = np.array([3, 1, -5]), np.array([2, 4, -1])
    out = jnp.float_power(x, y)
    assert out.dtype == F32
    np.testing.assert_allclose(np.asarray(out), np.float_power(x, y), rtol=1e-6)


# ---- sign-like and rounding ----

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_negative_positive_absolute_sign(dtype):
    x = sample(dtype)
    if dtype == B:
        with pytest.raises(TypeError):
            jnp.negative(x)
        assert_close(jnp.absolute(x), x, B)
        assert_close(jnp.positive(x), x, B)
        return
    assert_close(jnp.negative(x), np.negative(x) if dtype.kind != "V" else -wide(x), dtype)
    assert_close(jnp.positive(x), x.astype(np.float32) if dtype == bf16 else x, dtype)
    absd = F32 if dtype == C64 else dtype
    assert_close(jnp.absolute(x), np.abs(wide(x)), absd)
    assert_close(jnp.sign(x), np.sign(wide(x)), dtype)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_floor_ceil_trunc_fix(dtype):
    x = sample(dtype, lo=-4, hi=4)
    if dtype == C64:
        for name in ("floor", "ceil", "trunc"):
            with pytest.raises(TypeError):
                getattr(jnp, name)(x)
        return
    for name in ("floor", "ceil", "trunc", "fix"):
        ref = getattr(np, name)(wide(x))
        assert_close(getattr(jnp, name)(x), ref, dtype)


def test_round_half_to_even_and_decimals():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.675, 1234.5678], np.float32)
    for d in (0, 1, 2, -1, -2):
        assert_close(jnp.round(x, d), np.round(x, d), F32, tol=1e-6)
    xi = np.array([15, 25, -15, 100, 7], np.int8)
    for d in (0, 1, -1, -2, -3):
        assert_close(jnp.round(xi, d), np.round(xi, d), I8)
    xc = np.array([1.5 + 2.5j, -0.5 - 1.5j], np.complex64)
    assert_close(jnp.around(xc), np.round(xc), C64)
    xh = np.array([0.125, 65000.0], np.float16)
    assert_close(jnp.round(xh, 2), np.round(xh.astype(np.float64), 2), F16, tol=1e-2)
    assert_close(jnp.rint(np.array([0.5, 1.5, -2.5], np.float32)), [0, 2, -2], F32)
    assert jnp.rint(np.arange(3, dtype=np.int8)).dtype == F32


def test_sign_complex_numpy2():
    x = np.array([3 + 4j, 0j, -1j], np.complex64)
    assert_close(jnp.sign(x), np.sign(x.astype(np.complex128)), C64)


# ---- comparisons and extrema ----

@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater",
                                  "greater_equal"])
def test_comparisons(name, dtype):
    x = sample(dtype, (20,), -2, 2)
    y = np.concatenate([x[:10], sample(dtype, (10,), -2, 2)])
    if dtype == C64:
        y[:5] = (x[:5].real + 1j * (x[:5].imag + 0.5)).astype(C64)  # tie on the real part
    out = getattr(jnp, name)(x, y)
    assert_close(out, getattr(np, name)(wide(x), wide(y)), B)
    assert_close(getattr(jnp, name)(x, 1), getattr(np, name)(wide(x), 1), B)


def test_maximum_minimum_nan_and_fmax_fmin():
    x = np.array([1.0, np.nan, np.nan, -0.5, 3.0], np.float32)
    y = np.array([np.nan, 0.0, np.nan, 2.0, -1.0], np.float32)
    for name in ("maximum", "minimum", "fmax", "fmin"):
        assert_close(getattr(jnp, name)(x, y), getattr(np, name)(x, y), F32)
        assert_close(pyjax.jit(getattr(jnp, name))(x, y), getattr(np, name)(x, y), F32)
        for other in (np.float32(0.5), np.float32(np.nan)):  # with a scalar, both orders
            assert_close(getattr(jnp, name)(x, other), getattr(np, name)(x, other), F32)
            assert_close(getattr(jnp, name)(other, y), getattr(np, name)(other, y), F32)
    x64 = x.astype(np.float64)
    assert_close(jnp.maximum(x64.astype(np.float16), 1.0), np.maximum(x64.astype(np.float16), 1.0),
                 np.dtype(np.float16))
    c1 = np.array([1 + 2j, 1 + 1j, 2 + 0j], np.complex64)
    c2 = np.array([1 + 1j, 1 + 3j, 1 + 5j], np.complex64)
    assert_close(jnp.maximum(c1, c2), np.maximum(c1, c2), C64)
    assert_close(jnp.minimum(c1, c2), np.minimum(c1, c2), C64)
    assert_close(jnp.maximum(np.array([1, 5], np.uint8), 3), [3, 5], U8)


# ---- logical and bitwise ----

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_logical(dtype):
    x, y = sample(dtype, (12,), -1, 1), sample(dtype, (12,), -1, 1)
    for name in ("logical_and", "logical_or", "logical_xor"):
        assert_close(getattr(jnp, name)(x, y), getattr(np, name)(wide(x), wide(y)), B)
    assert_close(jnp.logical_not(x), np.logical_not(wide(x)), B)
    assert_close(jnp.logical_and(x, True), np.logical_and(wide(x), True), B)


@pytest.mark.parametrize("dtype", [B, I8, I32, U8, U32], ids=str)
def test_bitwise(dtype):
    x, y = sample(dtype, (10,), -100, 100), sample(dtype, (10,), -100, 100)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        assert_close(getattr(jnp, name)(x, y), getattr(np, name)(x, y), dtype)
    assert_close(jnp.bitwise_not(x), np.invert(x), dtype)
    assert_close(jnp.invert(x), np.invert(x), dtype)
    assert_close(jnp.bitwise_count(x), np.bitwise_count(x), U8)
    if dtype != B:
        s = sample(dtype, (10,), 0, 7)
        assert_close(jnp.left_shift(x, s), np.left_shift(x, s), dtype)
        assert_close(jnp.right_shift(x, s), np.right_shift(x, s), dtype)


def test_bitwise_rejects_floats():
    with pytest.raises(TypeError):
        jnp.bitwise_and(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError):
        jnp.left_shift(jnp.ones(2), 1)


# ---- classification ----

SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], np.float32)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_classification(dtype):
    if dtype in (F16, bf16, F32):
        x = SPECIAL.astype(dtype)
    elif dtype == C64:
        x = np.array([1 + 1j, np.inf + 0j, complex(0, np.nan), complex(-np.inf, 1), 0j],
                     np.complex64)
    else:
        x = sample(dtype)
    xw = x.astype(np.float32) if dtype == bf16 else x
    for name in ("isfinite", "isinf", "isnan"):
        assert_close(getattr(jnp, name)(x), getattr(np, name)(xw), B)
    if dtype == C64:
        with pytest.raises(TypeError):
            jnp.isposinf(x)
        with pytest.raises(TypeError):
            jnp.signbit(x)
        return
    assert_close(jnp.isposinf(x), np.isposinf(xw), B)
    assert_close(jnp.isneginf(x), np.isneginf(xw), B)
    assert_close(jnp.signbit(x), np.signbit(xw), B)


def test_copysign_nextafter():
    x = np.array([1.0, -2.0, 3.0, 0.0], np.float32)
    y = np.array([-1.0, 1.0, -0.0, -5.0], np.float32)
    assert_close(jnp.copysign(x, y), np.copysign(x, y), F32)
    assert np.signbit(np.asarray(jnp.copysign(x, y)))[3]
    out = jnp.nextafter(x, y)
    np.testing.assert_array_equal(np.asarray(out)[:3], np.nextafter(x, y)[:3])
    assert jnp.nextafter(jnp.float16(1), 2).dtype == F16
    assert float(jnp.nextafter(jnp.float16(1), 2)) == float(np.nextafter(np.float16(1),
                                                                          np.float16(2)))


# ---- complex helpers ----

@pytest.mark.parametrize("dtype", [I8, F16, bf16, F32, C64], ids=str)
def test_real_imag_conj_angle(dtype):
    x = sample(dtype)
    rd = F32 if dtype == C64 else dtype
    assert_close(jnp.real(x), np.real(wide(x)), rd)
    assert_close(jnp.imag(x), np.imag(wide(x)), rd)
    assert_close(jnp.conj(x), np.conj(wide(x)), dtype)
    assert_close(jnp.conjugate(x), np.conj(wide(x)), dtype)
    ad = inexact_of(rd)
    xw = wide(x).astype(np.complex128)
    assert_close(jnp.angle(x), np.angle(xw), ad)
    assert_close(jnp.angle(x, deg=True), np.angle(xw, deg=True), ad,
                 tol=100 * TOL.get(ad, 1e-5))
    assert_close(jnp.iscomplex(x), np.iscomplex(x), B)
    assert_close(jnp.isreal(x), np.isreal(x), B)


# ---- binary inexact helpers ----

@pytest.mark.parametrize("dtype", [I32, F16, bf16, F32], ids=str)
@pytest.mark.parametrize("name", ["arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside",
                                  "copysign"])
def test_binary_inexact(name, dtype):
    x, y = sample(dtype, (12,), -3, 3), sample(dtype, (12,), -3, 3)
    ref = getattr(np, name)(wide(x).astype(np.float64), wide(y).astype(np.float64))
    assert_close(getattr(jnp, name)(x, y), ref, inexact_of(dtype), tol=2 * TOL.get(
        inexact_of(dtype)))


def test_hypot_and_logaddexp_extremes():
    big = np.array([1e30, 3.0, np.inf, 0.0], np.float32)
    other = np.array([1e30, 4.0, 1.0, 0.0], np.float32)
    assert_close(jnp.hypot(big, other), np.hypot(big, other), F32)
    a = np.array([np.inf, -np.inf, 1000.0, -1000.0], np.float32)
    b = np.array([np.inf, -np.inf, 1000.0, 1.0], np.float32)
    with np.errstate(invalid="ignore"):
        assert_close(jnp.logaddexp(a, b), np.logaddexp(a, b), F32)
        assert_close(jnp.logaddexp2(a, b), np.logaddexp2(a, b), F32)


def test_logaddexp_derivative_where_the_inputs_tie():
    # d/dx log(e^x + e^y) = e^x / (e^x + e^y): 1/2 each at x == y (softplus'(0) == 1/2);
    # differentiating the max/abs formula gave 0 and 1 there
    import pyjax
    x = np.array([0.0, 0.0, 1.5, -2.0], np.float32)
    y = np.array([0.0, 1.0, 1.5, 3.0], np.float32)
    gx, gy = pyjax.grad(lambda a, b: jnp.sum(jnp.logaddexp(a, b)), argnums=(0, 1))(x, y)
    want = 1 / (1 + np.exp(y.astype(np.float64) - x))
    assert_close(gx, want, F32)
    assert_close(gy, 1 - want, F32)
    gx2 = pyjax.grad(lambda a: jnp.sum(jnp.logaddexp2(a, y)))(x)
    assert_close(gx2, 1 / (1 + 2.0 ** (y.astype(np.float64) - x)), F32)


def test_frexp_ldexp_modf():
    x = np.array([0.0, 1.0, 3.0, -5.0, 0.001, 6e4, np.inf, np.nan], np.float32)
    for dt in (F16, bf16, F32):
        xd = x.astype(dt)
        m, e = jnp.frexp(xd)
        rm, re = np.frexp(xd.astype(np.float32))
        assert m.dtype == dt and e.dtype == I32
        assert_close(m, rm, dt)
        np.testing.assert_array_equal(np.asarray(e), re)
    e = np.array([0, 1, -3, 10, 100, -100, 200, 5], np.int32)
    assert_close(jnp.ldexp(x, e), np.ldexp(x, e), F32)
    assert_close(jnp.ldexp(np.float32(1e-30), np.int32(200)),
                 np.ldexp(np.float32(1e-30), 200), F32)
    with pytest.raises(TypeError):
        jnp.ldexp(1.0, 1.5)
    f, w = jnp.modf(np.array([1.5, -2.25, np.inf, -0.5], np.float32))
    rf, rw = np.modf(np.array([1.5, -2.25, np.inf, -0.5], np.float32))
    assert_close(f, rf, F32)
    assert_close(w, rw, F32)


# ---- where / clip / nan_to_num / isclose ----

def test_where():
    c = np.array([True, False, True])
    assert_close(jnp.where(c, np.arange(3), 10), np.where(c, np.arange(3), 10), I32)
    out = jnp.where(np.array([[1], [0]]), np.ones(3, np.float16), 2.5)
    assert_close(out, np.where(np.array([[1], [0]]), 1.0, 2.5) * np.ones((2, 3)), F16)
    w = jnp.where(True, 1.0, 2.0)
    assert w.dtype == F32 and w.weak_type and float(w) == 1.0
    assert jnp.where(c, np.int8(1), np.uint8(2)).dtype == np.int16
    with pytest.raises(ValueError):
        jnp.where(c, 1)
    with pytest.raises(TypeError):
        jnp.where([True], 1, 2)


def test_where_one_argument_is_nonzero():
    out = jnp.where(np.array([0, 3, 0, 5]))
    assert isinstance(out, tuple) and len(out) == 1
    np.testing.assert_array_equal(np.asarray(out[0]), [1, 3])


def test_clip():
    x = np.arange(-3, 4)
    assert_close(jnp.clip(x, -1, 2), np.clip(x, -1, 2), I32)
    assert_close(jnp.clip(x, min=0), np.clip(x, 0, None), I32)
    assert_close(jnp.clip(x, max=1), np.clip(x, None, 1), I32)
    assert_close(jnp.clip(x, 0.5, 2), np.clip(x, 0.5, 2), F32)
    assert_close(jnp.clip(x, np.array([0, 1, 2, 3, 4, 5, 6]), 4),
                 np.clip(x, np.arange(7), 4), I32)
    assert_close(jnp.clip(np.array([np.nan, 1.0], np.float32), 0, 0.5), [np.nan, 0.5], F32)
    assert_close(jnp.clip(x), x, I32)
    with pytest.warns(DeprecationWarning):
        out = jnp.clip(x, a_min=0, a_max=1)
    assert_close(out, np.clip(x, 0, 1), I32)
    with pytest.warns(DeprecationWarning):
        out = jnp.clip(a=x, a_max=1)
    assert_close(out, np.clip(x, None, 1), I32)
    with pytest.raises(ValueError):
        jnp.clip(np.array([1j]), 0, 1)


@pytest.mark.parametrize("dtype", [I32, F16, bf16, F32, C64], ids=str)
def test_nan_to_num(dtype):
    if dtype == C64:
        x = np.array([complex(np.nan, np.inf), 1 + 1j, complex(-np.inf, 2)], C64)
    elif dtype == I32:
        x = np.arange(3, dtype=np.int32)
    else:
        x = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32).astype(dtype)
    xr = x.astype(np.float32) if dtype == bf16 else x
    ref = np.nan_to_num(xr)
    if dtype == bf16:
        ref = np.where(np.isposinf(xr), float(ml_dtypes.finfo(bf16).max), ref)
        ref = np.where(np.isneginf(xr), float(ml_dtypes.finfo(bf16).min), ref)
    assert_close(jnp.nan_to_num(x), ref, dtype)
    if dtype not in (I32, C64):
        assert_close(jnp.nan_to_num(x, nan=-1, posinf=9, neginf=-9),
                     np.nan_to_num(xr, nan=-1, posinf=9, neginf=-9), dtype)


def test_isclose():
    a = np.array([1.0, 1.0, np.inf, np.inf, np.nan, 0.0, 1e-9], np.float32)
    b = np.array([1.0 + 1e-6, 1.1, np.inf, -np.inf, np.nan, 1e-9, 0.0], np.float32)
    assert_close(jnp.isclose(a, b), np.isclose(a, b), B)
    assert_close(jnp.isclose(a, b, equal_nan=True), np.isclose(a, b, equal_nan=True), B)
    assert_close(jnp.isclose(a, b, rtol=0.2), np.isclose(a, b, rtol=0.2), B)
    assert_close(jnp.isclose(100, 101, rtol=0.1), np.isclose(100, 101, rtol=0.1), B)
    c = np.array([1 + 1j, 1 + 1.1j], np.complex64)
    assert_close(jnp.isclose(c, 1 + 1j), np.isclose(c, 1 + 1j), B)


# ---- 0-d, empty, jit ----

@pytest.mark.parametrize("name", ["add", "floor_divide", "remainder", "power", "arctan2",
                                  "logical_xor", "maximum", "hypot"])
def test_binary_zero_d_and_empty(name):
    fn = getattr(jnp, name)
    x0, y0 = np.float32(2.5), np.float32(1.5)
    np.testing.assert_allclose(np.asarray(fn(x0, y0)), getattr(np, name)(x0, y0), rtol=1e-6)
    assert fn(x0, y0).shape == ()
    out = fn(np.zeros((0, 2), np.float32), np.ones(2, np.float32))
    assert out.shape == (0, 2)


def test_ufuncs_under_jit():
    def f(x, y):
        return (jnp.floor_divide(x, y), jnp.remainder(x, y), x ** 2, jnp.power(x, y),
                jnp.where(x > 0, x, y), jnp.clip(x, -1, 1), jnp.isnan(x), jnp.round(x, 1),
                jnp.sign(x), jnp.logaddexp(x, y))
    x = np.array([-2.5, 0.0, 3.25], np.float32)
    y = np.array([1.5, 2.0, -0.75], np.float32)
    outs = pyjax.jit(f)(x, y)
    refs = (np.floor_divide(x, y), np.remainder(x, y), x ** 2, np.power(x, y),
            np.where(x > 0, x, y), np.clip(x, -1, 1), np.isnan(x), np.round(x, 1), np.sign(x),
            np.logaddexp(x, y))
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(np.asarray(o), r, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_int_pow_traced_exponent_under_jit():
    f = pyjax.jit(lambda a, b: jnp.power(a, b))
    a = np.array([2, -3, 0, 1, 5], np.int32)
    b = np.array([10, 3, 0, 7, 2], np.int32)
    np.testing.assert_array_equal(np.asarray(f(a, b)), np.power(a, b))


def test_no_warnings_for_plain_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.add(jnp.ones(2), 1)
        jnp.sqrt(jnp.ones(2))
