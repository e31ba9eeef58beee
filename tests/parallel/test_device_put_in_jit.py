"""`jax.device_put` under a trace binds `device_put_p` (as JAX): to a NamedSharding or a
PartitionSpec it lays the value out like a sharding constraint; to a Device it is the
identity (JAX 0.10.2 keeps the result on the program's device)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = {"device_put"}
JVP_TESTED = {"device_put"}
TRANSPOSE_TESTED = {"device_put"}
BATCH_TESTED = {"device_put"}

X = np.arange(16, dtype=np.float32).reshape(8, 2)


@pytest.fixture(scope="module")
def mesh():
    return pyjax.make_mesh((4, 2), ("d", "e"))


def test_device_target_is_bound_and_is_the_identity():
    dev = pyjax.devices()[3]
    f = lambda a: pyjax.device_put(a * 2, dev)  # noqa: E731
    jaxpr = pyjax.make_jaxpr(f)(X)
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive is pyjax.lax.device_put_p]
    assert eqn.params["devices"] == (dev,) and eqn.params["srcs"] == (None,)
    y = pyjax.jit(f)(X)
    np.testing.assert_array_equal(np.asarray(y), X * 2)
    assert y.sharding.device_set == {pyjax.devices()[0]}  # JAX's: the program's device


def test_named_sharding_target_lays_the_result_out(mesh):
    s = NamedSharding(mesh, P("d", "e"))
    y = pyjax.jit(lambda a: pyjax.device_put(jnp.sin(a), s))(X)
    assert y.sharding == s and str(pyjax.typeof(y)) == "float32[8@d,2@e]"
    np.testing.assert_allclose(np.asarray(y), np.sin(X), rtol=1e-6)
    assert {sh.data.shape for sh in y.addressable_shards} == {(2, 1)}
    with pyjax.sharding.set_mesh(mesh):  # a PartitionSpec on the current mesh
        z = pyjax.jit(lambda a: pyjax.device_put(a + 1, P(None, "e")))(X)
    assert z.sharding.spec == P(None, "e")
    np.testing.assert_array_equal(np.asarray(z), X + 1)


def test_gradients_and_vmap(mesh, x64):
    s = NamedSharding(mesh, P("d"))
    f = lambda a: jnp.sum(jnp.sin(pyjax.device_put(a, s)) ** 2)  # noqa: E731
    x = np.random.default_rng(0).normal(size=(8, 2))
    check_grads(f, (x,), order=1, modes=["fwd", "rev"])
    g = pyjax.jit(pyjax.grad(f))(x)
    np.testing.assert_allclose(np.asarray(g), np.sin(2 * x), rtol=1e-12)
    xs = np.random.default_rng(1).normal(size=(3, 8, 2))
    h = lambda a: pyjax.device_put(a * 3, s)  # noqa: E731
    jaxpr = pyjax.make_jaxpr(pyjax.vmap(h))(xs)
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive is pyjax.lax.device_put_p]
    assert eqn.params["devices"][0].spec == P(None, "d", None)  # the batch dimension is not split
    out = pyjax.jit(pyjax.vmap(h))(xs)
    np.testing.assert_allclose(np.asarray(out), np.stack([x_ * 3 for x_ in xs]))
    eager = pyjax.vmap(h)(xs)  # bound on concrete values: the transfer itself
    assert eager.sharding.spec == P(None, "d", None)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(out))


def test_refused_targets_name_themselves(mesh):
    sds = SingleDeviceSharding(pyjax.devices()[2])
    with pytest.raises(NotImplementedError, match="SingleDeviceSharding"):
        pyjax.jit(lambda a: pyjax.device_put(a, sds))(X)
    with pytest.raises(ValueError):  # 6 rows do not split over 4 devices
        pyjax.jit(lambda a: pyjax.device_put(a, NamedSharding(mesh, P("d"))))(X[:6])
