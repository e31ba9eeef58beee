"""r_/c_/mgrid/ogrid/ix_/indices, diagonal and triangle indices, ravel_multi_index,
unravel_index and fill_diagonal against NumPy."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.errors import ConcretizationTypeError


def _eq(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_r_and_c():
    a, b = np.array([1, 2, 3]), np.array([4, 5, 6])
    for key in [(slice(1, 4), 0, b), (slice(0, 1, 5j),), ("0,2,0", [1, 2, 3], [4, 5, 6]),
                ("1,2,0", a, b), ("0,3,-2", a, b), ("-1", np.ones((2, 2)), np.zeros((2, 1)))]:
        _eq(jnp.r_[key], np.r_[key])
    _eq(jnp.c_[a, b], np.c_[a, b])
    _eq(jnp.c_[np.ones((2, 2)), 3 * np.ones((2, 1))], np.c_[np.ones((2, 2)), 3 * np.ones((2, 1))])
    _eq(jnp.c_[1:3, [5, 6]], np.c_[1:3, [5, 6]])
    assert jnp.r_[1:3, 2.5].dtype == np.float32
    with pytest.raises(NotImplementedError, match="matrix"):
        jnp.r_["r", a]


def test_grids_and_indices():
    _eq(jnp.mgrid[0:3, 1:5:2], np.mgrid[0:3, 1:5:2])
    _eq(jnp.mgrid[0:1:3j, 0:2], np.mgrid[0:1:3j, 0:2])
    _eq(jnp.mgrid[0:4], np.mgrid[0:4])
    for got, want in zip(jnp.ogrid[0:3, 0:4], np.ogrid[0:3, 0:4]):
        _eq(got, want)
    _eq(jnp.indices((2, 3)), np.indices((2, 3)))
    _eq(jnp.indices((2, 0)), np.indices((2, 0)))
    for got, want in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        _eq(got, want)
    assert jnp.indices((2,), dtype=np.int8).dtype == np.int8
    x = np.arange(20).reshape(4, 5)
    _eq(jnp.asarray(x)[jnp.ix_(np.array([0, 2]), np.array([1, 3, 4]))], x[np.ix_([0, 2], [1, 3, 4])])
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.ix_(np.zeros((2, 2), int))
    assert jnp.s_[1:2] == np.s_[1:2] and jnp.index_exp[3] == (3,)


def test_triangle_and_diagonal_indices():
    x = np.arange(20).reshape(4, 5)
    for name in ["tril_indices", "triu_indices"]:
        for k in [-1, 0, 2]:
            for got, want in zip(getattr(jnp, name)(4, k, 5), getattr(np, name)(4, k, 5)):
                _eq(got, want)
        for got, want in zip(getattr(jnp, name + "_from")(x, 1), getattr(np, name + "_from")(x, 1)):
            _eq(got, want)
    for got, want in zip(jnp.mask_indices(3, jnp.triu, 1), np.mask_indices(3, np.triu, 1)):
        _eq(got, want)
    cube = np.zeros((3, 3, 3))
    for got, want in zip(jnp.diag_indices_from(cube), np.diag_indices_from(cube)):
        _eq(got, want)
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(x)


def test_ravel_and_unravel():
    mi = (np.array([3, 1, 0]), np.array([4, 0, 2]))
    _eq(jnp.ravel_multi_index(mi, (4, 5)), np.ravel_multi_index(mi, (4, 5)))
    _eq(jnp.ravel_multi_index(mi, (4, 5), order="F"), np.ravel_multi_index(mi, (4, 5), order="F"))
    for mode in ["wrap", "clip"]:
        _eq(jnp.ravel_multi_index(mi, (2, 3), mode=mode), np.ravel_multi_index(mi, (2, 3), mode=mode))
        f = pyjax.jit(lambda a, b: jnp.ravel_multi_index((a, b), (2, 3), mode=mode))
        _eq(f(*mi), np.ravel_multi_index(mi, (2, 3), mode=mode))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index(mi, (2, 3))
    with pytest.raises(ConcretizationTypeError, match="mode='raise'"):
        pyjax.jit(lambda a, b: jnp.ravel_multi_index((a, b), (4, 5)))(*mi)
    flat = np.array([22, 41, 37, 0])
    for got, want in zip(pyjax.jit(lambda i: jnp.unravel_index(i, (7, 6)))(flat),
                         np.unravel_index(flat, (7, 6))):
        _eq(got, want)
    # JAX: negative indices count from the end, out-of-range ones are clipped
    for got, want in zip(jnp.unravel_index(np.array([-1, 99]), (2, 3)), ([1, 1], [2, 2])):
        _eq(got, want)


def test_fill_diagonal():
    for wrap in (False, True):
        z = np.zeros((7, 3))
        got = jnp.fill_diagonal(z, np.array([5.0, 6.0]), wrap=wrap, inplace=False)
        np.fill_diagonal(z, [5.0, 6.0], wrap=wrap)
        _eq(got, z)
    z = np.zeros((3, 3, 3), np.int32)
    got = jnp.fill_diagonal(z, 4, inplace=False)
    np.fill_diagonal(z, 4)
    _eq(got, z)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(z, 4)
