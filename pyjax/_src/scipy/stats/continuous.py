"""Continuous distributions of ``jax.scipy.stats``, one namespace class per distribution with
exactly the functions JAX's module has (the public modules re-export them)."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp

from pyjax._src.scipy import special as sp
from pyjax._src.scipy.special import _promote

_LOG_2PI = float(float(np.log(2 * np.pi)))
_NEG_INF = -np.inf


def _guarded(y, lo, hi, below, above, f):
    """``f(y)`` strictly inside (lo, hi), the constants ``below``/``above`` from its ends on
    and NaN for NaN. ``f`` sees a safe point outside, so the gradient there and at the ends is
    0 (not the NaN of an incomplete gamma/beta's derivative at 0), as JAX's."""
    inside = (y > lo) & (y < hi)
    ys = jnp.where(inside, y, lo + 1.0 if hi == np.inf else 0.5 * (lo + hi)).astype(y.dtype)
    out = jnp.where(y <= lo, below, jnp.where(y >= hi, above, f(ys)))
    return jnp.where(jnp.isnan(y), jnp.nan, out).astype(y.dtype)


def _keep_nan(y, out):
    """``out`` with NaN where ``y`` is NaN (a support test alone turns NaN into -inf)."""
    return jnp.where(jnp.isnan(y), jnp.nan, out).astype(out.dtype)


def _std(name, x, loc, scale, *more):
    """Promote, and standardize ``x``: returns (y, scale, *more)."""
    x, loc, scale, *more = _promote(name, x, loc, scale, *more)
    return ((x - loc) / scale, scale, *more)


def _log1mexp(t):
    """log(1 - exp(-t)) for t >= 0, with the digits of both ends (log(-expm1(-t)) near 0,
    log1p(-exp(-t)) beyond log 2: expon.logcdf(72) is -5.6e-32, not 0)."""
    small = t < float(np.log(2.0))
    return jnp.where(small, jnp.log(-jnp.expm1(-jnp.where(small, t, 1.0))),
                     jnp.log1p(-jnp.exp(-t)))


def _log_prob(p, q):
    """log(p) from p and its separately computed complement q = 1 - p: log1p(-q) where q < 1/2
    (a logcdf near 0 keeps its digits: gamma.logsf(1e-30, 2.3) is -1.8e-70, not 0)."""
    return jnp.where(q < 0.5, jnp.log1p(-jnp.where(q < 0.5, q, 0.0)), jnp.log(p))


def _log_diff(a, b):
    """log(exp(a) - exp(b)) for a >= b."""
    return a + jnp.log1p(-jnp.exp(b - a))


class norm:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        y, scale = _std("norm.logpdf", x, loc, scale)
        return -0.5 * y * y - jnp.log(scale) - 0.5 * _LOG_2PI

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(norm.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("norm.cdf", x, loc, scale)
        return sp.ndtr(y)

    @staticmethod
    def logcdf(x, loc=0, scale=1):
        y, _ = _std("norm.logcdf", x, loc, scale)
        return sp.log_ndtr(y)

    @staticmethod
    def sf(x, loc=0, scale=1):
        y, _ = _std("norm.sf", x, loc, scale)
        return sp.ndtr(-y)

    @staticmethod
    def logsf(x, loc=0, scale=1):
        y, _ = _std("norm.logsf", x, loc, scale)
        return sp.log_ndtr(-y)

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("norm.ppf", q, loc, scale)
        return sp.ndtri(q) * scale + loc

    @staticmethod
    def isf(q, loc=0, scale=1):
        q, loc, scale = _promote("norm.isf", q, loc, scale)
        return loc - sp.ndtri(q) * scale


class beta:
    @staticmethod
    def logpdf(x, a, b, loc=0, scale=1):
        y, scale, a, b = _std("beta.logpdf", x, loc, scale, a, b)
        inside = (y >= 0) & (y <= 1)
        ys = jnp.where(inside, y, 0.5)
        out = sp.xlogy(a - 1, ys) + sp.xlog1py(b - 1, -ys) - sp.betaln(a, b) - jnp.log(scale)
        return _keep_nan(y, jnp.where(inside, out, _NEG_INF))

    @staticmethod
    def pdf(x, a, b, loc=0, scale=1):
        return jnp.exp(beta.logpdf(x, a, b, loc, scale))

    @staticmethod
    def cdf(x, a, b, loc=0, scale=1):
        y, _, a, b = _std("beta.cdf", x, loc, scale, a, b)
        return _guarded(y, 0, 1, 0.0, 1.0, lambda ys: sp.betainc(a, b, ys))

    @staticmethod
    def logcdf(x, a, b, loc=0, scale=1):
        return _log_prob(beta.cdf(x, a, b, loc, scale), beta.sf(x, a, b, loc, scale))

    @staticmethod
    def sf(x, a, b, loc=0, scale=1):
        y, _, a, b = _std("beta.sf", x, loc, scale, a, b)
        return _guarded(y, 0, 1, 1.0, 0.0, lambda ys: sp.betainc(b, a, 1 - ys))

    @staticmethod
    def logsf(x, a, b, loc=0, scale=1):
        return _log_prob(beta.sf(x, a, b, loc, scale), beta.cdf(x, a, b, loc, scale))


class gamma:
    @staticmethod
    def logpdf(x, a, loc=0, scale=1):
        y, scale, a = _std("gamma.logpdf", x, loc, scale, a)
        ys = jnp.where(y >= 0, y, 1.0)
        out = sp.xlogy(a - 1, ys) - ys - sp.gammaln(a) - jnp.log(scale)
        return jnp.where(y >= 0, out, _NEG_INF)

    @staticmethod
    def pdf(x, a, loc=0, scale=1):
        return jnp.exp(gamma.logpdf(x, a, loc, scale))

    @staticmethod
    def cdf(x, a, loc=0, scale=1):
        y, _, a = _std("gamma.cdf", x, loc, scale, a)
        return _guarded(y, 0, np.inf, 0.0, 1.0, lambda ys: sp.gammainc(a, ys))

    @staticmethod
    def logcdf(x, a, loc=0, scale=1):
        return _log_prob(gamma.cdf(x, a, loc, scale), gamma.sf(x, a, loc, scale))

    @staticmethod
    def sf(x, a, loc=0, scale=1):
        y, _, a = _std("gamma.sf", x, loc, scale, a)
        return sp.gammaincc(a, jnp.maximum(y, 0))

    @staticmethod
    def logsf(x, a, loc=0, scale=1):
        return _log_prob(gamma.sf(x, a, loc, scale), gamma.cdf(x, a, loc, scale))


class chi2:
    @staticmethod
    def logpdf(x, df, loc=0, scale=1):
        x, df, loc, scale = _promote("chi2.logpdf", x, df, loc, scale)
        return _keep_nan(x, gamma.logpdf(x, df / 2, loc, 2 * scale))

    @staticmethod
    def pdf(x, df, loc=0, scale=1):
        return jnp.exp(chi2.logpdf(x, df, loc, scale))

    @staticmethod
    def cdf(x, df, loc=0, scale=1):
        x, df, loc, scale = _promote("chi2.cdf", x, df, loc, scale)
        return gamma.cdf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def logcdf(x, df, loc=0, scale=1):
        x, df, loc, scale = _promote("chi2.logcdf", x, df, loc, scale)
        return gamma.logcdf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def sf(x, df, loc=0, scale=1):
        y, _, df = _std("chi2.sf", x, loc, 2 * scale, df)
        return _guarded(y, 0, np.inf, 1.0, 0.0, lambda ys: sp.gammaincc(df / 2, ys))

    @staticmethod
    def logsf(x, df, loc=0, scale=1):
        x, df, loc, scale = _promote("chi2.logsf", x, df, loc, scale)
        return gamma.logsf(x, df / 2, loc, 2 * scale)


class t:
    @staticmethod
    def logpdf(x, df, loc=0, scale=1):
        y, scale, df = _std("t.logpdf", x, loc, scale, df)
        # lgamma((df+1)/2) - lgamma(df/2) - log(pi)/2 = -log B(1/2, df/2): betaln keeps the
        # digits the difference lost for large df (1e-8 at df = 1e8; JAX: 1.4e-7)
        return (-sp.betaln(jnp.full_like(df, 0.5), 0.5 * df) - 0.5 * jnp.log(df)
                - jnp.log(scale) - 0.5 * (df + 1) * jnp.log1p(y * y / df))

    @staticmethod
    def pdf(x, df, loc=0, scale=1):
        return jnp.exp(t.logpdf(x, df, loc, scale))


class uniform:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        x, loc, scale = _promote("uniform.logpdf", x, loc, scale)
        inside = (x >= loc) & (x <= loc + scale)
        return jnp.where(inside, -jnp.log(scale), _NEG_INF)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(uniform.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("uniform.cdf", x, loc, scale)
        # not clip: JAX's derivative is 1 at both ends of the support (clip's ties give 1/2)
        return jnp.where(y < 0, 0.0, jnp.where(y > 1, 1.0, y)).astype(y.dtype)

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("uniform.ppf", q, loc, scale)
        return jnp.where((q >= 0) & (q <= 1), loc + q * scale, jnp.nan)


class cauchy:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        y, scale = _std("cauchy.logpdf", x, loc, scale)
        return -float(np.log(np.pi)) - jnp.log(scale) - jnp.log1p(y * y)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(cauchy.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("cauchy.cdf", x, loc, scale)
        return 0.5 + jnp.arctan(y) / np.pi

    @staticmethod
    def logcdf(x, loc=0, scale=1):
        return jnp.log(cauchy.cdf(x, loc, scale))

    @staticmethod
    def sf(x, loc=0, scale=1):
        y, _ = _std("cauchy.sf", x, loc, scale)
        return 0.5 - jnp.arctan(y) / np.pi

    @staticmethod
    def logsf(x, loc=0, scale=1):
        return jnp.log(cauchy.sf(x, loc, scale))

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("cauchy.ppf", q, loc, scale)
        return loc + scale * _cauchy_quantile(q)

    @staticmethod
    def isf(q, loc=0, scale=1):
        q, loc, scale = _promote("cauchy.isf", q, loc, scale)
        return loc - scale * _cauchy_quantile(q)


def _cauchy_quantile(q):
    """tan(pi (q - 1/2)) as -cot(pi q) or cot(pi (1 - q)): no cancellation in q - 1/2 in the
    tails, and -inf / inf at q = 0 / 1."""
    lower = q < 0.5
    s = jnp.where(lower, q, 1 - q)
    c = 1 / jnp.tan(np.pi * s)
    out = jnp.where(lower, -c, c)
    return jnp.where((q < 0) | (q > 1), jnp.nan, out)


class expon:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        # ``y < 0`` tests (not ``y >= 0``) so that NaN stays NaN, as JAX's
        y, scale = _std("expon.logpdf", x, loc, scale)
        return jnp.where(y < 0, _NEG_INF, -y - jnp.log(scale))

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(expon.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("expon.cdf", x, loc, scale)
        # derivative 1 at 0 as JAX's (a max(y, 0) tie would give 1/2); NaN stays NaN
        return jnp.where(y < 0, 0.0, -jnp.expm1(-jnp.where(y < 0, 0.0, y))).astype(y.dtype)

    @staticmethod
    def logcdf(x, loc=0, scale=1):
        y, _ = _std("expon.logcdf", x, loc, scale)
        return jnp.where(y >= 0, _log1mexp(jnp.maximum(y, 0)), _NEG_INF).astype(y.dtype)

    @staticmethod
    def sf(x, loc=0, scale=1):
        return jnp.exp(expon.logsf(x, loc, scale))

    @staticmethod
    def logsf(x, loc=0, scale=1):
        y, _ = _std("expon.logsf", x, loc, scale)
        return jnp.where(y < 0, 0.0, -y).astype(y.dtype)

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("expon.ppf", q, loc, scale)
        out = -jnp.log1p(-q) * scale + loc
        return jnp.where((q >= 0) & (q <= 1), out, jnp.nan)


class gennorm:
    @staticmethod
    def logpdf(x, beta):
        x, beta = _promote("gennorm.logpdf", x, beta)
        return jnp.log(0.5 * beta) - sp.gammaln(1 / beta) - jnp.abs(x) ** beta

    @staticmethod
    def pdf(x, beta):
        return jnp.exp(gennorm.logpdf(x, beta))

    @staticmethod
    def cdf(x, beta):
        x, beta = _promote("gennorm.cdf", x, beta)
        half_q = 0.5 * sp.gammaincc(1 / beta, jnp.abs(x) ** beta)  # the mass beyond |x|
        return jnp.where(x < 0, half_q, 1 - half_q)


class gumbel_l:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        y, scale = _std("gumbel_l.logpdf", x, loc, scale)
        return y - jnp.exp(y) - jnp.log(scale)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(gumbel_l.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("gumbel_l.cdf", x, loc, scale)
        return -jnp.expm1(-jnp.exp(y))

    @staticmethod
    def logcdf(x, loc=0, scale=1):
        y, _ = _std("gumbel_l.logcdf", x, loc, scale)
        return _log1mexp(jnp.exp(y))

    @staticmethod
    def sf(x, loc=0, scale=1):
        return jnp.exp(gumbel_l.logsf(x, loc, scale))

    @staticmethod
    def logsf(x, loc=0, scale=1):
        y, _ = _std("gumbel_l.logsf", x, loc, scale)
        return -jnp.exp(y)

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("gumbel_l.ppf", q, loc, scale)
        out = jnp.log(-jnp.log1p(-q)) * scale + loc
        return jnp.where((q >= 0) & (q <= 1), out, jnp.nan)


class gumbel_r:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        y, scale = _std("gumbel_r.logpdf", x, loc, scale)
        return -y - jnp.exp(-y) - jnp.log(scale)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(gumbel_r.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        return jnp.exp(gumbel_r.logcdf(x, loc, scale))

    @staticmethod
    def logcdf(x, loc=0, scale=1):
        y, _ = _std("gumbel_r.logcdf", x, loc, scale)
        return -jnp.exp(-y)

    @staticmethod
    def sf(x, loc=0, scale=1):
        y, _ = _std("gumbel_r.sf", x, loc, scale)
        return -jnp.expm1(-jnp.exp(-y))

    @staticmethod
    def logsf(x, loc=0, scale=1):
        y, _ = _std("gumbel_r.logsf", x, loc, scale)
        return _log1mexp(jnp.exp(-y))

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("gumbel_r.ppf", q, loc, scale)
        out = -jnp.log(-jnp.log(q)) * scale + loc
        return jnp.where((q >= 0) & (q <= 1), out, jnp.nan)


class laplace:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        y, scale = _std("laplace.logpdf", x, loc, scale)
        return -float(np.log(2.0)) - jnp.log(scale) - jnp.abs(y)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(laplace.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("laplace.cdf", x, loc, scale)
        half = 0.5 * jnp.exp(-jnp.abs(y))
        return jnp.where(y < 0, half, 1 - half)


class logistic:
    @staticmethod
    def logpdf(x, loc=0, scale=1):
        y, scale = _std("logistic.logpdf", x, loc, scale)
        a = jnp.abs(y)
        return -a - 2 * jnp.log1p(jnp.exp(-a)) - jnp.log(scale)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        return jnp.exp(logistic.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        y, _ = _std("logistic.cdf", x, loc, scale)
        return sp.expit(y)

    @staticmethod
    def sf(x, loc=0, scale=1):
        y, _ = _std("logistic.sf", x, loc, scale)
        return sp.expit(-y)

    @staticmethod
    def ppf(q, loc=0, scale=1):
        q, loc, scale = _promote("logistic.ppf", q, loc, scale)
        return sp.logit(q) * scale + loc

    @staticmethod
    def isf(q, loc=0, scale=1):
        q, loc, scale = _promote("logistic.isf", q, loc, scale)
        return -sp.logit(q) * scale + loc


class pareto:
    @staticmethod
    def logpdf(x, b, loc=0, scale=1):
        y, scale, b = _std("pareto.logpdf", x, loc, scale, b)
        ys = jnp.where(y >= 1, y, 1.0)
        out = jnp.log(b) - jnp.log(scale) - (b + 1) * jnp.log(ys)
        return _keep_nan(y, jnp.where(y >= 1, out, _NEG_INF))

    @staticmethod
    def pdf(x, b, loc=0, scale=1):
        return jnp.exp(pareto.logpdf(x, b, loc, scale))

    @staticmethod
    def logsf(x, b, loc=0, scale=1):
        y, _, b = _std("pareto.logsf", x, loc, scale, b)
        # derivative -b at y = 1 as JAX's (a maximum(y, 1) tie would halve it); NaN stays NaN
        return jnp.where(y < 1, 0.0, -b * jnp.log(jnp.where(y < 1, 1.0, y))).astype(y.dtype)

    @staticmethod
    def sf(x, b, loc=0, scale=1):
        return jnp.exp(pareto.logsf(x, b, loc, scale))

    @staticmethod
    def cdf(x, b, loc=0, scale=1):
        return -jnp.expm1(pareto.logsf(x, b, loc, scale))

    @staticmethod
    def logcdf(x, b, loc=0, scale=1):
        return jnp.log(pareto.cdf(x, b, loc, scale))

    @staticmethod
    def ppf(q, b, loc=0, scale=1):
        q, b, loc, scale = _promote("pareto.ppf", q, b, loc, scale)
        out = scale * jnp.exp(-jnp.log1p(-q) / b) + loc
        return jnp.where((q >= 0) & (q <= 1), out, jnp.nan)


class truncnorm:
    """The normal distribution truncated to [a, b] (standardized bounds), in log space."""

    @staticmethod
    def _log_mass(a, b):  # log(Phi(b) - Phi(a)), from the tail that keeps the digits
        return jnp.where(a > 0, _log_diff(sp.log_ndtr(-a), sp.log_ndtr(-b)),
                         _log_diff(sp.log_ndtr(b), sp.log_ndtr(a)))

    @staticmethod
    def _safe(y, a, b):
        # y on [a, b]; the midpoint outside, where clip's a or b would make the unselected
        # branch's log(0) poison the gradient with NaN (JAX: 0 there)
        return jnp.where((y >= a) & (y <= b), y, jnp.clip(0.5 * (a + b), a, b))

    @staticmethod
    def _log_cdf_sf(y, a, b):
        """(logcdf, logsf) of standardized ``y``: each is log1p(-the other's probability) where
        that is below 1/2 (the difference of two near-equal log masses was 0 for -2e-71)."""
        yc = truncnorm._safe(y, a, b)
        total = truncnorm._log_mass(a, b)
        lcdf = truncnorm._log_mass(a, yc) - total
        lsf = truncnorm._log_mass(yc, b) - total
        log_half = float(-np.log(2.0))
        lcdf2 = jnp.where(lsf < log_half, jnp.log1p(-jnp.exp(jnp.minimum(lsf, log_half))), lcdf)
        lsf2 = jnp.where(lcdf < log_half, jnp.log1p(-jnp.exp(jnp.minimum(lcdf, log_half))), lsf)
        return lcdf2, lsf2

    @staticmethod
    def logpdf(x, a, b, loc=0, scale=1):
        y, scale, a, b = _std("truncnorm.logpdf", x, loc, scale, a, b)
        out = -0.5 * y * y - 0.5 * _LOG_2PI - jnp.log(scale) - truncnorm._log_mass(a, b)
        return _keep_nan(y, jnp.where((y >= a) & (y <= b), out, _NEG_INF))

    @staticmethod
    def pdf(x, a, b, loc=0, scale=1):
        return jnp.exp(truncnorm.logpdf(x, a, b, loc, scale))

    @staticmethod
    def logcdf(x, a, b, loc=0, scale=1):
        y, _, a, b = _std("truncnorm.logcdf", x, loc, scale, a, b)
        out = truncnorm._log_cdf_sf(y, a, b)[0]
        return _keep_nan(y, jnp.where(y <= a, _NEG_INF, jnp.where(y >= b, 0.0, out)))

    @staticmethod
    def cdf(x, a, b, loc=0, scale=1):
        return jnp.exp(truncnorm.logcdf(x, a, b, loc, scale))

    @staticmethod
    def logsf(x, a, b, loc=0, scale=1):
        y, _, a, b = _std("truncnorm.logsf", x, loc, scale, a, b)
        out = truncnorm._log_cdf_sf(y, a, b)[1]
        return _keep_nan(y, jnp.where(y <= a, 0.0, jnp.where(y >= b, _NEG_INF, out)))

    @staticmethod
    def sf(x, a, b, loc=0, scale=1):
        return jnp.exp(truncnorm.logsf(x, a, b, loc, scale))


class vonmises:
    @staticmethod
    def logpdf(x, kappa):
        x, kappa = _promote("vonmises.logpdf", x, kappa)
        # periodic: defined for every x, as JAX's and SciPy's (vonmises.pdf(4., 1.) ~ 0.0654)
        return kappa * (jnp.cos(x) - 1) - _LOG_2PI - jnp.log(sp.i0e(kappa))

    @staticmethod
    def pdf(x, kappa):
        return jnp.exp(vonmises.logpdf(x, kappa))


class wrapcauchy:
    @staticmethod
    def logpdf(x, c):
        x, c = _promote("wrapcauchy.logpdf", x, c)
        out = jnp.log1p(-c * c) - _LOG_2PI - jnp.log1p(c * c - 2 * c * jnp.cos(x))
        inside = (x >= 0) & (x <= 2 * np.pi) & (c > 0) & (c < 1)
        return jnp.where(inside, out, jnp.where((c > 0) & (c < 1), _NEG_INF, jnp.nan))

    @staticmethod
    def pdf(x, c):
        return jnp.exp(wrapcauchy.logpdf(x, c))
