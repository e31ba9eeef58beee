"""jax.random at its parameter edges: regressions for what the edge sweep found wrong
(docs/random_edges.md). Fixed keys; SciPy distributions and finite differences of SciPy CDFs
as oracles, with thresholds a correct sampler passes and the old behaviour failed."""
import numpy as np
import pytest
from scipy import stats

import pyjax
import pyjax.numpy as jnp
from pyjax import random

KEY = random.key(3)


def _fd_implicit_grad(cdf, x, a, h=1e-5):
    """dx/da of a draw x = F^-1(u; a) at fixed u: -(dF/da) / (dF/dx), by central differences
    in float64 (the implicit reparameterisation the samplers' gradients follow)."""
    x = np.asarray(x, np.float64)
    dfa = (cdf(x, a + h) - cdf(x, a - h)) / (2 * h)
    hx = 1e-6 * np.maximum(x, 1e-30)
    dfx = (cdf(x + hx, a) - cdf(x - hx, a)) / (2 * hx)
    return -dfa / dfx


# Before: grad through beta, dirichlet, t, chisquare, f, generalized_normal and ball raised
# "div with a linear divisor cannot be transposed" (they differentiated the rejection loop
# instead of the gamma primitive's implicit-gradient rule).
def test_grad_through_samplers_built_on_gamma():
    # beta(key) = Ga / (Ga + Gb) with log Ga = loggamma(split(key)[0], a), log Gb likewise:
    # dx/da = dGa/da * Gb / (Ga + Gb)**2, dGa/da from SciPy's gamma CDF
    a, b = 0.7, 2.0
    k_a, k_b = random.split(KEY)
    ga = np.exp(np.asarray(random.loggamma(k_a, a, (6,)), np.float64))
    gb = np.exp(np.asarray(random.loggamma(k_b, b, (6,)), np.float64))
    np.testing.assert_allclose(np.asarray(random.beta(KEY, a, b, (6,))), ga / (ga + gb),
                               rtol=1e-5)
    g = jax_grad_per_draw(lambda a: random.beta(KEY, a, b, (6,)), a)
    dga = _fd_implicit_grad(lambda x, a: stats.gamma.cdf(x, a), ga, a)
    np.testing.assert_allclose(g, dga * gb / (ga + gb) ** 2, rtol=2e-2, atol=1e-6)

    # chisquare(key, df) = 2 Gamma(df / 2) under the same key: the chi2 CDF's relation
    df = 3.0
    x = np.asarray(random.chisquare(KEY, df, (6,)), np.float64)
    g = jax_grad_per_draw(lambda d: random.chisquare(KEY, d, (6,)), df)
    want = _fd_implicit_grad(lambda x, d: stats.chi2.cdf(x, d), x, df)
    np.testing.assert_allclose(g, want, rtol=2e-2, atol=1e-6)

    # dirichlet normalises the same per-coordinate gammas: a larger alpha_0 moves mass to
    # coordinate 0; t and generalized_normal differentiate through their gamma draws
    g = np.asarray(pyjax.grad(lambda al: random.dirichlet(KEY, al, (4,))[:, 0].sum())(
        jnp.array([0.5, 1.0, 2.0])))
    assert np.all(np.isfinite(g)) and g[0] > 0 > g[1] and g[2] < 0
    for f in (lambda d: random.t(KEY, d, (3,)),
              lambda p: random.generalized_normal(KEY, p, (3,))):
        assert np.isfinite(float(pyjax.grad(lambda v: f(v).sum())(1.5)))


def jax_grad_per_draw(sample, a):
    """d draw_i / d a for each draw (the draws are independent of each other's a)."""
    return np.asarray(pyjax.jacfwd(sample)(a), np.float64)


# Before: NaN. A log-gamma draw whose exp underflows to 0 had slope 0/0; JAX 0.10.2 takes
# x = finfo.tiny there (its grad of sum(loggamma(key(3), 1e-3, (4,))) is 270696.7).
def test_loggamma_grad_finite_when_the_draw_underflows():
    a = 1e-3
    lg = np.asarray(random.loggamma(KEY, a, (4,)))
    assert np.any(lg < np.log(np.finfo(np.float32).tiny))  # the case: exp(draw) == 0
    g = jax_grad_per_draw(lambda a: random.loggamma(KEY, a, (4,)), a)
    assert np.all(np.isfinite(g))
    ok = lg > -80  # where exp(draw) is a normal float: d log x / da = (dx/da) / x
    x = np.exp(lg[ok].astype(np.float64))
    want = _fd_implicit_grad(lambda x, a: stats.gamma.cdf(x, a), x, a, h=1e-7) / x
    np.testing.assert_allclose(g[ok], want, rtol=2e-2)
    # chisquare (2 exp(loggamma(df/2))) inherits it: its grad was NaN too
    assert np.isfinite(float(pyjax.grad(lambda d: random.chisquare(KEY, d, (4,)).sum())(2e-3)))


# Before: float32 erf saturated at 0.99999982 from |x| ~ 3.83 on, erf(inf) included, so
# truncated_normal(lower=10, upper=11) put every draw at 10.000001 where JAX's (same
# erf(10/sqrt2) == 1) put them at 10.999999, and truncated_normal(-inf, inf) was cut at
# +-5.07. The fix computes 1 - erfc(|x|) past 3.7: correctly rounded there, 1.0 from ~3.92 (JAX: from 3.66, jittery up to 3.92).
def test_erf_float32_reaches_one():
    from scipy import special
    x = np.concatenate([np.linspace(3.0, 6.0, 301), [10.0, np.inf]]).astype(np.float32)
    got = np.asarray(pyjax.lax.erf(jnp.asarray(x)))
    want = special.erf(x.astype(np.float64))
    np.testing.assert_array_less(np.abs(got - want), 2.5e-7)  # ~4 ulps below 1
    assert np.all(got[x >= 4.0] == 1.0)
    np.testing.assert_array_equal(np.asarray(pyjax.lax.erf(-jnp.asarray(x))), -got)
    # the whole real line: exactly N(0, 1), none clamped at the old +-5.07
    z = np.asarray(random.truncated_normal(KEY, -np.inf, np.inf, (20_000,)))
    assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-4
    # both bounds past erf's saturation: draws stay inside (lower, upper), at the top as
    # in JAX (its u == 1 gives erfinv(1) == inf, clamped to just below upper)
    t = np.asarray(random.truncated_normal(KEY, 10.0, 11.0, (64,)))
    assert np.all((t > 10) & (t < 11)) and np.all(t == np.nextafter(np.float32(11), 0))


# Before: 8- and 16-bit randint drew 8/16-bit words (and its 2**(nbits/2) squared wrapped
# to 0 in uint8); JAX 0.10.2 draws 32-bit words for them, so its values are the int32
# draw's narrowed (observed for [-128, 127) int8, [0, 3) uint8, [-3, 3) int16).
@pytest.mark.parametrize("lo, hi, dtype", [(-128, 127, jnp.int8), (0, 3, jnp.uint8),
                                           (-3, 3, jnp.int16), (-5, 300, jnp.uint8)])
def test_randint_narrow_dtypes_draw_32_bit_words(lo, hi, dtype):
    got = np.asarray(random.randint(KEY, (4000,), lo, hi, dtype=dtype))
    assert got.dtype == np.dtype(dtype)
    info = np.iinfo(dtype)
    clo, chi = max(lo, int(info.min)), min(hi, int(info.max) + 1)
    wide = np.asarray(random.randint(KEY, (4000,), clo, chi, dtype=jnp.int32))
    np.testing.assert_array_equal(got, wide.astype(dtype))
    counts = np.bincount(got.astype(np.int64) - clo, minlength=chi - clo)
    assert len(counts) == chi - clo and stats.chisquare(counts).pvalue > 1e-6


def test_categorical_refuses_integer_logits_as_jax():
    with pytest.raises(ValueError, match="must be a float dtype, got int32"):
        random.categorical(KEY, jnp.array([0, 1, 2]))


# Before: orthogonal(..., m=5) raised TypeError (JAX 0.10.2 takes m: n x m matrices with
# orthonormal rows when n < m, columns when n > m).
@pytest.mark.parametrize("n, m", [(3, 5), (5, 3), (1, 1)])
def test_orthogonal_rectangular(n, m):
    q = np.asarray(random.orthogonal(KEY, n, (2,), m=m))
    assert q.shape == (2, n, m) and q.dtype == np.float32
    q = q.astype(np.float64)
    small = min(n, m)
    gram = q @ np.swapaxes(q, -1, -2) if n < m else np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), (2, small, small)),
                               atol=1e-5)
    assert not np.allclose(q[0], q[1])  # two draws, not one repeated


# The samplers moved onto random_gamma_p batch through its rule: one draw per key as a loop.
def test_vmap_of_gamma_built_samplers_is_a_loop_over_keys():
    keys = random.split(random.key(7), 3)
    for f in (lambda k: random.beta(k, 0.5, 2.0, (2,)),
              lambda k: random.dirichlet(k, jnp.array([0.5, 1.0, 2.0])),
              lambda k: random.t(k, 3.0, (2,))):
        loop = np.stack([np.asarray(f(keys[i])) for i in range(3)])
        np.testing.assert_array_equal(np.asarray(pyjax.vmap(f)(keys)), loop)


def test_geometric_counts_a_zero_uniform_draw_as_one_trial():
    # float16 uniform draws are exactly 0 about once in 1,024; log(0) / log1p(-p) is inf, which
    # became int32 max. JAX 0.10.2 replaces a zero draw by 1 (one trial).
    k = random.key(0)
    u = np.asarray(random.uniform(k, (4096,), jnp.float16))
    g = np.asarray(random.geometric(k, jnp.float16(0.3), (4096,)))
    zeros = np.flatnonzero(u == 0)
    assert zeros.size > 0  # the key has such draws (else the test proves nothing)
    assert (g[zeros] == 1).all()
    assert g.min() >= 1 and g.max() < 100
