"""lax.empty, lax.broadcast_like and lax.rng_uniform."""
import numpy as np
import pytest
import scipy.stats

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

TESTED_PRIMITIVES = {"rng_uniform"}
BATCH_TESTED = {"rng_uniform"}


def test_empty():
    x = lax.empty((2, 3), jnp.float32)
    assert x.shape == (2, 3) and x.dtype == np.float32
    np.testing.assert_array_equal(x, np.zeros((2, 3)))   # JAX on CPU gives zeros too
    assert lax.empty(4, "int16").shape == (4,) and lax.empty(4, "int16").dtype == np.int16
    assert pyjax.jit(lambda: lax.empty((), jnp.bool_))().dtype == np.bool_
    with pytest.raises(NotImplementedError, match="out_sharding"):
        lax.empty(3, jnp.float32, out_sharding=pyjax.sharding.PartitionSpec())
    with pytest.raises(TypeError, match="data type"):
        lax.empty(3, "no-such-dtype")


@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((3, 1), (2, 3, 4)), ((), (2,)),
                                          ((2, 3), (2, 3))])
def test_broadcast_like(shape, target):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    like = jnp.zeros(target, jnp.int8)
    want = np.broadcast_to(x, target)
    got = lax.broadcast_like(x, like)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(pyjax.jit(lax.broadcast_like)(x, like), want)


def test_broadcast_like_refuses_incompatible_shapes():
    with pytest.raises(ValueError, match=r"cannot broadcast an array of shape \(2,\) to the "
                                         r"shape \(3,\)"):
        lax.broadcast_like(jnp.ones(2), jnp.ones(3))
    with pytest.raises(ValueError, match="cannot broadcast"):
        lax.broadcast_like(jnp.ones((2, 2)), jnp.ones(2))


def test_rng_uniform_is_uniform_on_the_interval():
    x = np.asarray(lax.rng_uniform(2.0, 5.0, (20000,)))
    assert x.dtype == np.float32 and x.shape == (20000,)
    assert x.min() >= 2.0 and x.max() < 5.0
    # Kolmogorov-Smirnov against U[2, 5): a wrong scale or offset fails by a wide margin
    assert scipy.stats.kstest(x, "uniform", args=(2.0, 3.0)).pvalue > 1e-4
    ints = np.asarray(pyjax.jit(lambda: lax.rng_uniform(np.int32(-3), np.int32(4), (7000,)))())
    assert ints.dtype == np.int32
    assert set(np.unique(ints)) == set(range(-3, 4))          # b is excluded
    counts = np.bincount(ints + 3)
    assert scipy.stats.chisquare(counts).pvalue > 1e-4


def test_rng_uniform_is_stateful_and_batches():
    a, b = lax.rng_uniform(0.0, 1.0, (8,)), lax.rng_uniform(0.0, 1.0, (8,))
    assert not np.array_equal(a, b)                           # a new draw per call
    lo = jnp.arange(4.0) * 10
    y = np.asarray(pyjax.vmap(lambda a: lax.rng_uniform(a, a + 1, (3,)))(lo))
    assert y.shape == (4, 3)
    for i in range(4):                                        # row i lies in [10 i, 10 i + 1)
        assert ((y[i] >= 10 * i) & (y[i] < 10 * i + 1)).all()
    jaxpr = pyjax.make_jaxpr(lambda: lax.rng_uniform(0.0, 1.0, (3,)))()
    assert "rng_uniform[shape=(3,)]" in str(jaxpr)


def test_rng_uniform_bad_input():
    with pytest.raises(TypeError, match="same dtype"):
        lax.rng_uniform(np.float32(0), np.int32(1), (2,))
    with pytest.raises(TypeError, match="scalars"):
        lax.rng_uniform(jnp.zeros(2), jnp.ones(2), (2,))
    with pytest.raises(TypeError, match="at least 16 bits"):
        lax.rng_uniform(np.int8(0), np.int8(3), (2,))


def test_tokens():
    t = lax.create_token()
    assert isinstance(t, lax.Token) and isinstance(lax.create_token(jnp.ones(2)), lax.Token)
    assert isinstance(lax.after_all(t, lax.create_token()), lax.Token)
    # a token passes through jit with arrays beside it, and comes back out as a token
    tok, y = pyjax.jit(lambda t, x: (lax.after_all(t), x * 2))(t, jnp.ones(2))
    assert isinstance(tok, lax.Token)
    np.testing.assert_array_equal(y, [2.0, 2.0])
    assert isinstance(pyjax.jit(lax.create_token)(), lax.Token)
    with pytest.raises(TypeError, match="after_all: every operand must be a token"):
        lax.after_all(t, jnp.ones(2))
