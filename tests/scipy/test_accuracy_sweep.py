"""Accuracy of ``pyjax.scipy.special`` (and the lax special primitives under it) over whole
domains: dense log-spaced grids, tails, poles and special values, float32 and float64, one
jitted call per group of functions and dtype. SciPy is the oracle (mpmath where SciPy itself
is the less accurate one). Errors are relative to the oracle rounded to the tested dtype;
results SciPy gives as subnormals are not compared (the CPU flushes them to zero).

The tolerances are the errors measured for this implementation with some headroom (about 3x),
never looser than JAX 0.10.2's own error on the same grid (measured with JAX itself; the
numbers are quoted where they matter). docs/special_accuracy.md has the per-function table."""
import numpy as np
import pytest
import scipy.special as ss

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.special as js


def _lg(a, b, n):
    return 10.0 ** np.linspace(a, b, n)


def _rel_err(got, want, dtype):
    """Max relative error against ``want`` rounded to ``dtype``; equal specials count as 0, a
    special value where the oracle is finite (or vice versa) as inf."""
    fi = np.finfo(dtype)
    got = np.asarray(got, np.float64)
    with np.errstate(all="ignore"):
        w = np.asarray(want, np.float64).astype(dtype).astype(np.float64)
        same = (got == w) | (np.isnan(got) & np.isnan(w))
        keep = ~((w != 0) & (np.abs(w) < fi.tiny / fi.eps))  # subnormal-ish oracle values
        e = np.where(same, 0.0, np.abs(got - w) / np.abs(w))
    e = np.where(np.isnan(e), np.inf, e)
    return float(e[keep].max())


# ---- unary functions: all of one dtype in one jitted call ----

def _unary_grids(dtype):
    big = 300 if dtype == np.float64 else 37
    tails = np.concatenate([np.linspace(-40, 40, 161), -_lg(-20, 1.6, 60), _lg(-20, 1.6, 60)])
    pos = _lg(-big, big, 200)
    near_one = 1 - _lg(-16 if dtype == np.float64 else -7, -0.01, 60)
    return {
        "gammaln": np.concatenate([pos, -_lg(-6, 2, 80), [0.5, 1, 2, 3, -2.75]]),
        "erf": tails, "erfc": tails, "ndtr": tails, "log_ndtr": tails, "erfcx": tails,
        "erfinv": np.concatenate([np.linspace(-0.99, 0.99, 61), near_one, -near_one]),
        "ndtri": np.concatenate([_lg(-big, -0.01, 120), near_one]),
        "i0e": np.concatenate([pos, -pos]), "i1e": np.concatenate([pos, -pos]),
        "expit": np.linspace(-100, 100, 201), "logit": np.concatenate([_lg(-big, -0.01, 80),
                                                                      near_one]),
        "spence": np.concatenate([_lg(-10, 10, 120), 1 + _lg(-8, -0.5, 20)]),
        "dawsn": np.concatenate([_lg(-10, 10, 120), -_lg(-10, 10, 20)]),
    }


# (float32, float64) tolerances: measured max error x ~3. Where float32 loses more than a few
# ulps it is the algorithm JAX uses too, with the same error: erfc/ndtr/log_ndtr in the tail
# (exp(-x^2) of a rounded x^2; JAX: 3.1e-6, 1.3e-5), erfinv near +-1 (JAX: 5.4e-6).
UNARY_TOL = {
    "gammaln": (4e-7, 6e-14),  # float64: relative error near the zero at -2.75 (JAX 4.6e-14)
    "erf": (4e-7, 1e-15), "erfc": (1e-5, 3e-15), "ndtr": (4e-5, 3e-15),
    "log_ndtr": (4e-5, 5e-14), "erfcx": (1.2e-5, 3e-15), "erfinv": (1.6e-5, 2e-15),
    "ndtri": (1e-6, 2e-15), "i0e": (1e-6, 2e-15), "i1e": (1.3e-6, 2e-15),
    "expit": (4e-7, 1e-15), "logit": (7e-7, 1e-15), "spence": (7e-7, 7e-15),
    "dawsn": (2.4e-6, 2.1e-14),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_functions_over_their_domains(dtype, x64):
    grids = {k: v.astype(dtype) for k, v in _unary_grids(dtype).items()}
    names = sorted(grids)
    got = pyjax.jit(lambda g: [getattr(js, n)(g[n]) for n in names])(grids)
    col = 0 if dtype == np.float32 else 1
    with np.errstate(all="ignore"):
        for name, out in zip(names, got):
            assert out.dtype == dtype, name
            want = getattr(ss, name)(grids[name].astype(np.float64))
            err = _rel_err(out, want, dtype)
            assert err <= UNARY_TOL[name][col], f"{name} {np.dtype(dtype)}: max rel err {err:.3g}"


def test_far_tails_keep_their_digits(x64):
    # log_ndtr(-40) = -804.6..., ndtr(-38) ~ 2.9e-316 is subnormal (flushed): compare above it
    x = np.array([-40.0, -30.0, -20.0, 8.0, 40.0])
    np.testing.assert_allclose(js.log_ndtr(x), ss.log_ndtr(x), rtol=1e-14)
    np.testing.assert_allclose(js.erfc(np.array([26.0, -40.0])), ss.erfc([26.0, -40.0]),
                               rtol=1e-14)
    assert float(js.ndtr(40.0)) == 1.0 and float(js.log_ndtr(40.0)) == 0.0


# ---- beta functions: SciPy's betaln itself is off by 4e-8 at (0.16, 5e4): mpmath ----

def test_betaln_and_beta_for_large_arguments(x64):
    mpmath = pytest.importorskip("mpmath")
    ab = _lg(-2, 5, 12)
    a, b = [v.ravel() for v in np.meshgrid(ab, ab)]
    a, b = np.concatenate([a, [0.16102620275609392]]), np.concatenate([b, [52983.16906283702]])
    with mpmath.workdps(40):
        want = np.array([float(mpmath.log(mpmath.beta(p, q))) for p, q in zip(a, b)])
    f = pyjax.jit(js.betaln)
    # float64: lgamma(b) - lgamma(a + b) used to cancel (5.2e-8 at the last point; now 3.8e-14)
    assert _rel_err(f(a, b), want, np.float64) < 1e-13
    # float32: betaln(0.16, 5e4) = 0.00146 is the difference of lgamma(0.16) = 1.74 and
    # 0.16 log(5e4): 2 ulps of 1.74 are 7e-5 of the result (JAX: 6.7e-5; it was 1.1)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    with mpmath.workdps(40):
        want32 = np.array([float(mpmath.log(mpmath.beta(float(p), float(q))))
                           for p, q in zip(a32, b32)])
    assert _rel_err(f(a32, b32), want32, np.float32) < 1.5e-4
    np.testing.assert_allclose(js.beta(np.float32(0.57), np.float32(1e5)),
                               ss.beta(np.float32(0.57), np.float32(1e5)), rtol=2e-5)
    # special values as SciPy: log B(a, inf) = -inf, B(0, b) = inf
    assert np.isneginf(js.betaln(2.0, np.inf)) and np.isposinf(js.betaln(0.0, 2.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_betainc_large_parameters(dtype, x64):
    ab = _lg(-2, 4, 7)
    x = np.concatenate([_lg(-6, -0.31, 5), 1 - _lg(-6, -0.31, 5)])
    A, B, X = [v.ravel() for v in np.meshgrid(ab, ab, x, indexing="ij")]
    # and around the mean of Beta(a, b), where the prefactor x^a (1-x)^b / B(a, b) is largest
    a2 = _lg(1, 4, 4)
    A2, B2, Z = [v.ravel() for v in np.meshgrid(a2, a2, np.linspace(-4, 4, 5), indexing="ij")]
    m = A2 / (A2 + B2)
    X2 = m + Z * np.sqrt(m * (1 - m) / (A2 + B2 + 1))
    ok = (X2 > 0) & (X2 < 1)
    args = [np.concatenate(p).astype(dtype) for p in ((A, A2[ok]), (B, B2[ok]), (X, X2[ok]))]
    args.append(np.array([0.999981], dtype))  # the point below, in the same compiled call
    a, b, x, x0 = args
    got, got0 = pyjax.jit(lambda a, b, x, x0: (js.betainc(a, b, x), js.betainc(
        jnp.asarray(1e4, dtype), jnp.asarray(0.01, dtype), x0)))(a, b, x, x0)
    want = ss.betainc(*[v.astype(np.float64) for v in (a, b, x)])
    # a log(x) with a = 1e4 carries ~1e4 eps of absolute error into the exponent: float32
    # measured 6.7e-4 (JAX 0.49), float64 8.8e-12 here (JAX 7.2e-10 on a denser grid)
    assert _rel_err(got, want, dtype) < (2e-3 if dtype == np.float32 else 3e-11)
    # betainc(1e4, 0.01, 0.99998): log B(1e4, 0.01) cancelled, float32 gave 0.0206 for 0.0126
    want0 = ss.betainc(1e4, 0.01, x0.astype(np.float64))
    assert _rel_err(got0, want0, dtype) < (2e-4 if dtype == np.float32 else 1e-13)


def test_hyp2f1_past_one_half(x64):
    # at w = 0.54 the 1 - w connection formula's two terms cancelled: float32 was 5e-2 off
    a = np.array([2.5, 2.5, 7.0, 1.0, -1.2])
    b = np.array([4.0, 4.0, -2.2, 0.5, 1.5])
    c = np.array([9.0, 9.0, 3.25, 1.5, 3.25])
    x = np.array([0.5428571428571427, 0.7, 0.95, 0.6, 0.74])
    f = pyjax.jit(js.hyp2f1)
    want = ss.hyp2f1(a, b, c, x)
    assert _rel_err(f(a, b, c, x), want, np.float64) < 1e-11
    a32, b32, c32, x32 = (v.astype(np.float32) for v in (a, b, c, x))
    want32 = ss.hyp2f1(*(v.astype(np.float64) for v in (a32, b32, c32, x32)))
    assert _rel_err(f(a32, b32, c32, x32), want32, np.float32) < 1e-4


# ---- special values, as JAX 0.10.2 gives them ----

def test_loggamma_is_nan_off_the_positive_axis(x64):
    # JAX 0.10.2: loggamma([-0., 0., -2.5, -3., -inf, inf]) = [nan nan nan nan nan inf]
    # (SciPy gives inf at +-0); positive gamma at x < 0 no longer gets a real value
    x = np.array([-0.0, 0.0, -2.5, -3.0, -1.06, -np.inf, np.inf, 2.0])
    got = np.asarray(js.loggamma(x))
    assert np.isnan(got[:6]).all() and got[6] == np.inf and got[7] == 0.0


def test_sici_at_negative_arguments(x64):
    # JAX 0.10.2: sici([-2, -0., 0., -inf, inf]) = (Si: [-1.6054, -0., 0., -pi/2, pi/2],
    #                                               Ci: [0.42298, -inf, -inf, nan, 0.])
    x = np.concatenate([-_lg(-8, 8, 40), [-2.0, -0.0, -np.inf, np.inf]])
    si, ci = (np.asarray(v) for v in js.sici(x))  # one compiled call: sici is a large graph
    want_si, want_ci = ss.sici(x[:-3])
    assert _rel_err(si[:-3], want_si, np.float64) < 1e-14
    # (Ci has zeros: its error is bounded absolutely, 1e-15 of its largest value)
    assert np.max(np.abs(ci[:-3] - want_ci)) < 1e-15 * np.max(np.abs(want_ci))
    si, ci = si[-3:], ci[-3:]
    assert si[0] == 0 and np.signbit(si[0]) and si[1] == -np.pi / 2 and si[2] == np.pi / 2
    assert ci[0] == -np.inf and np.isnan(ci[1]) and ci[2] == 0.0


def test_sici_beyond_two_and_spence_below_one_half_in_ulps(x64):
    # against SciPy on a dense grid, in ulps of the value. Ci's continued fraction was summed
    # forward (Lentz): Ci 14 ulps median, 2.9e-15 absolute (JAX 0.10.2: 1 ulp, 8.9e-16); now
    # from its tail: 1 ulp, 6.8e-16. spence at x = 0.41 was 115 ulps off (XLA's float64
    # log1p, 25 ulps near -0.4; JAX 13): now 18
    x = np.linspace(2.0, 60.0, 4001)
    si, ci = (np.asarray(v) for v in js.sici(x))
    want_si, want_ci = ss.sici(x)
    ulps = lambda got, want: np.abs(got - want) / np.spacing(np.abs(want))  # noqa: E731
    assert np.median(ulps(ci, want_ci)) <= 2 and ulps(si, want_si).max() <= 6
    assert np.abs(ci - want_ci).max() < 1.5e-15
    xs = np.linspace(0.0, 0.5, 2001)[1:]
    assert ulps(np.asarray(js.spence(xs)), ss.spence(xs)).max() <= 30


def test_rel_entr_and_kl_div_when_the_ratio_leaves_float32(x64):
    # 1e-30 / 1e10 flushes to 0 in float32: x log(x / y) was -inf (JAX: -9.21034e-29)
    x = np.array([1e-30, 1e30, 3e-23, 2.0, 0.0], np.float32)
    y = np.array([1e10, 1e-10, 1e25, 2.0, 1.0], np.float32)
    x64_, y64 = x.astype(np.float64), y.astype(np.float64)
    assert _rel_err(js.rel_entr(x, y), ss.rel_entr(x64_, y64), np.float32) < 3e-7
    assert _rel_err(js.kl_div(x, y), ss.kl_div(x64_, y64), np.float32) < 3e-7


# ---- scipy.stats in the tails and at the support's ends ----

def test_stats_log_probabilities_near_zero(x64):
    """logcdf/logsf that are tiny negatives (their probability is 1 - tiny) kept no digit: log of
    a rounded 1 is 0. JAX 0.10.2 gives expon.logcdf(72) = -5.551985856241488e-32 and
    truncnorm.logsf(-39.375, -40, -35) = -1.9554430116e-71, as SciPy."""
    import pyjax.scipy.stats as st
    import scipy.stats as sst
    cases = [
        ("expon.logcdf", lambda: st.expon.logcdf(np.array([72.0, 1e-3, 0.5, 700.0])),
         sst.expon.logcdf([72.0, 1e-3, 0.5, 700.0])),
        ("gumbel_r.logsf", lambda: st.gumbel_r.logsf(np.array([-5.18, 0.3, 30.0])),
         sst.gumbel_r.logsf([-5.18, 0.3, 30.0])),
        ("gumbel_l.logcdf", lambda: st.gumbel_l.logcdf(np.array([5.18, -0.3, -30.0])),
         sst.gumbel_l.logcdf([5.18, -0.3, -30.0])),
        ("gamma.logsf", lambda: st.gamma.logsf(np.array([1e-30, 0.1, 50.0]), 2.31),
         sst.gamma.logsf([1e-30, 0.1, 50.0], 2.31)),
        ("beta.logcdf", lambda: st.beta.logcdf(np.array([0.0759, 0.001]), 0.3, 1000.0),
         sst.beta.logcdf([0.0759, 0.001], 0.3, 1000.0)),
        ("truncnorm.logsf", lambda: st.truncnorm.logsf(np.array([-39.375, -36.0]), -40.0, -35.0),
         sst.truncnorm.logsf([-39.375, -36.0], -40.0, -35.0)),
        ("truncnorm.logcdf", lambda: st.truncnorm.logcdf(np.array([12.625, 9.0]), 8.0, np.inf),
         sst.truncnorm.logcdf([12.625, 9.0], 8.0, np.inf)),
    ]
    for name, got, want in cases:
        # (truncnorm: the ratio of two masses computed from log_ndtr differences, 1e-10)
        tol = 1e-10 if name.startswith("truncnorm") else 1e-13
        assert _rel_err(got(), want, np.float64) < tol, name


def test_student_t_logpdf_for_large_df(x64):
    mpmath = pytest.importorskip("mpmath")
    import pyjax.scipy.stats as st
    df = np.array([3.0, 1e4, 1e8, 1e12])
    with mpmath.workdps(40):  # (SciPy's own error at df = 1e4 is 2e-12)
        want = [float(mpmath.loggamma((d + 1) / 2) - mpmath.loggamma(d / 2)
                      - mpmath.log(d * mpmath.pi) / 2 - (d + 1) / 2 * mpmath.log1p(4 / d))
                for d in map(mpmath.mpf, df)]
    # lgamma((df+1)/2) - lgamma(df/2) was 1e-8 off at df = 1e8 (JAX: 1.4e-7)
    assert _rel_err(st.t.logpdf(2.0, df), np.array(want), np.float64) < 1e-14


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gammainc_large_shape_near_the_mean(dtype, x64):
    a = _lg(1, 4, 13)
    A, Z = [v.ravel() for v in np.meshgrid(a, np.linspace(-6, 6, 9), indexing="ij")]
    X = A + Z * np.sqrt(A)
    ok = X > 0
    a, x = A[ok].astype(dtype), X[ok].astype(dtype)
    p, q = pyjax.jit(lambda a, x: (js.gammainc(a, x), js.gammaincc(a, x)))(a, x)
    a64, x64_ = a.astype(np.float64), x.astype(np.float64)
    # a log(x) - x - lgamma(a) lost a log(a) eps (float32: 5.2e-3 at a = 1e4; JAX 6.4e-3 and
    # 7.9e-3 on a wider grid); measured now, float32 / float64: 1.7e-5 / 3.5e-13 (P) and
    # 1.6e-5 / 4.8e-14 (Q)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    assert _rel_err(p, ss.gammainc(a64, x64_), dtype) < tol
    assert _rel_err(q, ss.gammaincc(a64, x64_), dtype) < tol


def test_polygamma_below_minus_two(x64):
    # XLA's expansion (through the Hurwitz zeta) lost every digit below about -5: psi'(-9.63)
    # was -5.3e15 (JAX 0.10.2 gives the same) instead of 11.6. pyjax reflects there for a
    # known n. Oracle: mpmath (SciPy's polygamma is itself off at negative half-integers:
    # psi^(10)(-3.5) -0.26819350 against mpmath's -0.26819312). Traced orders and
    # lax.polygamma: tests/lax/test_special_reflection.py (no mpmath needed there).
    mpmath = pytest.importorskip("mpmath")
    x = np.array([-2.3, -2.5, -3.5, -5.3, -7.001, -7.499, -9.63, -20.3, -100.3, -1e4 - 0.37])
    for n in (1, 2, 4, 10):
        with mpmath.workdps(30):
            want = np.array([float(mpmath.psi(n, v)) for v in x])
        got = np.asarray(js.polygamma(n, jnp.asarray(x)))
        np.testing.assert_allclose(got, want, rtol=5e-13 if n < 10 else 1e-12, err_msg=f"n={n}")
    # an array of orders, under jit with the orders known, and the order 0 (digamma) beside
    xs, ns = jnp.asarray([-9.63, -9.63, -9.63]), np.array([0, 1, 3])
    got = np.asarray(pyjax.jit(lambda v: js.polygamma(ns, v))(xs))
    np.testing.assert_allclose(got, [float(mpmath.psi(int(k), -9.63)) for k in ns], rtol=1e-12)
    # poles keep XLA's values; derivatives go through the reflection
    assert np.isinf(np.asarray(js.polygamma(1, jnp.asarray(-3.0))))
    d = pyjax.grad(lambda v: js.polygamma(2, v))(-9.63)
    np.testing.assert_allclose(float(d), float(mpmath.psi(3, -9.63)), rtol=1e-12)
    f32 = np.asarray(js.polygamma(1, jnp.asarray(x, jnp.float32)))
    want32 = [float(mpmath.psi(1, float(v))) for v in x.astype(np.float32)]
    np.testing.assert_allclose(f32, want32, rtol=2e-6)
