"""pyjax.ops segment reductions against a NumPy loop, their gradients in float64, vmap against
a loop, jit against eager, and the options (num_segments, bucket_size, mode)."""
import numpy as np
import pytest

import pyjax as jax
from pyjax import ops
from pyjax.test_util import check_grads

KINDS = {"sum": (np.add, 0.), "max": (np.maximum, -np.inf), "min": (np.minimum, np.inf),
         "prod": (np.multiply, 1.)}


def reference(kind, data, ids, num_segments, clip=False):
    op, identity = KINDS[kind]
    if np.issubdtype(data.dtype, np.integer) and np.isinf(identity):
        info = np.iinfo(data.dtype)
        identity = info.min if kind == "max" else info.max
    out = np.full((num_segments,) + data.shape[ids.ndim:], identity, data.dtype)
    for idx in np.ndindex(ids.shape):
        s = ids[idx]
        if clip:
            s = min(max(s, 0), num_segments - 1)
        if 0 <= s < num_segments:
            out[s] = op(out[s], data[idx])
    return out


@pytest.fixture(scope="module")
def example():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(9, 2)).astype(np.float32)
    ids = np.array([0, 2, 2, 5, 0, 1, 7, -1, 2])   # 5 and 7, -1 out of range for 4 segments
    return data, ids


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_matches_numpy_loop(kind, example):
    data, ids = example
    f = getattr(ops, f"segment_{kind}")
    np.testing.assert_allclose(np.asarray(f(data, ids, 4)), reference(kind, data, ids, 4),
                               rtol=1e-6)
    # default num_segments = max(ids) + 1; clip mode clamps instead of dropping
    np.testing.assert_allclose(np.asarray(f(data, ids)), reference(kind, data, ids, 8),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(data, ids, 4, mode="clip")),
                               reference(kind, data, ids, 4, clip=True), rtol=1e-6)
    # bucket_size reduces buckets first: the same result
    np.testing.assert_allclose(np.asarray(f(data, ids, 4, bucket_size=2)),
                               reference(kind, data, ids, 4), rtol=1e-6)
    ints = (data * 10).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(f(ints, ids, 4)), reference(kind, ints, ids, 4))


def test_multidimensional_ids_and_sorted_flags(example):
    data, ids = example
    d3 = data.reshape(3, 3, 2)
    np.testing.assert_allclose(np.asarray(ops.segment_sum(d3, ids.reshape(3, 3), 4)),
                               reference("sum", d3, ids.reshape(3, 3), 4), rtol=1e-6)
    sorted_ids = np.sort(np.clip(ids, 0, 3))
    np.testing.assert_allclose(
        np.asarray(ops.segment_sum(data, sorted_ids, 4, indices_are_sorted=True)),
        reference("sum", data, sorted_ids, 4), rtol=1e-6)
    uniq = np.array([3, 0, 2, 1])
    np.testing.assert_allclose(
        np.asarray(ops.segment_max(data[:4], uniq, 4, unique_indices=True)),
        data[:4][np.argsort(uniq)], rtol=1e-6)


def test_gradients(x64):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(6, 2))
    ids = np.array([0, 2, 2, 1, 0, 5])
    for kind in ("sum", "max", "min"):
        f = getattr(ops, f"segment_{kind}")
        check_grads(lambda d: f(d, ids, 3), (data,), order=1)
    # as JAX: scatter_mul differentiates in its updates only with unique indices
    uniq = np.array([3, 0, 2, 1, 5, 4])
    check_grads(lambda d: ops.segment_prod(d, uniq, 6, unique_indices=True), (data,), order=1)
    with pytest.raises(NotImplementedError, match="unique_indices"):
        jax.grad(lambda d: ops.segment_prod(d, ids, 3).sum())(data)


def test_vmap_and_jit(example):
    data, ids = example
    batch = np.stack([data, 2 * data, -data])
    loop = np.stack([reference("max", d, ids, 4) for d in batch])
    f = lambda d: ops.segment_max(d, ids, num_segments=4)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(batch)), loop, rtol=1e-6)
    id_batch = np.stack([ids, ids[::-1], np.zeros_like(ids)])
    loop = np.stack([reference("sum", data, i, 4) for i in id_batch])
    g = jax.vmap(lambda i: ops.segment_sum(data, i, 4))
    np.testing.assert_allclose(np.asarray(g(id_batch)), loop, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(data)), reference("max", data, ids, 4),
                               rtol=1e-6)


def test_errors(example):
    data, ids = example
    with pytest.raises(TypeError, match="integer"):
        ops.segment_sum(data, ids.astype(np.float32), 4)
    with pytest.raises(ValueError, match="non-negative"):
        ops.segment_sum(data, ids, -1)
    with pytest.raises(ValueError, match="leading axes"):
        ops.segment_sum(data, ids[:3], 4)
    with pytest.raises(TypeError, match="num_segments"):
        jax.jit(lambda i: ops.segment_sum(data, i))(ids)
    with pytest.raises(ValueError):
        ops.segment_sum(data, ids, 4, mode="wrap")
