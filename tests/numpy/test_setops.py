"""isin / union1d / intersect1d / setdiff1d / setxor1d against NumPy: every isin method,
NaNs, empty inputs, eager (exact) and under jit with size= (padded), and the missing-size
error."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.errors import ConcretizationTypeError

A = np.array([[5, 1, 3], [3, 7, 1]])
B = np.array([3, 4, 5, 6, 5])
SETOPS = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]


def _eq(got, want):
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.float16, np.complex64])
def test_isin_dtypes_and_methods(dtype):
    a, b = A.astype(dtype), B.astype(dtype)
    for method in ["auto", "compare_all", "binary_search", "sort"]:
        for invert in (False, True):
            got = jnp.isin(a, b, invert=invert, method=method)
            assert got.dtype == np.bool_
            _eq(got, np.isin(a, b, invert=invert))


def test_isin_nan_empty_scalar_and_jit():
    x = np.array([1.0, np.nan, 2.0])
    _eq(jnp.isin(x, np.array([np.nan, 2.0]), method="binary_search"),
        np.isin(x, [np.nan, 2.0]))
    _eq(jnp.isin(x, np.zeros(0)), np.isin(x, np.zeros(0)))
    _eq(jnp.isin(3, B), np.isin(3, B))
    _eq(pyjax.jit(jnp.isin)(A, B), np.isin(A, B))
    with pytest.raises(ValueError, match="method"):
        jnp.isin(A, B, method="hash")


@pytest.mark.parametrize("name", SETOPS)
def test_setops_eager(name):
    for a, b in [(A, B), (A.astype(np.float32), np.array([np.nan, 1.0, np.nan])),
                 (np.zeros(0, np.int32), B), (np.array([2, 2, 1]), np.zeros(0, np.int32))]:
        _eq(getattr(jnp, name)(a, b), getattr(np, name)(a, b))


@pytest.mark.parametrize("name", SETOPS)
def test_setops_jit_size_pads(name):
    want = getattr(np, name)(A, B)
    f = pyjax.jit(lambda a, b: getattr(jnp, name)(a, b, size=6))
    got = np.asarray(f(A, B))
    _eq(got[:len(want)], want)
    fill = want.min() if len(want) else 0
    _eq(got[len(want):], np.full(6 - len(want), fill))
    got = pyjax.jit(lambda a, b: getattr(jnp, name)(a, b, size=1, fill_value=-9))(A, B)
    _eq(got, want[:1])
    with pytest.raises(ConcretizationTypeError, match=f"size argument of jnp.{name}"):
        pyjax.jit(getattr(jnp, name))(A, B)


def test_assume_unique_and_intersect_indices():
    a, b = np.array([7, 1, 5, 3]), np.array([5, 2, 3, 9])
    _eq(jnp.setdiff1d(a, b, assume_unique=True), np.setdiff1d(a, b, assume_unique=True))
    a = np.array([4, 1, 3, 1, 4, 2])
    b = np.array([3, 4, 4, 8])
    for got, want in zip(jnp.intersect1d(a, b, return_indices=True),
                         np.intersect1d(a, b, return_indices=True)):
        _eq(got, want)
    got = pyjax.jit(lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=3))(a, b)
    _eq(got[0], [3, 4, 3])
    _eq(got[1], [2, 0, 6])  # indices padded with an out-of-bound index, as in JAX
    _eq(got[2], [0, 1, 4])
