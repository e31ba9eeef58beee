"""quantile/percentile and their NaN-ignoring versions (every NumPy method), cov,
corrcoef, histogram2d and histogramdd against NumPy; jit, vmap and gradients."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.numpy.statistics import METHODS
from pyjax.test_util import check_grads

RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 7, 4)).astype(np.float32)
A_NAN = A.copy()
A_NAN[0, 2, 1] = np.nan
Q = np.array([0, 0.1, 0.25, 0.5, 0.66, 0.9, 1.0], np.float32)


def _close(got, want, rtol=1e-5):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods(method):
    for axis, keepdims in [(None, False), ((0, 2), True)]:
        _close(jnp.quantile(A_NAN, Q, axis=axis, method=method, keepdims=keepdims),
               np.quantile(A_NAN, Q, axis=axis, method=method, keepdims=keepdims))
        _close(jnp.nanquantile(A_NAN, Q, axis=axis, method=method, keepdims=keepdims),
               np.nanquantile(A_NAN, Q, axis=axis, method=method, keepdims=keepdims))
    # ties: n * q lands exactly on order statistics (q, n powers of two: no rounding, so
    # the result does not depend on whether XLA fuses n * q - 1 into one FMA)
    for n in (1, 2, 8):
        x, q = np.arange(n, dtype=np.float32) * 1.5, np.linspace(0, 1, 33, dtype=np.float32)
        _close(jnp.quantile(x, q, method=method), np.quantile(x, q, method=method))


def test_percentile_dtypes_and_errors():
    x = np.arange(10, dtype=np.int32)
    got = jnp.percentile(x, 30)
    assert got.dtype == np.float32 and got.shape == ()
    _close(got, np.percentile(x, 30))
    _close(jnp.nanpercentile(A_NAN, np.array([5, 50]), axis=0), np.nanpercentile(A_NAN, [5, 50], axis=0))
    _close(jnp.median(A, axis=1), jnp.quantile(A, 0.5, axis=1))
    all_nan = np.full((2, 3), np.nan, np.float32)
    _close(jnp.nanquantile(all_nan, 0.5, axis=1), [np.nan, np.nan])
    with pytest.raises(ValueError, match="range"):
        jnp.quantile(x, 1.5)
    with pytest.raises(ValueError, match="method"):
        jnp.quantile(x, 0.5, method="bogus")
    with pytest.raises(NotImplementedError, match="out"):
        jnp.quantile(x, 0.5, out=np.zeros(()))


def test_quantile_jit_vmap_grad(x64):
    f = pyjax.jit(lambda a, q: jnp.quantile(a, q, axis=1, method="hazen"))
    _close(f(A, Q), np.quantile(A, Q, axis=1, method="hazen"))
    got = pyjax.vmap(lambda r: jnp.nanpercentile(r, 40.0))(A_NAN[0])
    _close(got, [np.nanpercentile(r, 40.0) for r in A_NAN[0]])
    x = RNG.normal(size=(5, 3))
    check_grads(lambda x, q: jnp.quantile(x, q, axis=0), (x, np.array([0.3, 0.8])), order=1)
    check_grads(lambda x: jnp.nanpercentile(x, 35.0, method="median_unbiased"), (x,), order=1)


def test_cov_and_corrcoef(x64):
    m = RNG.normal(size=(3, 6))
    y = RNG.normal(size=(2, 6))
    fw, aw = np.array([1, 2, 1, 3, 1, 1]), RNG.random(6)
    for kw in [{}, dict(bias=True), dict(ddof=2), dict(fweights=fw), dict(aweights=aw),
               dict(fweights=fw, aweights=aw), dict(fweights=fw, aweights=aw, ddof=0)]:
        _close(jnp.cov(m, **kw), np.cov(m, **kw))
    _close(jnp.cov(m.T, rowvar=False), np.cov(m.T, rowvar=False))
    _close(jnp.cov(m, y), np.cov(m, y))
    _close(jnp.cov(m[0]), np.cov(m[0]))
    mc = m + 1j * RNG.normal(size=m.shape)
    _close(jnp.cov(mc), np.cov(mc))
    _close(jnp.corrcoef(m, y), np.corrcoef(m, y))
    _close(jnp.corrcoef(mc), np.corrcoef(mc))
    _close(jnp.cov(np.arange(6).reshape(2, 3)), np.cov(np.arange(6).reshape(2, 3)))
    check_grads(jnp.cov, (m,), order=1)
    check_grads(jnp.corrcoef, (m,), order=1)


def test_histogram2d_and_dd():
    x, y = RNG.normal(size=50).astype(np.float32), RNG.normal(size=50).astype(np.float32)
    w = RNG.random(50).astype(np.float32)
    for kw in [dict(bins=[3, 5], range=[[-1, 1], [0, 2]]), dict(bins=np.linspace(-2, 2, 6)),
               dict(weights=w, density=True)]:
        for got, want in zip(jnp.histogram2d(x, y, **kw), np.histogram2d(x, y, **kw)):
            _close(got, want)
    f = pyjax.jit(lambda x, y: jnp.histogram2d(x, y, bins=4)[0])
    _close(f(x, y), np.histogram2d(x, y, bins=4)[0])
    # JAX's dtypes: integer counts without weights, floating with weights or density
    assert f(x, y).dtype == np.int32
    assert jnp.histogram2d(x, y, weights=w)[0].dtype == np.float32
    assert jnp.histogram2d(x, y, density=True)[0].dtype == np.float32
    s = RNG.normal(size=(40, 3))
    got, want = jnp.histogramdd(s, bins=(2, 3, 4)), np.histogramdd(s, bins=(2, 3, 4))
    _close(got[0], want[0])
    for g, e in zip(got[1], want[1]):
        _close(g, e)
    with pytest.raises(ValueError, match="2-D"):
        jnp.histogramdd(np.zeros(3))
