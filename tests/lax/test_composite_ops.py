"""lax names built from existing primitives (tile, stack, split, mulhi, ragged_dot, ...), the
``optimization_barrier`` primitive and the ``*_p`` objects under JAX's names."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

TESTED_PRIMITIVES = {"optimization_barrier", "rng_bit_generator"}
JVP_TESTED = {"optimization_barrier"}
BATCH_TESTED = {"optimization_barrier", "rng_bit_generator"}

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def test_shape_functions_against_numpy():
    np.testing.assert_array_equal(lax.tile(X, (2, 3)), np.tile(X, (2, 3)))
    np.testing.assert_array_equal(lax.stack([X, X + 1], 1), np.stack([X, X + 1], 1))
    parts = lax.unstack(X, 1)
    assert len(parts) == 3
    np.testing.assert_array_equal(parts[2], X[:, 2])
    a, b = lax.split(X, (1, 2), axis=1)
    np.testing.assert_array_equal(a, X[:, :1])
    np.testing.assert_array_equal(b, X[:, 1:])
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="sum of sizes"):
        lax.split(X, (1, 1), axis=1)
    with pytest.raises(ValueError, match="len\\(reps\\)"):
        lax.tile(X, (2,))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))


def test_reciprocal_dtype_and_index_take():
    np.testing.assert_allclose(lax.reciprocal(jnp.array([2.0, -4.0])), [0.5, -0.25])
    got = lax.index_take(X, (jnp.array([1, 0, 1]), jnp.array([2, 1, 0])), (0, 1))
    np.testing.assert_array_equal(got, X[[1, 0, 1], [2, 1, 0]])
    assert lax.dtype(1.0) == np.float32 and lax.dtype(jnp.ones(2, jnp.int8)) == np.int8


@pytest.mark.parametrize("dt", [np.uint32, np.int32, np.int8, np.uint16])
def test_mulhi_against_exact_products(dt):
    rng = np.random.default_rng(0)
    info = np.iinfo(dt)
    a, b = (rng.integers(info.min, info.max, 200, dtype=np.int64, endpoint=True).astype(dt)
            for _ in range(2))
    a[:2], b[:2] = info.min, info.max
    bits = np.dtype(dt).itemsize * 8
    want = np.array([(int(x) * int(y)) >> bits for x, y in zip(a, b)]).astype(dt)
    np.testing.assert_array_equal(lax.mulhi(jnp.asarray(a), jnp.asarray(b)), want)


def test_mulhi_64_bit(x64):
    a = np.array([-(2**63), 2**62 + 12345, -7, 2**63 - 1], np.int64)
    b = np.array([2**63 - 1, 2**40 + 3, 3, 2**63 - 1], np.int64)
    want = np.array([(int(x) * int(y)) >> 64 for x, y in zip(a, b)], np.int64)
    np.testing.assert_array_equal(lax.mulhi(jnp.asarray(a), jnp.asarray(b)), want)
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    uwant = np.array([(int(x) * int(y)) >> 64 for x, y in zip(ua, ub)], np.uint64)
    np.testing.assert_array_equal(lax.mulhi(jnp.asarray(ua), jnp.asarray(ub)), uwant)


def test_approx_k_is_exact_on_cpu():
    x = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]], np.float32)
    v, i = lax.approx_max_k(x, 2)
    np.testing.assert_array_equal(v, [[5, 4], [9, 6]])
    np.testing.assert_array_equal(i, [[4, 2], [0, 2]])
    v, i = lax.approx_min_k(x, 2)
    np.testing.assert_array_equal(v, [[1, 1], [2, 3]])
    np.testing.assert_array_equal(i, [[1, 3], [1, 4]])
    v, i = lax.approx_max_k(x, 1, reduction_dimension=0)
    np.testing.assert_array_equal(v, x.max(0, keepdims=True))
    with pytest.raises(NotImplementedError, match="aggregate_to_topk"):
        lax.approx_max_k(x, 2, aggregate_to_topk=False)


def test_ragged_dot_against_per_group_products():
    rng = np.random.default_rng(1)
    lhs = rng.normal(size=(6, 3)).astype(np.float32)
    rhs = rng.normal(size=(3, 3, 2)).astype(np.float32)
    sizes = np.array([2, 0, 3], np.int32)  # an empty group; the last row is in no group
    want = np.zeros((6, 2), np.float32)
    want[0:2] = lhs[0:2] @ rhs[0]
    want[2:5] = lhs[2:5] @ rhs[2]
    np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, jnp.asarray(sizes)), want, rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="ragged_dot expects"):
        lax.ragged_dot(lhs, rhs, jnp.ones(2, jnp.int32))


def test_platform_dependent_and_composite():
    assert lax.platform_dependent(2, cpu=lambda a: a + 1, default=lambda a: a) == 3
    assert lax.platform_dependent(2, tpu=lambda a: a + 1, default=lambda a: a * 5) == 10
    with pytest.raises(NotImplementedError, match="no branch"):
        lax.platform_dependent(2, tpu=lambda a: a)
    double = lax.composite(lambda a: a * 2, name="my.double")
    np.testing.assert_array_equal(pyjax.jit(double)(X), X * 2)


def test_optimization_barrier_is_the_identity_under_transformations():
    tree = (jnp.asarray(X), {"s": jnp.float32(2.0)})
    out = lax.optimization_barrier(tree)
    np.testing.assert_array_equal(out[0], X)
    assert float(out[1]["s"]) == 2.0
    f = lambda a: jnp.sum(lax.optimization_barrier(a * a) * 3.0)  # noqa: E731
    np.testing.assert_allclose(pyjax.grad(f)(X), 6.0 * X)
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(f))(X), 6.0 * X)
    np.testing.assert_array_equal(pyjax.vmap(lambda a: lax.optimization_barrier(a) + 1)(X),
                                  X + 1)
    assert "optimization_barrier" in pyjax.jit(f).lower(X).as_text()


def test_primitives_under_jax_names():
    assert lax.add_p.name == "add" and lax.scatter_add_p.name == "scatter-add"
    assert lax.while_p.name == "while" and lax.optimization_barrier_p.name == \
        "optimization_barrier"
    assert lax.sin_p.bind(jnp.float32(0.0)) == 0.0


def test_rng_bit_generator():
    key = jnp.array([1, 2, 3, 4], jnp.uint32)
    new_key, bits = lax.rng_bit_generator(key, (4, 2500))
    assert new_key.dtype == np.uint32 and new_key.shape == (4,)
    assert bits.dtype == np.uint32 and bits.shape == (4, 2500)
    assert not np.array_equal(new_key, key)
    b = np.asarray(bits, np.float64) / 2.0 ** 32
    assert abs(b.mean() - 0.5) < 0.01 and abs(b.var() - 1 / 12) < 0.005  # 10**4 uniform draws
    # deterministic, and the same under jit
    np.testing.assert_array_equal(lax.rng_bit_generator(key, (4, 2500))[1], bits)
    jitted = pyjax.jit(lambda k: lax.rng_bit_generator(k, (4, 2500)))(key)
    np.testing.assert_array_equal(jitted[1], bits)
    np.testing.assert_array_equal(jitted[0], new_key)
    # narrow outputs are 32-bit draws converted (their low bits), as JAX lowers them
    small = lax.rng_bit_generator(key, (3,), np.uint8)[1]
    words = lax.rng_bit_generator(key, (3,), np.uint32)[1]
    np.testing.assert_array_equal(small, np.asarray(words) & 0xFF)
    # another algorithm draws other bits
    other = lax.rng_bit_generator(key, (3,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)[1]
    assert not np.array_equal(other, words)
    # vmap over keys: each key its own draw
    keys = jnp.stack([key, key + 1])
    kb, bb = pyjax.vmap(lambda k: lax.rng_bit_generator(k, (3,)))(keys)
    for i in range(2):
        k_i, b_i = lax.rng_bit_generator(keys[i], (3,))
        np.testing.assert_array_equal(bb[i], b_i)
        np.testing.assert_array_equal(kb[i], k_i)
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(jnp.zeros(2, jnp.uint32), (3,))
    with pytest.raises(TypeError, match="dtype"):
        lax.rng_bit_generator(key, (3,), np.int32)


def test_dot_algorithms_as_precision():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    for prec in (lax.DotAlgorithmPreset.DEFAULT, lax.DotAlgorithmPreset.F32_F32_F32,
                 lax.DotAlgorithm(np.float32, np.float32, np.float32)):
        np.testing.assert_allclose(lax.dot(a, b, precision=prec), a @ b)
        np.testing.assert_allclose(jnp.matmul(a, b, precision=prec), a @ b)
    with pytest.raises(NotImplementedError, match="BF16_BF16_F32"):
        lax.dot(a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32)
    with pytest.raises(NotImplementedError, match="F64_F64_F64"):
        lax.dot(a, b, precision=lax.DotAlgorithmPreset.F64_F64_F64)  # f32 operands
    assert lax.Tolerance(atol=1e-3).atol == 1e-3 and lax.AccuracyMode.HIGHEST.name == "HIGHEST"
