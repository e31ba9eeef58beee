"""searchsorted / digitize / bincount / histogram against NumPy: every searchsorted method and
side, ties, NaNs and complex order, empty inputs, eager and under jit, vmap against a Python
loop, and the error paths."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.test_util import check_array, ids
from pyjax.errors import ConcretizationTypeError

F32, I32, U8 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)
METHODS = ["scan", "scan_unrolled", "compare_all", "sort"]
SIDES = ["left", "right"]


def _eq(got, want, dtype=None):
    check_array(got, want, dtype)


def _sorted(n, dtype, seed=0):
    """A sorted array of ``n`` values of ``dtype`` with ties."""
    rng = np.random.default_rng(seed)
    lo = 0 if np.dtype(dtype).kind == "u" else -4
    return np.sort(rng.integers(lo, 5, n)).astype(dtype)


def _queries(shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    lo = 0 if np.dtype(dtype).kind == "u" else -6
    q = rng.integers(lo, 7, shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        q = q + np.asarray(rng.choice([0, 0.5], shape), dtype)  # between and on the values
    return q


# ---- searchsorted ----

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("dtype", [F32, I32, U8], ids=ids([F32, I32, U8]))
def test_searchsorted_jit(method, side, dtype):
    f = pyjax.jit(lambda a, v: jnp.searchsorted(a, v, side=side, method=method))
    for n, vshape in [(1, (4,)), (7, (2, 5)), (16, ()), (33, (9,))]:
        a, v = _sorted(n, dtype, seed=n), _queries(vshape, dtype, seed=n)
        _eq(f(a, v), np.searchsorted(a, v, side=side), np.int32)


@pytest.mark.parametrize("method", METHODS)
def test_searchsorted_every_position(method):
    # every query position for every small length, ties included: checks the number of
    # binary-search steps exactly
    # (the step count changes at lengths 2**k - 1 and 2**k)
    f = pyjax.jit(lambda a, v: [jnp.searchsorted(a, v, side=s, method=method) for s in SIDES])
    v = np.arange(-1, 7, dtype=np.int32)
    for n in (0, 1, 2, 3, 4, 7, 8, 9):
        a = np.repeat(np.arange(n // 2 + 1), 2)[:n].astype(np.int32)
        for side, got in zip(SIDES, f(a, v)):
            _eq(got, np.searchsorted(a, v, side=side), np.int32)


@pytest.mark.parametrize("method", METHODS)
def test_searchsorted_nan_inf(method):
    a = np.array([-np.inf, -1, 0, 0, 2.5, np.inf, np.nan, np.nan], np.float32)
    v = np.array([np.nan, np.inf, -np.inf, 0, 3, -2, np.nan], np.float32)
    for side in SIDES:
        _eq(jnp.searchsorted(a, v, side=side, method=method), np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("method", ["scan", "scan_unrolled"])
def test_searchsorted_sort_keys(method):
    # 'scan' compares integer sort keys: every keyed float width, signed zeros, NaNs of both
    # signs, infinities, the extreme integers; in the loop and unrolled
    import ml_dtypes

    neg_nan = np.float64(-np.nan)
    for dt in [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]:
        a = np.array([-np.inf, -2, -0.0, 0.0, 0.0, 1.5, np.inf, np.nan], dt)
        v = np.array([neg_nan, np.nan, -np.inf, -0.0, 0.0, 1.5, 3, np.inf, -3, -1e-3], dt)
        for side in SIDES:
            want = np.searchsorted(a.astype(np.float64), v.astype(np.float64), side=side)
            _eq(jnp.searchsorted(a, v, side=side, method=method), want, np.int32)
    for dt in [np.int8, np.uint32, np.int16]:
        info = np.iinfo(dt)
        a = np.array([info.min, info.min, 0, 1, info.max - 1, info.max], dt)
        v = np.array([info.max, info.min, 0, 2, info.max - 1, 1], dt)
        for side in SIDES:
            _eq(jnp.searchsorted(a, v, side=side, method=method),
                np.searchsorted(a, v, side=side), np.int32)


@pytest.mark.parametrize("method", METHODS)
def test_searchsorted_complex(method):
    rng = np.random.default_rng(0)
    a = np.sort((rng.integers(-2, 3, 12) + 1j * rng.integers(-2, 3, 12)).astype(np.complex64))
    v = (rng.integers(-3, 4, 10) + 1j * rng.integers(-3, 4, 10)).astype(np.complex64)
    for side in SIDES:
        _eq(jnp.searchsorted(a, v, side=side, method=method), np.searchsorted(a, v, side=side))
    # NaN parts sort last, the real part first: [R + Rj, R + nanj, nan + Rj, nan + nanj].
    # (Between classes, NumPy puts every R + nanj after every R + Rj; pyjax, like JAX and
    # like its own sort, orders lexicographically, so e.g. 5 + 1j is not a test query.)
    nan = np.float32(np.nan)
    a = np.array([0 + 2j, 1, 1 + 1j, complex(1, nan), complex(nan, 1), complex(nan, nan)],
                 np.complex64)
    v = np.array([1 + 1j, complex(1, nan), complex(nan, 0), complex(nan, nan), 0.5 + 3j],
                 np.complex64)
    for side in SIDES:
        _eq(jnp.searchsorted(a, v, side=side, method=method), np.searchsorted(a, v, side=side))


def test_searchsorted_bool_and_scalar_query():
    a = np.array([False, False, True])
    _eq(jnp.searchsorted(a, True), np.searchsorted(a, True), np.int32)
    _eq(jnp.searchsorted(a, np.array([True, False]), side="right"),
        np.searchsorted(a, [True, False], side="right"))
    # a Python scalar query takes a's dtype (weak typing) and gives a 0-d result
    a = np.array([0.5, 1.5, 2.5], np.float32)
    out = jnp.searchsorted(a, 2)
    assert out.shape == () and out.dtype == np.int32 and int(out) == 2


def test_searchsorted_mixed_dtypes_promote():
    a = np.array([1, 2, 3], np.int32)
    v = np.array([1.5, 2.0, 3.5], np.float32)
    _eq(jnp.searchsorted(a, v), np.searchsorted(a, v))


@pytest.mark.parametrize("method", METHODS)
def test_searchsorted_empty(method):
    a = np.zeros((0,), np.float32)
    _eq(jnp.searchsorted(a, np.ones((2, 3), np.float32), method=method), np.zeros((2, 3), int),
        np.int32)
    _eq(pyjax.jit(lambda a, v: jnp.searchsorted(a, v, method=method))(
        np.array([1., 2.], np.float32), np.zeros((0,), np.float32)), np.zeros((0,), int))


def test_searchsorted_sorter():
    rng = np.random.default_rng(3)
    a = rng.integers(-5, 5, 11).astype(np.float32)
    sorter = np.argsort(a, kind="stable").astype(np.int32)
    v = _queries((6,), F32)
    for side in SIDES:
        _eq(jnp.searchsorted(a, v, side=side, sorter=sorter),
            np.searchsorted(a, v, side=side, sorter=sorter))


def test_searchsorted_traced_array_and_eager_match():
    a, v = _sorted(9, F32), _queries((3, 2), F32)
    eager = jnp.searchsorted(a, v, side="right")
    jitted = pyjax.jit(jnp.searchsorted, static_argnames=("side",))(a, v, side="right")
    _eq(eager, np.searchsorted(a, v, side="right"))
    _eq(jitted, np.asarray(eager))


@pytest.mark.parametrize("method", ["scan", "sort"])
def test_searchsorted_vmap(method):
    a, v = _sorted(10, F32), _queries((5, 3), F32)
    f = lambda q: jnp.searchsorted(a, q, method=method)  # noqa: E731
    want = np.stack([np.asarray(f(q)) for q in v])
    _eq(pyjax.vmap(f)(v), want)
    np.testing.assert_array_equal(want, np.searchsorted(a, v))
    # a batch of sorted arrays, each with its own queries
    A = np.stack([_sorted(6, F32, seed=s) for s in range(4)])
    V = _queries((4, 3), F32)
    g = lambda a, q: jnp.searchsorted(a, q, side="right", method=method)  # noqa: E731
    _eq(pyjax.vmap(g)(A, V), np.stack([np.searchsorted(x, q, side="right")
                                        for x, q in zip(A, V)]))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.searchsorted(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.searchsorted(np.float32(1), 1.0)
    with pytest.raises(ValueError, match="'side'"):
        jnp.searchsorted(np.arange(3), 1, side="middle")
    with pytest.raises(ValueError, match="'method'"):
        jnp.searchsorted(np.arange(3), 1, method="bisect")
    with pytest.raises(TypeError, match="searchsorted requires ndarray"):
        jnp.searchsorted([1, 2, 3], 1)


# ---- digitize ----

@pytest.mark.parametrize("right", [False, True])
def test_digitize(right):
    x = np.array([-1, 0, 0.5, 1, 2, 2.5, 3, 4, np.nan], np.float32)
    for bins in ([0., 1, 2, 3], [3., 2, 2, 0], [1.], [2., 2, 2]):
        bins = np.array(bins, np.float32)
        _eq(jnp.digitize(x, bins, right=right), np.digitize(x, bins, right=right), np.int32)
    f = pyjax.jit(lambda x, b: jnp.digitize(x, b, right=right))
    for bins in ([0., 1, 2, 3], [3., 2, 1, 0]):
        bins = np.array(bins, np.float32)
        _eq(f(x[:, None], bins), np.digitize(x[:, None], bins, right=right))


def test_digitize_int_method_and_errors():
    x = np.arange(-2, 8, dtype=np.int32)
    bins = np.array([0, 2, 2, 5], np.int32)
    _eq(jnp.digitize(x, bins, method="compare_all"), np.digitize(x, bins))
    _eq(jnp.digitize(x, np.zeros((0,), np.int32)), np.zeros(10, int), np.int32)
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.digitize(x, np.zeros((2, 2)))


# ---- bincount ----

def test_bincount():
    x = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    _eq(jnp.bincount(x), np.bincount(x), np.int32)
    _eq(jnp.bincount(x, minlength=10), np.bincount(x, minlength=10))
    w = np.linspace(0, 1, 7).astype(np.float32)
    got = jnp.bincount(x, weights=w)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.bincount(x, w), rtol=1e-6)
    _eq(jnp.bincount(np.zeros((0,), np.int32)), np.zeros(0, int), np.int32)
    _eq(jnp.bincount(np.zeros((0,), np.int32), minlength=3), np.zeros(3, int))
    _eq(jnp.bincount(np.array([True, False, True])), np.bincount([1, 0, 1]))
    _eq(jnp.bincount(np.array([1, 2, 2], np.uint8)), np.bincount([1, 2, 2]))


def test_bincount_length_under_jit():
    x = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    f = pyjax.jit(jnp.bincount, static_argnames=("length",))
    _eq(f(x, length=9), np.bincount(x, minlength=9), np.int32)
    # JAX's behaviour: values >= length are dropped, negative values count in bin 0
    _eq(f(x, length=3), np.bincount(x)[:3])
    _eq(jnp.bincount(np.array([-3, -1, 0, 2], np.int32), length=3), [3, 0, 1])
    w = np.arange(7, dtype=np.float32)
    g = pyjax.jit(lambda x, w: jnp.bincount(x, w, length=8))
    np.testing.assert_allclose(np.asarray(g(x, w)), np.bincount(x, w, minlength=8))


def test_bincount_errors():
    with pytest.raises(ConcretizationTypeError, match="`length`"):
        pyjax.jit(jnp.bincount)(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.bincount(np.zeros((2, 2), np.int32))
    with pytest.raises(ValueError, match="shape of weights"):
        jnp.bincount(np.array([1, 2], np.int32), weights=np.ones(3, np.float32))


# ---- histogram ----

def _close(got, want, dtype=F32, rtol=1e-6):
    assert isinstance(got, pyjax.Array)
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=1e-6)


def test_histogram_bins_and_range():
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 9, (6, 5)).astype(np.float32)  # exact edges: no rounding ambiguity
    for bins, range_ in [(4, (0, 8)), (12, (-3, 9)), (6, (-1, 2)), (3, None)]:
        counts, edges = jnp.histogram(a, bins=bins, range=range_)
        want_c, want_e = np.histogram(a, bins=bins, range=range_)
        _close(counts, want_c)
        _close(edges, want_e, rtol=1e-5)
    edges = np.array([-2., 0, 0.5, 3, 8], np.float32)
    counts, e = jnp.histogram(a, bins=edges)
    _close(counts, np.histogram(a, bins=edges)[0])
    _close(e, edges)


def test_histogram_weights_density_nan():
    rng = np.random.default_rng(1)
    a = rng.normal(size=40).astype(np.float32)
    w = rng.uniform(size=40).astype(np.float32)
    a[3] = np.nan
    c, _ = jnp.histogram(a, bins=5, range=(-2, 2), weights=w)
    _close(c, np.histogram(a, bins=5, range=(-2, 2), weights=w)[0], rtol=1e-5)
    d, _ = jnp.histogram(a, bins=5, range=(-2, 2), density=True)
    _close(d, np.histogram(a, bins=5, range=(-2, 2), density=True)[0], rtol=1e-5)
    # integers become the default float; a constant array gets the widened range
    c, e = jnp.histogram(np.full(5, 3, np.int32), bins=2)
    wc, we = np.histogram(np.full(5, 3), bins=2)
    _close(c, wc)
    _close(e, we)


def test_histogram_jit():
    a = np.arange(-4, 12, dtype=np.float32).reshape(4, 4)
    f = pyjax.jit(lambda a: jnp.histogram(a, bins=8, range=(0, 8)))
    c, e = f(a)
    wc, we = np.histogram(a, bins=8, range=(0, 8))
    _close(c, wc)
    _close(e, we)
    g = pyjax.jit(lambda a, lo, hi: jnp.histogram(a, bins=4, range=(lo, hi))[0])
    _close(g(a, np.float32(-4), np.float32(4)), np.histogram(a, 4, range=(-4, 4))[0])
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(lambda a, b: jnp.histogram(a, bins=b))(a, 3)


def test_histogram_bin_edges():
    a = np.array([1, 5, 2, 9], np.float32)
    for bins, range_ in [(10, None), (4, (0, 1)), (1, (2, 2))]:
        _close(jnp.histogram_bin_edges(a, bins, range_),
               np.histogram_bin_edges(a, bins, range_), rtol=1e-6)
    assert jnp.histogram_bin_edges(np.arange(4, dtype=np.int32), 2).dtype == np.float32
    with pytest.raises(NotImplementedError):
        jnp.histogram_bin_edges(a, "auto")
    with pytest.raises(ValueError, match="range"):
        jnp.histogram_bin_edges(a, 3, (0, 1, 2))
    with pytest.raises(ValueError, match="max must be larger than min"):
        jnp.histogram(a, 3, range=(2, 1))
    with pytest.raises(ValueError, match="same shape"):
        jnp.histogram(a, 3, weights=np.ones(3, np.float32))


def test_dtypes_with_x64(x64):
    # as in JAX: searchsorted/digitize stay int32 for arrays that fit; bincount counts in the
    # default integer type
    a = np.arange(5, dtype=np.float64)
    assert jnp.searchsorted(a, 2.5).dtype == np.int32
    assert jnp.digitize(np.array([1.5]), a).dtype == np.int32
    assert jnp.bincount(np.array([1, 2], np.int64)).dtype == np.int64
    assert jnp.histogram(a, 2)[0].dtype == np.float64
