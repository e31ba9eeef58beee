"""lax.lgamma and lax.erf_inv to a few ulp over wide grids (float32 and float64).

References: SciPy for erf_inv; mpmath (40 digits) for lgamma, since scipy.special.gammaln is
itself off by up to 1e2 ulp in (0.7, 2.3) and by 1e-13 relative near the zeros at 1 and 2."""
import numpy as np
import pytest
import scipy.special as sp

import pyjax
import pyjax.numpy as jnp
from pyjax import lax


@pytest.fixture
def x64():
    with pyjax.enable_x64(True):
        yield


def _ulp_err(got, ref, dtype, scale=None):
    scale = np.abs(ref) if scale is None else scale
    return np.abs(np.asarray(got, np.float64) - ref) / (np.finfo(dtype).eps * scale)


def _lgamma_grid():
    rng = np.random.default_rng(0)
    xs = np.concatenate([
        np.linspace(0.01, 30, 1500), 10.0 ** np.linspace(-30, 300, 300),
        np.linspace(0.5, 2.5, 400), -np.linspace(0.01, 40, 800) + 1e-3 * rng.random(800)])
    return xs[(xs > 0) | (xs != np.round(xs))]


def _mp_lgamma(x):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        return np.array([float(mpmath.loggamma(mpmath.mpf(float(v))).real) for v in x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lgamma_wide_grid(x64, dtype):
    x = _lgamma_grid()
    x = x[np.abs(x) < np.finfo(dtype).max].astype(dtype)
    ref = _mp_lgamma(x)
    keep = np.abs(ref) < np.finfo(dtype).max
    x, ref = x[keep], ref[keep]
    got = lax.lgamma(jnp.asarray(x))
    pos = x > 0
    assert _ulp_err(got, ref, dtype)[pos].max() < 4
    # x < 0: the reflection formula's cancellation bounds the error by a few eps absolute
    # (float32 is computed in float64 and keeps its relative accuracy)
    neg = ~pos
    if dtype == np.float32:
        assert _ulp_err(got, ref, dtype)[neg & (np.abs(ref) > 1e-3)].max() < 4
    assert _ulp_err(got, ref, dtype, np.maximum(1.0, np.abs(ref)))[neg].max() < 8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lgamma_relative_accuracy_near_1_and_2(x64, dtype):
    d = np.concatenate([-10.0 ** np.linspace(-7, -0.5, 40), 10.0 ** np.linspace(-7, -0.5, 40)])
    x = np.concatenate([1 + d, 2 + d]).astype(dtype)
    x = x[(x != 1) & (x != 2)]
    ref = _mp_lgamma(x)
    got = lax.lgamma(jnp.asarray(x))
    assert _ulp_err(got, ref, dtype).max() < 4
    assert float(lax.lgamma(jnp.asarray(np.array(1, dtype)))) == 0.0
    assert float(lax.lgamma(jnp.asarray(np.array(2, dtype)))) == 0.0


def test_lgamma_special_values(x64):
    x = jnp.asarray(np.array([0.0, -0.0, -1.0, -7.0, np.inf, -np.inf, np.nan, 1e-300]))
    got = np.asarray(lax.lgamma(x))
    np.testing.assert_array_equal(got[:6], np.inf)
    assert np.isnan(got[6])
    np.testing.assert_allclose(got[7], sp.gammaln(1e-300), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_inv_grid_and_tails(x64, dtype):
    eps = np.finfo(dtype).eps
    t = 10.0 ** np.linspace(np.log10(eps), -0.3, 600)
    y = np.concatenate([np.linspace(-0.999, 0.999, 999), 1 - t, -1 + t, t, -t]).astype(dtype)
    y = y[np.abs(y) < 1]
    got = lax.erf_inv(jnp.asarray(y))
    ref = sp.erfinv(y.astype(np.float64))
    err = _ulp_err(got, ref, dtype, np.maximum(np.abs(ref), np.finfo(dtype).tiny))
    if dtype == np.float64:
        assert err.max() < 4
    else:  # chlo.erf_inv's bits, JAX's (random.normal draws through them): 1e2 ulp in the tails
        assert err[np.abs(y) <= 0.9].max() < 8 and err.max() < 128
    ends = np.asarray(lax.erf_inv(jnp.asarray(np.array([1, -1, 0, 1.5, np.nan], dtype))))
    np.testing.assert_array_equal(ends[:3], [np.inf, -np.inf, 0])
    assert np.isnan(ends[3:]).all()
