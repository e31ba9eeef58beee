"""jnp and device options that JAX does not support (or pyjax not yet) raise; the device
helpers honour their arguments."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.sharding import SingleDeviceSharding


def test_out_is_not_implemented():
    x = jnp.arange(6.0).reshape(2, 3)
    o = jnp.zeros(3)
    for fn in (lambda: jnp.sum(x, axis=0, out=o), lambda: jnp.mean(x, out=o),
               lambda: jnp.argmax(x, out=o), lambda: jnp.cumsum(x, out=o),
               lambda: jnp.median(x, out=o), lambda: x.sum(out=o),
               lambda: jnp.round(x, out=o), lambda: jnp.einsum("ij->j", x, out=o)):
        with pytest.raises(NotImplementedError, match="'out' argument"):
            fn()


def test_meshgrid_copy_false():
    a, b = jnp.arange(2), jnp.arange(3)
    with pytest.raises(ValueError, match="only supports copy=True"):
        jnp.meshgrid(a, b, copy=False)
    for got, want in zip(jnp.meshgrid(a, b, copy=True), np.meshgrid(np.arange(2), np.arange(3))):
        np.testing.assert_array_equal(got, want)


def test_median_overwrite_input():
    x = jnp.array([3.0, 1.0, 2.0])
    for fn in (jnp.median, jnp.nanmedian):
        with pytest.raises(ValueError, match="overwrite_input=True"):
            fn(x, overwrite_input=True)
        assert float(fn(x, overwrite_input=False)) == 2.0


def test_sort_kind():
    x = jnp.array([3, 1, 2])
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(x, kind="heapsort")
    with pytest.raises(TypeError, match="'kind' argument to argsort"):
        jnp.argsort(x, kind="stable")
    np.testing.assert_array_equal(jnp.sort(x, stable=False), [1, 2, 3])
    np.testing.assert_array_equal(jnp.argsort(x, kind=None), [1, 2, 0])


def test_reshape_orders():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(jnp.reshape(x, (3, 2), order="F"),
                                  np.reshape(x, (3, 2), order="F"))
    np.testing.assert_array_equal(jnp.ravel(x, order="F"), np.ravel(x, order="F"))
    with pytest.raises(NotImplementedError, match="order='A'"):
        jnp.reshape(x, (3, 2), order="A")
    key = pyjax.random.key(0)
    keys = pyjax.random.split(key, 4)
    assert keys.reshape(2, 2).shape == (2, 2)
    with pytest.raises(NotImplementedError, match="order='F'"):
        keys.reshape(2, 2, order="F")


def test_device_put_options():
    d = pyjax.devices()
    x = jnp.arange(3.0)
    y = pyjax.device_put(x, may_alias=False)
    assert y._buf is not x._buf
    x.delete()
    np.testing.assert_array_equal(y, [0.0, 1.0, 2.0])  # a copy of its own
    a = jnp.arange(3.0) + 1.0
    b = pyjax.device_put(a, d[2], donate=True)
    assert a.is_deleted() and b.devices() == {d[2]}
    np.testing.assert_array_equal(b, [1.0, 2.0, 3.0])
    c = jnp.ones(2)
    e = pyjax.device_put(c, donate=True)  # same place: still a buffer of its own
    assert c.is_deleted() and not e.is_deleted()
    np.testing.assert_array_equal(e, [1.0, 1.0])
    p, q = jnp.ones(2), jnp.zeros(2)
    out = pyjax.device_put((p, q), SingleDeviceSharding(d[1]), donate=(True, False))
    assert p.is_deleted() and not q.is_deleted() and out[0].devices() == {d[1]}
    with pytest.raises(NotImplementedError, match="src"):
        pyjax.device_put(q, d[1], src=d[0])
    with pytest.raises(TypeError, match="Device or a Sharding"):
        pyjax.device_put(q, "cpu")
    with pytest.raises(TypeError, match="Device or a Sharding"):
        pyjax.device_put(q, 1)


def test_device_queries():
    assert pyjax.local_devices() == pyjax.devices()
    assert pyjax.local_devices(process_index=1) == []
    assert pyjax.local_devices(host_id=0) == pyjax.devices()
    assert pyjax.local_device_count() == pyjax.device_count() == 8
    assert pyjax.process_index() == 0 and pyjax.process_count() == 1
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        pyjax.process_index("tpu")
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        pyjax.local_devices(backend="tpu")


def test_einsum_optimize_names():
    a = np.arange(6.0).reshape(2, 3)
    for opt in ("auto", "greedy", "optimal", True, False, None):
        np.testing.assert_allclose(jnp.einsum("ij,jk->ik", a, a.T, optimize=opt), a @ a.T)
    with pytest.raises(ValueError, match="optimize"):
        jnp.einsum("ij,jk->ik", a, a.T, optimize="nonsense")
