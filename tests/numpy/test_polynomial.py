"""polyval against NumPy (Horner's method in a scan): shapes, dtype promotion, unroll, empty
coefficients, eager and under jit, vmap, and derivatives against np.polyder."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

P = np.array([0.5, -2.0, 3.0, 0.0, 1.25], np.float32)


def _close(got, want, dtype=np.float32, rtol=1e-5):
    assert isinstance(got, pyjax.Array), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("xshape", [(), (7,), (2, 3)])
@pytest.mark.parametrize("unroll", [1, 3, 16])
def test_polyval(xshape, unroll):
    x = np.random.default_rng(0).uniform(-2, 2, xshape).astype(np.float32)
    _close(jnp.polyval(P, x, unroll=unroll), np.polyval(P, x))


def test_polyval_jit_and_dtypes():
    x = np.linspace(-3, 3, 8).astype(np.float32)
    f = pyjax.jit(jnp.polyval)
    _close(f(P, x), np.polyval(P, x))
    # integer coefficients and points stay integer: JAX 0.10.2 gives
    # jnp.polyval(jnp.array([1, 2, 3]), jnp.array([1, -2, 3])) == Array([6, 3, 18], int32)
    _close(jnp.polyval(np.array([1, 2, 3], np.int32), np.arange(4, dtype=np.int32)),
           np.polyval([1, 2, 3], np.arange(4)), dtype=np.int32)
    _close(jnp.polyval(P, 2), np.polyval(P, 2.0))
    z = np.array([1 + 1j, -0.5j], np.complex64)
    _close(jnp.polyval(P, z), np.polyval(P, z), dtype=np.complex64)
    # a single coefficient is a constant; no coefficients give zeros
    _close(jnp.polyval(np.array([4.0], np.float32), x), np.full(8, 4.0))
    _close(jnp.polyval(np.zeros((0,), np.float32), x), np.zeros(8))


def test_polyval_2d_coefficients():
    # the leading axis holds coefficients, the rest broadcasts against x
    p = np.arange(6, dtype=np.float32).reshape(3, 2)
    x = np.array([[0.5], [2.0]], np.float32)
    want = np.stack([np.polyval(p[:, j], x[:, 0]) for j in range(2)], axis=1)
    _close(jnp.polyval(p, x), want)


def test_polyval_vmap():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    f = lambda x: jnp.polyval(P, x)  # noqa: E731
    _close(pyjax.vmap(f)(x), np.stack([np.asarray(f(v)) for v in x]))
    ps = np.stack([P, 2 * P, -P])
    _close(pyjax.vmap(jnp.polyval, in_axes=(0, None))(ps, x),
           np.stack([np.polyval(p, x) for p in ps]))


def test_polyval_grad():
    dp = np.polyder(P)
    for x in (-1.5, 0.0, 0.75, 2.0):
        g = pyjax.grad(lambda x: jnp.polyval(P, x))(np.float32(x))
        np.testing.assert_allclose(float(g), np.polyval(dp, x), rtol=1e-5)
    # with respect to the coefficients: the powers of x
    g = pyjax.grad(lambda p: jnp.polyval(p, np.float32(2.0)))(P)
    _close(g, 2.0 ** np.arange(len(P) - 1, -1, -1))
    # elementwise derivative through vmap
    xs = np.linspace(-2, 2, 5).astype(np.float32)
    gs = pyjax.vmap(pyjax.grad(lambda x: jnp.polyval(P, x)))(xs)
    _close(gs, np.polyval(dp, xs))


def test_polyval_grad_under_jit():
    g = pyjax.grad(pyjax.jit(lambda x: jnp.polyval(P, x)))(np.float32(1.5))
    np.testing.assert_allclose(float(g), np.polyval(np.polyder(P), 1.5), rtol=1e-5)
    g = pyjax.jit(pyjax.grad(lambda p, x: jnp.polyval(p, x).sum(), argnums=(0, 1)))
    gp, gx = g(P, np.array([1.0, -0.5], np.float32))
    _close(gx, np.polyval(np.polyder(P), [1.0, -0.5]))
    _close(gp, (1.0 ** np.arange(4, -1, -1)) + (-0.5) ** np.arange(4, -1, -1))


def test_polyval_errors():
    with pytest.raises(TypeError, match="polyval requires ndarray"):
        jnp.polyval([1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="at least one"):
        jnp.polyval(np.float32(2), 1.0)
    with pytest.raises(ValueError, match="unroll"):
        jnp.polyval(P, 1.0, unroll=0)


# ---- coefficient arithmetic and vander ----

def test_polyadd_sub_mul_div_against_numpy():
    a, b = np.array([1.0, 2, 3], np.float32), np.array([2.0, -1], np.float32)
    for name in ["polyadd", "polysub", "polymul"]:
        np.testing.assert_allclose(np.asarray(getattr(jnp, name)(a, b)), getattr(np, name)(a, b))
    assert jnp.polyadd(np.array([1, 2]), np.array([3])).dtype == np.int32
    assert jnp.polymul(np.array([1, 2]), np.array([3])).dtype == np.float32  # JAX: inexact
    u, v = np.array([1.0, -3, 0, 2, 5], np.float32), np.array([1.0, 2], np.float32)
    q, r = jnp.polydiv(u, v)
    qn, rn = np.polydiv(u, v)
    np.testing.assert_allclose(np.asarray(q), qn)
    np.testing.assert_allclose(np.asarray(r)[-len(rn):], rn)
    assert r.shape == u.shape and not np.asarray(r)[:-len(rn)].any()  # JAX keeps u's length
    q, r = jnp.polydiv(u, v, trim_leading_zeros=True)
    np.testing.assert_allclose(np.asarray(r), rn)
    q, r = pyjax.jit(jnp.polydiv)(u, v)
    np.testing.assert_allclose(np.asarray(q), qn)


def test_polyder_polyint_poly_vander():
    p = np.array([1.0, -3, 0, 2, 5], np.float32)
    for m in [0, 1, 2, 4, 5]:
        np.testing.assert_allclose(np.asarray(jnp.polyder(p, m)), np.polyder(p, m))
    a = np.array([1.0, 2, 3], np.float32)
    for m, k in [(1, None), (2, None), (1, 3.0), (2, np.array([1.0, 2.0]))]:
        np.testing.assert_allclose(np.asarray(jnp.polyint(a, m, k)),
                                   np.polyint(a, m, 0 if k is None else k), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.poly(np.array([1.0, 2, -3]))), np.poly([1.0, 2, -3]))
    # a square matrix: its characteristic polynomial, complex as JAX (test_linalg_host.py)
    np.testing.assert_allclose(np.asarray(jnp.poly(np.eye(2))), np.poly(np.eye(2)), atol=1e-6)
    x = np.array([1, 2, 3, 5])
    _close(jnp.vander(x), np.vander(x), dtype=np.int32)
    _close(jnp.vander(x.astype(np.float32), 5, increasing=True),
           np.vander(x, 5, increasing=True), dtype=np.float32)
    assert jnp.vander(x, 0).shape == (4, 0)


def test_polynomial_grads(x64):
    from pyjax.test_util import check_grads
    a, b = np.array([1.0, 2, 3]), np.array([2.0, -1])
    check_grads(jnp.polymul, (a, b), order=2)
    check_grads(lambda u, v: jnp.polydiv(u, v)[0], (np.array([1.0, -3, 0, 2]), b), order=1)
    check_grads(lambda r: jnp.poly(r), (np.array([0.5, -1.0, 2.0]),), order=1)


@pytest.mark.parametrize("deg", [0, 1, 3])
def test_polyfit_matches_numpy(deg, x64):
    rng = np.random.default_rng(deg)
    x = np.linspace(-2, 3, 17)
    y = np.polyval(rng.normal(size=deg + 1), x) + 0.01 * rng.normal(size=x.size)
    np.testing.assert_allclose(np.asarray(jnp.polyfit(x, y, deg)), np.polyfit(x, y, deg),
                               rtol=1e-8, atol=1e-10)
    w = rng.uniform(0.5, 2.0, x.size)
    np.testing.assert_allclose(np.asarray(jnp.polyfit(x, y, deg, w=w)),
                               np.polyfit(x, y, deg, w=w), rtol=1e-8, atol=1e-10)
    y2 = np.stack([y, 2 * y + 1], axis=1)
    np.testing.assert_allclose(np.asarray(jnp.polyfit(x, y2, deg)), np.polyfit(x, y2, deg),
                               rtol=1e-8, atol=1e-10)
    c, cov = jnp.polyfit(x, y, deg, cov=True)
    c_np, cov_np = np.polyfit(x, y, deg, cov=True)
    np.testing.assert_allclose(np.asarray(cov), cov_np, rtol=1e-6, atol=1e-14)
    got = jnp.polyfit(x, y, deg, full=True)
    want = np.polyfit(x, y, deg, full=True)
    np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=1e-6)
    assert int(got[2]) == want[2]


def test_polyfit_bad_arguments():
    with pytest.raises(ValueError, match="deg >= 0"):
        jnp.polyfit(jnp.arange(3.0), jnp.arange(3.0), -1)
    with pytest.raises(TypeError, match="same length"):
        jnp.polyfit(jnp.arange(3.0), jnp.arange(4.0), 1)
    with pytest.raises(TypeError, match="deg must be an int"):
        jnp.polyfit(jnp.arange(3.0), jnp.arange(3.0), 1.5)
