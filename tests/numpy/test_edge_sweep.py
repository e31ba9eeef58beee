"""A differential sweep of ``jnp`` against NumPy at the edges: NaN and +-inf in every
position, signed zeros, empty arrays, integer wrap-around, extreme magnitudes, low-precision
floats, complex specials. Each family runs eagerly and as ONE jitted program (all of its
cases in one call), and both must equal the oracle: NumPy, or NumPy plus JAX 0.10.2's
documented rule where the two differ (the JAX value observed is quoted in a comment).

Subnormal inputs are left out of the NumPy comparisons: XLA's CPU code flushes them to zero
in float arithmetic, in JAX as in pyjax. The regression tests at the end pin each bug the
sweep found."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

F32 = np.float32
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, -0.5, 1.5,
                    3.0e38, -3.0e38, 88.0, 89.0, -80.0, 710.0, 1e-8, -1e-8, 7.0], F32)
SMALL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -3.5, 0.5], F32)
TINY = 2e-38  # results below float32's smallest normal may be flushed to zero


def _np(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _same(got, want, dtype=None, rtol=2e-6, atol=TINY, zeros=False, what=""):
    """``got`` equals ``want``: dtype (``dtype``, or want's canonicalised), shape, NaN
    positions, values within rtol (exact for integers and bools), and with ``zeros`` the sign
    of every zero."""
    got = np.asarray(got)
    want = np.asarray(want)
    if dtype is None:
        dtype = {np.dtype(np.float64): F32, np.dtype(np.int64): np.int32,
                 np.dtype(np.complex128): np.complex64}.get(want.dtype, want.dtype)
    assert got.dtype == np.dtype(dtype), (what, got.dtype, dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.dtype.kind in "fcV" or got.dtype.name == "bfloat16":
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        w = want.astype(g.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
        if zeros:
            z = (g == 0) & (w == 0)
            np.testing.assert_array_equal(np.signbit(g.real[z]), np.signbit(w.real[z]),
                                          err_msg=f"{what}: sign of zero")
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)


def _eager_and_jit(fns, *args):
    """Runs every function in ``fns`` eagerly, and all of them as one jitted program."""
    arrays = [jnp.asarray(a) for a in args]  # so operators and methods are pyjax's
    eager = [f(*arrays) for f in fns]
    jitted = pyjax.jit(lambda *a: [f(*a) for f in fns])(*args)
    return eager, jitted


# ---- elementwise over special values --------------------------------------------------------

UNARY = ["abs", "negative", "positive", "floor", "ceil", "trunc", "rint", "sqrt", "cbrt",
         "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
         "deg2rad", "rad2deg", "reciprocal", "signbit", "isnan", "isinf", "isfinite",
         "isposinf", "isneginf", "sinc", "spacing", "nan_to_num", "fabs", "logical_not",
         "angle", "sign"]
# functions whose zeros must keep their sign (NumPy and JAX agree on them)
SIGNED_ZEROS = {"abs", "negative", "positive", "floor", "ceil", "trunc", "rint", "sqrt", "cbrt",
                "expm1", "log1p", "sin", "tan", "arcsin", "arctan", "sinh", "tanh", "arcsinh",
                "arctanh", "deg2rad", "rad2deg", "fabs"}


def test_unary_float32_specials():
    fns = [getattr(jnp, n) for n in UNARY]
    eager, jitted = _eager_and_jit(fns, SPECIAL)
    for name, e, j in zip(UNARY, eager, jitted):
        want = _np(getattr(np, name), SPECIAL)
        for got in (e, j):
            _same(got, want, rtol=1e-5, zeros=name in SIGNED_ZEROS, what=name)


LOW = ["abs", "negative", "floor", "ceil", "trunc", "rint", "sqrt", "exp", "log", "log1p",
       "sin", "tanh", "reciprocal", "signbit", "isnan", "isinf", "square", "nan_to_num",
       "spacing"]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_unary_low_precision_specials(dt):
    dt = np.dtype(jnp.bfloat16) if dt == "bfloat16" else np.dtype(dt)
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 3.0, -2.5, 0.1, 60000.0], F32)
    xl = x.astype(dt)
    eager, jitted = _eager_and_jit([getattr(jnp, n) for n in LOW], xl)
    for name, e, j in zip(LOW, eager, jitted):
        want = _np(getattr(np, name), xl.astype(F32))
        if name == "spacing":  # float16's own spacing is toward +inf, in NumPy and in JAX
            # 0.10.2 (jnp.spacing(jnp.float16(-2.5)) == 1.953e-03); JAX gives inf at -inf
            if dt != np.float16:
                continue
            want = _np(np.spacing, xl)
            want[np.isneginf(xl)] = np.inf
            _same(e, want, rtol=0, atol=0, what=name)
            _same(j, want, rtol=0, atol=0, what=name)
            continue
        if name == "nan_to_num":  # infinities become the low-precision type's extremes
            info = ml_dtypes.finfo(dt)
            want = np.nan_to_num(xl.astype(F32), posinf=float(info.max), neginf=float(info.min))
        if want.dtype == F32:
            want = want.astype(dt)
        for got in (e, j):
            _same(got, want, dtype=want.dtype, rtol=1e-2, atol=1e-7, zeros=True, what=name)


BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
          "power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign",
          "nextafter", "logaddexp", "heaviside", "equal", "less", "greater_equal",
          "logical_xor"]


def test_binary_float32_specials():
    a, b = SMALL[:, None], SMALL[None, :]
    eager, jitted = _eager_and_jit([getattr(jnp, n) for n in BINARY], a, b)
    for name, e, j in zip(BINARY, eager, jitted):
        want = _np(getattr(np, name), a, b)
        # maximum/minimum of 0 and -0 may return either zero, and a zero remainder or floor
        # quotient takes the dividend's sign in JAX (NumPy: the divisor's); JAX 0.10.2 gives
        # jnp.remainder(jnp.array([5., -5.]), jnp.array([-2.5, 2.5])) == [0., -0.]
        zeros = name not in ("maximum", "minimum", "fmax", "fmin", "remainder",
                             "floor_divide")
        for got in (e, j):
            _same(got, want, rtol=1e-6, atol=1e-6 if name == "logaddexp" else TINY,
                  zeros=zeros, what=name)


def test_signed_zero_and_division_edges():
    pz, nz = F32(0.0), F32(-0.0)
    x = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 5.0, -5.0], F32)
    y = np.array([0.0, 0.0, -0.0, -0.0, -0.0, 0.0, -2.5, 2.5], F32)
    fns = [jnp.arctan2, jnp.divide, jnp.copysign, jnp.floor_divide, jnp.remainder, jnp.fmod,
           lambda u, v: jnp.divmod(u, v)[1], lambda u, v: jnp.mod(u, -2.5),
           lambda u, v: jnp.fmod(u, -2.5), lambda u, v: u // nz, lambda u, v: u * pz]
    npf = [np.arctan2, np.divide, np.copysign, np.floor_divide, np.remainder, np.fmod,
           lambda u, v: np.divmod(u, v)[1], lambda u, v: np.mod(u, F32(-2.5)),
           lambda u, v: np.fmod(u, F32(-2.5)), lambda u, v: u // nz, lambda u, v: u * pz]
    eager, jitted = _eager_and_jit(fns, x, y)
    for k, (e, j) in enumerate(zip(eager, jitted)):
        want = _np(npf[k], x, y)
        zeros = k not in (3, 4, 6, 7)  # floor_divide/remainder zeros: see the test above
        _same(e, want, zeros=zeros, what=str(k))
        _same(j, want, zeros=zeros, what=str(k))
    r = np.array([-0.4, -0.6, 0.4, -0.0, -2.5, 2.5, 3.5, -3.5, 0.5, -0.5], F32)
    for f in (jnp.trunc, jnp.rint, jnp.round, jnp.floor, jnp.ceil):
        want = getattr(np, f.__name__)(r)
        _same(f(r), want, zeros=True, what=f.__name__)
        _same(pyjax.jit(f)(r), want, zeros=True, what=f.__name__)


INTS = {"int8": np.array([-128, -127, -1, 0, 1, 2, 126, 127], np.int8),
        "uint8": np.array([0, 1, 2, 127, 128, 254, 255], np.uint8),
        "int32": np.array([-2**31, -2**31 + 1, -7, -1, 0, 1, 3, 7, 2**31 - 1], np.int32),
        "uint32": np.array([0, 1, 3, 2**31, 2**32 - 1], np.uint32)}
INT_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_and",
              "bitwise_xor", "gcd", "lcm"]
# with nonzero divisors NumPy is the oracle; INT_MIN // -1 wraps to INT_MIN in both
INT_DIV = ["floor_divide", "remainder", "fmod"]


@pytest.mark.parametrize("dt", list(INTS))
def test_integer_wraparound(dt):
    x = INTS[dt]
    a, b = x[:, None], x[None, :]
    binary = [getattr(jnp, n) for n in INT_BINARY + INT_DIV]
    unary = [jnp.negative, jnp.abs, jnp.square, jnp.cumsum,
             lambda u: jnp.sum(u, dtype=u.dtype), lambda u: jnp.prod(u, dtype=u.dtype)]
    fns = [lambda u, v, f=f: f(u, v) for f in binary] + [lambda u, v, f=f: f(u) for f in unary]
    eager, jitted = _eager_and_jit(fns, a, b)
    nonzero = np.broadcast_to(b != 0, (x.size, x.size))
    for k, name in enumerate(INT_BINARY + INT_DIV):
        want = _np(getattr(np, name), a, b)
        for got in (eager[k], jitted[k]):
            got = np.asarray(got)
            assert got.dtype == x.dtype, (name, got.dtype)
            if name in INT_DIV:
                np.testing.assert_array_equal(got[nonzero], want[nonzero], err_msg=name)
                # integer division by zero, as XLA and JAX 0.10.2 define it: a signed
                # floor_divide(x, 0) is -1 for x == 0 and -2 otherwise (XLA's -1, floored
                # once more), an unsigned one all ones (255 for uint8); remainder and fmod 0
                zero_want = 0 * a
                if name == "floor_divide":
                    zero_want = (np.where(a == 0, -1, -2) if x.dtype.kind == "i"
                                 else np.full(a.shape, np.iinfo(x.dtype).max))
                zero_want = np.broadcast_to(zero_want, got.shape).astype(x.dtype)
                np.testing.assert_array_equal(got[~nonzero], zero_want[~nonzero],
                                              err_msg=name)
            else:
                np.testing.assert_array_equal(got, want.astype(x.dtype), err_msg=name)
    n = len(binary)
    unary_want = [_np(np.negative, a), _np(np.abs, a), _np(np.square, a),
                  np.cumsum(a, dtype=x.dtype), np.sum(a, dtype=x.dtype),
                  np.prod(a, dtype=x.dtype)]
    for k, want in enumerate(unary_want):
        for got in (eager[n + k], jitted[n + k]):
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(k))
            assert np.asarray(got).dtype == want.dtype, (k, np.asarray(got).dtype)


def test_float_to_int_casts_saturate():
    # JAX 0.10.2 (XLA's conversion): NaN -> 0, the rest truncated toward zero and clamped to
    # the integer range, e.g. jnp.array([nan, inf, -inf, 1e20]).astype(jnp.int8) ==
    # [0, 127, -128, 127] and -1.5 -> uint8 gives 0 (NumPy's casts are undefined there)
    x = np.array([np.nan, np.inf, -np.inf, -1.5, -0.5, 0.5, 1.5, 127.5, 128.0, 255.9, 256.0,
                  -129.0, 3e9, -3e9, 2.1e9, 4.2e9, 1e20, -1e20], F32)
    dts = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]
    eager, jitted = _eager_and_jit([lambda v, d=d: v.astype(d) for d in dts], x)
    for d, e, j in zip(dts, eager, jitted):
        info = np.iinfo(d)
        want = np.clip(np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf,
                                              neginf=-np.inf)), info.min, info.max).astype(d)
        _same(e, want, what=np.dtype(d).name)
        _same(j, want, what=np.dtype(d).name)
    _same(jnp.asarray(x).astype(bool), x.astype(bool))


# JAX 0.10.2's result dtypes with Python scalars (weak types), observed: an int8 or uint8
# array stays itself with ints (2 ** x too), becomes float32 with floats and complex64 with
# complex; float16/bfloat16 stay themselves with floats; bools become int32 with ints
WEAK = {"int8": ("int8", "float32"), "uint8": ("uint8", "float32"),
        "float16": ("float16", "float16"), "bfloat16": ("bfloat16", "bfloat16"),
        "bool": ("int32", "float32"), "uint32": ("uint32", "float32")}


@pytest.mark.parametrize("dt", list(WEAK))
def test_python_scalars_are_weak(dt):
    x = np.array([0, 1, 2, 3], np.dtype(jnp.bfloat16) if dt == "bfloat16" else dt)
    ops = [lambda v: v + 1, lambda v: v * 2.5, lambda v: v + 1j, lambda v: v // 2,
           lambda v: 2 ** v, lambda v: v ** 2, lambda v: v / 2]
    eager, jitted = _eager_and_jit(ops, x)
    int_dt, float_dt = WEAK[dt]
    kinds = [int_dt, float_dt, "complex64", int_dt, int_dt, int_dt, float_dt]
    xf = x.astype(np.float64)
    values = [xf + 1, xf * 2.5, xf + 1j, xf // 2, 2 ** xf, xf ** 2, xf / 2]
    for k, (e, j) in enumerate(zip(eager, jitted)):
        want_dt = np.dtype(jnp.bfloat16) if kinds[k] == "bfloat16" else np.dtype(kinds[k])
        _same(e, values[k].astype(want_dt), dtype=want_dt, rtol=1e-2, what=str(k))
        _same(j, values[k].astype(want_dt), dtype=want_dt, rtol=1e-2, what=str(k))


# ---- reductions with NaN/inf in every position, and empty axes --------------------------------

ROWS = np.array([[np.nan, 1.0, 2.0, 5.0], [1.0, np.nan, 2.0, 5.0], [1.0, 2.0, np.nan, 5.0],
                 [1.0, 2.0, 5.0, np.nan], [np.nan, np.nan, 5.0, 5.0],
                 [np.inf, -np.inf, 1.0, 5.0], [-np.inf, np.nan, np.inf, 5.0],
                 [np.inf, np.inf, 3.0e38, 3.0e38], [2.0, 1.0, 2.0, 1.0],
                 [np.nan, np.nan, np.nan, np.nan]], F32)
REDUCTIONS = ["sum", "prod", "mean", "min", "max", "argmin", "argmax", "nansum", "nanprod",
              "nanmean", "nanmin", "nanmax", "var", "std", "nanvar", "nanstd", "median",
              "nanmedian", "ptp", "cumsum", "cumprod", "nancumsum", "nancumprod", "sort",
              "argsort", "count_nonzero", "all", "any"]


@pytest.mark.parametrize("axis", [1, 0])
def test_reductions_with_nan_and_inf_everywhere(axis):
    x = ROWS if axis == 1 else np.ascontiguousarray(ROWS.T)
    fns = [lambda v, n=n: getattr(jnp, n)(v, axis=axis) for n in REDUCTIONS]
    eager, jitted = _eager_and_jit(fns, x)
    for name, e, j in zip(REDUCTIONS, eager, jitted):
        if name == "argsort":
            want = np.argsort(x, axis=axis, kind="stable")
        else:
            want = _np(getattr(np, name), x, axis)
        for got in (e, j):
            _same(got, want, rtol=1e-5, what=name)
    # an all-NaN slice: nanargmin/nanargmax give -1 (JAX's documented value; NumPy raises)
    for f in (jnp.nanargmin, jnp.nanargmax):
        want = np.where(np.isnan(x).all(axis=axis), -1,
                        _np(getattr(np, f.__name__), np.where(np.isnan(x), 0, x) +
                            np.where(np.isnan(x), np.inf if "min" in f.__name__ else -np.inf,
                                     0), axis))
        _same(f(x, axis=axis), want, what=f.__name__)


EMPTY = {"(0,)": np.zeros((0,), F32), "(0,3)": np.zeros((0, 3), F32),
         "(3,0)": np.zeros((3, 0), F32)}


@pytest.mark.parametrize("shape", list(EMPTY))
def test_reductions_over_empty_axes(shape):
    x = EMPTY[shape]
    names = ["sum", "prod", "mean", "nansum", "nanmean", "var", "std", "cumsum", "cumprod",
             "all", "any", "count_nonzero", "sort", "argsort"]
    axes_ = [None] + list(range(x.ndim))
    fns = [lambda v, n=n, a=a: getattr(jnp, n)(v, axis=a) for n in names for a in axes_
           if not (a is None and n in ("sort", "argsort"))]
    keys = [(n, a) for n in names for a in axes_ if not (a is None and n in ("sort", "argsort"))]
    eager, jitted = _eager_and_jit(fns, x)
    for (name, ax), e, j in zip(keys, eager, jitted):
        want = _np(getattr(np, name), x, ax)
        for got in (e, j):
            _same(got, want, what=f"{name} axis={ax}")
    for name in ("min", "max", "argmin", "argmax", "nanmin", "ptp"):
        with pytest.raises(ValueError):
            getattr(jnp, name)(x)
    np.testing.assert_array_equal(jnp.min(x, initial=3.0), 3.0)


def test_var_std_ddof_at_and_beyond_the_count():
    x = np.array([1.0, 2.0, 4.0], F32)
    # JAX 0.10.2: jnp.var(jnp.array([1., 2., 4.]), ddof=3) and ddof=5 are nan (NumPy: inf
    # with a warning); nanvar/nanstd and complex inputs alike
    fns = [lambda v, d=d, f=f: f(v, ddof=d) for d in (2, 3, 5)
           for f in (jnp.var, jnp.std, jnp.nanvar, jnp.nanstd)]
    eager, jitted = _eager_and_jit(fns, x)
    for k, (e, j) in enumerate(zip(eager, jitted)):
        d = (2, 3, 5)[k // 4]
        f = (np.var, np.std, np.nanvar, np.nanstd)[k % 4]
        want = f(x, ddof=d) if d < 3 else np.float32(np.nan)
        _same(e, want, dtype=F32, rtol=1e-6)
        _same(j, want, dtype=F32, rtol=1e-6)
    assert np.isnan(jnp.var(np.array([1 + 1j, 2], np.complex64), ddof=2))
    # per-slice counts: a column with one value and ddof=1 is NaN, the other is a number
    m = np.array([[1.0, np.nan], [2.0, 3.0]], F32)
    _same(jnp.nanvar(m, axis=0, ddof=1), np.array([0.5, np.nan], F32))
    w = np.array([[True, False, False], [True, True, True]])
    _same(jnp.var(np.array([[1.0, 2, 4], [1, 1, 2]], F32), axis=1, ddof=1, where=w),
          np.array([np.nan, np.var([1.0, 1, 2], ddof=1)], F32), rtol=1e-6)
    # a negative ddof still counts
    _same(jnp.var(x, ddof=-1), np.var(x, ddof=-1), rtol=1e-6)


QUANTILE_METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf",
                    "averaged_inverted_cdf", "closest_observation",
                    "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                    "normal_unbiased"]


def test_quantile_every_method():
    x = np.array([[1.0, 3.0, 2.0, 7.0, 4.0], [1.0, np.nan, 3.0, 0.0, 2.0]], F32)
    q = np.array([0.0, 0.1, 0.25, 0.4, 0.6, 0.9, 1.0], F32)
    cases = [(m, f) for m in QUANTILE_METHODS for f in ("quantile", "nanquantile")
             if f == "quantile" or m in ("linear", "nearest", "inverted_cdf", "weibull")]
    fns = [lambda v, p, m=m, f=f: getattr(jnp, f)(v, p, axis=1, method=m) for m, f in cases]
    eager, jitted = _eager_and_jit(fns, x, q)
    for (m, fname), e, j in zip(cases, eager, jitted):
        f = getattr(np, fname)
        want = _np(lambda a, b: f(a, b, axis=1, method=m), x, q)
        for got in (e, j):
            _same(got, want, dtype=F32, rtol=1e-6, what=f"{f.__name__} {m}")
    _same(jnp.nanpercentile(x, 50, axis=1), np.nanpercentile(x, 50, axis=1), rtol=1e-6)
    _same(jnp.median(x, axis=1), np.median(x, axis=1))
    _same(jnp.nanmedian(x, axis=1), np.nanmedian(x, axis=1))
    _same(jnp.quantile(np.array([1, 5, 2, 8], np.int32), 0.3), np.quantile([1, 5, 2, 8], 0.3),
          dtype=F32, rtol=1e-6)


def test_quantile_with_infinities_keeps_them():
    # NumPy's lerp gives inf - inf = nan here; JAX 0.10.2 gives
    # jnp.quantile(jnp.array([-inf, 1, inf]), [0, .1, .25, .5, .6, .9, 1]) ==
    #   [-inf, -inf, -inf, 1, inf, inf, inf] (and the same with method='midpoint')
    x = np.array([-np.inf, 1.0, np.inf], F32)
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.6, 0.9, 1.0], F32)
    want = np.array([-np.inf, -np.inf, -np.inf, 1.0, np.inf, np.inf, np.inf], F32)
    for m in ("linear", "midpoint", "hazen"):
        _same(jnp.quantile(x, q, method=m), want, what=m)
        _same(pyjax.jit(lambda a, b, m=m: jnp.quantile(a, b, method=m))(x, q), want, what=m)
    # the selecting methods never interpolate, so they never make a NaN (all of these were
    # NaN: the selection went through a lerp with weight 0, inf * 0)
    for m in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        for data in (x, np.array([np.inf, np.inf, 1.0], F32)):
            want = np.quantile(data, q, method=m).astype(F32)
            _same(jnp.quantile(data, q, method=m), want, what=m)
    _same(jnp.median(np.array([-np.inf, 1.0, 2.0, np.inf], F32)), F32(1.5))
    _same(jnp.nanmedian(np.array([-np.inf, 1.0, np.nan, np.inf], F32)), F32(1.0))
    # the two infinities of opposite sign have no midpoint
    _same(jnp.median(np.array([-np.inf, np.inf], F32)), F32(np.nan))


# ---- sorting, searching and sets with NaN and signed zeros --------------------------------------

SX = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, -1.0, np.nan, 0.0, -0.0], F32)


def test_sort_search_with_nan_and_signed_zeros():
    srt = np.array([-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan, np.nan], F32)
    fns = [jnp.sort, lambda v: jnp.argsort(v, stable=True), jnp.argmax, jnp.argmin,
           jnp.nanargmax, jnp.nanargmin, jnp.isnan,
           lambda v: jnp.searchsorted(srt, v, side="left"),
           lambda v: jnp.searchsorted(srt, v, side="right"),
           lambda v: jnp.searchsorted(srt, v, method="compare_all"),
           lambda v: jnp.isin(v, np.array([np.nan, 0.0, 1.0], F32)),
           lambda v: jnp.digitize(v, np.array([-1.0, 0.0, 1.0], F32)),
           lambda v: jnp.digitize(v, np.array([1.0, 0.0, -1.0], F32), right=True)]
    npf = [np.sort, lambda v: np.argsort(v, kind="stable"), np.argmax, np.argmin,
           np.nanargmax, np.nanargmin, np.isnan,
           lambda v: np.searchsorted(srt, v, side="left"),
           lambda v: np.searchsorted(srt, v, side="right"),
           lambda v: np.searchsorted(srt, v),
           lambda v: np.isin(v, np.array([np.nan, 0.0, 1.0], F32)),
           lambda v: np.digitize(v, np.array([-1.0, 0.0, 1.0], F32)),
           lambda v: np.digitize(v, np.array([1.0, 0.0, -1.0], F32), right=True)]
    eager, jitted = _eager_and_jit(fns, SX)
    for k, (e, j) in enumerate(zip(eager, jitted)):
        want = npf[k](SX)
        _same(e, want, what=str(k))
        _same(j, want, what=str(k))
    # eager-only functions whose output length depends on the values
    _same(jnp.unique(SX), np.unique(SX))
    u, c = jnp.unique(SX, return_counts=True)
    nu, nc = np.unique(SX, return_counts=True)
    _same(u, nu)
    _same(c, nc)
    _same(jnp.union1d(SX, np.array([np.nan, 2.0], F32)),
          np.union1d(SX, np.array([np.nan, 2.0], F32)))
    _same(jnp.setdiff1d(SX, np.array([0.0], F32)), np.setdiff1d(SX, np.array([0.0], F32)))


# ---- functions with edge arguments -----------------------------------------------------------

def test_histogram_bincount_interp_edges():
    h = np.array([0.0, 1.0, 1.0, 2.5, 3.0, 10.0, -1.0], F32)
    for kw in (dict(bins=4), dict(bins=3, range=(0, 3)), dict(bins=np.array([0, 1, 2.5, 3])),
               dict(bins=3, density=True), dict(bins=3, weights=np.arange(7.0))):
        c, e = jnp.histogram(h, **kw)
        nc, ne = np.histogram(h, **kw)
        _same(c, nc, dtype=F32, rtol=1e-6, what=str(kw))  # JAX counts are floats
        _same(e, ne, rtol=1e-6, what=str(kw))
    c, e = jnp.histogram(np.array([2.0, 2.0], F32), bins=3)
    nc, ne = np.histogram(np.array([2.0, 2.0], F32), bins=3)
    _same(c, nc, dtype=F32)
    _same(e, ne, rtol=1e-6)
    b = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    _same(jnp.bincount(b, minlength=10), np.bincount(b, minlength=10))
    _same(jnp.bincount(b, minlength=2), np.bincount(b, minlength=2))
    _same(jnp.bincount(b, weights=np.arange(7, dtype=F32) / 2),
          np.bincount(b, weights=np.arange(7) / 2), dtype=F32)
    _same(jnp.bincount(np.zeros(0, np.int32), minlength=3), np.zeros(3, np.int32))
    # under a static length negative values count as 0 and values >= length are dropped:
    # JAX 0.10.2 gives jnp.bincount(jnp.array([-1, 0, 5, 2]), length=4) == [2, 0, 1, 0]
    _same(pyjax.jit(lambda v: jnp.bincount(v, length=4))(np.array([-1, 0, 5, 2], np.int32)),
          np.array([2, 0, 1, 0], np.int32))
    xp = np.array([0.0, 1.0, 2.0, 3.0], F32)
    fp = np.array([0.0, 10.0, 20.0, 5.0], F32)
    xq = np.array([-1.0, 0.0, 0.5, 1.0, 2.99, 3.0, 4.0, np.nan, np.inf, -np.inf], F32)
    fns = [lambda v: jnp.interp(v, xp, fp), lambda v: jnp.interp(v, xp, fp, left=-7, right=9),
           lambda v: jnp.interp(v, xp, fp, period=2.5),
           lambda v: jnp.interp(v, xp, fp.astype(np.complex64) * (1 + 1j))]
    npf = [lambda v: np.interp(v, xp, fp), lambda v: np.interp(v, xp, fp, left=-7, right=9),
           lambda v: np.interp(v, xp, fp, period=2.5),
           lambda v: np.interp(v, xp, fp.astype(np.complex64) * (1 + 1j))]
    eager, jitted = _eager_and_jit(fns, xq)
    for k, (e, j) in enumerate(zip(eager, jitted)):
        want = _np(npf[k], xq)
        _same(e, want, rtol=1e-5, what=str(k))
        _same(j, want, rtol=1e-5, what=str(k))


def test_diff_trapezoid_convolve_polynomial_edges():
    d = np.array([1.0, 4.0, np.inf, 2.0, 0.0], F32)
    t = np.array([1.0, 2.0, 4.0, 7.0], F32)
    k = np.array([1.0, -1.0, 0.5], F32)
    def cases(lib):   # the same calls on jnp and on NumPy
        return [lib.diff, lambda v: lib.diff(v, n=2), lambda v: lib.diff(v, n=0),
                lambda v: lib.diff(v, n=9),
                lambda v: lib.diff(v, prepend=-1.0, append=np.array([7.0, 8.0], F32)),
                lambda v: lib.trapezoid(v), lambda v: lib.trapezoid(v, dx=0.5),
                lambda v: lib.trapezoid(v[:1]), lambda v: lib.convolve(v, k),
                lambda v: lib.convolve(k[:2], v, mode="same"),
                lambda v: lib.correlate(v, k, mode="valid"),
                lambda v: lib.polyval(np.array([2.0, -3.0, 0.5], F32), v)]
    fns, npf = cases(jnp), cases(np)
    for arg in (d, t):
        eager, jitted = _eager_and_jit(fns, arg)
        for n, (e, j) in enumerate(zip(eager, jitted)):
            want = _np(npf[n], arg)
            _same(e, want, dtype=F32, rtol=1e-6, what=str(n))
            _same(j, want, dtype=F32, rtol=1e-6, what=str(n))
    _same(jnp.diff(np.array([True, False, True])), np.diff([True, False, True]))
    _same(jnp.diff(np.array([0, 1, 255], np.uint8)), np.diff(np.array([0, 1, 255], np.uint8)))
    px = np.array([0.0, 1.0, 2.0, 3.0, 4.0], F32)
    py = np.array([1.0, 3.0, 7.0, 13.0, 21.0], F32)
    _same(jnp.polyfit(px, py, 2), np.polyfit(px, py, 2), dtype=F32, rtol=1e-4, atol=1e-4)
    _same(jnp.polyfit(px, py, 1, w=np.array([1.0, 2, 1, 0.5, 1], F32)),
          np.polyfit(px, py, 1, w=np.array([1.0, 2, 1, 0.5, 1])), dtype=F32, rtol=1e-4)


def test_round_half_even_and_decimals():
    r = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.125, 0.375, 1234.5678, -1234.5678,
                  15.0, 25.0, 35.0, 1e30, np.nan, np.inf, -0.0, 2.675], F32)
    ds = (-40, -3, -1, 0, 1, 2, 3, 40)
    eager, jitted = _eager_and_jit([lambda v, d=d: jnp.round(v, d) for d in ds], r)
    for d, e, j in zip(ds, eager, jitted):
        want = _np(np.round, r, d)  # in float32, as JAX: round(2.675f, 2) is 2.68
        if abs(d) == 40:  # beyond float32's range of powers of ten: x itself / zeros
            want = r.copy() if d > 0 else np.where(np.isfinite(r), r * 0, r)
        _same(e, want, rtol=1e-6, what=str(d))
        _same(j, want, rtol=1e-6, what=str(d))
    for dt in (np.int8, np.int32, np.uint8):
        i = np.array([-128, -15, -25, -5, 5, 15, 25, 127], np.int64)
        i = i[(i >= np.iinfo(dt).min) & (i <= np.iinfo(dt).max)].astype(dt)
        _same(jnp.round(i, -1), np.round(i, -1))
        _same(jnp.round(i, 2), i)


# ---- regressions: each a silently wrong number the sweep found --------------------------------

def test_frexp_of_subnormals():
    # was (1.4e-45, 0) eagerly and (0.5, -150) under jit for 2**-149: XLA's CPU code treats
    # subnormals as zero in float compares and products, so frexp now works on the bits
    x = np.array([1e-45, 1e-40, -1e-40, 1.17e-38, 1.2e-38, 0.0, -0.0, np.inf, -np.inf,
                  np.nan, 3.0, -2.5, 3e38], F32)
    nm, ne = np.frexp(x)
    for f in (jnp.frexp, pyjax.jit(jnp.frexp)):
        m, e = f(x)
        _same(m, nm, zeros=True, atol=0)
        _same(e, ne)
    h = np.array([6e-8, -6e-8, 1e-5, 0.1, 0.0], np.float16)
    m, e = jnp.frexp(h)
    _same(m, np.frexp(h)[0], atol=0)
    _same(e, np.frexp(h)[1])


def test_complex_sign_keeps_signed_zeros():
    # sign(-1-0j) was -1+0j (a complex division by |z| loses the zero's sign)
    z = np.array([complex(-1, -0.0), complex(0, -2), 3 - 4j, complex(-0.0, 0), 0j,
                  complex(np.nan, 0)], np.complex64)
    want = np.sign(z)
    for f in (jnp.sign, pyjax.jit(jnp.sign)):
        got = np.asarray(f(z))
        _same(got, want)
        np.testing.assert_array_equal(np.signbit(got.imag[:3]), np.signbit(want.imag[:3]))


def test_i0_at_huge_arguments():
    # i0(3e38) was nan (inf / inf); I0(89) fits float32 although e**89 does not
    x = np.array([0.0, 1.0, 50.0, 88.0, 89.0, 91.0, 95.0, 3e38, -3e38], F32)
    want = _np(np.i0, x.astype(np.float64)).astype(F32)
    _same(jnp.i0(x), want, rtol=1e-5)
    _same(pyjax.jit(jnp.i0)(x), want, rtol=1e-5)
    for dt in (np.float16, np.dtype(jnp.bfloat16)):  # low-precision inputs keep their dtype
        assert jnp.i0(np.array([1.0, 89.0], dt)).dtype == dt


def test_heaviside_of_nan_is_nan():
    # heaviside(nan, 0.5) was 0.5; NumPy and JAX 0.10.2 give nan
    x = np.array([np.nan, -1.0, 0.0, -0.0, 2.0], F32)
    want = np.heaviside(x, F32(0.5))
    _same(jnp.heaviside(x, F32(0.5)), want)
    _same(pyjax.jit(jnp.heaviside)(x, F32(0.5)), want)


def test_gcd_lcm_with_int_min():
    # gcd(-128, -127) in int8 was -1 (abs(INT_MIN) wraps); NumPy gives 1. (JAX 0.10.2 does
    # not finish this call: its loop never ends.)
    a = np.array([-128, -128, -128, 0, -6, 12, -9], np.int8)
    b = np.array([-127, 0, -128, 0, 4, -18, 6], np.int8)
    for f, nf in ((jnp.gcd, np.gcd), (jnp.lcm, np.lcm)):
        _same(f(a, b), nf(a, b))
        _same(pyjax.jit(f)(a, b), nf(a, b))
    i = np.array([-2**31, -2**31 + 1, 6], np.int32)
    _same(jnp.gcd(i, np.int32(-2**31 + 1)), np.gcd(i, np.int32(-2**31 + 1)))


def test_reduction_dtypes_as_jax():
    i32 = np.array([-2**31, 2**31 - 1, 5], np.int32)
    # the values pass through the requested dtype first: JAX 0.10.2 gives
    # jnp.sum(jnp.array([-2**31, 2**31-1, 5]), dtype=jnp.float16) == nan (pyjax gave 5)
    _same(jnp.sum(i32, dtype=np.float16), np.float16(np.nan))
    big = np.array([70000, -70000, 1], np.int32)
    _same(jnp.cumsum(big, dtype=np.float16), _np(lambda v: np.cumsum(v, dtype=np.float16), big))
    # cumsum(dtype=bool) is a running "any" (the last entry was False: the int sum wrapped
    # to 0); JAX 0.10.2 gives all True
    i8 = np.array([-128, -127, -1, 0, 1, 2, 126, 127], np.int8)
    _same(jnp.cumsum(i8, dtype=bool), np.cumsum(i8, dtype=bool))
    _same(pyjax.jit(lambda v: jnp.cumsum(v, dtype=bool))(i8), np.cumsum(i8, dtype=bool))
    # mean in an integer dtype sums and divides in it (NumPy and JAX 0.10.2 give -28;
    # pyjax gave 100)
    x = np.array([100, 100], np.int8)
    _same(jnp.mean(x, dtype=np.int8), np.mean(x, dtype=np.int8))
    _same(jnp.mean(np.array([1, 2, -3, -3], np.int32), dtype=np.int32),
          np.mean(np.array([1, 2, -3, -3], np.int32), dtype=np.int32))
    _same(jnp.sum(np.array([100, 100, 100], np.int8), dtype=np.int16), np.int16(300))


def test_polyval_keeps_integer_dtype():
    # JAX 0.10.2: jnp.polyval(jnp.array([1, 2, 3], jnp.int8), jnp.array([1, -2, 3], jnp.int8))
    # is Array([6, 3, 18], dtype=int8); pyjax gave float32
    p = np.array([1, 2, 3], np.int8)
    x = np.array([1, -2, 3], np.int8)
    _same(jnp.polyval(p, x), np.polyval(p, x))
    _same(jnp.polyval(np.array([True, False]), np.array([1, 2], np.int32)),
          np.array([1, 2], np.int32))


def test_spacing_of_zero_and_subnormal_gaps():
    # spacing(0.0) was 0 (nextafter(0, inf) - 0 flushed); NumPy and JAX 0.10.2 give the
    # smallest subnormal, and JAX gives -1.4e-45 for -0.0 (NumPy +1.4e-45)
    x = np.array([0.0, -0.0, 1e-45, -1e-40, 1.2e-38, 1.0, -2.5, 3e38, 3.4028235e38, np.inf],
                 F32)
    want = _np(np.spacing, x)
    want[1] = -want[1]
    for f in (jnp.spacing, pyjax.jit(jnp.spacing)):
        _same(f(x), want, rtol=0, atol=0)


def test_python_ints_wrap_into_narrow_integer_dtypes_eager_and_jit():
    # JAX 0.10.2 (observed): a Python int is a weak int32 first, then converts to the narrower
    # dtype with wrap-around, eagerly and under jit alike: int8 [1, 2] - 200 -> [57, 58];
    # clip(uint8 [1, 250], -1, 300) -> [44, 44]; zeros(int8).at[0].set(1000) -> [-24, 0];
    # an int outside int32 raises OverflowError. pyjax raised under jit only (before).
    x8 = np.array([1, 2], np.int8)
    u8 = np.array([1, 250], np.uint8)
    wrap = lambda v, dt: np.array(v, np.int64).astype(dt)
    cases = [
        (lambda x: x - 200, x8, x8 - wrap(200, np.int8)),
        (lambda x: jnp.maximum(x, 1000), x8, np.maximum(x8, wrap(1000, np.int8))),
        (lambda x: x.at[0].set(1000), x8, np.array([wrap(1000, np.int8), 2], np.int8)),
    ]
    for f, x, want in cases:
        np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), want)
        np.testing.assert_array_equal(np.asarray(pyjax.jit(f)(jnp.asarray(x))), want)
    clip = lambda x: jnp.clip(x, -1, 300)
    want = np.clip(u8, wrap(-1, np.uint8), wrap(300, np.uint8))   # min(max(x, 255), 44)
    np.testing.assert_array_equal(np.asarray(pyjax.jit(clip)(jnp.asarray(u8))), want)
    np.testing.assert_array_equal(np.asarray(clip(jnp.asarray(u8))), want)
    with pytest.raises(OverflowError, match="1099511627776.*int32"):
        pyjax.jit(lambda x: x + 2 ** 40)(jnp.asarray(x8))
