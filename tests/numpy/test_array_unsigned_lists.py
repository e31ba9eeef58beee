"""Lists of Python ints with an explicit dtype convert as NumPy does: to that dtype."""
import numpy as np
import pytest

import pyjax.numpy as jnp


@pytest.mark.parametrize("values,dtype", [([2**31, 2**32 - 1], np.uint32),
                                          ([[0, 2**31]], np.uint32),
                                          ([2**15], np.uint16)])
def test_unsigned_list_above_int32_max_converts(values, dtype):
    out = jnp.array(values, dtype=dtype)
    np.testing.assert_array_equal(np.asarray(out), np.array(values, dtype))
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(jnp.asarray(values, dtype=dtype)),
                                  np.array(values, dtype))


def test_uint64_list_above_int64_max_converts(x64):
    values = [2**63, 2**64 - 1]
    out = jnp.array(values, dtype=jnp.uint64)
    assert out.dtype == np.uint64
    np.testing.assert_array_equal(np.asarray(out), np.array(values, np.uint64))


@pytest.mark.parametrize("values,dtype", [([2**32], np.uint32), ([-1], np.uint32),
                                          ([200], np.int8)])
def test_list_out_of_the_requested_dtype_raises(values, dtype):
    with pytest.raises(OverflowError, match=str(values[0])):
        np.array(values, dtype)  # the oracle raises too
    with pytest.raises(OverflowError, match=str(values[0])):
        jnp.array(values, dtype=dtype)


def test_list_without_dtype_still_checks_default_int():
    with pytest.raises(OverflowError, match="int32"):
        jnp.array([2**31])
