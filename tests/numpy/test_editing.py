"""append/delete/insert/trim_zeros/choose/compress/extract/place/put/put_along_axis/
rollaxis/block and partition/argpartition/lexsort/sort_complex against NumPy, with the
size=/concrete-index rules under jit."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.errors import ConcretizationTypeError

X = np.arange(12).reshape(3, 4)


def _eq(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def test_append_delete_insert():
    _eq(jnp.append(X, np.array([1, 2])), np.append(X, [1, 2]))
    _eq(jnp.append(X, X, axis=0), np.append(X, X, axis=0))
    for obj in [1, [0, 2], slice(0, 3, 2), -1, np.array([True, False, True, False])]:
        for axis in [None, 1]:
            if axis is None and isinstance(obj, np.ndarray):
                continue
            _eq(jnp.delete(X, obj, axis=axis), np.delete(X, obj, axis=axis))
    f = pyjax.jit(lambda x, i: jnp.delete(x, i, axis=1, assume_unique_indices=True))
    _eq(f(X, np.array([3, 0])), np.delete(X, [3, 0], axis=1))
    with pytest.raises(ConcretizationTypeError, match="assume_unique_indices"):
        pyjax.jit(lambda x, i: jnp.delete(x, i))(X, np.array([1]))
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.delete(X, 12)
    for obj, vals, axis in [(1, 9, None), (1, [7, 8], None), ([1, 3], [5, 6], None),
                            (2, [[1], [2], [3]], 1), ([0, 4], [1, 2], 1), (1, [10, 20, 30], 1),
                            (-1, 5, 0), ([2, 0, 2], [1, 2, 3], None), (slice(1, 3), [8, 9], 1)]:
        _eq(jnp.insert(X, obj, np.array(vals), axis=axis), np.insert(X, obj, vals, axis=axis))
    g = pyjax.jit(lambda x, v: jnp.insert(x, [1, 3], v))
    _eq(g(X, np.array([5, 6])), np.insert(X, [1, 3], [5, 6]))


def test_trim_choose_compress_extract():
    z = np.array([0, 0, 1, 2, 0, 3, 0])
    for trim in ["fb", "f", "b"]:
        _eq(jnp.trim_zeros(z, trim), np.trim_zeros(z, trim))
    _eq(jnp.trim_zeros(np.zeros(3)), np.trim_zeros(np.zeros(3)))
    ch = [np.arange(4), np.arange(4) * 10, np.arange(4) * 100]
    idx = np.array([2, 0, 1, 2])
    _eq(jnp.choose(idx, ch), np.choose(idx, ch))
    for mode in ["wrap", "clip"]:
        _eq(jnp.choose(idx + 2, ch, mode=mode), np.choose(idx + 2, ch, mode=mode))
        _eq(pyjax.jit(lambda i: jnp.choose(i, ch, mode=mode))(idx + 2),
            np.choose(idx + 2, ch, mode=mode))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(idx + 2, ch)
    c = np.array([True, False, True])
    _eq(jnp.compress(c, X, axis=0), np.compress(c, X, axis=0))
    _eq(jnp.compress(np.array([0, 1]), X, axis=1), np.compress([0, 1], X, axis=1))
    _eq(jnp.compress(c, X), np.compress(c, X))
    got = pyjax.jit(lambda c, x: jnp.compress(c, x, axis=0, size=3, fill_value=-1))(c, X)
    _eq(got, np.concatenate([np.compress(c, X, axis=0), np.full((1, 4), -1)]))
    with pytest.raises(ConcretizationTypeError, match="size="):
        pyjax.jit(lambda c, x: jnp.compress(c, x))(c, X)
    _eq(jnp.extract(X % 3 == 0, X), np.extract(X % 3 == 0, X))


def test_place_put_put_along_axis():
    m = X % 3 == 0
    want = X.copy()
    np.place(want, m, [100, 200])
    _eq(jnp.place(X, m, np.array([100, 200]), inplace=False), want)
    _eq(pyjax.jit(lambda x, m: jnp.place(x, m, np.array([100, 200]), inplace=False))(X, m),
        want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.place(X, m, 1)
    for mode in ["clip", "wrap"]:
        want = X.copy()
        np.put(want, [0, 5, 30], [-1, -2], mode=mode)
        _eq(jnp.put(X, np.array([0, 5, 30]), np.array([-1, -2]), mode=mode, inplace=False),
            want)
    ii = np.argsort(X, axis=1)[:, :2]
    want = X.copy()
    np.put_along_axis(want, ii, -5, axis=1)
    _eq(jnp.put_along_axis(X, ii, -5, axis=1, inplace=False), want)
    want = X.copy()
    np.put_along_axis(want, np.array([[1], [0], [3]]), np.array([[7], [8], [9]]), axis=1)
    _eq(jnp.put_along_axis(X, np.array([[1], [0], [3]]), np.array([[7], [8], [9]]), axis=1,
                           inplace=False), want)


def test_rollaxis_and_block():
    z = np.zeros((2, 3, 4, 5))
    for axis, start in [(3, 1), (2, 0), (1, 4), (0, -1), (-1, 0)]:
        assert jnp.rollaxis(z, axis, start).shape == np.rollaxis(z, axis, start).shape
    a, b = np.eye(2) * 2, np.eye(3) * 3
    layout = [[a, np.zeros((2, 3))], [np.ones((3, 2)), b]]
    _eq(jnp.block(layout), np.block(layout))
    _eq(jnp.block([np.array([1, 2]), 3, np.array([4])]), np.block([np.array([1, 2]), 3, np.array([4])]))
    _eq(jnp.block([[1, 2], [3, 4]]), np.block([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="depths are mismatched"):
        jnp.block([[1, 2], 3])


def test_ordering():
    a = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]])
    for k in (0, 3, -1):
        p = np.asarray(jnp.partition(a, k, axis=1))
        s = np.sort(a, axis=1)
        kk = k % 8
        _eq(p[:, kk], s[:, kk])
        assert (p[:, :kk] <= p[:, kk:kk + 1]).all() and (p[:, kk:] >= p[:, kk:kk + 1]).all()
        ap = np.asarray(jnp.argpartition(a, k, axis=1))
        _eq(np.take_along_axis(a, ap, axis=1)[:, kk], s[:, kk])
    k1, k2 = np.array([1, 5, 1, 4, 3, 4, 4]), np.array([9, 4, 0, 4, 0, 2, 1])
    _eq(jnp.lexsort((k1, k2)), np.lexsort((k1, k2)))
    _eq(jnp.lexsort(np.stack([k1, k2.astype(np.float32)])), np.lexsort(np.stack([k1, k2])))
    _eq(jnp.lexsort((k1 > 2, k2)), np.lexsort((k1 > 2, k2)))
    keys = np.random.default_rng(0).integers(0, 3, (2, 3, 5))
    _eq(pyjax.jit(lambda k: jnp.lexsort(k, axis=0))(keys), np.lexsort(keys, axis=0))
    got = jnp.sort_complex(np.array([5, 3, 6, 2, 1]))
    assert got.dtype == np.complex64
    _eq(got, np.sort_complex(np.array([5, 3, 6, 2, 1])))
    c = np.array([1 + 2j, 2 - 1j, 3 - 2j, 3 - 3j, 3 + 5j], np.complex64)
    _eq(jnp.sort_complex(c), np.sort_complex(c))
