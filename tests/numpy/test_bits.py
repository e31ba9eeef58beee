"""packbits / unpackbits / spacing against NumPy."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp


def _eq(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)


def test_packbits_unpackbits():
    x = np.random.default_rng(0).integers(0, 3, (3, 11)).astype(np.int8)
    u = np.random.default_rng(1).integers(0, 256, (2, 3)).astype(np.uint8)
    for bitorder in ["big", "little"]:
        for axis in [None, 0, 1]:
            _eq(jnp.packbits(x, axis=axis, bitorder=bitorder),
                np.packbits(x, axis=axis, bitorder=bitorder))
            for count in [None, 5, -3, 30]:
                _eq(jnp.unpackbits(u, axis=axis, count=count, bitorder=bitorder),
                    np.unpackbits(u, axis=axis, count=count, bitorder=bitorder))
    _eq(pyjax.jit(jnp.packbits)(x > 0), np.packbits(x > 0))
    _eq(jnp.unpackbits(jnp.packbits(x > 0), count=x.size).reshape(x.shape), (x > 0).astype(np.uint8))
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(x)
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="little"):
        jnp.packbits(x, bitorder="middle")


def test_spacing(x64):
    for dtype in [np.float32, np.float64]:
        v = np.array([1, -1, 1e-3, -2.5e4, 100, 7.5], dtype)
        got = jnp.spacing(v)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), np.spacing(v))
    assert jnp.spacing(np.int32(3)).dtype == np.float32  # JAX 0.10.2 (observed)
    assert jnp.spacing(np.int64(3)).dtype == np.float64
    # (float16: NumPy's own spacing of a negative half is the gap towards zero, and XLA on
    # CPU flushes the subnormal spacing(0) to zero; neither is compared here)
