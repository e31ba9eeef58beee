"""Helpers shared by pyjax's tests (as ``jax._src.test_util``): test data and dtype names."""
import numpy as np


def ids(dts):
    """Readable pytest ids for a list of dtypes."""
    return [np.dtype(d).name for d in dts]


def rand_small_ints(shape, dtype, seed=0, lo=-5, hi=6):
    """Small integers (exact in every dtype, products included) of ``dtype``; booleans are
    fair coin flips, unsigned types take ``[0, hi)``, complex ones get an imaginary part too."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind == "u":
        return rng.integers(0, hi, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.integers(lo, hi, shape) + 1j * rng.integers(lo, hi, shape)).astype(dtype)
    return rng.integers(lo, hi, shape).astype(dtype)


def check_array(got, want, dtype=None, rtol=None):
    """``got`` is a pyjax Array with ``want``'s shape (and ``dtype`` when given) and its values:
    exactly, or to ``rtol``."""
    from pyjax import Array
    assert isinstance(got, Array), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    if rtol is None:
        np.testing.assert_array_equal(np.asarray(got), want)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol)
