"""lax.ragged_dot_general's three modes against NumPy loops over the groups."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads

R = lax.RaggedDotDimensionNumbers
GS = np.array([2, 0, 3], np.int32)          # an empty group, and one position left over (6)
rng = np.random.default_rng(0)


def _groups(sizes):
    ends = np.cumsum(sizes)
    return [range(e - s, e) for s, e in zip(sizes, ends)]


def _mode1_numpy(lhs, rhs, sizes):
    # lhs [b, m, k], rhs [g, b, k, n]: rows of group g times rhs[g]; rows past the end are 0
    out = np.zeros(lhs.shape[:2] + rhs.shape[-1:], np.float64)
    for g, rows in enumerate(_groups(sizes)):
        for i in rows:
            out[:, i] = np.einsum("bk,bkn->bn", lhs[:, i], rhs[g])
    return out


def _mode2_numpy(lhs, rhs, sizes):
    # lhs [m, k], rhs [k, n]: one product per group of the contracting dim
    return np.stack([lhs[:, list(ks)] @ rhs[list(ks)] if len(ks) else
                     np.zeros((lhs.shape[0], rhs.shape[1])) for ks in _groups(sizes)])


def _mode3_numpy(lhs, rhs, sizes):
    # lhs [b, m, k], rhs [b, k, n]: batch entries of any group; the others are 0
    out = np.einsum("bmk,bkn->bmn", lhs, rhs)
    out[sum(sizes):] = 0
    return out


MODE1 = R((((2,), (2,)), ((0,), (1,))), [1], [0])
MODE2 = R((((1,), (0,)), ((), ())), [1], [])
MODE3 = R((((2,), (1,)), ((0,), (0,))), [0], [])


def test_mode1_ragged_rows_pick_their_group():
    lhs = rng.standard_normal((2, 6, 4)).astype(np.float32)
    rhs = rng.standard_normal((3, 2, 4, 5)).astype(np.float32)
    out = lax.ragged_dot_general(lhs, rhs, GS, MODE1)
    assert out.shape == (2, 6, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out, _mode1_numpy(lhs, rhs, GS), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pyjax.jit(lax.ragged_dot_general, static_argnums=3)(
        lhs, rhs, GS, MODE1), out, rtol=1e-6)


def test_mode2_ragged_contraction_gives_one_product_per_group():
    lhs = rng.standard_normal((3, 6)).astype(np.float32)
    rhs = rng.standard_normal((6, 2)).astype(np.float32)
    out = lax.ragged_dot_general(lhs, rhs, GS, MODE2)
    assert out.shape == (3, 3, 2)
    np.testing.assert_allclose(out, _mode2_numpy(lhs, rhs, GS), rtol=1e-5, atol=1e-5)


def test_mode3_ragged_batch():
    lhs = rng.standard_normal((6, 2, 3)).astype(np.float32)
    rhs = rng.standard_normal((6, 3, 2)).astype(np.float32)
    out = lax.ragged_dot_general(lhs, rhs, GS, MODE3)
    np.testing.assert_allclose(out, _mode3_numpy(lhs, rhs, GS), rtol=1e-5, atol=1e-5)


def test_matches_ragged_dot_and_vmaps_over_group_sizes():
    lhs = rng.standard_normal((6, 4)).astype(np.float32)
    rhs = rng.standard_normal((3, 4, 5)).astype(np.float32)
    dn = R((((1,), (1,)), ((), ())), [0], [0])
    np.testing.assert_allclose(lax.ragged_dot_general(lhs, rhs, GS, dn),
                               lax.ragged_dot(lhs, rhs, GS), rtol=1e-6)
    sizes = np.array([[2, 0, 3], [1, 4, 1], [0, 0, 6]], np.int32)
    got = pyjax.vmap(lambda s: lax.ragged_dot_general(lhs, rhs, s, dn))(sizes)
    for i in range(3):
        np.testing.assert_allclose(got[i], _mode1_numpy(lhs[None], rhs[:, None], sizes[i])[0],
                                   rtol=1e-5, atol=1e-5)


@pytest.fixture
def x64():
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", False)


def test_gradients(x64):
    lhs = rng.standard_normal((1, 6, 2))
    rhs = rng.standard_normal((3, 1, 2, 2))
    check_grads(lambda a, b: lax.ragged_dot_general(a, b, GS, MODE1), (lhs, rhs), order=1,
                modes=("rev",))


def test_bad_input():
    lhs, rhs = jnp.ones((6, 4)), jnp.ones((3, 4, 5))
    with pytest.raises(TypeError, match="RaggedDotDimensionNumbers"):
        lax.ragged_dot_general(lhs, rhs, GS, (((1,), (1,)), ((), ())))
    with pytest.raises(ValueError, match="one group dimension of size 3"):
        lax.ragged_dot_general(lhs, rhs, GS, R((((1,), (1,)), ((), ())), [0], []))
    with pytest.raises(TypeError, match="integers"):
        lax.ragged_dot_general(lhs, rhs, GS.astype(np.float32),
                               R((((1,), (1,)), ((), ())), [0], [0]))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot_general(lhs, rhs, GS, R((((1,), (1,)), ((), ())), [0], [0]),
                               group_offset=jnp.zeros(1, jnp.int32))
