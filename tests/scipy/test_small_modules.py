"""scipy.integrate.trapezoid, scipy.cluster.vq.vq, scipy.ndimage.map_coordinates and
scipy.optimize.minimize against SciPy."""
import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.integrate as sint
import scipy.ndimage as snd

import pyjax
from pyjax.scipy.cluster.vq import vq
from pyjax.scipy.integrate import trapezoid
from pyjax.scipy.ndimage import map_coordinates

RNG = np.random.default_rng(11)


def test_trapezoid(x64):
    y = RNG.normal(size=(3, 5))
    x = np.sort(RNG.normal(size=5))
    np.testing.assert_allclose(trapezoid(y, x), sint.trapezoid(y, x), rtol=1e-13)
    np.testing.assert_allclose(trapezoid(y, dx=0.3, axis=0), sint.trapezoid(y, dx=0.3, axis=0),
                               rtol=1e-13)
    xs = np.sort(RNG.normal(size=(3, 5)), axis=1)
    np.testing.assert_allclose(trapezoid(y, xs), sint.trapezoid(y, xs), rtol=1e-13)
    check = pyjax.grad(lambda y: trapezoid(y, x))(y[0])
    np.testing.assert_allclose(check, np.gradient(np.zeros(5)) + np.r_[
        (x[1] - x[0]) / 2, (x[2:] - x[:-2]) / 2, (x[-1] - x[-2]) / 2], rtol=1e-13)
    with pytest.raises(ValueError, match="length"):
        trapezoid(y, x[:3])


def test_vq(x64):
    obs = RNG.normal(size=(7, 2))
    book = obs[:3] + 0.1
    for o, b in ((obs, book), (obs[:, 0], book[:, 0])):
        codes, dist = vq(o, b)
        want_codes, want_dist = svq.vq(o, b)
        np.testing.assert_array_equal(codes, want_codes)
        np.testing.assert_allclose(dist, want_dist, rtol=1e-13)
    with pytest.raises(ValueError, match="infs or NaNs"):
        vq(np.array([[np.nan, 1.0]]), book)
    with pytest.raises(ValueError, match="same rank"):
        vq(obs, book[0])


# JAX's 'constant' interpolates each corner with cval outside: SciPy's 'grid-constant';
# its 'wrap' is SciPy's 'grid-wrap'.
MODES = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
         "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_matches_scipy(order, x64):
    a = np.arange(20.0).reshape(4, 5) ** 1.5
    c = [np.array([-1.3, -0.4, 0.0, 0.5, 1.7, 2.99, 3.0, 3.4, 4.6, 7.2, -5.1]),
         np.array([0.2, -0.7, 4.0, 4.4, 2.45, 1.1, 0.0, 3.3, -2.2, 5.4, 9.3])]
    for mode, scipy_mode in MODES.items():
        got = map_coordinates(a, c, order, mode=mode, cval=-1.0)
        want = snd.map_coordinates(a, c, order=order, mode=scipy_mode, cval=-1.0)
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=mode)
    ints = np.arange(12).reshape(3, 4)
    got = map_coordinates(ints, [np.array([0.4, 1.6]), np.array([2.2, 0.9])], order)
    assert got.dtype == ints.dtype
    np.testing.assert_array_equal(got, snd.map_coordinates(
        ints, [np.array([0.4, 1.6]), np.array([2.2, 0.9])], order=order))


def test_map_coordinates_grad_and_errors(x64):
    a = np.arange(12.0).reshape(3, 4)
    g = pyjax.grad(lambda x: map_coordinates(a, [x, np.array(1.25)], 1))(0.5)
    np.testing.assert_allclose(g, 4.0)  # the row step of a
    with pytest.raises(NotImplementedError, match="order"):
        map_coordinates(a, [np.zeros(2), np.zeros(2)], 3)
    with pytest.raises(NotImplementedError, match="mode"):
        map_coordinates(a, [np.zeros(2), np.zeros(2)], 1, mode="grid-mirror")
    with pytest.raises(ValueError, match="length"):
        map_coordinates(a, [np.zeros(2)], 1)


def _rosen(x):
    import pyjax.numpy as jnp
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_minimize_bfgs_under_jit_and_vmap(x64):
    from pyjax.scipy.optimize import OptimizeResults, minimize
    x0 = np.array([-1.2, 1.0, 0.5])
    res = pyjax.jit(lambda x: minimize(_rosen, x, method="BFGS"))(x0)
    assert isinstance(res, OptimizeResults)
    assert bool(res.success) and int(res.status) == 0 and int(res.nit) > 0
    np.testing.assert_allclose(res.x, np.ones(3), atol=1e-6)  # SciPy's minimum: (1, 1, 1)
    assert float(np.max(np.abs(res.jac))) < 1e-5
    xs = np.array([[-1.2, 1.0, 0.5], [2.0, 2.0, 2.0]])
    batched = pyjax.vmap(lambda x: minimize(_rosen, x, method="BFGS").x)(xs)
    np.testing.assert_allclose(batched, np.ones((2, 3)), atol=1e-6)
    # a quadratic with args: the minimiser solves A x = b, hess_inv approaches A^-1
    A = np.array([[3.0, 0.5], [0.5, 1.0]])
    b = np.array([1.0, -2.0])
    res = minimize(lambda x, A, b: 0.5 * x @ A @ x - b @ x, np.zeros(2), (A, b),
                   method="BFGS")
    np.testing.assert_allclose(res.x, np.linalg.solve(A, b), rtol=1e-6)
    np.testing.assert_allclose(res.hess_inv, np.linalg.inv(A), rtol=1e-4)
    res = minimize(_rosen, x0, method="BFGS", options=dict(maxiter=3))
    assert int(res.status) == 1 and not bool(res.success) and int(res.nit) == 3
    with pytest.raises(ValueError, match="not recognized"):
        minimize(_rosen, x0, method="Nelder-Mead")
    with pytest.raises(NotImplementedError, match="disp"):
        minimize(_rosen, x0, method="BFGS", options=dict(disp=True))
