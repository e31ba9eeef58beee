"""pyjax.random: JAX's bits and values for the same key (golden values from JAX 0.10.2 with
default settings), eager/jit/vmap invariance, typed key arrays, misuse errors, and every
distribution against SciPy on 10^5 samples from a fixed key."""
import numpy as np
import pytest
from scipy import stats

import pyjax
import pyjax.numpy as jnp
from pyjax import random

N = 100_000
P_MIN = 1e-3  # a correct sampler passes a test at this level for 99.9% of keys


def _np(x):
    return np.asarray(x)


# ---------------------------------------------------------------------------------------
# golden values
# ---------------------------------------------------------------------------------------

SPLIT0 = [[1797259609, 2579123966], [928981903, 3453687069]]


def test_split_golden():
    np.testing.assert_array_equal(_np(random.key_data(random.split(random.key(0)))), SPLIT0)
    np.testing.assert_array_equal(_np(random.key_data(random.split(random.key(0), 3))),
                                  SPLIT0 + [[4146024105, 2718843009]])


def test_fold_in_golden():
    np.testing.assert_array_equal(_np(random.key_data(random.fold_in(random.key(0), 1))),
                                  [928981903, 3453687069])


def test_bits_golden():
    b = random.bits(random.key(0), (4,))
    assert b.dtype == np.uint32
    np.testing.assert_array_equal(_np(b), [4070199207, 4202968722, 1427181096, 2012915765])


def test_uniform_normal_randint_golden():
    k = random.key(0)
    np.testing.assert_allclose(_np(random.uniform(k, (4,))),
                               [0.947667, 0.97857988, 0.33229148, 0.46866846], rtol=1e-6)
    np.testing.assert_allclose(_np(random.normal(k, (4,))),
                               [1.6226422, 2.0252647, -0.43359444, -0.07861735], rtol=1e-6)
    np.testing.assert_allclose(_np(random.normal(random.key(42), (2, 3))),
                               [[-0.02830462, 0.46713185, 0.29570296],
                                [0.15354592, -0.12403282, 0.21692315]], rtol=1e-5, atol=1e-7)
    r = random.randint(k, (5,), 0, 10)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(_np(r), [9, 0, 2, 3, 1])


def test_threefry_2x32_hash():
    # the counts are split into halves that form the counter words: (0, 2) and (1, 3); the
    # (0, 2) hash is also split(key(0), 3)[2]; the whole is JAX's pre-partitionable split
    out = random.threefry_2x32(random.PRNGKey(0), jnp.arange(4, dtype=jnp.uint32))
    np.testing.assert_array_equal(_np(out), [4146024105, 967050713, 2718843009, 1272950319])
    odd = _np(random.threefry_2x32(random.PRNGKey(0), jnp.arange(3, dtype=jnp.uint32)))
    assert odd.shape == (3,) and odd.dtype == np.uint32  # pads to (0, 2), (1, 0): same (0, 2)
    assert odd[0] == 4146024105 and odd[2] == 2718843009
    with pytest.raises(TypeError, match="uint32"):
        random.threefry_2x32(random.PRNGKey(0), jnp.arange(4))


def test_legacy_raw_keys_give_the_same_numbers():
    raw = random.PRNGKey(0)
    assert raw.dtype == np.uint32 and raw.shape == (2,)
    np.testing.assert_array_equal(_np(random.split(raw)), SPLIT0)  # raw in, raw out
    np.testing.assert_array_equal(_np(random.normal(raw, (4,))),
                                  _np(random.normal(random.key(0), (4,))))


def test_split_shape_and_bits_dtypes():
    keys = random.split(random.key(0), (2, 3))
    assert keys.shape == (2, 3)
    flat = _np(random.key_data(random.split(random.key(0), 6)))
    np.testing.assert_array_equal(_np(random.key_data(keys)).reshape(6, 2), flat)
    b8 = random.bits(random.key(0), (4,), np.uint8)
    assert b8.dtype == np.uint8
    np.testing.assert_array_equal(_np(b8), np.array([4070199207, 4202968722, 1427181096,
                                                     2012915765]) & 0xFF)


# ---------------------------------------------------------------------------------------
# seeds
# ---------------------------------------------------------------------------------------

def test_seeds_as_jax_reads_them():
    kd = lambda s: _np(random.key_data(random.key(s))).tolist()  # noqa: E731
    assert kd(7) == [0, 7]
    assert kd(-1) == [0, 0xFFFFFFFF]
    assert kd(2 ** 40 + 5) == [0, 5]  # x32: an int64 seed keeps its low word
    assert kd(np.int32(-2)) == [0, 0xFFFFFFFE]
    assert kd(np.uint32(0xFFFFFFFF)) == [0, 0xFFFFFFFF]
    with pytest.raises(OverflowError):
        random.key(2 ** 64)
    # a traced seed gives the same key as the concrete one
    jitted = pyjax.jit(lambda s: random.key_data(random.key(s)))
    assert _np(jitted(np.int32(-2))).tolist() == [0, 0xFFFFFFFE]


def test_seeds_x64_keep_the_high_word(x64):
    assert _np(random.key_data(random.key(2 ** 40 + 5))).tolist() == [256, 5]
    assert _np(random.key_data(random.key(-1))).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
    jitted = pyjax.jit(lambda s: random.key_data(random.key(s)))
    assert _np(jitted(np.int64(2 ** 40 + 5))).tolist() == [256, 5]


def test_bad_seeds():
    with pytest.raises(TypeError, match="seed must be an integer"):
        random.key(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        random.key(np.arange(3))
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(random.key(0))


# ---------------------------------------------------------------------------------------
# key arrays
# ---------------------------------------------------------------------------------------

def test_key_array_is_array_of_keys():
    k = random.key(0)
    assert str(k.dtype) == "key<fry>" and repr(k.dtype) == "key<fry>"
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert "key<fry>" in repr(k)
    keys = random.split(k, 4)
    assert isinstance(keys, pyjax.Array) and isinstance(keys, random.PRNGKeyArray)
    assert keys.shape == (4,) and len(keys) == 4 and keys.dtype == k.dtype
    assert keys[1].shape == () and keys[1:3].shape == (2,)
    np.testing.assert_array_equal(_np(random.key_data(keys[1])), _np(random.key_data(keys))[1])
    assert [kk.shape for kk in keys] == [()] * 4
    grid = keys.reshape(2, 2)
    assert grid.shape == (2, 2) and grid.T.shape == (2, 2) and grid.ravel().shape == (4,)
    np.testing.assert_array_equal(_np(random.key_data(grid.T)),
                                  _np(random.key_data(grid)).transpose(1, 0, 2))
    assert grid[..., 0].shape == (2,) and grid[None].shape == (1, 2, 2)
    assert keys.take(np.array([3, 0])).shape == (2,)
    assert bool(jnp.all(keys == keys)) and not bool(jnp.any(keys[0] == keys[1]))
    # key_data / wrap_key_data round trip; clone is the identity
    back = random.wrap_key_data(random.key_data(keys))
    np.testing.assert_array_equal(_np(random.key_data(back)), _np(random.key_data(keys)))
    assert random.clone(k) is k
    assert random.key_impl(k) == "threefry2x32"


def test_keys_through_jit_and_pytrees():
    k = random.key(3)

    @pyjax.jit
    def step(key):
        key, sub = random.split(key)
        return key, random.normal(sub, (3,))

    k2, x = step(k)
    assert isinstance(k2, random.PRNGKeyArray) and k2.dtype == k.dtype
    key_e, sub_e = random.split(k)
    np.testing.assert_array_equal(_np(random.key_data(k2)), _np(random.key_data(key_e)))
    np.testing.assert_array_equal(_np(x), _np(random.normal(sub_e, (3,))))
    # a key array is one leaf (dtype key<fry>), as in JAX 0.10.2
    leaves = pyjax.tree_util.tree_leaves({"k": k})
    assert len(leaves) == 1 and leaves[0] is k
    assert str(pyjax.tree_util.tree_structure({"k": k, "a": 1})) == "PyTreeDef({'a': *, 'k': *})"
    assert pyjax.tree.map(lambda t: t.dtype, {"k": k}) == {"k": k.dtype}


def test_jnp_asarray_of_keys_is_the_keys():
    # as in JAX (optax's inject_hyperparams passes key hyperparameters through jnp.asarray)
    keys = random.split(random.key(5), 3)
    assert jnp.asarray(keys) is keys and jnp.array(keys).dtype == keys.dtype
    want = _np(random.normal(keys[1], (2,)))
    got = pyjax.jit(lambda k: random.normal(jnp.asarray(k)[1], (2,)))(keys)
    np.testing.assert_array_equal(_np(got), want)
    with pytest.raises(TypeError, match=r"key array.*dtype=.*key_data"):
        jnp.asarray(keys, jnp.float32)


def test_same_numbers_eager_jit_vmap():
    k = random.key(11)
    # gamma: batched, XLA fuses (contracts) the normal draws differently; one ulp of a normal
    # draw moves a gamma draw by a few ulps
    for fn, rtol in ((lambda k: random.normal(k, (5,)), 0),
                     (lambda k: random.randint(k, (5,), -3, 9), 0),
                     (lambda k: random.gamma(k, 1.5, (5,)), 1e-6)):
        np.testing.assert_allclose(_np(fn(k)), _np(pyjax.jit(fn)(k)), rtol=rtol, atol=0)
        keys = random.split(k, 3)
        batched = pyjax.vmap(fn)(keys)
        np.testing.assert_allclose(_np(batched), np.stack([_np(fn(kk)) for kk in keys]),
                                   rtol=rtol, atol=0)


# ---------------------------------------------------------------------------------------
# misuse
# ---------------------------------------------------------------------------------------

def test_non_keys_are_refused():
    with pytest.raises(TypeError, match="PRNG key.*random.key"):
        random.normal(np.zeros(2, np.float32), (3,))
    with pytest.raises(TypeError, match=r"uint32\[3\].*last dimension has size 2"):
        random.uniform(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="PRNG key"):
        random.split([0, 0])
    with pytest.raises(TypeError, match="PRNG key"):
        random.wrap_key_data(jnp.zeros((4, 3), jnp.uint32))
    with pytest.raises(ValueError, match="single key"):
        random.normal(random.split(random.key(0)), (2,))


def test_keys_refuse_arithmetic():
    k = random.key(0)
    with pytest.raises(TypeError, match="key_data"):
        k + 1
    with pytest.raises(TypeError, match="key_data"):
        -k
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(TypeError, match="PRNGKeyArray|key<fry>"):
        jnp.add(k, 1)
    with pytest.raises(TypeError, match="key<fry>"):
        pyjax.lax.add(k, k)


def test_errors_name_the_parameter():
    k = random.key(0)
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float"):
        random.uniform(k, (2,), jnp.int32)
    with pytest.raises(ValueError, match="dtype argument to `randint` must be an int"):
        random.randint(k, (2,), 0, 3, jnp.float32)
    with pytest.raises(ValueError, match="`shape`"):
        random.normal(k, (-1,))
    with pytest.raises(TypeError, match="`shape`"):
        random.normal(k, (2.5,))
    with pytest.raises(ValueError, match="minval"):
        random.uniform(k, (3,), minval=np.zeros(4))
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        random.choice(k, 5, (2,), p=np.ones(4) / 4)
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(k, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="floating dtype"):
        random.bernoulli(k, np.int32(1))


# ---------------------------------------------------------------------------------------
# statistics against SciPy
# ---------------------------------------------------------------------------------------

def _ks(samples, dist):
    samples = _np(samples).astype(np.float64).ravel()
    assert np.all(np.isfinite(samples))
    p = stats.kstest(samples, dist.cdf).pvalue
    assert p > P_MIN, p


def _chi2(samples, pmf, support):
    samples = _np(samples).ravel()
    counts = np.array([np.sum(samples == v) for v in support], np.float64)
    expected = np.asarray(pmf, np.float64) * samples.size
    assert counts.sum() + 0.5 >= samples.size * (1 - 1e-3)
    keep = expected > 5  # pool the tail bins
    obs = np.append(counts[keep], samples.size - counts[keep].sum())
    exp = np.append(expected[keep], samples.size - expected[keep].sum())
    ok = exp > 0
    p = stats.chisquare(obs[ok], exp[ok] * obs[ok].sum() / exp[ok].sum()).pvalue
    assert p > P_MIN, p


KEY = random.key(1234)


@pytest.mark.parametrize("name,sample,dist", [
    ("uniform", lambda k: random.uniform(k, (N,), minval=-2., maxval=3.), stats.uniform(-2, 5)),
    ("normal", lambda k: random.normal(k, (N,)), stats.norm()),
    ("truncated_normal", lambda k: random.truncated_normal(k, -0.5, 1.5, (N,)),
     stats.truncnorm(-0.5, 1.5)),
    ("exponential", lambda k: random.exponential(k, (N,)), stats.expon()),
    ("gumbel", lambda k: random.gumbel(k, (N,)), stats.gumbel_r()),
    ("laplace", lambda k: random.laplace(k, (N,)), stats.laplace()),
    ("logistic", lambda k: random.logistic(k, (N,)), stats.logistic()),
    ("cauchy", lambda k: random.cauchy(k, (N,)), stats.cauchy()),
    ("t", lambda k: random.t(k, 4.5, (N,)), stats.t(4.5)),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (N,)), stats.chi2(3.0)),
    ("f", lambda k: random.f(k, 5.0, 8.0, (N,)), stats.f(5.0, 8.0)),
    ("generalized_normal", lambda k: random.generalized_normal(k, 1.5, (N,)),
     stats.gennorm(1.5)),
    ("pareto", lambda k: random.pareto(k, 3.0, (N,)), stats.pareto(3.0)),
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.5, (N,)),
     stats.weibull_min(1.5, scale=2.0)),
    ("rayleigh", lambda k: random.rayleigh(k, 1.5, (N,)), stats.rayleigh(scale=1.5)),
    ("lognormal", lambda k: random.lognormal(k, 0.5, (N,)), stats.lognorm(0.5)),
    ("triangular", lambda k: random.triangular(k, -1.0, 0.5, 2.0, (N,)),
     stats.triang(0.5, loc=-1.0, scale=3.0)),
    ("wald", lambda k: random.wald(k, 2.0, (N,)), stats.invgauss(2.0)),
    ("maxwell", lambda k: random.maxwell(k, (N,)), stats.maxwell()),
    ("double_sided_maxwell",  # |x - loc| / scale is Maxwell
     lambda k: jnp.abs(random.double_sided_maxwell(k, 1.0, 2.0, (N,)) - 1.0) / 2.0,
     stats.maxwell()),
])
def test_continuous_against_scipy(name, sample, dist):
    _ks(sample(KEY), dist)


def test_gamma_family_against_scipy():
    # one call covers small (boosted), unit and large shapes
    a = np.repeat(np.array([0.25, 1.0, 7.5], np.float32), N // 3)
    g = _np(random.gamma(KEY, a))
    for i, ai in enumerate((0.25, 1.0, 7.5)):
        _ks(g[i * (N // 3):(i + 1) * (N // 3)], stats.gamma(ai))
    lg = _np(random.loggamma(KEY, 0.05, (N,)))  # tiny shape: log space keeps precision
    assert np.all(np.isfinite(lg))
    _ks(lg, stats.loggamma(0.05))
    _ks(random.beta(KEY, 0.7, 2.5, (N,)), stats.beta(0.7, 2.5))
    d = _np(random.dirichlet(KEY, np.array([0.5, 2.0, 3.0], np.float32), (N,)))
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    _ks(d[:, 0], stats.beta(0.5, 5.0))
    _ks(d[:, 2], stats.beta(3.0, 2.5))


def test_discrete_against_scipy():
    _chi2(random.randint(KEY, (N,), -3, 7), np.full(10, 0.1), range(-3, 7))
    # one call covers CDF inversion (lam < 10) and transformed rejection (lam >= 10)
    lam = np.repeat(np.array([0.5, 3.5, 25.0], np.float32), N // 3)
    p = _np(random.poisson(KEY, lam))
    for i, li in enumerate((0.5, 3.5, 25.0)):
        _chi2(p[i * (N // 3):(i + 1) * (N // 3)], stats.poisson(li).pmf(np.arange(80)),
              range(80))
    _chi2(random.geometric(KEY, 0.3, (N,)), stats.geom(0.3).pmf(np.arange(1, 60)),
          range(1, 60))
    n = np.repeat(np.array([12., 400.], np.float32), N // 2)
    b = random.binomial(KEY, n, np.float32(0.7))  # p > 1/2: sampled as n - Bin(n, 0.3)
    assert b.dtype == np.float32
    b = _np(b)
    _chi2(b[:N // 2], stats.binom(12, 0.7).pmf(np.arange(13)), range(13))
    _chi2(b[N // 2:], stats.binom(400, 0.7).pmf(np.arange(401)), range(401))
    bern = _np(random.bernoulli(KEY, 0.3, (N,)))
    assert bern.dtype == np.bool_
    _chi2(bern, [0.7, 0.3], [False, True])
    rad = _np(random.rademacher(KEY, (N,)))
    _chi2(rad, [0.5, 0.5], [-1, 1])


def test_categorical_and_choice():
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4], np.float32))
    c = _np(random.categorical(KEY, logits, shape=(N,)))
    _chi2(c, [0.1, 0.2, 0.3, 0.4], range(4))
    # batched logits along axis 0, default shape
    c2 = _np(random.categorical(KEY, np.stack([logits, logits[::-1]], 1), axis=0))
    assert c2.shape == (2,)
    # without replacement: distinct categories
    nr = _np(random.categorical(KEY, np.zeros((7, 3)), axis=0, shape=(7, 3), replace=False))
    assert all(sorted(nr[:, j]) == list(range(7)) for j in range(3))
    p = np.array([0.5, 0.25, 0.125, 0.125], np.float32)
    _chi2(random.choice(KEY, 4, (N,), p=p), p, range(4))
    _chi2(random.choice(KEY, np.arange(10, 14), (N,)), np.full(4, .25), range(10, 14))
    sample = _np(random.choice(KEY, np.arange(20), (20,), replace=False))
    assert sorted(sample) == list(range(20))
    w = _np(random.choice(KEY, 5, (3,), replace=False, p=np.array([0, .5, 0, .25, .25])))
    assert sorted(w) == [1, 3, 4]
    rows = _np(random.choice(KEY, np.arange(12).reshape(3, 4), (5,), axis=1))
    assert rows.shape == (3, 5) and np.all(rows % 4 == rows[0][None] % 4)


def test_permutation():
    p = _np(random.permutation(KEY, 10))
    assert sorted(p) == list(range(10))
    x = np.arange(24).reshape(4, 6)
    rows = _np(random.permutation(KEY, x, axis=0))
    assert sorted(rows[:, 0] // 6) == [0, 1, 2, 3] and np.all(rows[:, 1:] - rows[:, :1] ==
                                                              np.arange(1, 6))
    # independent shuffles of many rows: every position is uniform over the row's values
    many = _np(random.permutation(KEY, np.tile(np.arange(5), (N // 5, 1)), axis=1,
                                  independent=True))
    assert np.all(np.sort(many, 1) == np.arange(5))
    _chi2(many[:, 0], np.full(5, .2), range(5))
    _chi2(many[:, 3], np.full(5, .2), range(5))


def test_multivariate_normal():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]], np.float32)
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    for method in ("cholesky", "eigh"):
        x = _np(random.multivariate_normal(KEY, mean, cov, (N,), method=method))
        assert x.shape == (N, 3)
        np.testing.assert_allclose(x.mean(0), mean, atol=0.02)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.03)
        _ks(x[:, 1], stats.norm(-2.0, 1.0))
        # a linear combination is normal with variance w' cov w
        w = np.array([1.0, -1.0, 2.0])
        _ks(x @ w, stats.norm(mean @ w, np.sqrt(w @ cov @ w)))


def test_orthogonal_is_haar():
    q = _np(random.orthogonal(KEY, 4, (N // 10,)))
    np.testing.assert_allclose(np.einsum("bij,bik->bjk", q, q), np.broadcast_to(np.eye(4),
                               (N // 10, 4, 4)), atol=1e-5)
    # each column of a Haar matrix is uniform on the sphere: q[0, j]**2 ~ Beta(1/2, 3/2)
    _ks(q[:, 0, 0] ** 2, stats.beta(0.5, 1.5))
    _ks(q[:, 2, 3] ** 2, stats.beta(0.5, 1.5))
    signs = np.sign(np.linalg.det(q))  # O(n), not SO(n): both signs, equally often
    _chi2(signs, [0.5, 0.5], [-1.0, 1.0])


def test_ball():
    x = _np(random.ball(KEY, 3, p=2, shape=(N,)))
    r = np.linalg.norm(x, axis=-1)
    assert np.all(r <= 1)
    _ks(r ** 3, stats.uniform())  # uniform in the ball: P(r <= s) = s**3
    _ks(x[:, 0], stats.beta(2, 2, loc=-1, scale=2))  # a coordinate of the 3-ball
    y = _np(random.ball(random.key(5), 3, p=1, shape=(N,)))  # p is traced: no recompile
    assert np.all(np.abs(y).sum(-1) <= 1)
    _ks(np.abs(y).sum(-1) ** 3, stats.uniform())


def test_normal_variants():
    z = _np(random.normal(KEY, (N,), jnp.complex64))
    assert z.dtype == np.complex64
    _ks(z.real * np.sqrt(2), stats.norm())
    _ks(z.imag * np.sqrt(2), stats.norm())
    assert abs(np.mean(z.real * z.imag)) < 0.01
    h = _np(random.uniform(KEY, (N,), jnp.bfloat16))
    assert h.dtype == jnp.bfloat16 and 0 <= h.astype(np.float32).min() and h.max() < 1
    _ks(random.uniform(KEY, (N,), jnp.float16), stats.uniform())
    bits = _np(random.bits(KEY, (N // 100,)))
    frac = np.unpackbits(bits.view(np.uint8)).mean()
    assert abs(frac - 0.5) < 0.005
    g = _np(random.gumbel(KEY, (N,), mode="high"))
    _ks(g, stats.gumbel_r())
    b = _np(random.bernoulli(KEY, 1e-9, (N,), mode="high"))
    assert not b.any()


def test_uniform_ranges_broadcast():
    lo = np.array([0.0, 10.0, -5.0], np.float32)
    u = _np(random.uniform(KEY, (N // 10, 3), minval=lo, maxval=lo + 2))
    assert np.all((u >= lo) & (u < lo + 2))
    r = _np(random.randint(KEY, (N // 10, 3), lo.astype(np.int32), lo.astype(np.int32) + 3))
    assert np.all((r >= lo) & (r < lo + 3))
    assert np.all(_np(random.randint(KEY, (5,), 4, 2)) == 4)  # maxval <= minval -> minval
    u8 = _np(random.randint(KEY, (N,), 0, 256, jnp.uint8))  # maxval past the dtype's range
    assert u8.dtype == np.uint8
    _chi2(u8, np.full(256, 1 / 256), range(256))


def test_randint_program_takes_only_the_key():
    # the sampler's constants are literals, not arrays passed as arguments: XLA must see the
    # span to turn the remainders by a constant span into multiplications (10^6 draws in
    # 0..100: 8.9 -> 1.0 ms)
    key = pyjax.random.key(0)
    text = pyjax.jit(lambda k: pyjax.random.randint(k, (8,), 0, 100)).lower(key).as_text()
    main = next(line for line in text.splitlines() if "func.func public @main" in line)
    assert main.count("%arg") == 1, main
