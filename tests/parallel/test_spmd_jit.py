"""jit of arrays laid out over a mesh: one SPMD program, partitioned by XLA, run with one
Execute; the seeds' data-parallel example gives one device's gradients."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P, set_mesh
from pyjax.test_util import count_compiles

RNG = np.random.default_rng(2)


def loss_fn(params, batch):
    inputs, targets = batch
    x = inputs
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - targets) ** 2)


def _mlp(sizes):
    return [(jnp.asarray(RNG.normal(size=(m, n)).astype(np.float32) / np.sqrt(m)),
             jnp.asarray(RNG.normal(size=(n,)).astype(np.float32) * 0.1))
            for m, n in zip(sizes[:-1], sizes[1:])]


def test_seeds_example_matches_one_device():
    params = _mlp([16, 32, 32, 4])
    inputs = jnp.asarray(RNG.normal(size=(64, 16)).astype(np.float32))
    targets = jnp.asarray(RNG.normal(size=(64, 4)).astype(np.float32))
    want = pyjax.jit(pyjax.grad(loss_fn))(params, (inputs, targets))
    # verbatim, except that the mesh is set for this test only
    mesh = pyjax.make_mesh((8,), ('data',), axis_types=(AxisType.Explicit,))
    with set_mesh(mesh):
        inputs, targets = pyjax.device_put((inputs, targets), P('data'))
        grad_fn = pyjax.jit(pyjax.grad(loss_fn))
        with count_compiles() as n:
            grads = grad_fn(params, (inputs, targets))
            grads2 = grad_fn(params, (inputs, targets))
        assert n() == 1
    assert inputs.sharding.spec == P('data') and inputs.addressable_shards[0].data.shape == (8, 16)
    for g, w, g2 in zip(pyjax.tree.leaves(grads), pyjax.tree.leaves(want),
                        pyjax.tree.leaves(grads2)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(g2))
        assert g.is_fully_replicated  # replicated parameters: replicated gradients
        assert g.sharding.mesh == mesh


def test_results_follow_inputs_and_out_shardings():
    mesh = pyjax.make_mesh((4, 2), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    xs = pyjax.device_put(x, NamedSharding(mesh, P("a", "b")))
    f = pyjax.jit(lambda x: (jnp.sin(x) * 2, x.sum(0), x @ x.T))
    y, s, m = f(xs)
    np.testing.assert_allclose(np.asarray(y), np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(s), x.sum(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(m), x @ x.T, rtol=1e-5)
    assert y.sharding.spec == P("a", "b")
    for sh in y.addressable_shards:
        np.testing.assert_allclose(np.asarray(sh.data), (np.sin(x) * 2)[sh.index], rtol=1e-6)
    g = pyjax.jit(lambda x: x + 1, in_shardings=NamedSharding(mesh, P("a")),
                  out_shardings=NamedSharding(mesh, P(None, "b")))
    out = g(x)  # a host array is laid out as in_shardings says
    assert out.sharding.spec == P(None, "b")
    assert out.addressable_shards[1].data.shape == (8, 4)
    np.testing.assert_allclose(np.asarray(out), x + 1)
    with set_mesh(mesh):
        h = pyjax.jit(lambda x, y: x * y, in_shardings=(P("a"), P()), out_shardings=P("a"))
        np.testing.assert_allclose(np.asarray(h(x, x)), x * x)


def test_errors():
    m1 = pyjax.make_mesh((8,), ("d",))
    m2 = pyjax.make_mesh((4, 2), ("d", "e"))
    a = pyjax.device_put(np.ones(8), NamedSharding(m1, P("d")))
    b = pyjax.device_put(np.ones(8), NamedSharding(m2, P("d")))
    with pytest.raises(ValueError, match="incompatible devices"):
        pyjax.jit(lambda a, b: a + b)(a, b)
    with pytest.raises(ValueError, match="divisible by 8"):
        pyjax.jit(lambda x: x, in_shardings=NamedSharding(m1, P("d")))(np.ones(6))
    with pytest.raises(ValueError, match="no mesh"):
        pyjax.jit(lambda x: x, in_shardings=P("d"))(np.ones(8))


def test_with_sharding_constraint():
    from pyjax import lax
    mesh = pyjax.make_mesh((4, 2), ("a", "b"))
    col = NamedSharding(mesh, P(None, "b"))
    x = RNG.normal(size=(8, 8)).astype(np.float32)
    xs = pyjax.device_put(x, NamedSharding(mesh, P("a")))
    f = pyjax.jit(lambda x: lax.with_sharding_constraint(jnp.sin(x) @ x, col))
    y = f(xs)
    assert y.sharding == col  # a constrained result keeps the constraint's layout
    np.testing.assert_allclose(np.asarray(y), np.sin(x) @ x, rtol=1e-4, atol=1e-5)
    # linear: its JVP, transpose and batching keep values (single device: the identity)
    g = pyjax.grad(lambda v: jnp.sum(lax.with_sharding_constraint(v, col) ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), 2 * x, rtol=1e-6)
    gs = pyjax.jit(pyjax.grad(lambda v: jnp.sum(lax.with_sharding_constraint(v, col) ** 2)))(xs)
    np.testing.assert_allclose(np.asarray(gs), 2 * x, rtol=1e-6)
    b = pyjax.vmap(lambda v: lax.with_sharding_constraint(v * 2, NamedSharding(mesh, P("a"))),
                   in_axes=1)(x)
    np.testing.assert_allclose(np.asarray(b), 2 * x.T)
    bs = pyjax.jit(pyjax.vmap(lambda v: lax.with_sharding_constraint(
        v * 2, NamedSharding(mesh, P("a"))), in_axes=1))(xs)
    np.testing.assert_allclose(np.asarray(bs), 2 * x.T)
    # single-device arguments: the constraint makes the call an SPMD program on its mesh
    h = pyjax.jit(lambda v: lax.with_sharding_constraint(v * 2, col))
    for _ in range(2):
        out = h(jnp.asarray(x))
        assert out.sharding == col
        np.testing.assert_allclose(np.asarray(out), 2 * x)
    z = lax.with_sharding_constraint(x, NamedSharding(mesh, P("a", "b")))  # eagerly: placed
    assert z.sharding.spec == P("a", "b")
    with pytest.raises(ValueError, match="divisible by 4"):
        pyjax.jit(lambda v: lax.with_sharding_constraint(v, NamedSharding(mesh, P("a"))))(
            np.ones(6))



def test_vmap_of_with_sharding_constraint_lays_out_the_batch():
    # JAX 0.10.2 (observed, mesh ('x': 4) Auto): eager vmap, as jit(vmap), gives a result laid
    # out with vmap's dimension unsplit, for in_axes 0 and 1 alike (P(None, 'x')); a spec of
    # no split gives P(); a spec longer than the function's rank is a ValueError
    from pyjax import lax
    from pyjax.sharding import Mesh
    mesh = Mesh(np.array(pyjax.devices()[:4]), ("x",))
    s = NamedSharding(mesh, P("x"))
    x = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    want = NamedSharding(mesh, P(None, "x"))
    for in_axes, ref in [(0, x), (1, x.T)]:
        f = lambda v: lax.with_sharding_constraint(v * 2, s)  # noqa: E731
        for out in [pyjax.vmap(f, in_axes=in_axes)(x),
                    pyjax.jit(pyjax.vmap(f, in_axes=in_axes))(x)]:
            assert out.sharding == want, (in_axes, out.sharding)
            np.testing.assert_array_equal(np.asarray(out), 2 * ref)
    whole = NamedSharding(mesh, P())
    out = pyjax.vmap(lambda v: lax.with_sharding_constraint(v, whole))(x)
    assert out.sharding == whole and out.sharding.spec == P()
    np.testing.assert_array_equal(np.asarray(out), x)
    too_long = NamedSharding(mesh, P(None, "x"))
    for in_axes in (0, 1):
        with pytest.raises(ValueError, match="only valid for values of rank at least 2, but "
                                             "was applied to a value of rank 1"):
            pyjax.vmap(lambda v: lax.with_sharding_constraint(v, too_long), in_axes=in_axes)(x)

TESTED_PRIMITIVES = {"sharding_constraint"}
JVP_TESTED = {"sharding_constraint"}
TRANSPOSE_TESTED = {"sharding_constraint"}
BATCH_TESTED = {"sharding_constraint"}


def test_donation_of_sharded_arrays():
    mesh = pyjax.make_mesh((8,), ("data",))
    x = pyjax.device_put(np.arange(16.0, dtype=np.float32), NamedSharding(mesh, P("data")))
    y = pyjax.jit(lambda v: v + 1, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(y), np.arange(16.0) + 1)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x + 1)
    # refused before Execute: later programs on the mesh still run (they hung otherwise)
    np.testing.assert_array_equal(np.asarray(y * 2), (np.arange(16.0) + 1) * 2)


def test_replicated_copies_are_reused_but_never_outlive_their_array():
    mesh = pyjax.make_mesh((8,), ("data",))
    xs = pyjax.device_put(np.ones((8, 2), np.float32), NamedSharding(mesh, P("data")))
    w = jnp.asarray(np.full((2,), 3.0, np.float32))
    f = pyjax.jit(lambda w, x: x * w)
    np.testing.assert_array_equal(np.asarray(f(w, xs)), 3.0)
    np.testing.assert_array_equal(np.asarray(f(w, xs)), 3.0)  # the cached copies
    pyjax.jit(lambda v: v + 1, donate_argnums=0)(w)  # w is gone
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(f(w, xs))
