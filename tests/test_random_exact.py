"""The rejection samplers give JAX's numbers: golden values from JAX 0.10.2 with
``k = random.key(0)`` (issue 16), eagerly, under ``jit`` and under ``vmap``.

Integer-valued draws must match exactly; real-valued ones to a couple of ulps (XLA fuses the
final arithmetic differently in a larger program, as it does in JAX)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import random

GOLDEN = {
    "gamma": [1.5897877, 1.7599413, 1.1290071, 3.974334],
    "poisson": [0, 0, 4, 4, 1],
    "binomial": [2.0, 2.0, 1.0, 2.0, 1.0],
    "beta": [0.23627362, 0.49045956, 0.6837948],
    "multinomial": [1.0, 1.0, 8.0],
}


def _draws(k):
    return {
        "gamma": random.gamma(k, 2.0, (4,)),
        "poisson": random.poisson(k, 3.0, (5,)),
        "binomial": random.binomial(k, 10, 0.3, (5,)),
        "beta": random.beta(k, 2.0, 3.0, (3,)),
        "multinomial": random.multinomial(k, 10, jnp.array([0.2, 0.3, 0.5])),
    }


def _check(name, got):
    got = np.asarray(got)
    if name == "poisson":
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, GOLDEN[name])
    else:
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, GOLDEN[name], rtol=3e-7 * 4, atol=0)


@pytest.fixture(scope="module")
def eager_draws():
    return _draws(random.key(0))


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_eager(eager_draws, name):
    _check(name, eager_draws[name])
    if name in ("poisson", "binomial", "multinomial"):  # counts: exact
        np.testing.assert_array_equal(eager_draws[name], GOLDEN[name])


def test_golden_under_jit_and_vmap(eager_draws):
    # one compiled program (jit of vmap) keeps this test's compile time down
    k = random.key(0)
    # a batch of keys holding key(0) and keys made with split: row i is the draw for key i
    others = random.split(random.key(7), 2)
    keys = random.wrap_key_data(jnp.concatenate([random.key_data(k)[None],
                                                 random.key_data(others)]))
    batched = pyjax.jit(pyjax.vmap(_draws))(keys)
    for name in GOLDEN:
        _check(name, batched[name][0])
        assert np.asarray(batched[name]).shape[0] == 3
    one = _draws(others[1])  # the eager draws for another key (same compiled samplers)
    for name in GOLDEN:
        np.testing.assert_allclose(batched[name][2], one[name], rtol=1e-6)
        assert not np.array_equal(np.asarray(batched[name][2]), np.asarray(batched[name][0]))


def test_multinomial_arguments():
    k = random.key(3)
    counts = random.multinomial(k, jnp.array([5.0, 20.0]), jnp.array([0.1, 0.6, 0.3]),
                                shape=(2, 3))
    np.testing.assert_array_equal(np.asarray(counts).sum(-1), [5.0, 20.0])
    assert np.all(np.asarray(counts) >= 0)
    with pytest.raises(ValueError, match="at least one dimension"):
        random.multinomial(k, 3, 0.5)
    with pytest.raises(ValueError, match="broadcast"):
        random.multinomial(k, 3, jnp.ones(3) / 3, shape=(2, 4))


@pytest.fixture
def original_stream():
    pyjax.config.update("jax_threefry_partitionable", False)
    yield
    pyjax.config.update("jax_threefry_partitionable", True)


def _words(k, n):
    """JAX's original stream by its definition: threefry_2x32 over the counts 0..n-1."""
    return np.asarray(random.threefry_2x32(random.key_data(k), np.arange(n, dtype=np.uint32)))


def test_non_partitionable_split_and_bits(original_stream):
    k = random.key(42)
    np.testing.assert_array_equal(random.key_data(random.split(k, 3)),
                                  _words(k, 6).reshape(3, 2))
    np.testing.assert_array_equal(random.bits(k, (2, 3), np.uint32), _words(k, 6).reshape(2, 3))
    w = _words(k, 3)  # 5 uint16 values take ceil(80 / 32) = 3 words, low halves first
    want16 = np.stack([w & 0xFFFF, w >> 16], 1).reshape(-1)[:5].astype(np.uint16)
    np.testing.assert_array_equal(random.bits(k, (5,), np.uint16), want16)
    w = _words(k, 2)
    want8 = np.stack([(w >> s) & 0xFF for s in (0, 8, 16, 24)], 1).reshape(-1)[:7]
    np.testing.assert_array_equal(random.bits(k, (7,), np.uint8), want8.astype(np.uint8))
    # under jit and vmap too
    np.testing.assert_array_equal(pyjax.jit(lambda kk: random.bits(kk, (3,), np.uint32))(k),
                                  _words(k, 3))
    keys = random.split(random.key(1), 2)
    batched = pyjax.vmap(lambda kk: random.bits(kk, (3,), np.uint32))(keys)
    np.testing.assert_array_equal(batched[1], _words(keys[1], 3))
    # fold_in is the same in both modes
    pyjax.config.update("jax_threefry_partitionable", True)
    folded = np.asarray(random.key_data(random.fold_in(k, 9)))
    pyjax.config.update("jax_threefry_partitionable", False)
    np.testing.assert_array_equal(random.key_data(random.fold_in(k, 9)), folded)


def test_non_partitionable_64_bit_words(original_stream, x64):
    k = random.key(3)
    w = _words(k, 6).astype(np.uint64)
    np.testing.assert_array_equal(random.bits(k, (3,), np.uint64), (w[:3] << 32) | w[3:])


def test_key_dtype_and_impl_arguments():
    d = random.key_dtype()
    assert d == random.key(0).dtype and str(d) == "key<fry>"
    assert jnp.issubdtype(d, pyjax.dtypes.prng_key)
    k = random.key(3, dtype=random.key_dtype("threefry2x32"))
    np.testing.assert_array_equal(random.key_data(k), random.key_data(random.key(3)))
    w = random.wrap_key_data(random.key_data(k), dtype=k.dtype)
    np.testing.assert_array_equal(random.key_data(w), random.key_data(k))
    for impl, tag in (("rbg", "rbg"), ("unsafe_rbg", "urbg")):   # tests/test_random_rbg.py
        assert str(random.key(0, impl=impl).dtype) == f"key<{tag}>"
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key_dtype("philox")
