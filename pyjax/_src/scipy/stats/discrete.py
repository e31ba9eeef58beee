"""Discrete distributions of ``jax.scipy.stats`` (one namespace class each, JAX's functions)."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.scipy import special as sp
from pyjax._src.scipy.special import _promote

_NEG_INF = -np.inf


def _is_int(k):
    return k == jnp.floor(k)


def _keep_nan(y, out):
    """``out`` with NaN where ``y`` is NaN (the support test alone says -inf), as JAX's."""
    return jnp.where(jnp.isnan(y), jnp.nan, out).astype(out.dtype)


class poisson:
    @staticmethod
    def logpmf(k, mu, loc=0):
        k, mu, loc = _promote("poisson.logpmf", k, mu, loc)
        y = k - loc
        out = sp.xlogy(y, mu) - sp.gammaln(y + 1) - mu
        return jnp.where(_is_int(y) & (y >= 0), out, _NEG_INF)

    @staticmethod
    def pmf(k, mu, loc=0):
        return jnp.exp(poisson.logpmf(k, mu, loc))

    @staticmethod
    def cdf(k, mu, loc=0):
        k, mu, loc = _promote("poisson.cdf", k, mu, loc)
        y = jnp.floor(k - loc)
        out = jnp.where(y >= 0, sp.gammaincc(jnp.maximum(y, 0) + 1, mu), 0.0).astype(k.dtype)
        return _keep_nan(y, out)


    @staticmethod
    def entropy(mu, loc=0):
        """-sum_k p_k log p_k: the sum over k < 2000 (a vectorised axis) for mu <= 1500, the
        asymptotic series 0.5 log(2 pi e mu) - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3)
        beyond. ``loc`` does not change it."""
        mu, loc = _promote("poisson.entropy", mu, loc)
        summed = mu <= 1500.0
        m = jnp.where(summed & (mu > 0), mu, 1.0)[..., None]
        k = jnp.arange(2000, dtype=mu.dtype)
        logp = sp.xlogy(k, m) - sp.gammaln(k + 1) - m
        h_sum = -jnp.sum(jnp.exp(logp) * logp, axis=-1)
        ma = jnp.where(summed, 2000.0, mu)
        h_asym = (0.5 * jnp.log(2 * np.pi * np.e * ma) - 1 / (12 * ma) - 1 / (24 * ma ** 2)
                  - 19 / (360 * ma ** 3))
        out = jnp.where(summed, h_sum, h_asym)
        out = jnp.where(mu == 0, 0.0, out)
        return jnp.where((mu < 0) | jnp.isnan(mu), jnp.nan, out)


class bernoulli:
    @staticmethod
    def logpmf(k, p, loc=0):
        k, p, loc = _promote("bernoulli.logpmf", k, p, loc)
        y = k - loc
        out = jnp.where(y == 1, jnp.log(p), jnp.log1p(-p))
        return _keep_nan(y, jnp.where((y == 0) | (y == 1), out, _NEG_INF))

    @staticmethod
    def pmf(k, p, loc=0):
        return jnp.exp(bernoulli.logpmf(k, p, loc))

    @staticmethod
    def cdf(k, p):
        k, p = _promote("bernoulli.cdf", k, p)
        out = jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))
        return jnp.where((p < 0) | (p > 1) | jnp.isnan(k), jnp.nan, out).astype(k.dtype)

    @staticmethod
    def ppf(q, p):
        q, p = _promote("bernoulli.ppf", q, p)
        out = jnp.where(q > 1 - p, 1.0, 0.0)  # (0 at q = 0, as JAX; SciPy says -1)
        bad = (q < 0) | (q > 1) | (p < 0) | (p > 1) | jnp.isnan(q) | jnp.isnan(p)
        return jnp.where(bad, jnp.nan, out).astype(q.dtype)


class binom:
    @staticmethod
    def logpmf(k, n, p, loc=0):
        k, n, p, loc = _promote("binom.logpmf", k, n, p, loc)
        y = k - loc
        comb = sp.gammaln(n + 1) - sp.gammaln(y + 1) - sp.gammaln(n - y + 1)
        out = comb + sp.xlogy(y, p) + sp.xlog1py(n - y, -p)
        return jnp.where(_is_int(y) & (y >= 0) & (y <= n), out, _NEG_INF)

    @staticmethod
    def pmf(k, n, p, loc=0):
        return jnp.exp(binom.logpmf(k, n, p, loc))


class betabinom:
    @staticmethod
    def logpmf(k, n, a, b, loc=0):
        k, n, a, b, loc = _promote("betabinom.logpmf", k, n, a, b, loc)
        y = k - loc
        out = (-jnp.log(n + 1) - sp.betaln(n - y + 1, y + 1) + sp.betaln(y + a, n - y + b)
               - sp.betaln(a, b))
        return _keep_nan(y, jnp.where(_is_int(y) & (y >= 0) & (y <= n), out, _NEG_INF))

    @staticmethod
    def pmf(k, n, a, b, loc=0):
        return jnp.exp(betabinom.logpmf(k, n, a, b, loc))


class geom:
    @staticmethod
    def logpmf(k, p, loc=0):
        k, p, loc = _promote("geom.logpmf", k, p, loc)
        y = k - loc
        out = sp.xlog1py(y - 1, -p) + jnp.log(p)
        return _keep_nan(y, jnp.where(_is_int(y) & (y >= 1), out, _NEG_INF))

    @staticmethod
    def pmf(k, p, loc=0):
        return jnp.exp(geom.logpmf(k, p, loc))


class nbinom:
    @staticmethod
    def logpmf(k, n, p, loc=0):
        k, n, p, loc = _promote("nbinom.logpmf", k, n, p, loc)
        y = k - loc
        out = (sp.gammaln(n + y) - sp.gammaln(n) - sp.gammaln(y + 1) + sp.xlogy(n, p)
               + sp.xlog1py(y, -p))
        return _keep_nan(y, jnp.where(_is_int(y) & (y >= 0), out, _NEG_INF))

    @staticmethod
    def pmf(k, n, p, loc=0):
        return jnp.exp(nbinom.logpmf(k, n, p, loc))


class multinomial:
    @staticmethod
    def logpmf(x, n, p):
        x, n, p = (jnp.asarray(v) for v in promote_dtypes_inexact(x, n, p))
        out = sp.gammaln(n + 1) + jnp.sum(sp.xlogy(x, p) - sp.gammaln(x + 1), axis=-1)
        valid = jnp.all(_is_int(x) & (x >= 0), axis=-1) & (jnp.sum(x, axis=-1) == n)
        return jnp.where(valid, out, _NEG_INF)

    @staticmethod
    def pmf(x, n, p):
        return jnp.exp(multinomial.logpmf(x, n, p))
