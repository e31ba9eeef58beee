"""Array: host conversion, repr, immutability, metadata, every dtype through the device."""
import pickle

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float16,
          ml_dtypes.bfloat16, np.float32, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3)])
def test_round_trip_every_dtype_and_shape(dtype, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    a = pyjax.device_put(x)
    assert a.shape == shape and a.dtype == np.dtype(dtype)
    assert a.ndim == len(shape) and a.size == x.size
    assert a.itemsize == np.dtype(dtype).itemsize and a.nbytes == x.nbytes
    np.testing.assert_array_equal(np.asarray(a), x)


def test_64_bit_inputs_are_canonicalized_without_x64():
    a = pyjax.device_put(np.arange(3, dtype=np.int64))
    assert a.dtype == np.int32
    b = pyjax.device_put(np.ones(2, np.float64))
    assert b.dtype == np.float32


def test_64_bit_types_with_x64(x64):
    for dt in (np.int64, np.uint64, np.float64, np.complex128):
        x = np.array([1, 2, 3], dt)
        a = pyjax.device_put(x)
        assert a.dtype == dt
        np.testing.assert_array_equal(np.asarray(lax.add(a, a)), x + x)


def test_repr_like_jax():
    assert repr(pyjax.device_put(np.arange(3, dtype=np.int32))) == \
        "Array([0, 1, 2], dtype=int32)"
    assert repr(lax.add(1.0, 1.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(pyjax.device_put(np.array([True, False]))) == \
        "Array([ True, False], dtype=bool)"
    r = repr(pyjax.device_put(np.ones((2, 2), np.float32)))
    assert r == "Array([[1., 1.],\n       [1., 1.]], dtype=float32)"
    assert "bfloat16" in repr(pyjax.device_put(np.ones(2, ml_dtypes.bfloat16)))


def test_immutable_and_unhashable():
    a = pyjax.device_put(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match=r"\.at\["):
        a[0] = 5
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    with pytest.raises(TypeError, match="unhashable"):
        {a: 1}


def test_scalar_conversions_len_iter():
    a = pyjax.device_put(np.array([1.5, 2.5, 3.5], np.float32))
    assert len(a) == 3
    rows = list(a)
    assert all(r.shape == () for r in rows) and float(rows[2]) == 3.5
    s = pyjax.device_put(np.float32(2.5))
    assert float(s) == 2.5 and int(s) == 2 and bool(s) and complex(s) == 2.5
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(TypeError):
        iter(s)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)
    assert a.tolist() == [1.5, 2.5, 3.5] and s.item() == 2.5
    i = pyjax.device_put(np.int32(2))
    assert [10, 20, 30][i] == 30
    with pytest.raises(TypeError):
        [1, 2][s]
    assert f"{s:.2f}" == "2.50"


def test_block_until_ready_devices_pickle():
    a = lax.sin(pyjax.device_put(np.ones(3, np.float32)))
    assert a.block_until_ready() is a
    assert a.devices() == {pyjax.devices()[0]} and a.device == pyjax.devices()[0]
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    assert isinstance(a, pyjax.Array)


def test_async_results_and_errors_are_values():
    x = pyjax.device_put(np.arange(1000, dtype=np.float32))
    y = x
    for _ in range(50):            # a chain of dispatches that does not wait
        y = lax.add(y, 1.0)
    np.testing.assert_array_equal(np.asarray(y), np.arange(1000) + 50)
