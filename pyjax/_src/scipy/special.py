"""``jax.scipy.special``: special functions on top of ``lax`` (lax/special.py holds the
primitives) and ``jnp``, with SciPy's names and JAX's conventions."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import special as lax_special
from pyjax._src.lax.lgamma_erfinv import _log1p
from pyjax._src.lax.stop_gradient import stop_gradient
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.transformations.custom_derivatives import custom_jvp
from pyjax._src.numpy.util import promote_args_inexact
import pyjax.numpy as jnp  # the public namespace: every jnp function in one place

__all__ = ["gammaln", "loggamma", "gamma", "gammasgn", "digamma", "polygamma", "betaln", "beta",
           "betainc", "gammainc", "gammaincc", "erf", "erfc", "erfinv", "erfcx", "expit",
           "logit", "ndtr", "ndtri", "log_ndtr", "xlogy", "xlog1py", "entr", "rel_entr",
           "kl_div", "zeta", "i0", "i0e", "i1", "i1e", "factorial", "comb", "poch",
           "multigammaln", "boxcox", "boxcox1p", "logsumexp", "softmax", "log_softmax",
           "bernoulli", "exp1", "expi", "expn", "spence", "dawsn", "sici"]


def _promote(name, *args):
    """Promote to a common inexact dtype and broadcast; always arrays (Python scalars too)."""
    return [jnp.asarray(a) for a in promote_args_inexact(name, *args)]


# ---- gamma and beta functions ----

@compiled_when_eager()
def gammaln(x):
    """log|Gamma(x)|."""
    x, = _promote("gammaln", x)
    return lax.lgamma(x)


@compiled_when_eager()
def loggamma(x):
    """log(Gamma(x)) for real x: the principal branch, whose cut is the non-positive real axis,
    so NaN for every x <= 0 (as JAX; SciPy gives inf at +-0)."""
    x, = _promote("loggamma", x)
    return jnp.where(x > 0, lax.lgamma(x), jnp.where(x == jnp.inf, jnp.inf, jnp.nan))


@compiled_when_eager()
def gammasgn(x):
    """The sign of Gamma(x): +1 or -1 (NaN at NaN; +1 at 0 and the poles' left side as SciPy)."""
    x, = _promote("gammasgn", x)
    floor_x = jnp.floor(x)
    neg_odd = jnp.logical_and(x < 0, jnp.fmod(floor_x, 2.0) != 0)
    out = jnp.where(neg_odd, -1.0, 1.0).astype(x.dtype)
    out = jnp.where(jnp.logical_and(x < 0, x == floor_x), jnp.nan, out)
    out = jnp.where(x == 0, jnp.where(jnp.signbit(x), -1.0, 1.0), out)
    return jnp.where(jnp.isnan(x), jnp.nan, out)


@compiled_when_eager()
def gamma(x):
    """Gamma(x) = gammasgn(x) exp(gammaln(x))."""
    x, = _promote("gamma", x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


@compiled_when_eager()
def digamma(x):
    """The logarithmic derivative of Gamma."""
    x, = _promote("digamma", x)
    return lax.digamma(x)


@compiled_when_eager()
def polygamma(n, x):
    """The n-th derivative of digamma (n a non-negative integer array); negative x by
    reflection (lax/special_reflection.py)."""
    n_arr = jnp.asarray(n)
    if not dtypes.issubdtype(n_arr.dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_arr.dtype}.")
    n, x = _promote("polygamma", n, x)
    return lax_special.polygamma(n, x)


@compiled_when_eager()
def betaln(a, b):
    """log|B(a, b)| (Stirling's series where an argument is large: lax/special.py)."""
    a, b = _promote("betaln", a, b)
    return lax_special.log_beta(a, b)


@compiled_when_eager()
def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = _promote("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


@compiled_when_eager()
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = _promote("betainc", a, b, x)
    return lax_special.betainc(a, b, x)


@compiled_when_eager()
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = _promote("gammainc", a, x)
    return lax_special.igamma(a, x)


@compiled_when_eager()
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x)."""
    a, x = _promote("gammaincc", a, x)
    return lax_special.igammac(a, x)


@compiled_when_eager("d")
def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (a static int)."""
    d = operator.index(d)
    a, = _promote("multigammaln", a)
    total = sum(lax.lgamma(a - 0.5 * j) for j in range(d)) if d else jnp.zeros_like(a)
    return total + (d * (d - 1) / 4.0) * float(np.log(np.pi))


@compiled_when_eager()
def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z)."""
    z, m = _promote("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    out = sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return jnp.where(m == 0, jnp.ones_like(out), out)


def factorial(n, exact=False):
    """n! = Gamma(n + 1) (0 for negative n), in floating point."""
    if exact:
        raise ValueError("factorial with exact=True is not supported.")
    return _factorial(n)


@compiled_when_eager()
def _factorial(n):
    n, = _promote("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(lax.lgamma(n + 1.0))).astype(n.dtype)


def comb(N, k, exact=False, repetition=False):
    """The binomial coefficient N choose k, in floating point (0 outside 0 <= k <= N)."""
    if exact:
        raise ValueError("comb with exact=True is not supported.")
    return _comb(N, k, bool(repetition))


@compiled_when_eager("repetition")
def _comb(N, k, repetition):
    N, k = _promote("comb", N, k)
    if repetition:
        N = N + k - 1.0
    out = jnp.exp(lax.lgamma(N + 1.0) - lax.lgamma(k + 1.0) - lax.lgamma(N - k + 1.0))
    out = jnp.where((k < 0) | (N < 0) | (k > N), 0.0, out)
    if repetition:
        out = jnp.where((k == 0) & (N >= k - 1.0), 1.0, out)
    return out.astype(N.dtype)


# ---- error function and the normal distribution ----

@compiled_when_eager()
def erf(x):
    x, = _promote("erf", x)
    return lax.erf(x)


@compiled_when_eager()
def erfc(x):
    x, = _promote("erfc", x)
    return lax.erfc(x)


@compiled_when_eager()
def erfinv(x):
    x, = _promote("erfinv", x)
    return lax.erf_inv(x)


def _asymptotic_erfc_factor(x, terms):
    """sum_k (-1)^k (2k-1)!! / (2 x^2)^k, the series of sqrt(pi) x exp(x^2) erfc(x)."""
    inv = 1.0 / (2.0 * x * x)
    term, total = 1.0, 1.0
    for k in range(1, terms + 1):
        term = term * (-(2 * k - 1)) * inv
        total = total + term
    return total


@compiled_when_eager()
def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x)."""
    x, = _promote("erfcx", x)
    big = 12.0 if x.dtype == np.float64 else 6.0
    xs = jnp.where(x < big, x, big)
    xl = jnp.where(x < big, big, x)
    direct = jnp.exp(xs * xs) * lax.erfc(xs)
    asym = _asymptotic_erfc_factor(xl, 10) / (xl * float(np.sqrt(np.pi)))
    return jnp.where(x < big, direct, asym)


@compiled_when_eager()
def ndtr(x):
    """The standard normal CDF."""
    x, = _promote("ndtr", x)
    z = x * float(np.sqrt(0.5))
    small = jnp.abs(z) < float(np.sqrt(0.5))
    return jnp.where(small, 0.5 + 0.5 * lax.erf(z),
                     jnp.where(z > 0, 1.0 - 0.5 * lax.erfc(z), 0.5 * lax.erfc(-z)))


def _log_ndtr_lower_tail(x, terms):
    """log Phi(x) for very negative x: log phi(x) - log(-x) + log(asymptotic series)."""
    return (-0.5 * x * x - 0.5 * float(np.log(2 * np.pi)) - jnp.log(-x)
            + jnp.log(_asymptotic_erfc_factor(x / float(np.sqrt(2.0)), terms)))


@compiled_when_eager()
def log_ndtr(x):
    """log of the standard normal CDF, accurate in both tails."""
    x, = _promote("log_ndtr", x)
    lower = -20.0 if x.dtype == np.float64 else -10.0
    x_lo = jnp.where(x <= lower, x, lower)
    x_mid = jnp.where((x <= lower) | (x >= 0), -1.0, x)  # (NaN stays on this path)
    x_hi = jnp.where(x >= 0, x, 0.0)
    lo = _log_ndtr_lower_tail(x_lo, 10)
    mid = jnp.log(ndtr(x_mid))
    hi = jnp.log1p(-ndtr(-x_hi))  # log of a number near 1: keep the digits of 1 - Phi
    return jnp.where(x <= lower, lo, jnp.where(x >= 0, hi, mid))


@custom_jvp
def ndtri(p):
    """The inverse of ``ndtr``: erf_inv for a first guess, then Newton steps on log Phi (keeps
    relative accuracy deep in the lower tail); the upper half by symmetry."""
    return _ndtri(p)


@ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    # d ndtri / dp = 1 / phi(ndtri(p)) (not the derivative of the Newton iteration); JAX's
    # derivative is 0 (not inf) at p = 0 and 1, where its ndtri selects a constant -inf/inf
    p, = _promote("ndtri", *primals)
    x = ndtri(p)
    d = jnp.where((p == 0) | (p == 1), 0.0, float(np.sqrt(2 * np.pi)) * jnp.exp(0.5 * x * x))
    return x, tangents[0] * d.astype(x.dtype)


@compiled_when_eager()
def _ndtri(p):
    p, = _promote("ndtri", p)
    q = jnp.where(p > 0.5, 1.0 - p, p)  # q in [0, 1/2]
    qs = jnp.where(q > 0, q, 0.25)
    log_q = jnp.log(qs)
    # first guess: erf_inv where 2q - 1 keeps digits, else the tail's asymptotic root
    t = -2.0 * log_q
    tail_guess = -jnp.sqrt(t - jnp.log(t) - float(np.log(2 * np.pi)))
    near = float(np.sqrt(2.0)) * lax.erf_inv(2.0 * qs - 1.0)
    x = jnp.where(qs > 1e-3, near, tail_guess)
    for _ in range(4):
        lphi = log_ndtr(x)
        # Newton on g(x) = log Phi(x) - log q: g' = phi(x) / Phi(x)
        ratio = jnp.exp(-0.5 * x * x - 0.5 * float(np.log(2 * np.pi)) - lphi)
        x = x - (lphi - log_q) / ratio
    out = jnp.where(p > 0.5, -x, x)
    out = jnp.where(p == 0, -jnp.inf, jnp.where(p == 1, jnp.inf, out))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), jnp.nan, out)


# ---- logistic ----

@compiled_when_eager()
def expit(x):
    x, = _promote("expit", x)
    return lax.logistic(x)


@custom_jvp
def logit(x):
    return _logit(x)


@logit.defjvp
def _logit_jvp(primals, tangents):
    # 1 / (x (1 - x)): inf at 0 and 1 where the quotient's derivative would give nan, as JAX
    x, = _promote("logit", *primals)
    return _logit(x), _tangent(tangents[0], x) / (x * (1.0 - x))


@compiled_when_eager()
def _logit(x):
    x, = _promote("logit", x)
    return jnp.log(x / (1.0 - x))


def _tangent(t, like):
    return jnp.asarray(t).astype(like.dtype)


# ---- information theory ----

# Their derivatives are JAX's: xlogy's is ``log(y) dx + x / y dy`` everywhere (so -inf and nan
# at x == y == 0, not the 0 of differentiating the guarded formula), entr's is ``-(log x + 1)``
# (inf at 0), and kl_div's ``- x + y`` stays differentiable outside its support.

@custom_jvp
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (but nan where y is nan)."""
    return _xlogy(x, y)


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    x, y = _promote("xlogy", *primals)
    tx, ty = (_tangent(t, x) for t in tangents)
    return _xlogy(x, y), tx * jnp.log(y) + ty * x / y


@compiled_when_eager()
def _xlogy(x, y):
    x, y = _promote("xlogy", x, y)
    keep = (x != 0) | jnp.isnan(y)
    safe_y = jnp.where(keep, y, 1.0).astype(y.dtype)
    return jnp.where(keep, x * jnp.log(safe_y), 0.0).astype(x.dtype)


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (but nan where y is nan)."""
    return _xlog1py(x, y)


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    x, y = _promote("xlog1py", *primals)
    tx, ty = (_tangent(t, x) for t in tangents)
    return _xlog1py(x, y), tx * jnp.log1p(y) + ty * x / (1.0 + y)


@compiled_when_eager()
def _xlog1py(x, y):
    x, y = _promote("xlog1py", x, y)
    keep = (x != 0) | jnp.isnan(y)
    safe_y = jnp.where(keep, y, 0.0).astype(y.dtype)
    return jnp.where(keep, x * jnp.log1p(safe_y), 0.0).astype(x.dtype)


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    x, = primals
    return _xlogx(x), tangents[0] * (jnp.log(x) + 1.0)


@compiled_when_eager()
def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    x, = _promote("entr", x)
    return jnp.where(x < 0, -jnp.inf, -_xlogx(x)).astype(x.dtype)


def _log_ratio(x, y):
    """log(x / y) for x, y > 0: log(x) - log(y) where x / y leaves the normal range (in float32
    1e-30 / 1e10 flushes to 0, whose log is -inf), the rounded ratio's log elsewhere (no
    cancellation when x is near y)."""
    r = x / y
    normal = (r >= np.finfo(r.dtype).tiny) & (r <= np.finfo(r.dtype).max)
    return jnp.where(normal, jnp.log(r), jnp.log(x) - jnp.log(y))


@compiled_when_eager()
def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 at x == 0 (y >= 0); inf otherwise."""
    x, y = _promote("rel_entr", x, y)
    both = (x > 0) & (y > 0)
    sx = jnp.where(both, x, 1.0).astype(x.dtype)
    sy = jnp.where(both, y, 1.0).astype(x.dtype)
    out = jnp.where(both, sx * _log_ratio(sx, sy),
                    jnp.where((x == 0) & (y >= 0), 0.0, jnp.inf))
    return jnp.where(jnp.isnan(x) | jnp.isnan(y), jnp.nan, out).astype(x.dtype)


@compiled_when_eager()
def kl_div(x, y):
    """x log(x / y) - x + y for x, y > 0; y at x == 0 (y >= 0); inf otherwise."""
    x, y = _promote("kl_div", x, y)
    both = (x > 0) & (y > 0)
    sx = jnp.where(both, x, 1.0).astype(x.dtype)
    sy = jnp.where(both, y, 1.0).astype(x.dtype)
    out = jnp.where(both, sx * _log_ratio(sx, sy), jnp.where((x == 0) & (y >= 0), 0.0, jnp.inf))
    out = out - x + y
    return jnp.where(jnp.isnan(x) | jnp.isnan(y), jnp.nan, out).astype(x.dtype)


# ---- zeta and Bessel functions ----

def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (JAX requires ``q``)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q=1 to compute "
                                  "the Hurwitz Zeta function.")
    return _zeta(x, q)


@compiled_when_eager()
def _zeta(x, q):
    x, q = _promote("zeta", x, q)
    return lax_special.zeta(x, q)


@compiled_when_eager()
def i0e(x):
    x, = _promote("i0e", x)
    return lax_special.bessel_i0e(x)


@compiled_when_eager()
def i1e(x):
    x, = _promote("i1e", x)
    return lax_special.bessel_i1e(x)


@compiled_when_eager()
def i0(x):
    x, = _promote("i0", x)
    return jnp.exp(jnp.abs(x)) * lax_special.bessel_i0e(x)


@compiled_when_eager()
def i1(x):
    x, = _promote("i1", x)
    return jnp.exp(jnp.abs(x)) * lax_special.bessel_i1e(x)


# ---- exponential integrals ----
_EULER_GAMMA = 0.5772156649015329


def _exp1_positive(x):
    """E1(x) for x > 0: its power series up to 2 (30 terms), Lentz's continued fraction
    e^-x / (x + 1 - 1/(x + 3 - 4/(x + 5 - ...))) beyond (40 steps reach float64 there)."""
    small = x <= 2.0
    xs = jnp.where(small, x, 1.0)
    term, total = -jnp.ones_like(xs), jnp.zeros_like(xs)
    for k in range(1, 31):
        term = -term * xs / k
        total = total + term / k
    series = -_EULER_GAMMA - jnp.log(xs) + total
    xl = jnp.where(small, 3.0, x)
    tiny = 1e-300 if x.dtype == np.float64 else 1e-30
    b = xl + 1.0
    c = jnp.full_like(xl, 1.0 / tiny)
    d = 1.0 / b
    h = d
    for i in range(1, 41):
        an = -float(i * i)
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        h = h * (d * c)
    fraction = h * jnp.exp(-xl)
    return jnp.where(small, series, fraction)


@compiled_when_eager()
def exp1(x):
    """The exponential integral E1(x) = int_1^inf e^(-x t) / t dt (x >= 0; NaN below)."""
    x, = _promote("exp1", x)
    pos = jnp.where((x > 0) & (x < jnp.inf), x, 1.0)
    out = _exp1_positive(pos)
    out = jnp.where(x == 0, jnp.inf, jnp.where(x == jnp.inf, 0.0, out))
    return jnp.where((x < 0) | jnp.isnan(x), jnp.nan, out)


@compiled_when_eager()
def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt for integer
    n >= 0, x >= 0: the power series (with its log term at i = n - 1) up to x = 1, Lentz's
    continued fraction beyond (Numerical Recipes' expint method)."""
    n, x = _promote("expn", n, x)
    small = x <= 1.0
    xs = jnp.where(small & (x > 0), x, 1.0)
    n1 = n - 1.0
    psi = lax.digamma(jnp.where(n >= 1, n, 1.0))  # -gamma + H_(n-1)
    total = jnp.where(n1 != 0, 1.0 / jnp.where(n1 != 0, n1, 1.0), -jnp.log(xs) - _EULER_GAMMA)
    fact = jnp.ones_like(xs)
    for i in range(1, 31):
        fact = fact * (-xs / i)
        at_log = n1 == i
        denom = jnp.where(at_log, 1.0, i - n1)
        total = total + jnp.where(at_log, fact * (-jnp.log(xs) + psi), -fact / denom)
    xl = jnp.where(small, 3.0, x)
    tiny = 1e-300 if x.dtype == np.float64 else 1e-30
    b = xl + n
    c = jnp.full_like(xl, 1.0 / tiny)
    d = 1.0 / b
    h = d
    for i in range(1, 151):  # (slowest at x = 1: 8e-13 left after 60 steps)
        an = -i * (n1 + i)
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        h = h * (d * c)
    fraction = h * jnp.exp(-xl)
    out = jnp.where(small, total, fraction)
    n0 = jnp.exp(-xl) / xl
    out = jnp.where(n == 0, jnp.where(small, jnp.exp(-xs) / xs, n0), out)
    at_zero = jnp.where(n > 1, 1.0 / jnp.where(n > 1, n1, 1.0), jnp.inf)
    out = jnp.where(x == 0, at_zero, jnp.where(x == jnp.inf, 0.0, out))
    bad = (n < 0) | (x < 0) | (n != jnp.floor(n)) | jnp.isnan(x) | jnp.isnan(n)
    return jnp.where(bad, jnp.nan, out)


@compiled_when_eager()
def expi(x):
    """The exponential integral Ei(x) = -E1(-x) for x < 0; for x > 0 its power series up to
    40 (140 terms, all positive) and the asymptotic series e^x/x sum k!/x^k beyond."""
    x, = _promote("expi", x)
    small = (x > 0) & (x <= 40.0)
    xs = jnp.where(small, x, 1.0)
    term, total = jnp.ones_like(xs), jnp.zeros_like(xs)
    for k in range(1, 141):
        term = term * xs / k
        total = total + term / k
    series = _EULER_GAMMA + jnp.log(xs) + total
    xl = jnp.where((x > 40.0) & (x < jnp.inf), x, 41.0)
    term, acc = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 41):
        term = term * (k / xl)
        acc = acc + term
    asym = jnp.exp(xl) / xl * acc
    neg = -_exp1_positive(jnp.where((x < 0) & (x > -jnp.inf), -x, 1.0))
    out = jnp.where(x < 0, neg, jnp.where(x > 40.0, asym, series))
    out = jnp.where(x == 0, -jnp.inf, out)
    out = jnp.where(x == jnp.inf, jnp.inf, jnp.where(x == -jnp.inf, 0.0, out))
    return jnp.where(jnp.isnan(x), jnp.nan, out)


@compiled_when_eager()
def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt. For |x| <= 6 the integral's series
    sum x^(2k+1) / (k! (2k+1)) (all terms positive: no cancellation; 110 terms) times
    exp(-x^2); beyond, the asymptotic series 1/(2x) sum (2k-1)!! / (2x^2)^k (35 terms)."""
    x, = _promote("dawsn", x)
    ax = jnp.abs(x)
    small = ax <= 6.0
    xs = jnp.where(small, ax, 0.0)
    x2 = xs * xs
    term, total = xs, xs
    for k in range(1, 111):
        term = term * x2 / k
        total = total + term / (2 * k + 1)
    series = total * jnp.exp(-x2)
    xl = jnp.where(small, 7.0, ax)
    inv = 1.0 / (2.0 * xl * xl)
    term, acc = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 36):
        term = term * (2 * k - 1) * inv
        acc = acc + term
    asym = acc / (2.0 * xl)
    out = jnp.where(small, series, jnp.where(ax == jnp.inf, 0.0, asym))
    return jnp.where(x < 0, -out, out)


def _cmul(a, b):
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def _cinv(a):
    d = a[0] * a[0] + a[1] * a[1]
    return a[0] / d, -a[1] / d


@compiled_when_eager()
def sici(x):
    """(Si(x), Ci(x)), the sine and cosine integrals: their power series up to |x| = 2, and
    beyond, the continued fraction of E1(ix) (in real arithmetic, 100 terms, from its tail),
    from which Ci = -Re and Si = pi/2 + Im of e^(-ix) times the fraction. Si is odd; Ci(x < 0) is Ci(|x|),
    the real part of Ci's principal branch (as SciPy and JAX), and NaN at -inf (as JAX)."""
    x, = _promote("sici", x)
    ax = jnp.abs(x)
    small = ax <= 2.0
    xs = jnp.where(small & (ax > 0), ax, 1.0)
    si_s, ci_s = jnp.zeros_like(xs), jnp.zeros_like(xs)
    term = xs  # x^(j) / j! for j = 1, 2, 3, ...
    for j in range(1, 40):
        if j > 1:
            term = term * xs / j
        if j % 2:  # odd: Si's terms (-1)^k x^(2k+1) / ((2k+1)(2k+1)!)
            si_s = si_s + (-1) ** (j // 2) * term / j
        else:  # even: Ci's terms (-1)^k x^(2k) / (2k (2k)!)
            ci_s = ci_s + (-1) ** (j // 2) * term / j
    ci_s = _EULER_GAMMA + jnp.log(xs) + ci_s
    xl = jnp.where(small | (ax == jnp.inf), 3.0, ax)
    # the 100th convergent of 1/(b_1 + a_2/(b_2 + a_3/(b_3 + ...))), b_i = 2i - 1 + ix,
    # a_i = -(i - 1)^2, evaluated from its tail: rounding errors are damped at every step
    # (Lentz's forward product accumulated them: Ci 14 ulps median, 8e4 near its zeros)
    t = (jnp.full_like(xl, 199.0), xl)
    for i in range(100, 1, -1):
        q = _cinv(t)
        a = -float((i - 1) ** 2)
        t = (2.0 * i - 3.0 + a * q[0], xl + a * q[1])
    h = _cmul(_cinv(t), (jnp.cos(xl), -jnp.sin(xl)))
    ci_l, si_l = -h[0], 0.5 * np.pi + h[1]
    si = jnp.where(small, si_s, jnp.where(ax == jnp.inf, 0.5 * np.pi, si_l))
    ci = jnp.where(small, ci_s, jnp.where(ax == jnp.inf, 0.0, ci_l))
    ci = jnp.where(ax == 0, -jnp.inf, ci)
    si = jnp.where(ax == 0, x, si)  # keeps the sign of -0.0
    si = jnp.where(x < 0, -si, si)
    ci = jnp.where(x == -jnp.inf, jnp.nan, ci)
    return jnp.where(jnp.isnan(x), jnp.nan, si), ci


def _li2_series(w):  # sum_k w^k / k^2, for 0 <= w <= 1/2 (55 terms: below 1e-18)
    term, total = jnp.ones_like(w), jnp.zeros_like(w)
    for k in range(1, 56):
        term = term * w
        total = total + term / float(k * k)
    return total


@compiled_when_eager()
def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN below):
    the dilogarithm's series on [0, 1/2] after the reflection and inversion formulas, with
    every argument formed exactly (1 - (1 - x) is never computed)."""
    x, = _promote("spence", x)
    pi2_6 = np.pi ** 2 / 6
    xs = jnp.where((x >= 0) & (x < jnp.inf), x, 1.0)
    log_x = jnp.log(jnp.where(xs > 0, xs, 1.0))
    # 0 <= x <= 1/2: Li2(1 - x) = pi^2/6 - log(x) log(1 - x) - Li2(x)
    a = jnp.where(xs <= 0.5, xs, 0.0)
    # (XLA's float64 log1p is 25 ulp off near -0.4: spence was 115 ulp off at x = 0.41)
    low = pi2_6 - jnp.where(a > 0, jnp.log(jnp.where(a > 0, a, 1.0)) * _log1p(-a), 0.0) \
        - _li2_series(a)
    # 1/2 < x <= 1: the series at 1 - x (exact there)
    mid = _li2_series(jnp.where((xs > 0.5) & (xs <= 1), 1 - xs, 0.0))
    # x > 1: Li2(1 - x) = -Li2((x - 1)/x) - log(x)^2 / 2; then w = (x-1)/x, 1 - w = 1/x
    w = jnp.where(xs > 1, (xs - 1) / xs, 0.0)
    inv = jnp.where(xs > 1, 1 / xs, 1.0)
    l_w = jnp.where(w <= 0.5, _li2_series(jnp.where(w <= 0.5, w, 0.0)),
                    pi2_6 - jnp.log(jnp.where(w > 0.5, w, 1.0)) * jnp.log(inv)
                    - _li2_series(jnp.where(w > 0.5, inv, 0.0)))
    high = -l_w - 0.5 * log_x * log_x
    out = jnp.where(xs <= 0.5, low, jnp.where(xs <= 1, mid, high))
    out = jnp.where(x == jnp.inf, -jnp.inf, out)
    return jnp.where((x < 0) | jnp.isnan(x), jnp.nan, out)


def bernoulli(n):
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2), exact on the host, as an array."""
    import fractions
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n}")
    # Akiyama-Tanigawa gives B_k with B_1 = +1/2: flip that one
    a, out = [], []
    for m in range(n + 1):
        a.append(fractions.Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    if n >= 1:
        out[1] = -out[1]
    return jnp.asarray(np.array([float(b) for b in out]), dtype=jnp.result_type(float))


# ---- Box-Cox ----

@compiled_when_eager()
def boxcox(x, lmbda):
    """(x^lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = _promote("boxcox", x, lmbda)
    safe_l = jnp.where(lmbda == 0, 1.0, lmbda).astype(x.dtype)
    return jnp.where(lmbda == 0, jnp.log(x), jnp.expm1(safe_l * jnp.log(x)) / safe_l)


@compiled_when_eager()
def boxcox1p(x, lmbda):
    """((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda == 0."""
    x, lmbda = _promote("boxcox1p", x, lmbda)
    safe_l = jnp.where(lmbda == 0, 1.0, lmbda).astype(x.dtype)
    return jnp.where(lmbda == 0, jnp.log1p(x), jnp.expm1(safe_l * jnp.log1p(x)) / safe_l)


# ---- log-sum-exp and softmax: one home, pyjax.nn's (JAX's custom derivatives included) ----
from pyjax._src.nn.functions import (  # noqa: E402
    log_softmax as log_softmax, logsumexp as logsumexp, softmax as softmax)


# ---- functions with their own modules ----
from pyjax._src.scipy.special_misc import (  # noqa: E402
    bessel_jn as bessel_jn, fresnel as fresnel, owens_t as owens_t, sph_harm_y as sph_harm_y,
    wofz as wofz)

__all__ += ["bessel_jn", "fresnel", "owens_t", "sph_harm_y", "wofz"]
from pyjax._src.scipy.special_hypergeometric import hyp1f1 as hyp1f1, hyp2f1 as hyp2f1  # noqa

__all__ += ["hyp1f1", "hyp2f1"]
