"""pmap on 8 virtual devices: collectives against their NumPy definitions, derivatives
against finite differences, and the options."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.sharding import NamedSharding, PartitionSpec as P
from pyjax.test_util import check_grads, count_compiles

N = 8
RNG = np.random.default_rng(0)
X = RNG.normal(size=(N, 3)).astype(np.float32)
RING = [(i, (i + 1) % N) for i in range(N)]


def test_psum_golden():
    out = pyjax.pmap(lambda x: lax.psum(x, "i"), axis_name="i")(jnp.arange(8.0))
    np.testing.assert_array_equal(np.asarray(out), [28.0] * 8)
    # JAX 0.10.2 (observed): a pmap result's sharding is a NamedSharding splitting dimension 0
    # over a one-axis Auto mesh named by axis_name ('_internal_pmap_axis_name' without one)
    s = out.sharding
    assert type(s) is NamedSharding and s.spec == P("i") and s.mesh.axis_names == ("i",)
    assert s.mesh.devices.tolist() == pyjax.devices()[:8] and not s.is_fully_replicated
    assert repr(s) == ("NamedSharding(mesh=Mesh('i': 8, axis_types=(Auto,)), spec=P('i',), "
                       "memory_kind=device)")
    assert s.devices_indices_map((8,))[pyjax.devices()[5]] == (slice(5, 6),)
    assert len(out.addressable_shards) == 8
    # JAX 0.10.2 (observed): a shard of a pmap result keeps the mapped axis, size 1
    assert out.addressable_shards[5].data.shape == (1,)
    assert out.addressable_shards[5].index == (slice(5, 6),)
    np.testing.assert_array_equal(out.addressable_shards[5].data, [28.0])


COLLECTIVES = {
    "psum": (lambda v: lax.psum(v, "i"), lambda x: np.broadcast_to(x.sum(0), x.shape)),
    "pmean": (lambda v: lax.pmean(v, "i"), lambda x: np.broadcast_to(x.mean(0), x.shape)),
    "pmax": (lambda v: lax.pmax(v, "i"), lambda x: np.broadcast_to(x.max(0), x.shape)),
    "pmin": (lambda v: lax.pmin(v, "i"), lambda x: np.broadcast_to(x.min(0), x.shape)),
    "all_gather": (lambda v: lax.all_gather(v, "i"), lambda x: np.stack([x] * N)),
    "all_gather_tiled": (lambda v: lax.all_gather(v, "i", axis=0, tiled=True),
                         lambda x: np.stack([x.reshape(-1)] * N)),
    "ppermute": (lambda v: lax.ppermute(v, "i", RING), lambda x: np.roll(x, 1, axis=0)),
    "ppermute_partial": (lambda v: lax.ppermute(v, "i", RING[:3]),
                         lambda x: np.concatenate([np.zeros_like(x[:1]), x[:3],
                                                   np.zeros_like(x[4:])])),
    "axis_index": (lambda v: lax.axis_index("i") + 0 * v[0].astype(jnp.int32),
                   lambda x: np.arange(N)),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_matches_numpy(name):
    f, ref = COLLECTIVES[name]
    out = pyjax.pmap(f, axis_name="i")(X)
    np.testing.assert_allclose(np.asarray(out), ref(X), rtol=1e-6)


def test_psum_scatter_and_all_to_all_match_numpy():
    x = RNG.normal(size=(N, N, 2)).astype(np.float32)  # device i holds x[i]
    out = pyjax.pmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(out), x.sum(0), rtol=1e-5)  # device i: row i
    x2 = RNG.normal(size=(N, 2 * N, 3)).astype(np.float32)
    out = pyjax.pmap(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(x2)
    np.testing.assert_allclose(np.asarray(out), x2.sum(0).reshape(N, 2, 3), rtol=1e-5)
    out = pyjax.pmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(out), x.transpose(1, 0, 2))  # out_j[i] = x_i[j]
    out = pyjax.pmap(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(x2)
    want = np.stack([np.concatenate([x2[i, 2 * j:2 * j + 2] for i in range(N)], axis=1)
                     for j in range(N)])
    np.testing.assert_array_equal(np.asarray(out), want)


def test_grad_inside_pmap_through_psum():
    f = lambda x: jnp.sum(jnp.sin(x) * lax.psum(x, "i"))  # noqa: E731
    g = pyjax.pmap(pyjax.grad(f), axis_name="i")(X)
    # d/dx_i of f_i = cos(x_i) S + sum_j sin(x_j) (psum's transpose is psum)
    want = np.cos(X) * X.sum(0) + np.sin(X).sum(0)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["psum", "pmax", "all_gather_tiled", "ppermute"])
def test_grad_through_pmap_finite_differences(x64, name):
    f, _ = COLLECTIVES[name]
    pf = pyjax.pmap(lambda v: jnp.sin(f(v)), axis_name="i")
    check_grads(pf, (RNG.normal(size=(N, 3)),), order=1)


def test_pmap_vmap_jit_grad():
    f = lambda x: jnp.sum(jnp.sin(x) ** 2)  # noqa: E731
    x = RNG.normal(size=(N, 4, 3)).astype(np.float32)
    out = pyjax.pmap(pyjax.vmap(pyjax.jit(pyjax.grad(f))))(x)
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(x) * np.cos(x), rtol=1e-5,
                               atol=1e-6)


def test_options_and_one_compile():
    y = RNG.normal(size=(3,)).astype(np.float32)
    f = pyjax.pmap(lambda x, y, k: x * k + y, in_axes=(0, None, None),
                   static_broadcasted_argnums=2)
    with count_compiles() as n:
        a = f(X, y, 2.0)
        b = f(X + 1, y, 2.0)
    assert n() == 1
    np.testing.assert_allclose(np.asarray(a), X * 2 + y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), (X + 1) * 2 + y, rtol=1e-6)
    # a pmap result feeds the next pmap without leaving the devices
    np.testing.assert_allclose(np.asarray(f(a, y, 1.0)), X * 2 + 2 * y, rtol=1e-6)
    out = pyjax.pmap(lambda x: x * 2, in_axes=1, out_axes=1)(X.T)
    np.testing.assert_allclose(np.asarray(out), 2 * X.T, rtol=1e-6)
    # JAX 0.10.2 (observed): out_axes=1 splits dimension 1 over the same one-axis mesh
    assert out.sharding.spec == P(None, "_internal_pmap_axis_name")
    assert out.addressable_shards[2].data.shape == (3, 1)
    np.testing.assert_allclose(np.asarray(jnp.sin(out)), np.sin(2 * X.T), rtol=1e-6)
    out = pyjax.pmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=4)()
    np.testing.assert_array_equal(np.asarray(out), np.arange(4))
    devs = pyjax.devices()[4:]
    out = pyjax.pmap(lambda x: x + 1, devices=devs)(X[:4])
    assert out.devices() == set(devs)
    out = pyjax.pmap(lambda x: x + 1, donate_argnums=0)(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(out), X + 1)


def test_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        pyjax.pmap(lambda a, b: a + b)(X, X[:4])
    with pytest.raises(ValueError, match="requires 16 logical devices"):
        pyjax.pmap(lambda a: a)(np.ones((16, 2)))
    with pytest.raises(NameError, match="unbound axis name: j"):
        pyjax.pmap(lambda a: lax.psum(a, "j"), axis_name="i")(X)


def test_jit_takes_a_pmap_result():
    # JAX 0.10.2 runs jit on a pmap result (its sharding is a NamedSharding there); pyjax
    # raised "no mesh is set". Oracle: NumPy on the same values; pmap takes jit's result back.
    r = pyjax.pmap(lambda x: x * 2)(X)
    out = pyjax.jit(lambda a, b: a * b + 1)(r, jnp.arange(3.0))
    np.testing.assert_allclose(out, X * 2 * np.arange(3.0) + 1, rtol=1e-6)
    # JAX 0.10.2 (observed): jit and eager operations keep a pmap result's layout
    assert out.sharding == r.sharding and jnp.sin(r).sharding == r.sharding
    assert r.sum().sharding == r.sharding.update(spec=P())
    back = pyjax.pmap(lambda x: x - 1)(out)
    np.testing.assert_allclose(back, X * 2 * np.arange(3.0), rtol=1e-6)
    # device_put to a pmap result's sharding lays the value out as that NamedSharding says
    put = pyjax.device_put(X, r.sharding)
    assert put.sharding == r.sharding and put.addressable_shards[3].data.shape == (1, 3)
    np.testing.assert_allclose(pyjax.pmap(lambda x: x * 2)(put), r, rtol=1e-6)
    np.testing.assert_allclose(jnp.cos(r) + put, np.cos(X * 2) + X, rtol=1e-6)
