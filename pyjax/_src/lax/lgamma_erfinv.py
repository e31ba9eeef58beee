"""Lowerings of ``lax.lgamma`` and ``lax.erf_inv`` written in lax, accurate to a few ulp.

chlo.lgamma keeps only absolute accuracy near the zeros of log Gamma at 1 and 2 (float32
relative errors of 1e-3, float64 1e-11) and chlo.erf_inv's float64 tails are off by 1e-10
relative, so neither is used.

``lgamma``: with S(t) = log Gamma(2 + t) = (1 - gamma) t + sum_{k>=2} (-1)^k (zeta(k) - 1) t^k / k
(converges for |t| < 2; 30 terms reach float64 for |t| <= 1/2):
  0 < x < 1/2          S(x) - log1p(x) - log(x)
  1/2 <= x < 3/2       S(x - 1) - log1p(x - 1)      (x - 1 exact: no loss at the zero x = 1)
  3/2 <= x < 5/2       S(x - 2)                     (x - 2 exact: no loss at the zero x = 2)
  5/2 <= x < 10        the recurrence down to [3/2, 5/2): S(z - 2) + log prod (x - j)
  x >= 10              Stirling's series (8 terms)
  x < 0                reflection: log(pi / |sin(pi x)|) - log Gamma(-x) - log(-x)
float32 inputs are computed in float64 (cheap on CPU), which also keeps float32's relative
accuracy near the negative zeros; float64 there is limited by the reflection's cancellation
(absolute error a few eps).

``erf_inv``: chlo.erf_inv as the start, then (float64 only) one Newton step on erf (|y| < 1/2)
or on erfc with 1 - |y| formed exactly (|y| >= 1/2), so the tails keep erfc's relative
accuracy. float32 stays chlo.erf_inv, bit for bit JAX's (random.normal depends on it).
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.core import config

from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of

__all__ = ["lgamma", "lgamma1p", "lower_lgamma", "lower_erf_inv", "zeta_minus_one"]

_EULER_GAMMA = 0.5772156649015329


def zeta_minus_one(k, n=40):
    """zeta(k) - 1 for an integer k >= 2 in float64, without forming zeta(k): the sum over
    2 <= j < n and the Euler-Maclaurin tail at n."""
    head = math.fsum(float(j) ** -k for j in range(2, n))
    return head + n ** (1.0 - k) / (k - 1) + 0.5 * n ** -k + k * n ** (-k - 1.0) / 12 \
        - k * (k + 1) * (k + 2) * n ** (-k - 3.0) / 720 \
        + k * (k + 1) * (k + 2) * (k + 3) * (k + 4) * n ** (-k - 5.0) / 30240


# S(t) coefficients of t^k, k = 1 .. 30
_S_COEFFS = [1.0 - _EULER_GAMMA] + [(-1) ** k * zeta_minus_one(k) / k for k in range(2, 31)]
# Stirling: sum_k B_2k / (2k (2k - 1) x^(2k - 1)), k = 1 .. 8
_STIRLING = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400]
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_RECURRENCE_END = 10.0  # Stirling from here; below, at most 8 recurrence steps


def _typed(name):
    """ew.<name> with Python-number operands made constants of the other operand's dtype
    (float32 inputs are computed in float64 here, whatever the x64 setting)."""
    fn = getattr(ew, name)

    def op(a, b):
        if isinstance(a, (int, float)):
            a = ew._c(b, a)
        if isinstance(b, (int, float)):
            b = ew._c(a, b)
        return fn(a, b)
    return op


add, sub, mul, div, lt, le, ge, gt, eq, ne = map(
    _typed, ["add", "sub", "mul", "div", "lt", "le", "ge", "gt", "eq", "ne"])


def _full(x, v):
    return shape_ops.full_like(x, v)


def _s_series(t):
    """log Gamma(2 + t) for |t| <= 1/2 (Horner)."""
    acc = mul(t, 0.0)
    for c in reversed(_S_COEFFS):
        acc = mul(add(acc, c), t)
    return acc


def _log1p(t):
    """log(1 + t) to an ulp or two: XLA's float64 log1p is off by 25 ulp at t = -0.4. With
    u = 1 + t rounded, log(u) - ((u - 1) - t) / u corrects for the rounding of u."""
    u = add(t, 1.0)
    return sub(ew.log(u), div(sub(sub(u, 1.0), t), u))


def lgamma1p(t):
    """log Gamma(1 + t) for |t| <= 1/2, without forming 1 + t (keeps relative accuracy at
    t -> 0)."""
    return sub(_s_series(t), _log1p(t))


def _lgamma_positive(x, logx):
    """log Gamma(x) for x > 0 (any finite or infinite x > 0; other x give garbage, masked by
    the caller), given ``logx = log(x)``. The three ranges below 10 share one evaluation of
    the series S (each element's ``t`` picked by its range) and ``log(x)``: a third of the
    work of evaluating each branch on every element, with the same values."""
    # each branch sees arguments of its own range (no inf/nan from the unused ones)
    tiny = lt(x, 0.5)
    near1 = ew.bitwise_and(ge(x, 0.5), lt(x, 1.5))
    mid = ew.bitwise_and(ge(x, 1.5), lt(x, _RECURRENCE_END))
    big = ge(x, _RECURRENCE_END)
    # x < 1/2: S(x) - log1p(x) - log(x)
    xt = ew.select(tiny, x, _full(x, 0.25))
    # 1/2 <= x < 3/2: S(x - 1) - log(x)  (log Gamma(1 + t) with 1 + t = x exact)
    x1 = ew.select(near1, x, _full(x, 1.0))
    # 3/2 <= x < 10: n = floor(x - 3/2) steps of the recurrence, z = x - n in [3/2, 5/2):
    # S(z - 2) + log prod (x - j)
    xm = ew.select(mid, x, _full(x, 2.0))
    n = ew.floor(sub(xm, 1.5))
    prod = _full(x, 1.0)
    for j in range(1, 9):
        prod = mul(prod, ew.select(le(float(j), n), sub(xm, float(j)), _full(x, 1.0)))
    t = ew.select(tiny, xt, ew.select(near1, sub(x1, 1.0), sub(sub(xm, n), 2.0)))
    series = _s_series(t)
    v_tiny = sub(sub(series, _log1p(xt)), logx)
    v_near1 = sub(series, logx)
    v_mid = add(series, ew.log(prod))
    # x >= 10: x (log x - 1) - log(x) / 2 + log(2 pi) / 2 + series in 1/x
    xb = ew.select(big, x, _full(x, _RECURRENCE_END))
    inv = div(_full(x, 1.0), xb)
    inv2 = mul(inv, inv)
    ser = _full(x, 0.0)
    for c in reversed(_STIRLING):
        ser = add(mul(ser, inv2), c)
    v_big = add(sub(mul(xb, sub(logx, 1.0)), mul(logx, 0.5)),
                   add(mul(ser, inv), _HALF_LOG_2PI))
    out = ew.select(big, v_big, v_mid)
    out = ew.select(near1, v_near1, out)
    return ew.select(tiny, v_tiny, out)


def _lgamma_any(x):
    neg = lt(x, 0.0)
    w = ew.select(neg, ew.neg(x), x)  # -x: exact
    w = ew.select(eq(w, 0.0), _full(x, 1.0), w)  # (0 handled below)
    logw = ew.log(w)
    pos = _lgamma_positive(w, logw)
    # x < 0: log Gamma(x) = log(pi / |sin(pi x)|) - log Gamma(-x) - log(-x)
    frac = sub(x, ew.round(x))  # exact; |sin(pi x)| = |sin(pi frac)|
    sin_abs = ew.abs(ew.sin(mul(frac, math.pi)))
    reflected = sub(sub(sub(_full(x, math.log(math.pi)), ew.log(sin_abs)), pos), logw)
    out = ew.select(neg, reflected, pos)
    inf = _full(x, float("inf"))
    pole = ew.bitwise_or(eq(x, 0.0), ew.bitwise_and(neg, eq(frac, 0.0)))
    out = ew.select(pole, inf, out)
    out = ew.select(eq(ew.abs(x), float("inf")), inf, out)
    return ew.select(ne(x, x), x, out)


def lgamma(x):
    """log |Gamma(x)| (the lowering of ``lax.lgamma``)."""
    dt = aval_of(x).dtype
    if dt == np.float64:
        return _lgamma_any(x)
    # (x64 on while this is traced, so that the float64 constants stay float64)
    with config.enable_x64(True):
        wide = ew.convert_element_type_p.bind(x, new_dtype=np.dtype(np.float64),
                                              weak_type=False)
        out = _lgamma_any(wide)
    return ew.convert_element_type_p.bind(out, new_dtype=dt, weak_type=False)


def lower_lgamma(ctx, x):
    return ctx.lower_fun(lgamma, [x])


def lower_erf_inv(ctx, y):
    """chlo.erf_inv (1e-10 relative in float64's tails), then one Newton step in float64.
    float32 keeps chlo.erf_inv's bits (48 ulp at worst, in the tails): they are JAX's, and
    ``random.normal`` / ``truncated_normal`` draw through them, so float32 samples stay
    identical to JAX's for the same key."""
    x0 = ctx.op("chlo.erf_inv", [y], ctx.avals_out[0])
    if ctx.avals_out[0].dtype != np.float64:
        return x0
    return ctx.lower_fun(_erf_inv_newton, [y, x0])


def _erf_inv_newton(y, x0):
    ay = ew.abs(y)
    tail = ge(ay, 0.5)
    ax0 = ew.abs(x0)
    finite = lt(ax0, float("inf"))
    ax0 = ew.select(finite, ax0, _full(y, 1.0))
    # d erf / dx = 2 / sqrt(pi) exp(-x^2); erfc decreases at the same rate
    slope = mul(ew.exp(ew.neg(mul(ax0, ax0))), 2.0 / math.sqrt(math.pi))
    resid_tail = sub(ew.erfc(ax0), sub(_full(y, 1.0), ay))  # erfc(x) - (1 - |y|): erfc falls
    resid_core = sub(ay, ew.erf(ax0))
    ax1 = add(ax0, div(ew.select(tail, resid_tail, resid_core), slope))
    x1 = ew.select(lt(y, 0.0), ew.neg(ax1), ax1)
    return ew.select(ew.bitwise_and(finite, ne(y, 0.0)), x1, x0)
