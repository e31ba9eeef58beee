"""pyjax.scipy.stats against scipy.stats: every function of every distribution module at points
inside and outside the support, float64 (and float32 for a sample), gradients against finite
differences, vmap against a loop, jit against eager; rankdata, mode, sem, gaussian_kde."""
import importlib
import warnings

import numpy as np
import pytest
import scipy.stats as st

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.stats as jst
from pyjax.test_util import check_grads

X = np.array([-3.0, -0.7, 0.0, 0.2, 0.5, 0.95, 1.0, 1.7, 4.0, 12.0])
Q = np.array([0.0, 1e-8, 0.1, 0.5, 0.9, 1 - 1e-6, 1.0])
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 7.0, 2.5])

# module -> (scipy distribution, shape-parameter tuple, loc/scale keywords, points)
CONTINUOUS = {
    "norm": (st.norm, (), dict(loc=0.3, scale=1.5), X),
    "beta": (st.beta, (2.5, 0.7), dict(loc=-0.1, scale=1.2), X / 4 + 0.3),
    "gamma": (st.gamma, (2.3,), dict(loc=-0.5, scale=1.4), X),
    "chi2": (st.chi2, (3.5,), dict(loc=0.1, scale=0.8), X),
    "t": (st.t, (4.5,), dict(loc=0.2, scale=2.0), X),
    "uniform": (st.uniform, (), dict(loc=-0.5, scale=2.0), X),
    "cauchy": (st.cauchy, (), dict(loc=0.5, scale=0.7), X),
    "expon": (st.expon, (), dict(loc=0.1, scale=2.0), X),
    "gumbel_l": (st.gumbel_l, (), dict(loc=0.5, scale=1.5), X),
    "gumbel_r": (st.gumbel_r, (), dict(loc=0.5, scale=1.5), X),
    "laplace": (st.laplace, (), dict(loc=0.5, scale=1.5), X),
    "logistic": (st.logistic, (), dict(loc=0.5, scale=1.5), X),
    "pareto": (st.pareto, (2.5,), dict(loc=-0.2, scale=0.8), X),
    "truncnorm": (st.truncnorm, (-0.5, 2.0), dict(loc=0.2, scale=1.3), X),
    "gennorm": (st.gennorm, (1.7,), {}, X),
    "vonmises": (st.vonmises, (1.8,), {}, np.array([-3.0, -1.0, 0.0, 0.4, 2.5, 3.1])),
    "wrapcauchy": (st.wrapcauchy, (0.4,), {}, np.array([0.0, 0.3, 1.5, 3.0, 6.0, 6.2])),
}
F32_SAMPLE = {"norm", "gamma", "cauchy", "truncnorm"}
DISCRETE = {
    "poisson": (st.poisson, (3.5,), dict(loc=0.0)),
    "bernoulli": (st.bernoulli, (0.3,), {}),
    "binom": (st.binom, (6.0, 0.35), dict(loc=0.0)),
    "betabinom": (st.betabinom, (6.0, 2.0, 3.5), dict(loc=0.0)),
    "geom": (st.geom, (0.3,), dict(loc=0.0)),
    "nbinom": (st.nbinom, (4.0, 0.4), dict(loc=0.0)),
}


def _public(name):
    return importlib.import_module(f"pyjax.scipy.stats.{name}")


def _close(got, want, rtol, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300 if rtol < 1e-9 else 1e-30,
                               err_msg=what)


def _scipy_name(fn, dist):
    if fn == "logpmf" and not hasattr(dist, "logpmf"):
        return "logpdf"
    return fn


def _continuous_cases(dtype):
    """(name, fn, points, shape args, keywords) of every function to compare at ``dtype``."""
    cases = []
    for name, (dist, shapes, kw, pts) in CONTINUOUS.items():
        if dtype == np.float32 and name not in F32_SAMPLE:
            continue
        mod = _public(name)
        assert set(n for n in dir(mod) if not n.startswith("_")) <= {
            "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"}
        for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"):
            if hasattr(mod, fn):
                x = (Q if fn in ("ppf", "isf") else pts).astype(dtype)
                cases.append((name, fn, x, shapes, kw))
    return cases


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_continuous_distributions_match_scipy(dtype, x64):
    rtol = 1e-10 if dtype == np.float64 else 2e-5
    cases = _continuous_cases(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn, x, shapes, kw in cases:
            got = getattr(_public(name), fn)(x, *(np.asarray(s, dtype) for s in shapes),
                                             **{k: np.asarray(v, dtype) for k, v in kw.items()})
            assert got.dtype == dtype, f"{name}.{fn} returned {got.dtype}"
            want = getattr(CONTINUOUS[name][0], fn)(x, *shapes, **kw)
            _close(got, want, rtol * (50 if fn in ("ppf", "isf", "logsf", "logcdf") else 1),
                   f"{name}.{fn}")


def test_discrete_distributions_match_scipy(x64):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (dist, shapes, kw) in DISCRETE.items():
            mod = _public(name)
            for fn in ("logpmf", "pmf", "cdf", "ppf"):
                if not hasattr(mod, fn):
                    continue
                x = Q if fn == "ppf" else K
                kwd = kw if fn in ("logpmf", "pmf") or name != "bernoulli" else {}
                want = getattr(dist, fn)(x, *shapes, **kwd)
                if name == "bernoulli" and fn == "ppf":
                    want = np.where(x == 0, 0.0, want)  # JAX's ppf(0) is 0, SciPy's -1
                _close(getattr(mod, fn)(x, *shapes, **kwd), want, 1e-10, f"{name}.{fn}")
    mu = np.array([0.0, 1e-3, 0.5, 3.5, 40.0, 700.0, 1499.0, 1501.0, 5000.0, -1.0])
    _close(jst.poisson.entropy(mu), st.poisson.entropy(mu), 1e-10, "poisson.entropy")
    x = np.array([[1.0, 2.0, 3.0], [0.0, 6.0, 0.0], [2.0, 2.0, 1.0]])
    p = np.array([0.2, 0.5, 0.3])
    _close(jst.multinomial.logpmf(x, 6.0, p), st.multinomial.logpmf(x, 6, p), 1e-12,
           "multinomial.logpmf")
    _close(jst.multinomial.pmf(x, 6.0, p), st.multinomial.pmf(x, 6, p), 1e-12,
           "multinomial.pmf")


def test_multivariate_distributions_match_scipy(x64):
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    cov = A @ A.T + 0.5 * np.eye(3)
    mean = rng.normal(size=3)
    x = rng.normal(size=(5, 3))
    _close(jst.multivariate_normal.logpdf(x, mean, cov),
           st.multivariate_normal.logpdf(x, mean, cov), 1e-12, "mvn.logpdf")
    _close(jst.multivariate_normal.pdf(x, mean, cov),
           st.multivariate_normal.pdf(x, mean, cov), 1e-12, "mvn.pdf")
    _close(jst.multivariate_normal.logpdf(x, mean, np.array([0.5, 1.0, 2.0])),
           st.multivariate_normal.logpdf(x, mean, np.diag([0.5, 1.0, 2.0])), 1e-12, "mvn diag")
    _close(jst.multivariate_normal.logpdf(0.3, 0.1, 2.0),
           st.multivariate_normal.logpdf(0.3, 0.1, 2.0), 1e-12, "mvn scalar")
    alpha = np.array([1.5, 2.0, 0.7])
    xs = rng.dirichlet(alpha, size=4).T
    _close(jst.dirichlet.logpdf(xs, alpha), st.dirichlet.logpdf(xs, alpha), 1e-12, "dirichlet")
    _close(jst.dirichlet.pdf(xs[:2], alpha), st.dirichlet.pdf(xs, alpha), 1e-12, "dirichlet k-1")
    assert np.asarray(jst.dirichlet.logpdf(np.array([0.5, 0.6, 0.2]), alpha)) == -np.inf
    with pytest.raises(NotImplementedError, match="allow_singular"):
        jst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)


def test_gradients_match_finite_differences(x64):
    x = np.array([0.3, 1.2, 2.5])

    @pyjax.jit
    def logdensities(x, loc, scale):
        return jst.t.logpdf(x, 3.0, loc, scale) + jst.truncnorm.logpdf(x, -1.0, 5.0, loc, scale)

    check_grads(logdensities, (x, np.array(0.2), np.array(1.3)), order=1, rtol=1e-5)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    check_grads(pyjax.jit(jst.multivariate_normal.logpdf),
                (np.array([[0.1, 0.5], [1.0, -1.0]]), np.array([0.2, 0.1]), cov),
                order=1, rtol=1e-5)


def test_vmap_equals_loop_and_jit_equals_eager():
    xs = np.array([[0.3, 1.2], [2.5, -0.4], [0.9, 0.1]], np.float32)

    def f(x):
        return (jst.norm.logpdf(x, 0.5, 2.0), jst.beta.cdf(x / 4 + 0.5, 2.0, 3.0),
                jst.poisson.logpmf(jnp.round(x * 3), 2.0), jst.laplace.cdf(x))

    batched = pyjax.vmap(f)(xs)
    jitted = pyjax.jit(f)
    for i in range(xs.shape[0]):
        for b, j, e in zip(batched, jitted(xs[i]), f(xs[i])):
            np.testing.assert_allclose(np.asarray(b)[i], np.asarray(j), rtol=1e-6)
            np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-6)


def test_rankdata_mode_sem(x64):
    a = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 5.0]])
    np.testing.assert_array_equal(jst.rankdata(a), st.rankdata(a))
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(jst.rankdata(a, method=method, axis=1),
                                      st.rankdata(a, method=method, axis=1))
    assert np.isnan(np.asarray(jst.rankdata(np.array([1.0, np.nan])))).all()
    with pytest.raises(ValueError, match="unknown method"):
        jst.rankdata(a, method="mean")
    b = np.array([[1, 3, 3, 2], [1, 1, 2, 2], [4, 4, 2, 2]])
    for axis in (0, None):
        got, want = jst.mode(b, axis=axis), st.mode(b, axis=axis)
        np.testing.assert_array_equal(got.mode, want.mode)
        np.testing.assert_array_equal(got.count, want.count)
    got = jst.mode(b, axis=0, keepdims=True)
    assert got.mode.shape == (1, 4)
    c = np.array([[1.0, 2.5, 3.0, 7.0], [0.5, np.nan, 2.0, 1.0]])
    np.testing.assert_allclose(jst.sem(c, axis=1), st.sem(c, axis=1), rtol=1e-13)
    np.testing.assert_allclose(jst.sem(c, axis=1, nan_policy="omit"),
                               st.sem(c, axis=1, nan_policy="omit"), rtol=1e-13)


def test_gaussian_kde_matches_scipy(x64):
    rng = np.random.default_rng(5)
    data = rng.normal(size=(2, 30))
    w = rng.uniform(0.5, 1.5, 30)
    pts = rng.normal(size=(2, 4))
    for kw in (dict(), dict(bw_method="silverman", weights=w)):
        ours, ref = jst.gaussian_kde(data, **kw), st.gaussian_kde(data, **kw)
        np.testing.assert_allclose(ours.covariance, ref.covariance, rtol=1e-12)
        np.testing.assert_allclose(ours.evaluate(pts), ref.evaluate(pts), rtol=1e-12)
        np.testing.assert_allclose(ours.logpdf(pts), ref.logpdf(pts), rtol=1e-12)
        np.testing.assert_allclose(ours.integrate_gaussian(np.zeros(2), np.eye(2)),
                                   ref.integrate_gaussian(np.zeros(2), np.eye(2)), rtol=1e-12)
    one = jst.gaussian_kde(data[0])
    np.testing.assert_allclose(one.integrate_box_1d(-0.5, 1.0),
                               st.gaussian_kde(data[0]).integrate_box_1d(-0.5, 1.0), rtol=1e-12)
    np.testing.assert_allclose(one(np.array([0.1, 0.7])),
                               st.gaussian_kde(data[0])(np.array([0.1, 0.7])), rtol=1e-12)
    draws = one.resample(pyjax.random.key(0), (500,))
    assert draws.shape == (1, 500)
    assert abs(float(jnp.mean(draws)) - float(np.mean(data[0]))) < 0.2
    # a pytree: through jit
    np.testing.assert_allclose(pyjax.jit(lambda k, p: k.evaluate(p))(one, np.array([0.3])),
                               st.gaussian_kde(data[0])(np.array([0.3])), rtol=1e-12)
