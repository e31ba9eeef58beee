"""The rbg and unsafe_rbg PRNG implementations (random/rbg.py).

JAX does not promise these streams across backends or versions, so the oracles are their
documented definitions, rebuilt here from lax.rng_bit_generator and the Threefry key functions
(themselves checked against JAX's golden values in test_random_exact.py), and statistics."""
import numpy as np
import pytest
import scipy.stats

import pyjax
import pyjax.numpy as jnp
from pyjax import lax, random

IMPLS = [("rbg", "rbg"), ("unsafe_rbg", "urbg")]
DATA = np.array([1, 2, 3, 4], np.uint32)


def _words(x):
    return np.asarray(random.key_data(x))


def _threefry(data):
    return random.wrap_key_data(jnp.asarray(data, jnp.uint32), impl="threefry2x32")


@pytest.mark.parametrize("impl,tag", IMPLS)
def test_keys_layout_and_names(impl, tag):
    k = random.key(7, impl=impl)
    assert str(k.dtype) == f"key<{tag}>" and k.shape == () and k.dtype.itemsize == 16
    assert f"key<{tag}>" in repr(k)
    np.testing.assert_array_equal(_words(k), [0, 7, 0, 7])   # the Threefry seed, twice
    raw = random.PRNGKey(7, impl=impl)
    assert raw.dtype == np.uint32 and raw.shape == (4,)
    assert random.key_impl(k) == impl and random.key_dtype(impl) == k.dtype
    assert random.key_dtype(impl) != random.key_dtype("threefry2x32")
    assert jnp.issubdtype(k.dtype, pyjax.dtypes.prng_key)
    keys = random.split(k, (2, 3))
    assert keys.shape == (2, 3) and keys.dtype == k.dtype and _words(keys).shape == (2, 3, 4)
    assert keys[1].dtype == k.dtype and keys.reshape(6).dtype == k.dtype
    with pytest.raises(TypeError, match=f"key<{tag}>"):
        k + 1


def test_rbg_splits_and_folds_each_half_with_threefry():
    w = random.wrap_key_data(DATA, impl="rbg")
    lo, hi = _threefry(DATA[:2]), _threefry(DATA[2:])
    want = np.concatenate([_words(random.split(lo, 3)), _words(random.split(hi, 3))], -1)
    np.testing.assert_array_equal(_words(random.split(w, 3)), want)
    want = np.concatenate([_words(random.fold_in(lo, 77)), _words(random.fold_in(hi, 77))])
    np.testing.assert_array_equal(_words(random.fold_in(w, 77)), want)


def test_unsafe_rbg_splits_and_folds_with_the_bit_generator():
    w = random.wrap_key_data(DATA, impl="unsafe_rbg")
    rows = np.asarray(lax.rng_bit_generator(jnp.asarray(DATA), (30, 4))[1])
    np.testing.assert_array_equal(_words(random.split(w, 3)), rows[::10])
    seed = jnp.array([0, 77, 0, 77], jnp.uint32)               # the rbg seed of 77
    last = np.asarray(lax.rng_bit_generator(seed, (10, 4))[1])[9]
    np.testing.assert_array_equal(_words(random.fold_in(w, 77)), DATA ^ last)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_bits_are_the_bit_generators_and_jit_vmap_agree(impl):
    w = random.wrap_key_data(DATA, impl=impl)
    for dtype in (np.uint8, np.uint32):
        want = np.asarray(lax.rng_bit_generator(jnp.asarray(DATA), (5,), dtype)[1])
        np.testing.assert_array_equal(random.bits(w, (5,), dtype), want)
    u = random.uniform(w, (6,))
    np.testing.assert_array_equal(pyjax.jit(lambda k: random.uniform(k, (6,)))(w), u)
    keys = random.split(w, 3)
    batched = pyjax.vmap(lambda k: random.normal(k, (4,)))(keys)
    np.testing.assert_array_equal(batched, np.stack([random.normal(keys[i], (4,))
                                                     for i in range(3)]))
    folded = pyjax.vmap(lambda k: random.fold_in(k, 5))(keys)
    np.testing.assert_array_equal(_words(folded),
                                  np.stack([_words(random.fold_in(keys[i], 5)) for i in range(3)]))


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_distributions_are_right(impl):
    k1, k2, k3 = random.split(random.key(11, impl=impl), 3)
    u = np.asarray(random.uniform(k1, (6000,)))
    assert scipy.stats.kstest(u, "uniform").pvalue > 1e-4
    z = np.asarray(random.normal(k2, (6000,)))
    assert scipy.stats.kstest(z, "norm").pvalue > 1e-4
    c = np.bincount(np.asarray(random.randint(k3, (7000,), 0, 7)), minlength=7)
    assert scipy.stats.chisquare(c).pvalue > 1e-4
    # split keys give independent streams: no correlation between the first two children
    a, b = (np.asarray(random.normal(kk, (6000,))) for kk in random.split(k1))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.06


@pytest.fixture
def default_rbg():
    pyjax.config.update("jax_default_prng_impl", "rbg")
    yield
    pyjax.config.update("jax_default_prng_impl", "threefry2x32")


def test_default_prng_impl(default_rbg):
    assert str(random.key(0).dtype) == "key<rbg>"
    raw = random.PRNGKey(3)
    assert raw.shape == (4,)
    np.testing.assert_array_equal(random.split(raw, 2),                 # raw keys: rbg too
                                  _words(random.split(random.wrap_key_data(raw), 2)))
    assert random.uniform(raw, (3,)).shape == (3,)
    with pytest.raises(TypeError, match=r"uint32\[\.\.\., 4\]"):       # threefry-sized data
        random.split(np.zeros(2, np.uint32))
    with pytest.raises(TypeError, match=r"uint32\[2\]"):
        random.wrap_key_data(np.zeros(2, np.uint32))


def test_bad_impl_names():
    with pytest.raises(ValueError, match="unrecognized PRNG implementation 'philox'"):
        random.key(0, impl="philox")
    with pytest.raises(TypeError, match=r"rbg implementation's key data is uint32\[\.\.\., 4\]"):
        random.wrap_key_data(np.zeros(2, np.uint32), impl="rbg")
