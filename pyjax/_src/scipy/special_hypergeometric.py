"""``jax.scipy.special.hyp1f1`` and ``hyp2f1`` for real arguments.

Both sum the hypergeometric series in a ``while_loop`` until every element has converged
(the tail bounded geometrically below eps of the sum), after transformations that keep the
series short and its terms of one sign where possible:

- ``hyp1f1(a, b, x)``: Kummer's M(a, b, x) = e^x M(b - a, b, -x) for x < 0; the series on
  z = |x| up to 40 + 1.5 p log(e + 10 p), p = |a| + |a'| + |b| (rescaled as it grows, so
  that e^-z M(.., z) does not overflow), the large-z asymptotic series Gamma(b)/Gamma(a') e^z z^(a'-b) sum_k
  (b-a')_k (1-a')_k / (k! z^k) beyond (where the neglected exponentially small part is
  below e^-40 of it). b a non-positive integer is a pole (inf) unless the
  series ends before it; a = b = 0 gives 1 (JAX's convention).
- ``hyp2f1(a, b, c, x)``: the series for 0 <= x <= 1/2; Pfaff's (1-x)^-a 2F1(a, c-b; c; x/(x-1))
  for x < 0; the 1 - x connection formula for an argument in (1/2, 1) (after Pfaff when
  x < -1); where c - a - b (after Pfaff: b - a) is an integer, the limit of that formula
  with digamma terms (A&S 15.3.10-11); where it is within 1e-3 of an integer but not one (the
  formula's Gamma factors cancel), the series at the argument itself (up to 200000 terms,
  enough for arguments up to about 0.9998, i.e. -5000 < x < 0.9998; NaN beyond);
  Gauss's value at x = 1 (inf unless c > a + b); NaN for x > 1 (complex there). A polynomial
  (a or b a non-positive integer) is summed directly.

JAX documents both for positive arguments only; these keep SciPy's values on the whole real
domain above except where noted. Derivatives in x: d/dx 1F1 = a/b 1F1(a+1, b+1, x),
d/dx 2F1 = ab/c 2F1(a+1, b+1; c+1; x). 1F1's derivatives in a and b are forward-mode sums
over the same series (and asymptotic series) as the value; 2F1's in a, b, c are forward mode
through the value's branches (see ``_hyp2f1_core``).
"""
from __future__ import annotations

import numpy as np

from pyjax._src.control_flow.while_loop import while_loop
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import promote_args_inexact
from pyjax._src.transformations.custom_derivatives import SymbolicZero, custom_jvp
import pyjax.numpy as jnp

__all__ = ["hyp1f1", "hyp2f1"]

_DEGENERATE = 1e-3  # c - a - b closer than this to an integer: no connection formula
# The series at w itself up to here (it converges like 0.75^n); beyond, the 1 - w connection
# formula, whose two terms can cancel: at w = 0.54 hyp2f1(2.5, 4, 9, w) lost 6 digits there.
_DIRECT_MAX = 0.75


def _series(tops, bottoms, z, max_iter, rescale):
    """sum_k prod_i (tops_i)_k / prod_j (bottoms_j)_k z^k / k! elementwise, in a while loop.
    Returns (sum, log of the scale factored out, converged)."""
    eps = float(np.finfo(z.dtype).eps)
    big = 1e100 if z.dtype == np.float64 else 1e15
    zero = jnp.zeros_like(z)
    state = (jnp.array(0, np.int32), jnp.ones_like(z), jnp.ones_like(z), zero,
             jnp.zeros(z.shape, bool))

    def cond(st):
        k, _, _, _, done = st
        return jnp.logical_and(k < max_iter, jnp.logical_not(jnp.all(done)))

    def body(st):
        k, t, s, logscale, done = st
        kf = k.astype(z.dtype)
        num, den = z, kf + 1.0
        for p in tops:
            num = num * (p + kf)
        for q in bottoms:
            den = den * (q + kf)
        t_new = t * (num / den)
        s_new = s + t_new
        # ratio of the following term, to bound the tail geometrically
        num2, den2 = jnp.abs(z), kf + 2.0
        for p in tops:
            num2 = num2 * jnp.abs(p + kf + 1.0)
        for q in bottoms:
            den2 = den2 * jnp.abs(q + kf + 1.0)
        r = num2 / den2
        tail_ok = (r < 1.0) & (jnp.abs(t_new) * r <= eps * (1.0 - r) * jnp.abs(s_new))
        now_done = (t_new == 0) | tail_ok | jnp.isnan(s_new)
        if rescale:
            scale = jnp.where(jnp.abs(s_new) > big, 1.0 / big, 1.0)
            t_new, s_new = t_new * scale, s_new * scale
            logscale_new = logscale - jnp.log(scale)
        else:
            logscale_new = logscale
        keep = done
        return (k + 1, jnp.where(keep, t, t_new), jnp.where(keep, s, s_new),
                jnp.where(keep, logscale, logscale_new), done | now_done)

    _, _, s, logscale, done = while_loop(cond, body, state)
    return s, logscale, done


def _is_nonpos_int(v):
    return (v <= 0) & (v == jnp.round(v))


def _rgamma_sign_log(v):
    """(sign, log|.|) of 1/Gamma(v); sign 0 at the poles (1/Gamma = 0 there)."""
    from pyjax._src.scipy.special import gammasgn, gammaln
    pole = _is_nonpos_int(v)
    vs = jnp.where(pole, 1.0, v)
    return jnp.where(pole, 0.0, gammasgn(vs)), -gammaln(vs)


def _gamma_sign_logs(plain, reciprocal):
    """``[(sign, log|Gamma(v)|) for v in plain]`` and ``[(sign, log|1/Gamma(v)|) for v in
    reciprocal]`` (sign 0 at the poles) from one stacked gammaln and one gammasgn: each
    gammaln call lowers to about 600 lines of StableHLO and 2F1 needs 17, which made its
    compile (and its gradient's) take seconds. The values are those of separate calls."""
    from pyjax._src.scipy.special import gammasgn, gammaln
    args = jnp.broadcast_arrays(*plain, *reciprocal)
    n = len(plain)
    poles = [_is_nonpos_int(v) for v in args[n:]]
    safe = list(args[:n]) + [jnp.where(p, 1.0, v) for p, v in zip(poles, args[n:])]
    stacked = jnp.stack(safe)
    signs, logs = gammasgn(stacked), gammaln(stacked)
    return ([(signs[i], logs[i]) for i in range(n)],
            [(jnp.where(p, 0.0, signs[n + i]), -logs[n + i]) for i, p in enumerate(poles)])


def _is_zero(t):
    # the rules are registered with symbolic_zeros=True: an unperturbed input's tangent
    return isinstance(t, SymbolicZero)


# ---- 1F1 ----

@custom_jvp
def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) = sum (a)_k / (b)_k x^k / k!."""
    return _hyp1f1(a, b, x)


def _hyp1f1_jvp(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    out = hyp1f1(a, b, x)
    a, b, x = [jnp.asarray(v) for v in promote_args_inexact("hyp1f1", a, b, x)]
    tangent = _x_tangent(tx, out, (a / b) * hyp1f1(a + 1.0, b + 1.0, x))
    if not (_is_zero(ta) and _is_zero(tb)):
        da, db = _hyp1f1_parameter_derivatives(a, b, x)
        if not _is_zero(ta):
            tangent = tangent + ta * da
        if not _is_zero(tb):
            tangent = tangent + tb * db
    return out, tangent


hyp1f1.defjvp(_hyp1f1_jvp, symbolic_zeros=True)


def _x_tangent(tx, out, slope):
    if _is_zero(tx):
        return jnp.zeros_like(out)
    return tx * slope


def _series_with_derivatives(p, q, z, max_iter):
    """(M, dM/dp, dM/dq) of M = sum_k (p)_k / (q)_k z^k / k!, forward-mode through the term
    recurrence t_(k+1) = t_k r_k, r_k = (p+k) z / ((q+k)(k+1)) (exact where p is a
    non-positive integer: the terms vanish, their derivatives do not)."""
    eps = float(np.finfo(z.dtype).eps)
    big = 1e100 if z.dtype == np.float64 else 1e15
    zero, one = jnp.zeros_like(z), jnp.ones_like(z)
    state = (jnp.array(0, np.int32), one, zero, zero, one, zero, zero, zero,
             jnp.zeros(z.shape, bool))

    def cond(st):
        return jnp.logical_and(st[0] < max_iter, jnp.logical_not(jnp.all(st[-1])))

    def body(st):
        k, t, dp, dq, s, sp, sq, logscale, done = st
        kf = k.astype(z.dtype)
        base = z / ((q + kf) * (kf + 1.0))
        r = (p + kf) * base
        t_new, dp_new = t * r, dp * r + t * base
        dq_new = (dq - t / (q + kf)) * r
        s_new, sp_new, sq_new = s + t_new, sp + dp_new, sq + dq_new
        # a bound on the ratio of following terms, for the derivative terms too (where
        # (p + k + 1) = 0 ends the value's series, its derivative's goes on)
        r2 = jnp.abs(z) * (jnp.abs(p + kf + 1.0) + 1.0) / (jnp.abs(q + kf + 1.0) * (kf + 2.0))
        small = lambda term, total: 4.0 * jnp.abs(term) * r2 <= eps * (1.0 - r2) * (  # noqa
            jnp.abs(total) + eps * jnp.abs(s_new))
        now = ((r2 < 1.0) & small(t_new, s_new) & small(dp_new, sp_new)
               & small(dq_new, sq_new)) | jnp.isnan(s_new)
        scale = jnp.where(jnp.maximum(jnp.abs(s_new), jnp.abs(sp_new)) > big, 1.0 / big, 1.0)
        new = [t_new * scale, dp_new * scale, dq_new * scale, s_new * scale, sp_new * scale,
               sq_new * scale, logscale - jnp.log(scale)]
        old = [t, dp, dq, s, sp, sq, logscale]
        return (k + 1, *[jnp.where(done, o, n) for o, n in zip(old, new)], done | now)

    out = while_loop(cond, body, state)
    _, _, _, _, s, sp, sq, logscale, done = out
    scale = jnp.where(done, jnp.exp(logscale), jnp.nan)
    return s * scale, sp * scale, sq * scale, logscale


def _hyp1f1_parameter_derivatives(a, b, x):
    """(d/da, d/db) of 1F1(a; b; x), on the same branches as the value."""
    from pyjax._src.scipy.special import digamma, gammasgn, gammaln
    a, b, x = jnp.broadcast_arrays(a, b, x)
    kummer = x < 0
    ap = jnp.where(kummer, b - a, a)
    z = jnp.abs(x)
    p = jnp.abs(a) + jnp.abs(ap) + jnp.abs(b)
    use_series = _is_nonpos_int(ap) | (z <= 40.0 + 1.5 * p * jnp.log(np.e + 10.0 * p))
    # series: G1 = e^x dM/da', G2 = e^x dM/db (e^x only after Kummer)
    zs = jnp.where(use_series, z, 0.0)
    _, m1, m2, _ = _series_with_derivatives(ap, b, zs, 20000)
    ex = jnp.exp(jnp.where(kummer, x, 0.0))
    g1s, g2s = ex * m1, ex * m2
    # asymptotic: F = Gamma(b)/Gamma(a') z^(a'-b) e^(z, unless Kummer) S
    zl = jnp.where(use_series, 100.0, z)
    term, total = jnp.ones_like(zl), jnp.ones_like(zl)
    d1, d2 = jnp.zeros_like(zl), jnp.zeros_like(zl)
    s1, s2 = jnp.zeros_like(zl), jnp.zeros_like(zl)
    growing = jnp.zeros(zl.shape, bool)
    for k in range(60):
        u, v = b - ap + k, 1.0 - ap + k
        q = u * v / ((k + 1) * zl)
        nxt = term * q
        d1n = d1 * q - term * (u + v) / ((k + 1) * zl)
        d2n = d2 * q + term * v / ((k + 1) * zl)
        growing = growing | (jnp.abs(nxt) > jnp.abs(term))
        term = jnp.where(growing, 0.0, nxt)
        d1, d2 = jnp.where(growing, 0.0, d1n), jnp.where(growing, 0.0, d2n)
        total, s1, s2 = total + term, s1 + d1, s2 + d2
    sgn_a, log_ra = _rgamma_sign_log(ap)
    log_c = gammaln(b) + log_ra + (ap - b) * jnp.log(zl) + jnp.where(kummer, 0.0, zl)
    c = gammasgn(b) * sgn_a * jnp.exp(log_c)
    lz = jnp.log(zl)
    psi_a = digamma(jnp.where(_is_nonpos_int(ap), 0.5, ap))
    g1a = c * (total * (lz - psi_a) + s1)
    g2a = c * (total * (digamma(b) - lz) + s2)
    g1 = jnp.where(use_series, g1s, g1a)
    g2 = jnp.where(use_series, g2s, g2a)
    da = jnp.where(kummer, -g1, g1)
    db = jnp.where(kummer, g1 + g2, g2)
    return da.astype(x.dtype), db.astype(x.dtype)


@compiled_when_eager()
def _hyp1f1(a, b, x):
    a, b, x = [jnp.asarray(v) for v in promote_args_inexact("hyp1f1", a, b, x)]
    a, b, x = jnp.broadcast_arrays(a, b, x)
    kummer = x < 0
    ap = jnp.where(kummer, b - a, a)
    z = jnp.abs(x)
    poly = _is_nonpos_int(ap)
    # the asymptotic series drops a term of relative size ~ e^-z z^p (p ~ |a| + |a'| + |b|):
    # sum the series below z = 40 + 1.5 p log(e + 10 p), where that term is below e^-40
    p = jnp.abs(a) + jnp.abs(ap) + jnp.abs(b)
    use_series = poly | (z <= 40.0 + 1.5 * p * jnp.log(np.e + 10.0 * p))
    zs = jnp.where(use_series, z, 0.0)
    s, logscale, done = _series([ap], [b], zs, 20000, rescale=True)
    series = s * jnp.exp(logscale + jnp.where(kummer, x, 0.0))
    series = jnp.where(done, series, jnp.nan)
    # asymptotic: Gamma(b)/Gamma(a') z^(a'-b) e^(z or 0) sum_k (b-a')_k (1-a')_k / (k! z^k)
    zl = jnp.where(use_series, 100.0, z)
    term, total = jnp.ones_like(zl), jnp.ones_like(zl)
    growing = jnp.zeros(zl.shape, bool)
    for k in range(60):
        nxt = term * (b - ap + k) * (1.0 - ap + k) / ((k + 1) * zl)
        growing = growing | (jnp.abs(nxt) > jnp.abs(term))
        term = jnp.where(growing, 0.0, nxt)
        total = total + term
    from pyjax._src.scipy.special import gammasgn, gammaln
    sgn_a, log_ra = _rgamma_sign_log(ap)
    log_mag = gammaln(b) + log_ra + (ap - b) * jnp.log(zl) + jnp.where(kummer, 0.0, zl)
    asym = gammasgn(b) * sgn_a * jnp.exp(log_mag) * total
    out = jnp.where(use_series, series, asym)
    # poles of b (unless a polynomial ends first), and JAX's a = b = 0 -> 1
    ends_first = _is_nonpos_int(a) & (a > b)
    out = jnp.where(_is_nonpos_int(b) & ~ends_first, jnp.inf, out)
    out = jnp.where((a == 0) & (b == 0), 1.0, out)
    bad = jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x)
    return jnp.where(bad, jnp.nan, out).astype(x.dtype)


# ---- 2F1 ----

@custom_jvp
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real arguments, x <= 1."""
    return _hyp2f1(a, b, c, x)


def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    ta, tb, tc, tx = tangents
    out = hyp2f1(a, b, c, x)
    a, b, c, x = [jnp.asarray(v) for v in promote_args_inexact("hyp2f1", a, b, c, x)]
    tangent = _x_tangent(tx, out, (a * b / c) * hyp2f1(a + 1.0, b + 1.0, c + 1.0, x))
    if not (_is_zero(ta) and _is_zero(tb) and _is_zero(tc)):
        for t, d in zip((ta, tb, tc), _hyp2f1_parameter_derivatives(a, b, c, x)):
            if not _is_zero(t):
                tangent = tangent + t * d
    return out, tangent


@compiled_when_eager()
def _hyp2f1_parameter_derivatives(a, b, c, x):
    """(d/da, d/db, d/dc) of 2F1(a, b; c; x): forward mode through the value's own branches,
    the three directions stacked on a leading axis (one while loop). NaN where the value is
    not finite, and in a (b) where a (b) is a non-positive integer (as JAX)."""
    from pyjax._src.transformations.grad import jvp
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    stack3 = lambda v: jnp.stack([v, v, v])  # noqa: E731
    unit = [jnp.stack([jnp.full_like(x, float(i == j)) for j in range(3)]) for i in range(3)]
    value, (da, db, dc) = jvp(lambda *p: _hyp2f1_core(*p, for_derivatives=True),
                              tuple(stack3(v) for v in (a, b, c, x)),
                              (*unit, jnp.zeros((3, *x.shape), x.dtype)))
    bad = ~jnp.isfinite(value[0])
    da = jnp.where(bad | _is_nonpos_int(a), jnp.nan, da)
    db = jnp.where(bad | _is_nonpos_int(b), jnp.nan, db)
    return da, db, jnp.where(bad, jnp.nan, dc)


hyp2f1.defjvp(_hyp2f1_jvp, symbolic_zeros=True)


def _limit_formula(a, b, m, v):
    """2F1(a, b; a + b + m; 1 - v) for an integer m (A&S 15.3.10-11; m < 0 through Euler's
    transformation, which turns it into -m > 0), 0 < v <= 1/2:
    Gamma(m) Gamma(a+b+m) / (Gamma(a+m) Gamma(b+m)) sum_(n<m) (a)_n (b)_n / (n! (1-m)_n) v^n
    - (-1)^m Gamma(a+b+m) / (Gamma(a) Gamma(b)) v^m sum_n (a+m)_n (b+m)_n / (n! (n+m)!) v^n
      (log v - psi(n+1) - psi(n+m+1) + psi(a+n+m) + psi(b+n+m))."""
    from pyjax._src.scipy.special import digamma
    neg = m < 0
    c = a + b + m
    a, b = jnp.where(neg, c - a, a), jnp.where(neg, c - b, b)
    euler = jnp.where(neg, jnp.exp(m * jnp.log(v)), 1.0)
    m = jnp.abs(m)
    lv = jnp.log(v)
    eps = float(np.finfo(v.dtype).eps)
    am, bm = a + m, b + m
    # (a, b, m non-positive integers make this a polynomial: the caller sums those directly)
    mpos = jnp.where(m >= 1, m, 1.0)
    ((_, l_m1), (s_ab, l_ab), (_, l_mpos)), ((ra, la), (rb, lb), (ra0, la0), (rb0, lb0)) = \
        _gamma_sign_logs([m + 1.0, a + b + m, mpos], [am, bm, a, b])
    u0 = jnp.exp(-l_m1)
    p0 = digamma(jnp.ones_like(m)) + digamma(m + 1.0)
    q0 = digamma(am) + digamma(bm)
    s2 = u0 * (lv - p0 + q0)
    state = (jnp.array(0, np.int32), u0, p0, q0, s2, jnp.ones_like(v),
             jnp.where(m >= 1, 1.0, 0.0).astype(v.dtype), jnp.zeros(v.shape, bool))

    def cond(st):
        return jnp.logical_and(st[0] < 100000, jnp.logical_not(jnp.all(st[-1])))

    def body(st):
        n, u, p, q, s2, f, s1, done = st
        k = n.astype(v.dtype)
        u_new = u * (am + k) * (bm + k) / ((k + 1.0) * (k + m + 1.0)) * v
        p_new = p + 1.0 / (k + 1.0) + 1.0 / (k + m + 1.0)
        q_new = q + 1.0 / (am + k) + 1.0 / (bm + k)
        t2 = u_new * (lv - p_new + q_new)
        s2_new = s2 + t2
        in_first = k + 1.0 < m
        f_new = jnp.where(in_first, f * (a + k) * (b + k) /
                          ((k + 1.0) * jnp.where(in_first, 1.0 - m + k, 1.0)) * v, 0.0)
        s1_new = s1 + f_new
        r = v * jnp.abs((am + k + 1.0) * (bm + k + 1.0)) / ((k + 2.0) * (k + m + 2.0))
        tail_ok = (r < 1.0) & (4.0 * jnp.abs(t2) * r <= eps * (1.0 - r) * jnp.abs(s2_new))
        now = ~in_first & (tail_ok | (t2 == 0) | jnp.isnan(s2_new))
        keep = done
        sel = lambda old, new: jnp.where(keep, old, new)  # noqa: E731
        return (n + 1, sel(u, u_new), sel(p, p_new), sel(q, q_new), sel(s2, s2_new),
                sel(f, f_new), sel(s1, s1_new), done | now)

    _, _, _, _, s2, _, s1, done = while_loop(cond, body, state)
    first = jnp.where(m >= 1, s_ab * ra * rb * jnp.exp(l_mpos + l_ab + la + lb), 0.0)
    sign_m = jnp.where(jnp.fmod(m, 2.0) == 0, -1.0, 1.0)  # -(-1)^m
    second = sign_m * s_ab * ra0 * rb0 * jnp.exp(l_ab + la0 + lb0 + m * lv)
    out = euler * (first * s1 + second * s2)
    return jnp.where(done, out, jnp.nan)


@compiled_when_eager()
def _hyp2f1(a, b, c, x):
    a, b, c, x = [jnp.asarray(v) for v in promote_args_inexact("hyp2f1", a, b, c, x)]
    return _hyp2f1_core(*jnp.broadcast_arrays(a, b, c, x))


def _hyp2f1_core(a, b, c, x, for_derivatives=False):
    """2F1 on broadcast arrays of one float dtype. ``for_derivatives``: the branches whose
    forward-mode derivatives in a, b, c would be wrong (the integer-(c - a - b) limit formula,
    which holds c - a - b fixed; Gamma-function poles, whose 1/Gamma factors carry a zero
    derivative in log form) take the series at the argument itself instead (NaN where it
    cannot converge, above about 0.9998)."""
    poly = _is_nonpos_int(a) | _is_nonpos_int(b)
    # Pfaff for x < 0: 2F1(a, b; c; x) = (1-x)^-a 2F1(a, c-b; c; w), w = x/(x-1) in (0, 1)
    pfaff = (x < 0) & ~poly
    if for_derivatives:
        # c - b a non-positive integer ends the series after Pfaff, not its derivatives (the
        # loop stops on the value): Pfaff on b instead (2F1 is symmetric), or none at all
        ends = _is_nonpos_int(c - b)
        swap = pfaff & ends & ~_is_nonpos_int(c - a)
        a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
        pfaff = pfaff & ~(ends & ~swap)
    xm = jnp.where(x < 1, x, 0.0)
    w = jnp.where(pfaff, xm / (xm - 1.0), xm)
    bb = jnp.where(pfaff, c - b, b)
    pre = jnp.where(pfaff, jnp.exp(-a * jnp.log1p(-jnp.where(pfaff, xm, 0.0))), 1.0)
    # 1 - w without cancellation: 1/(1 - x) after Pfaff, else 1 - x (exact for x >= 1/2)
    one_minus_w = jnp.where(pfaff, 1.0 / (1.0 - xm), 1.0 - xm)
    d = c - a - bb
    m_int = jnp.round(d)
    degenerate = jnp.abs(d - m_int) < _DEGENERATE
    exact = degenerate & (d == m_int)
    # near-integer c - a - b: the series at w itself; an integer: the limit formula
    direct = poly | (w <= _DIRECT_MAX) | (degenerate & ~exact)
    if for_derivatives:
        direct = direct | exact | _is_nonpos_int(c - a) | _is_nonpos_int(c - bb)
        direct = direct | _is_nonpos_int(a) | _is_nonpos_int(bb)
    use_limit = ~direct & exact
    if for_derivatives:  # (use_limit is all False)
        limit = jnp.zeros_like(x)
    else:
        limit = _limit_formula(a, bb, m_int, jnp.where(use_limit, one_minus_w, 0.25))
    degenerate = degenerate & ~use_limit
    direct = direct | use_limit
    # every series of this function runs in one while loop: stack the three argument sets
    wd = jnp.where(direct, w, 0.0)
    v = jnp.where(direct, 0.25, one_minus_w)
    sets = [([a, bb], [c], wd),
            ([a, bb], [1.0 - d], jnp.where(direct, 0.0, v)),
            ([c - a, c - bb], [d + 1.0], jnp.where(direct, 0.0, v))]
    tops = [jnp.stack([s[0][i] for s in sets]) for i in range(2)]
    bots = [jnp.stack([s[1][0] for s in sets])]
    zs = jnp.stack([s[2] for s in sets])
    sums, _, done = _series(tops, bots, zs, 200000, rescale=False)
    sums = jnp.where(done, sums, jnp.nan)
    dd = jnp.where(direct, 0.5, d)  # (Gamma of +-d only where the formula is used)
    dpos = jnp.where(c - a - b > 0, c - a - b, 1.0)
    ((s_c, l_c), (s_dd, l_dd), (s_ndd, l_ndd), (s_dpos, l_dpos)), \
        ((s1, l1), (s2, l2), (s3, l3), (s4, l4), (gs2, gl2)) = _gamma_sign_logs(
            [c, dd, -dd, dpos], [c - a, c - bb, a, bb, c - b])
    big_a = s_c * s_dd * s1 * s2 * jnp.exp(l_c + l_dd + l1 + l2)
    big_b = s_c * s_ndd * s3 * s4 * jnp.exp(l_c + l_ndd + l3 + l4)
    connected = big_a * sums[1] + big_b * jnp.exp(dd * jnp.log(v)) * sums[2]
    out = pre * jnp.where(use_limit, limit, jnp.where(direct, sums[0], connected))
    # x = 1: Gauss's sum (inf unless c > a + b); x > 1: complex in general
    gs1, gl1 = s1, l1   # 1/Gamma(c - a)
    gauss = s_c * s_dpos * gs1 * gs2 * jnp.exp(l_c + l_dpos + gl1 + gl2)
    gauss = jnp.where(c - a - b > 0, gauss, jnp.inf)
    if for_derivatives:  # (a zero of Gauss's value at a pole of Gamma(c - a) or Gamma(c - b))
        gauss = jnp.where(gs1 * gs2 == 0, jnp.nan, gauss)
    out = jnp.where(x == 1, jnp.where(poly, sums[0], gauss), out)
    out = jnp.where(x > 1, jnp.nan, out)
    out = jnp.where(_is_nonpos_int(c) & ~poly, jnp.inf, out)
    out = jnp.where(x == 0, 1.0, out)
    bad = jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(c) | jnp.isnan(x)
    return jnp.where(bad, jnp.nan, out).astype(x.dtype)
