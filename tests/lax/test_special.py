"""Special-function primitives (lax/special.py) against SciPy over their domains in float32 and
float64, derivatives against finite differences, vmap against a loop, jit against eager."""
import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import pyjax
import pyjax.lax as lax
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = {"igamma", "igammac", "igamma_grad_a", "random_gamma_grad",
                     "regularized_incomplete_beta", "polygamma", "zeta", "bessel_i0e",
                     "bessel_i1e", "xla_lgamma", "xla_erf_inv"}
JVP_TESTED = set(TESTED_PRIMITIVES)
BATCH_TESTED = set(TESTED_PRIMITIVES)

RNG = np.random.default_rng(15)


def rel_err(got, want, floor):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    err = np.abs(got - want) / np.maximum(np.abs(want), floor)
    return np.where(both_nan, 0.0, np.where(np.isnan(err), np.inf, err))


def assert_close(got, want, rtol, floor):
    err = rel_err(got, want, floor)
    i = int(np.argmax(err))
    assert err[i] <= rtol, f"worst relative error {err[i]:.3g} at index {i}: {np.ravel(got)[i]} vs {np.ravel(want)[i]}"


def gamma_points(n, a_max):
    a = np.exp(RNG.uniform(np.log(1e-3), np.log(a_max), n))
    x = a * np.exp(RNG.uniform(-3, 3, n))
    a = np.concatenate([a, [1e-3, 0.5, 1.0, 5.0, 20.0, 2.0, 2.0, 0.0, -1.0, 1.0, np.nan]])
    x = np.concatenate([x, [1e-6, 1e-8, 30.0, 1e-3, 80.0, 0.0, np.inf, 1.0, 1.0, -1.0, 1.0]])
    return a, x


# JAX's (XLA's) conventions where SciPy differs: a <= 0 is a domain error for P and Q.
def ref_gammainc(a, x):
    out = ss.gammainc(a, x)
    return np.where((a <= 0) | (x < 0), np.nan, out)


def ref_gammaincc(a, x):
    out = ss.gammaincc(a, x)
    out = np.where((a == 0) & (x >= 0), 1.0, out)
    return np.where((a < 0) | (x < 0), np.nan, out)


CASES = {  # dtype -> (rtol, absolute floor, largest a)
    np.float64: (2e-11, 1e-250, 500.0),
    np.float32: (3e-5, 1e-30, 30.0),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_incomplete_gamma_and_beta_match_scipy(dtype, x64):
    rtol, floor, a_max = CASES[dtype]
    a, x = gamma_points(300, a_max)
    a, x = a.astype(dtype), x.astype(dtype)
    assert_close(lax.igamma(a, x), ref_gammainc(a, x), rtol, floor)
    assert_close(lax.igammac(a, x), ref_gammaincc(a, x), rtol, floor)
    b = np.exp(RNG.uniform(np.log(1e-2), np.log(a_max), a.size)).astype(dtype)
    xb = RNG.uniform(0, 1, a.size).astype(dtype)
    xb[:6] = [0.0, 1.0, 1e-7, 1 - 1e-6, -0.5, np.nan]
    ab = np.abs(a)
    ab[:3] = [0.0, 2.0, np.nan]
    want = np.where((ab <= 0) | (b <= 0) | (xb < 0) | (xb > 1), np.nan, ss.betainc(ab, b, xb))
    assert_close(lax.betainc(ab, b, xb), want, rtol * 5, floor)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_polygamma_zeta_bessel_match_scipy(dtype, x64):
    rtol = 5e-14 if dtype == np.float64 else 5e-6
    m = np.repeat(np.arange(5), 12).astype(dtype)
    x = np.tile(np.logspace(-2, 3, 12), 5).astype(dtype)
    assert_close(lax.polygamma(m, x), ss.polygamma(m.astype(int), x), rtol, 1e-300)
    s = np.linspace(1.05, 12.0, x.size).astype(dtype)
    assert_close(lax.zeta(s, x), ss.zeta(s, x), rtol, 1e-300)
    xb = np.concatenate([np.logspace(-8, 3.5, 60), -np.logspace(-3, 2, 10),
                         [0.0, 24.9, 25.0, 25.1, np.inf, -np.inf, np.nan]]).astype(dtype)
    assert_close(lax.bessel_i0e(xb), ss.i0e(xb), 4 * rtol, 1e-300)
    assert_close(lax.bessel_i1e(xb), ss.i1e(xb), 4 * rtol, 1e-300)


def _reference_grad_a(a, x):
    """d/da P(a, x) by central differences of whichever of P, Q is smaller (keeps digits)."""
    h = 1e-6 * a
    dp = (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)
    dq = -(ss.gammaincc(a + h, x) - ss.gammaincc(a - h, x)) / (2 * h)
    return np.where(ss.gammainc(a, x) < 0.5, dp, dq)


def test_igamma_grad_a_and_random_gamma_grad(x64):
    a = np.exp(RNG.uniform(np.log(1e-2), np.log(200.0), 200))
    x = a * np.exp(RNG.uniform(-2, 2, 200))
    ref = _reference_grad_a(a, x)
    assert_close(lax.igamma_grad_a(a, x), ref, 1e-6, 1e-10)
    # implicit reparameterisation: dx/da = -(dP/da) / density
    pdf = st.gamma.pdf(x, a)
    keep = pdf > 1e-200
    assert_close(np.asarray(lax.random_gamma_grad(a, x))[keep], (-ref / pdf)[keep], 1e-6, 1e-10)
    edge = lax.igamma_grad_a(np.array([1.0, -1.0, 2.0]), np.array([0.0, 1.0, np.inf]))
    np.testing.assert_array_equal(np.isnan(edge), [False, True, False])


def test_derivatives_match_finite_differences(x64):
    a = np.array([0.7, 3.0, 12.0])
    x = np.array([0.4, 4.5, 9.0])
    check_grads(lax.igamma, (a, x), order=1, rtol=1e-5)
    check_grads(lax.igammac, (a, x), order=1, rtol=1e-5)
    check_grads(lambda x: lax.betainc(a, np.array([2.0, 0.5, 7.0]), x),
                (np.array([0.3, 0.6, 0.9]),), order=1, rtol=1e-5)
    check_grads(lambda x: lax.polygamma(np.array([0.0, 1.0, 3.0]), x), (x,), order=1)
    check_grads(lambda q: lax.zeta(np.array([2.0, 3.5, 1.5]), q), (x,), order=1)
    xs = np.array([-30.0, -2.0, 0.3, 0.7, 5.0, 40.0])
    check_grads(lax.bessel_i0e, (xs,), order=1)  # (not differentiable at 0)
    check_grads(lax.bessel_i1e, (np.append(xs, 1e-20),), order=1)
    np.testing.assert_allclose(pyjax.grad(lax.bessel_i1e)(0.0), 0.5)


def test_derivatives_jax_does_not_have_raise(x64):
    one = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        pyjax.jvp(lambda a: lax.betainc(a, one, 0.5 * one), (one,), (one,))
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        pyjax.jvp(lambda m: lax.polygamma(m, one), (one,), (one,))
    with pytest.raises(ValueError, match="zeta gradient with respect to x"):
        pyjax.grad(lambda s: lax.zeta(s, 2.0))(3.0)
    for f in (lax.igamma_grad_a, lax.random_gamma_grad):
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            pyjax.jvp(lambda a: f(a, one), (one,), (one,))


def _all_primitives(a, x):
    return (lax.igamma(a, x), lax.igammac(a, x), lax.igamma_grad_a(a, x),
            lax.random_gamma_grad(a, x), lax.betainc(a, x, 0.3 * x / (1 + x)),
            lax.polygamma(lax.floor(a), x), lax.zeta(a + 1.5, x), lax.bessel_i0e(x - a),
            lax.bessel_i1e(x - a))


def test_vmap_equals_loop_and_jit_equals_eager():
    a = np.array([[0.5, 2.0], [3.0, 7.0], [1.5, 0.1]], np.float32)
    x = np.array([[0.2, 3.0], [1.0, 9.0], [4.0, 0.01]], np.float32)
    batched = pyjax.jit(pyjax.vmap(_all_primitives, in_axes=(0, 1)))(a, x.T)
    one = pyjax.jit(_all_primitives)
    for i in range(a.shape[0]):
        for got, want in zip(batched, one(a[i], x[i])):
            np.testing.assert_allclose(np.asarray(got)[i], np.asarray(want), rtol=1e-6)
    for got, want in zip(one(a[0], x[0]), _all_primitives(a[0], x[0])):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_bad_dtypes_are_rejected(x64):
    with pytest.raises(TypeError):
        lax.igamma(np.array([1, 2]), np.array([1, 2]))
    with pytest.raises(TypeError):
        lax.betainc(np.float32(1.0), np.float64(2.0), np.float32(0.5))


def test_random_gamma_is_differentiable_in_a(x64):
    """random.gamma's implicit reparameterisation gradient: holding the sample's CDF value
    P(a, x) fixed, dx/da = -(dP/da) / density (SciPy finite differences as the oracle)."""
    key = pyjax.random.key(0)
    a = np.array([0.3, 1.0, 2.5, 10.0])
    x = np.asarray(pyjax.random.gamma(key, a))
    want = -_reference_grad_a(a, x) / st.gamma.pdf(x, a)
    got = pyjax.grad(lambda a: pyjax.random.gamma(key, a).sum())(a)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got_log = pyjax.grad(lambda a: pyjax.random.loggamma(key, a).sum())(a)
    np.testing.assert_allclose(np.asarray(got_log), want / x, rtol=1e-6)


def test_xla_lgamma_is_chlo_lgamma_and_close_to_lgamma():
    # the sampler-only primitive: XLA's lgamma (JAX's bits), absolutely accurate
    from pyjax._src.lax.special import xla_lgamma
    x = np.array([0.3, 1.0, 1.5, 2.0, 7.25, 30.0], np.float32)
    got = np.asarray(xla_lgamma(pyjax.numpy.asarray(x)))
    np.testing.assert_allclose(got, ss.gammaln(x.astype(np.float64)), atol=2e-6, rtol=2e-6)
    g = np.asarray(pyjax.vmap(pyjax.grad(lambda v: xla_lgamma(v)))(pyjax.numpy.asarray(x)))
    np.testing.assert_allclose(g, ss.digamma(x.astype(np.float64)), rtol=1e-5)


def test_xla_erf_inv_is_close_to_erfinv_with_its_derivative(x64):
    # the normal samplers' erf_inv (chlo.erf_inv, JAX's bits): 1e-10 relative at worst, where
    # lax.erf_inv adds a Newton step; the derivative is sqrt(pi)/2 exp(erfinv(x)^2)
    from pyjax._src.lax.special import xla_erf_inv
    x = np.array([-0.999999, -0.7, -0.1, 0.0, 0.3, 0.9, 0.99999999], np.float64)
    got = np.asarray(xla_erf_inv(pyjax.numpy.asarray(x)))
    np.testing.assert_allclose(got, ss.erfinv(x), rtol=1e-9, atol=0)
    g = np.asarray(pyjax.vmap(pyjax.grad(xla_erf_inv))(pyjax.numpy.asarray(x)))
    np.testing.assert_allclose(g, np.sqrt(np.pi) / 2 * np.exp(ss.erfinv(x) ** 2), rtol=1e-8)


def test_float32_erf_tail_is_one_minus_erfc_at_every_float():
    # past 3.7 float32 erf is written as thresholds (lax/elementwise.py); at every float32
    # from 3.7 to 4.25 (both signs) it must equal what 1 - erfc(|x|) rounds to, be monotone,
    # never exceed 1 and reach 1 (as scipy's erf rounds to float32 there)
    bits = np.arange(np.float32(3.7).view(np.int32), np.float32(4.25).view(np.int32),
                     dtype=np.int32)
    x = bits.view(np.float32)
    erf = pyjax.jit(lax.erf)
    got = np.asarray(erf(x))
    tail = np.float32(1) - np.asarray(pyjax.jit(lax.erfc)(x))
    far = x > np.float32(3.7)
    np.testing.assert_array_equal(got[far].view(np.int32), tail[far].view(np.int32))
    np.testing.assert_array_equal(np.asarray(erf(-x)).view(np.int32), (-got).view(np.int32))
    assert (np.diff(got[far]) >= 0).all() and got.max() == 1.0
    np.testing.assert_allclose(got, ss.erf(x.astype(np.float64)), rtol=0, atol=3e-7)
    np.testing.assert_array_equal(np.asarray(erf(np.array([np.inf, -np.inf, 1e30, np.nan],
                                                          np.float32))), [1, -1, 1, np.nan])
