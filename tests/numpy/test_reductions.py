"""pyjax.numpy reductions eagerly and under jit, against NumPy (JAX's dtype rules)."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
from pyjax._src.test_util import ids, rand_small_ints
import pyjax.numpy as jnp
from pyjax._src.core import dtypes

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int32, np.uint8, np.float32,
                                np.complex64)] + [BF16]
FLOATS = [np.dtype(np.float32), BF16]


def rand(shape, dtype, seed=0):
    return rand_small_ints(shape, dtype, seed, lo=-4, hi=5)


def canon(dt):
    return dtypes.canonicalize_dtype(dt)


def assert_close(got, want, dtype=None, rtol=1e-5, atol=1e-5):
    """``got`` (a pyjax array) matches NumPy's ``want`` in shape, dtype (``dtype``, or the
    canonical dtype of ``want``) and value."""
    assert isinstance(got, pyjax.Array), type(got)
    want = np.asarray(want)
    dtype = np.dtype(dtype) if dtype is not None else canon(want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == dtype, (got.dtype, dtype)
    g = np.asarray(got)
    if dtype == BF16 or want.dtype == BF16:
        g, want = g.astype(np.float32), want.astype(np.float32)
        rtol, atol = max(rtol, 2e-2), max(atol, 2e-2)
    if g.dtype == np.bool_ or np.issubdtype(g.dtype, np.integer):
        np.testing.assert_array_equal(g, want)
    else:
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)


def run_both(fn, *args, eager=False):
    """Results of ``fn`` under jit and (optionally) eagerly. Eager runs compile one executable
    per primitive, so they are kept to the cases of ``test_eager`` and a few others."""
    outs = [pyjax.jit(fn)(*args)]
    if eager:
        outs.append(fn(*args))
    return outs


def f32_ref(x):
    return x.astype(np.float32) if x.dtype == BF16 else x


# ---- sum / prod / max / min / all / any over dtypes, axes and keepdims ----

@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_monoid_reductions(dtype):
    x = rand((2, 3, 4), dtype)
    names = ["sum", "prod", "all", "any"] + (["max", "min"] if dtype != np.complex64 else [])
    configs = [(None, False), ((0, 2), True)]
    xr = f32_ref(x)

    def want(n, ax, k):
        r = getattr(np, n)(xr, axis=ax, keepdims=k)
        return np.asarray(r).astype(BF16) if dtype == BF16 and n not in ("all", "any") else r

    def f(x):
        return [[getattr(jnp, n)(x, axis=ax, keepdims=k) for n in names] for ax, k in configs]
    for got_row, (ax, k) in zip(pyjax.jit(f)(x), configs):
        for n, got in zip(names, got_row):
            assert_close(got, want(n, ax, k), rtol=1e-4)


@pytest.mark.parametrize("axis,keepdims", [(0, True), (-1, False), ((0, 2), False),
                                           ((), False), ((-1, 0, 1), True)])
def test_axis_forms(axis, keepdims):
    x = rand((2, 3, 4), np.float32, seed=1)
    out = pyjax.jit(lambda x: (jnp.sum(x, axis, keepdims=keepdims),
                               jnp.min(x, axis=axis, keepdims=keepdims)))(x)
    assert_close(out[0], np.sum(x, axis, keepdims=keepdims))
    assert_close(out[1], np.min(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype,sum_dt,prod_dt", [
    (np.bool_, np.int32, np.int32), (np.int8, np.int32, np.int32),
    (np.uint8, np.uint32, np.uint32), (np.int32, np.int32, np.int32),
    (np.float16, np.float16, np.float16), (BF16, BF16, BF16),
    (np.complex64, np.complex64, np.complex64)])
def test_sum_prod_dtypes(dtype, sum_dt, prod_dt):
    x = np.zeros((3,), dtype)
    assert pyjax.eval_shape(jnp.sum, x).dtype == sum_dt
    assert pyjax.eval_shape(jnp.prod, x).dtype == prod_dt
    if dtype != np.complex64:
        assert pyjax.eval_shape(lambda x: jnp.max(x), x).dtype == np.dtype(dtype)
    assert pyjax.eval_shape(lambda x: jnp.sum(x, promote_integers=False), x).dtype == \
        (np.dtype(np.int32) if dtype == np.bool_ else np.dtype(dtype))
    assert pyjax.eval_shape(lambda x: jnp.sum(x, dtype=np.float32), x).dtype == np.float32


def test_dtype_rules_of_statistics():
    i8 = np.zeros((4,), np.int8)
    c64 = np.zeros((4,), np.complex64)
    bf = np.zeros((4,), BF16)
    shape = pyjax.eval_shape
    assert shape(jnp.mean, i8).dtype == np.float32
    assert shape(jnp.mean, bf).dtype == BF16
    assert shape(jnp.var, i8).dtype == np.float32
    assert shape(jnp.std, np.zeros(3, np.bool_)).dtype == np.float32
    assert shape(jnp.var, c64).dtype == np.float32
    assert shape(jnp.argmax, i8).dtype == np.int32
    assert shape(jnp.count_nonzero, bf).dtype == np.int32
    assert shape(jnp.cumsum, i8).dtype == np.int8
    assert shape(jnp.cumsum, np.zeros(3, np.bool_)).dtype == np.int32
    assert shape(lambda x: jnp.cumulative_sum(x), i8).dtype == np.int32
    assert shape(jnp.median, i8).dtype == np.float32
    assert shape(jnp.all, i8).dtype == np.bool_


def test_x64_accumulates_in_int64(x64):
    x = np.arange(5, dtype=np.int32)
    out = jnp.sum(x)
    assert out.dtype == np.int64 and int(out) == 10
    assert jnp.mean(x).dtype == np.float32  # JAX 0.10.2 (observed): int32 -> float32
    assert jnp.mean(x.astype(np.int64)).dtype == np.float64


def test_zero_d_and_empty():
    s = np.float32(2.5)
    for out in run_both(lambda s: (jnp.sum(s), jnp.max(s), jnp.mean(s), jnp.argmax(s)), s,
                        eager=True):
        assert_close(out[0], np.sum(s))
        assert_close(out[1], np.max(s))
        assert_close(out[2], np.mean(s))
        assert int(out[3]) == 0
    e = np.zeros((0, 3), np.float32)
    outs = run_both(lambda e: (jnp.sum(e, 0), jnp.prod(e), jnp.any(e, 1), jnp.all(e),
                               jnp.max(e, 0, initial=-2.0), jnp.mean(e, 0)), e, eager=True)
    for out in outs:
        assert_close(out[0], np.zeros(3, np.float32))
        assert_close(out[1], np.float32(1))
        assert_close(out[2], np.zeros(0, bool))
        assert_close(out[3], np.True_)
        assert_close(out[4], np.full(3, -2.0, np.float32))
        assert np.isnan(np.asarray(out[5])).all()


def test_empty_max_without_initial_raises():
    e = np.zeros((0, 3), np.float32)
    with pytest.raises(ValueError, match="zero-size array to reduction operation max which "
                                         "has no identity"):
        jnp.max(e)
    with pytest.raises(ValueError, match="reduction operation min"):
        pyjax.jit(lambda e: jnp.min(e, axis=0))(e)
    assert jnp.max(e, axis=1).shape == (0,)  # no reduced axis is empty
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(e)
    with pytest.raises(ValueError, match="argmin of an empty sequence"):
        jnp.argmin(e, axis=0)


def test_argument_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.mean(x, axis=-3)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.sum(x, axis=(0, -2))
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1, 2, 3])
    with pytest.raises(NotImplementedError, match="out"):
        jnp.sum(x, out=x)
    with pytest.raises(ValueError, match="where mask one has to specify 'initial'"):
        jnp.max(x, where=x > 0)
    with pytest.raises(ValueError, match="ddof and correction"):
        jnp.var(x, ddof=1, correction=1)


# ---- where= and initial= ----

def test_where_and_initial():
    x = rand((3, 4), np.float32, seed=1)
    xi = rand((3, 4), np.int8, seed=2)
    m = rand((3, 4), np.bool_, seed=3)
    row = np.array([True, False, True, True])  # broadcasts against x

    def f(x, xi, m, row):
        return (jnp.sum(x, axis=1, where=m), jnp.prod(x, where=row, initial=2.0),
                jnp.max(x, axis=0, where=m, initial=-10.0), jnp.min(xi, initial=-1),
                jnp.mean(x, axis=1, where=m), jnp.var(x, where=row, ddof=1),
                jnp.all(x, where=m), jnp.any(xi, axis=0, where=row),
                jnp.sum(xi, axis=0, where=m, initial=5))
    for out in run_both(f, x, xi, m, row):
        assert_close(out[0], np.sum(x, axis=1, where=m))
        assert_close(out[1], np.prod(x, where=row, initial=2.0))
        assert_close(out[2], np.max(x, axis=0, where=m, initial=-10.0))
        assert_close(out[3], np.min(xi, initial=-1).astype(np.int8), np.int8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-False row: NaN
            assert_close(out[4], np.mean(x, axis=1, where=m))
        assert_close(out[5], np.var(x, where=np.broadcast_to(row, x.shape), ddof=1))
        assert_close(out[6], np.all(x, where=m))
        assert_close(out[7], np.any(xi, axis=0, where=row))
        assert_close(out[8], np.sum(xi, axis=0, where=m, initial=5), np.int32)


# ---- mean / var / std / average ----

@pytest.mark.parametrize("dtype", [np.int32, np.complex64, BF16], ids=ids(
    [np.int32, np.complex64, BF16]))
def test_mean_var_std(dtype):
    x = rand((3, 5), dtype, seed=4)
    xr = f32_ref(x)

    def f(x):
        return (jnp.mean(x), jnp.mean(x, axis=0, keepdims=True), jnp.var(x, axis=1),
                jnp.var(x, ddof=1), jnp.std(x, axis=0, correction=1),
                jnp.std(x, axis=(0, 1), keepdims=True))
    res_dt = np.dtype(BF16) if dtype == BF16 else None
    var_dt = BF16 if dtype == BF16 else (np.float32 if dtype != np.complex64 else np.float32)
    for out in run_both(f, x):
        assert_close(out[0], np.mean(xr), res_dt, rtol=1e-4)
        assert_close(out[1], np.mean(xr, axis=0, keepdims=True), res_dt, rtol=1e-4)
        assert_close(out[2], np.var(xr, axis=1), var_dt, rtol=1e-4)
        assert_close(out[3], np.var(xr, ddof=1), var_dt, rtol=1e-4)
        assert_close(out[4], np.std(xr, axis=0, ddof=1), var_dt, rtol=1e-4)
        assert_close(out[5], np.std(xr, axis=(0, 1), keepdims=True), var_dt, rtol=1e-4)


def test_mean_var_with_dtype_and_ddof_too_large():
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert_close(jnp.mean(x, dtype=np.float32), np.mean(x, dtype=np.float32))
    assert_close(jnp.var(x, axis=0, dtype=np.float32), np.var(x, axis=0, dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degrees of freedom <= 0
        want = np.var(np.float32([1.0]), ddof=2)
    got = jnp.var(np.float32([1.0]), ddof=2)
    assert np.isnan(np.asarray(got)) == np.isnan(want)


def test_average():
    x = rand((3, 4), np.float32, seed=5)
    w = np.abs(rand((3, 4), np.float32, seed=6)) + 1
    w1 = np.array([1.0, 2.0, 3.0, 0.5], np.float32)
    xi = rand((3, 4), np.int32, seed=7)

    def f(x, w, w1, xi):
        return (jnp.average(x), jnp.average(x, axis=0, weights=w),
                jnp.average(x, axis=1, weights=w1, returned=True),
                jnp.average(xi, axis=1, keepdims=True), jnp.average(x, axis=0, returned=True))
    for out in run_both(f, x, w, w1, xi):
        assert_close(out[0], np.average(x))
        assert_close(out[1], np.average(x, axis=0, weights=w))
        a, s = np.average(x, axis=1, weights=w1, returned=True)
        assert_close(out[2][0], a)
        assert_close(out[2][1], s)
        assert_close(out[3], np.average(xi, axis=1, keepdims=True), np.float32)
        a, s = np.average(x, axis=0, returned=True)
        assert_close(out[4][0], a)
        assert_close(out[4][1], s.astype(np.float32))
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(x, weights=w1)
    with pytest.raises(ValueError, match="1D weights expected"):
        jnp.average(x, axis=1, weights=np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match="Length of weights"):
        jnp.average(x, axis=0, weights=w1)


# ---- arg-reductions ----

@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, BF16], ids=ids([np.bool_, np.uint8, BF16]))
def test_argmax_argmin(dtype):
    x = rand((3, 4, 2), dtype, seed=8)

    def f(x):
        return (jnp.argmax(x), jnp.argmin(x, axis=1), jnp.argmax(x, axis=-1, keepdims=True),
                jnp.argmin(x, keepdims=True))
    for out in run_both(f, x):
        assert_close(out[0], np.argmax(x))
        assert_close(out[1], np.argmin(x, axis=1))
        assert_close(out[2], np.argmax(x, axis=-1, keepdims=True))
        assert_close(out[3], np.argmin(x, keepdims=True))


def test_argmax_nan_and_ties():
    x = np.array([[1.0, 3.0, 3.0, np.nan], [2.0, 2.0, -1.0, 0.0]], np.float32)
    for out in run_both(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=1),
                                   jnp.nanargmax(x, axis=1), jnp.nanargmin(x, axis=1)), x):
        assert_close(out[0], np.argmax(x, axis=1))
        assert_close(out[1], np.argmin(x, axis=1))
        assert_close(out[2], np.nanargmax(x, axis=1))
        assert_close(out[3], np.nanargmin(x, axis=1))


# ---- cumulative reductions ----

@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.complex64, BF16],
                         ids=ids([np.bool_, np.int8, np.complex64, BF16]))
def test_cumulative(dtype):
    x = rand((3, 4), dtype, seed=9)
    xr = f32_ref(x)

    def f(x):
        return (jnp.cumsum(x), jnp.cumsum(x, axis=0), jnp.cumprod(x, axis=-1),
                jnp.cumulative_sum(x, axis=1, include_initial=True),
                jnp.cumsum(x, axis=1, dtype=np.float32))
    same = canon(np.int32) if dtype == np.bool_ else np.dtype(dtype)
    for out in run_both(f, x):
        assert_close(out[0], np.cumsum(xr).astype(same), same, rtol=1e-4)
        assert_close(out[1], np.cumsum(xr, axis=0).astype(same), same, rtol=1e-4)
        assert_close(out[2], np.cumprod(xr, axis=-1).astype(same), same, rtol=1e-4)
        want = np.cumulative_sum(xr, axis=1, include_initial=True)
        if dtype == BF16:
            want = want.astype(BF16)
        assert_close(out[3], want, rtol=1e-4)
        if dtype != np.complex64:
            assert_close(out[4], np.cumsum(xr, axis=1, dtype=np.float32), rtol=1e-4)


def test_cumulative_errors_and_nan_variants():
    x = np.array([[1.0, np.nan, 2.0], [np.nan, 3.0, 4.0]], np.float32)
    for out in run_both(lambda x: (jnp.nancumsum(x, axis=1), jnp.nancumprod(x)), x):
        assert_close(out[0], np.nancumsum(x, axis=1))
        assert_close(out[1], np.nancumprod(x))
    with pytest.raises(ValueError, match="axis must be specified"):
        jnp.cumulative_sum(x)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.cumsum(x, axis=2)
    assert_close(jnp.cumsum(np.zeros((0, 2), np.float32), axis=0), np.zeros((0, 2)),
                 np.float32)


# ---- NaN-ignoring reductions ----

def test_nan_reductions():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [-2.0, 5.0, np.nan]],
                 np.float32)

    def f(x):
        return (jnp.nansum(x, axis=1), jnp.nanprod(x), jnp.nanmax(x, axis=1),
                jnp.nanmin(x, axis=0), jnp.nanmean(x, axis=1), jnp.nanvar(x, axis=0),
                jnp.nanstd(x), jnp.nanmax(x, axis=1, initial=10.0), jnp.nanmedian(x, axis=1),
                jnp.nanmedian(x))
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        want = (np.nansum(x, axis=1), np.nanprod(x), np.nanmax(x, axis=1), np.nanmin(x, axis=0),
                np.nanmean(x, axis=1), np.nanvar(x, axis=0), np.nanstd(x),
                np.nanmax(x, axis=1, initial=10.0), np.nanmedian(x, axis=1), np.nanmedian(x))
    for out in run_both(f, x):
        for g, w in zip(out, want):
            assert_close(g, np.asarray(w, np.float32), rtol=1e-5)
    # integer inputs: no NaNs to skip
    xi = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert_close(jnp.nanmax(xi, axis=0), np.nanmax(xi, axis=0))
    assert_close(jnp.nansum(xi), np.nansum(xi))


# ---- misc ----

def test_ptp_count_nonzero_median():
    x = rand((4, 5), np.float32, seed=10)
    xi = rand((4, 5), np.int8, seed=11)
    xn = x.copy()
    xn[1, 2] = np.nan

    def f(x, xi, xn, x3):
        return (jnp.ptp(x), jnp.ptp(xi, axis=1, keepdims=True), jnp.count_nonzero(xi),
                jnp.count_nonzero(x, axis=0), jnp.median(x), jnp.median(x, axis=1),
                jnp.median(xi, axis=(0, 1), keepdims=True), jnp.median(xn, axis=1),
                jnp.median(x3, axis=0))
    for out in run_both(f, x, xi, xn, x[:3]):
        assert_close(out[0], np.ptp(x))
        assert_close(out[1], np.ptp(xi, axis=1, keepdims=True))
        assert_close(out[2], np.count_nonzero(xi), np.int32)
        assert_close(out[3], np.count_nonzero(x, axis=0), np.int32)
        assert_close(out[4], np.median(x))
        assert_close(out[5], np.median(x, axis=1))
        assert_close(out[6], np.median(xi, axis=(0, 1), keepdims=True), np.float32)
        assert_close(out[7], np.median(xn, axis=1))
        assert_close(out[8], np.median(x[:3], axis=0))


def test_allclose_array_equal_equiv():
    a = np.array([1.0, 2.0, np.inf, np.nan], np.float32)
    b = np.array([1.0 + 1e-6, 2.0, np.inf, np.nan], np.float32)
    c = np.array([1.0, 2.1, np.inf, np.nan], np.float32)

    def f(a, b, c, a2, a3):
        return (jnp.allclose(a, b), jnp.allclose(a, b, equal_nan=True),
                jnp.allclose(a, c, equal_nan=True), jnp.allclose(a, c, rtol=0.1, equal_nan=True),
                jnp.array_equal(a, a), jnp.array_equal(a, a, equal_nan=True),
                jnp.array_equal(a, a3), jnp.array_equiv(a2, np.float32([[1.0, 2.0]] * 3)),
                jnp.array_equiv(a, a2), jnp.allclose(a2, 1))
    want = (np.allclose(a, b), np.allclose(a, b, equal_nan=True),
            np.allclose(a, c, equal_nan=True), np.allclose(a, c, rtol=0.1, equal_nan=True),
            np.array_equal(a, a), np.array_equal(a, a, equal_nan=True),
            np.array_equal(a, a[:3]), np.array_equiv(a[:2], np.float32([[1.0, 2.0]] * 3)),
            np.array_equiv(a, a[:2]), np.allclose(a[:2], 1))
    for out in run_both(f, a, b, c, a[:2], a[:3]):
        assert [bool(o) for o in out] == [bool(w) for w in want]
        assert all(o.dtype == np.bool_ and o.shape == () for o in out)
    ai = np.array([1, 2, 3], np.int8)
    assert bool(jnp.array_equal(ai, ai.astype(np.float32)))
    assert not bool(jnp.allclose(ai, ai + 1))


def test_methods_on_python_scalars_and_weak_types():
    assert_close(jnp.sum(3), np.int32(3), np.int32)
    assert jnp.sum(3).weak_type and jnp.prod(2.0).weak_type
    assert not jnp.sum(3, dtype=np.int32).weak_type
    assert_close(jnp.mean(2.0), np.float32(2.0), np.float32)
    assert_close(jnp.max(np.float32(1.5)), np.float32(1.5))


# ---- eagerly (one executable per primitive): one representative call of each function ----

X = rand((3, 4), np.float32, seed=20)
XI = rand((3, 4), np.int8, seed=21)
W = np.array([1.0, 2.0, 3.0, 0.5], np.float32)
XN = np.where(rand((3, 4), np.bool_, seed=22), np.nan, X).astype(np.float32)

EAGER_CASES = [
    ("sum", lambda m: m.sum(XI, axis=0)), ("prod", lambda m: m.prod(X, axis=1)),
    ("max", lambda m: m.max(X, axis=0, keepdims=True)), ("min", lambda m: m.min(XI)),
    ("all", lambda m: m.all(XI, axis=1)), ("any", lambda m: m.any(X)),
    ("mean", lambda m: m.mean(XI, axis=0)), ("var", lambda m: m.var(X, axis=1, ddof=1)),
    ("std", lambda m: m.std(X)), ("argmax", lambda m: m.argmax(X, axis=1)),
    ("argmin", lambda m: m.argmin(XI)), ("cumsum", lambda m: m.cumsum(X, axis=1)),
    ("cumprod", lambda m: m.cumprod(XI.astype(np.float32))),
    ("nansum", lambda m: m.nansum(XN, axis=0)), ("nanmean", lambda m: m.nanmean(XN)),
    ("nanmax", lambda m: m.nanmax(XN)), ("nanmin", lambda m: m.nanmin(XN)),
    ("ptp", lambda m: m.ptp(X, axis=0)), ("count_nonzero", lambda m: m.count_nonzero(XI)),
    ("average", lambda m: m.average(X, axis=1, weights=W)), ("median", lambda m: m.median(X)),
    ("allclose", lambda m: m.allclose(X, X)), ("array_equal", lambda m: m.array_equal(XI, XI)),
    ("array_equiv", lambda m: m.array_equiv(XI, XI[:1])),
]


@pytest.mark.parametrize("name,fn", EAGER_CASES, ids=[c[0] for c in EAGER_CASES])
def test_eager(name, fn):
    got = fn(jnp)
    with np.errstate(invalid="ignore"):
        want = np.asarray(fn(np))
    dt = {"sum": np.int32, "count_nonzero": np.int32, "mean": np.float32}.get(name)
    assert_close(got, want, dt, rtol=1e-5)


def test_max_min_of_complex_are_lexicographic_like_numpy():
    # XLA's own complex maximum compares real parts only; JAX and NumPy order by (real, imag)
    x = np.array([[1 + 2j, 3 + 0j, 1 + 3j], [1 + 5j, -2 + 1j, 1 + 3j]], np.complex64)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(np.asarray(jnp.max(x, axis=axis)), np.max(x, axis=axis))
        np.testing.assert_array_equal(np.asarray(jnp.min(x, axis=axis)), np.min(x, axis=axis))
        np.testing.assert_array_equal(np.asarray(pyjax.jit(jnp.max)(x)), np.max(x))
    nan = np.array([1 + 1j, complex(np.nan, 0), 2 + 0j], np.complex64)
    assert np.isnan(complex(jnp.max(nan)))
