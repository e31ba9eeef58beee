"""x.sharding, SingleDeviceSharding's API, and device_put / jit with it."""
import pickle

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.sharding import Sharding, SingleDeviceSharding


def test_array_sharding_is_single_device():
    d0 = pyjax.devices()[0]
    x = jnp.arange(6.0).reshape(2, 3)
    s = x.sharding
    assert isinstance(s, SingleDeviceSharding) and isinstance(s, Sharding)
    assert s == SingleDeviceSharding(d0) and hash(s) == hash(SingleDeviceSharding(d0))
    assert s.device_set == {d0} and s.addressable_devices == {d0}
    assert s.is_fully_replicated and s.is_fully_addressable
    assert s.num_devices == 1 and s.memory_kind == "device"
    assert s.shard_shape((2, 3)) == (2, 3)
    assert s.devices_indices_map((2, 3)) == {d0: (slice(None), slice(None))}
    assert s.addressable_devices_indices_map((4,)) == {d0: (slice(None),)}
    assert repr(s) == f"SingleDeviceSharding(device={d0!r}, memory_kind=device)"
    assert x.devices() == {d0} and isinstance(x.devices(), set)
    assert x.is_fully_replicated and x.is_fully_addressable


def test_equality_and_hash_by_device():
    d = pyjax.devices()
    assert SingleDeviceSharding(d[1]) != SingleDeviceSharding(d[2])
    assert len({SingleDeviceSharding(d[1]), SingleDeviceSharding(d[1]),
                SingleDeviceSharding(d[2])}) == 2
    assert SingleDeviceSharding(d[1]) != d[1]
    assert SingleDeviceSharding(d[1], memory_kind="device") == SingleDeviceSharding(d[1])
    assert SingleDeviceSharding(d[1]).with_memory_kind("device") == SingleDeviceSharding(d[1])


def test_bad_arguments():
    d0 = pyjax.devices()[0]
    with pytest.raises(TypeError, match="Device"):
        SingleDeviceSharding(0)
    with pytest.raises(NotImplementedError, match="pinned_host"):
        SingleDeviceSharding(d0, memory_kind="pinned_host")
    with pytest.raises(ValueError, match="Got memory kind: hbm"):
        SingleDeviceSharding(d0, memory_kind="hbm")


def test_device_put_with_a_sharding():
    d3 = pyjax.devices()[3]
    x = pyjax.device_put(np.arange(4, dtype=np.float32), SingleDeviceSharding(d3))
    assert x.devices() == {d3} and x.committed
    assert x.sharding == SingleDeviceSharding(d3)
    np.testing.assert_array_equal(x, np.arange(4))
    y = pyjax.device_put(jnp.ones(2), SingleDeviceSharding(d3))
    assert y.sharding.device_set == {d3}
    assert (x * 2).sharding == SingleDeviceSharding(d3)


def test_sharding_under_jit_is_the_outputs():
    d2 = pyjax.devices()[2]
    x = pyjax.device_put(jnp.ones(3), d2)
    assert pyjax.jit(lambda a: a + 1)(x).sharding == SingleDeviceSharding(d2)


def test_pickle_round_trip_is_refused_like_devices():
    # Devices cannot be pickled, so neither can their shardings
    with pytest.raises(TypeError):
        pickle.dumps(SingleDeviceSharding(pyjax.devices()[0]))
