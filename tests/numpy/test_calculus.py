"""diff / ediff1d / gradient / trapezoid / interp / unwrap against NumPy, under jit and vmap,
with derivatives checked by finite differences."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.test_util import check_grads

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.float16, np.float32, np.complex64]


def _close(got, want, rtol=1e-5):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got.astype(np.complex128 if got.dtype.kind == "c" else float),
                               np.asarray(want), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_diff_dtypes(dtype):
    x = (np.arange(24).reshape(2, 3, 4) ** 2 % 7).astype(dtype)
    for kw in [{}, {"n": 2, "axis": 1}, {"n": 0}, {"axis": 0, "prepend": x[:1]}]:
        want = np.diff(x, **kw)
        got = jnp.diff(x, **kw)
        assert got.dtype == want.dtype, (kw, got.dtype, want.dtype)
        _close(got, want)


def test_diff_prepend_append_scalars_jit_and_errors():
    x = np.array([1.0, 4.0, 9.0, 3.0], np.float32)
    f = pyjax.jit(lambda x: jnp.diff(x, n=2, prepend=0.0, append=x[:2]))
    _close(f(x), np.diff(x, n=2, prepend=0.0, append=x[:2]))
    with pytest.raises(ValueError, match="non-negative"):
        jnp.diff(x, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        jnp.diff(np.float32(1))


def test_ediff1d():
    x = np.array([[1, 5], [2, 9]], np.int32)
    _close(jnp.ediff1d(x), np.ediff1d(x))
    got = jnp.ediff1d(x, to_end=np.array([7, 8]), to_begin=-1)
    _close(got, np.ediff1d(x, to_end=[7, 8], to_begin=-1))
    assert jnp.ediff1d(np.zeros(0)).shape == (0,)


def test_gradient_uniform_and_coordinates():
    m = np.random.default_rng(0).random((3, 5)).astype(np.float32)
    for got, want in zip(jnp.gradient(m), np.gradient(m)):
        _close(got, want)
    xs = np.array([0.0, 1.0, 3.0, 3.5, 7.0], np.float32)
    _close(jnp.gradient(m, 2.0, xs)[1], np.gradient(m, 2.0, xs)[1])
    _close(jnp.gradient(m, xs, axis=1), np.gradient(m, xs, axis=1))
    _close(jnp.gradient(np.arange(4)), np.gradient(np.arange(4)))
    with pytest.raises(ValueError, match="too small"):
        jnp.gradient(np.zeros((1, 3)))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(m, edge_order=2)


def test_trapezoid():
    y = np.random.default_rng(1).random((3, 4)).astype(np.float32)
    x = np.array([0.0, 1.0, 3.0, 7.0], np.float32)
    _close(jnp.trapezoid(y), np.trapezoid(y))
    _close(jnp.trapezoid(y, dx=0.5, axis=0), np.trapezoid(y, dx=0.5, axis=0))
    _close(jnp.trapezoid(y, x), np.trapezoid(y, x))
    x2 = np.cumsum(y, axis=0)
    _close(jnp.trapezoid(y, x2, axis=0), np.trapezoid(y, x2, axis=0))
    _close(jnp.trapezoid(np.arange(5)), np.trapezoid(np.arange(5)))


def test_interp_values_period_and_jit():
    x = np.linspace(-1, 5, 13).astype(np.float32)
    xp = np.array([0, 1, 2, 2, 4], np.float32)  # a repeated point
    fp = np.array([1, 3, 2, 5, 0], np.float32)
    _close(jnp.interp(x, xp, fp), np.interp(x, xp, fp))
    _close(jnp.interp(x, xp, fp, left=-7, right=9), np.interp(x, xp, fp, left=-7, right=9))
    _close(jnp.interp(x, xp, fp, period=3), np.interp(x, xp, fp, period=3))
    fc = (fp + 1j * fp[::-1]).astype(np.complex64)
    _close(jnp.interp(x, xp, fc), np.interp(x, xp, fc))
    _close(pyjax.jit(jnp.interp)(x, xp, fp), np.interp(x, xp, fp))
    _close(jnp.interp(x, xp[:1], fp[:1]), np.interp(x, xp[:1], fp[:1]))
    with pytest.raises(ValueError, match="same length"):
        jnp.interp(x, xp, fp[:2])
    with pytest.raises(ValueError, match="period"):
        jnp.interp(x, xp, fp, left=0, period=1)


def test_unwrap():
    ph = np.cumsum(np.random.default_rng(2).normal(size=(2, 9)) * 3, axis=1)
    _close(jnp.unwrap(ph), np.unwrap(ph), rtol=1e-5)
    _close(jnp.unwrap(ph, discont=4.0, axis=0), np.unwrap(ph, discont=4.0, axis=0))
    _close(jnp.unwrap(ph, period=5.0), np.unwrap(ph, period=5.0), rtol=1e-5)


def test_vmap_matches_loop():
    xs = np.random.default_rng(3).random((4, 6)).astype(np.float32)
    xp = np.linspace(0, 1, 5).astype(np.float32)
    for f in (lambda r: jnp.diff(r, n=2), lambda r: jnp.trapezoid(r),
              lambda r: jnp.interp(r, xp, xp ** 2), lambda r: jnp.gradient(r)):
        got = pyjax.vmap(f)(xs)
        _close(got, np.stack([np.asarray(f(r)) for r in xs]))


def test_grads(x64):
    rng = np.random.default_rng(4)
    y = rng.random((3, 5))
    xp = np.array([0.0, 0.5, 1.5, 2.0, 3.0])
    check_grads(lambda y: jnp.diff(y, n=2, axis=1), (y,), order=2)
    check_grads(lambda y: jnp.gradient(y, xp, axis=1), (y,), order=1)
    check_grads(lambda y: jnp.trapezoid(y, xp), (y,), order=1)
    check_grads(lambda x, fp: jnp.interp(x, xp, fp), (np.array([0.2, 1.1, 2.7]), y[0]),
                order=1)
    check_grads(jnp.unwrap, (np.cumsum(rng.random(6) * 2),), order=1)
