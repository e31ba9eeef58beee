"""gcd and lcm against NumPy (Euclid in a while_loop): signs, zeros, broadcasting, integer
dtypes, eager and under jit and vmap, and the non-integer error."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.test_util import check_array, ids

DTYPES = [np.dtype(d) for d in (np.int8, np.int32, np.uint8, np.uint32)]


def _eq(got, want, dtype):
    check_array(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_gcd_lcm(dtype):
    rng = np.random.default_rng(0)
    lo = 0 if dtype.kind == "u" else -11
    a = rng.integers(lo, 12, (4, 5)).astype(dtype)
    b = rng.integers(lo, 12, (5,)).astype(dtype)
    a[0, :2] = 0
    b[1] = 0
    _eq(jnp.gcd(a, b), np.gcd(a, b), dtype)
    _eq(jnp.lcm(a, b), np.lcm(a, b), dtype)
    _eq(pyjax.jit(jnp.gcd)(a, b), np.gcd(a, b), dtype)
    _eq(pyjax.jit(jnp.lcm)(a, b), np.lcm(a, b), dtype)


def test_gcd_lcm_values():
    a = np.array([0, 0, 7, 12, -18, 2 ** 20, 1071, 46368], np.int32)
    b = np.array([0, 5, 0, 8, 24, 2 ** 12 * 3, 462, 28657], np.int32)  # Fibonacci: many steps
    _eq(jnp.gcd(a, b), np.gcd(a, b), np.int32)
    _eq(jnp.lcm(a[:-1], b[:-1]), np.lcm(a[:-1], b[:-1]), np.int32)
    # Python scalars are weak: the array's dtype wins
    _eq(jnp.gcd(np.array([4, 6, 9], np.int8), 6), np.array([2, 6, 3]), np.int8)
    _eq(jnp.lcm(4, 6), 12, np.int32)
    _eq(jnp.gcd(np.int16(12), np.int32(18)), 6, np.int32)
    _eq(jnp.gcd(np.array([True, False]), np.array([True, True])), np.array([1, 1]), np.int32)


def test_gcd_vmap():
    a = np.array([12, 35, 0, 9], np.int32)
    b = np.array([18, 14, 3, 0], np.int32)
    _eq(pyjax.vmap(jnp.gcd)(a, b), np.gcd(a, b), np.int32)
    _eq(pyjax.vmap(jnp.lcm, in_axes=(0, None))(a, np.int32(4)), np.lcm(a, 4), np.int32)


def test_gcd_errors():
    with pytest.raises(ValueError, match="must be integers"):
        jnp.gcd(np.float32(2), 4)
    with pytest.raises(ValueError, match="must be integers"):
        jnp.lcm(np.array([1.5]), np.array([2]))
    with pytest.raises(TypeError, match="gcd requires ndarray"):
        jnp.gcd([1, 2], 2)
