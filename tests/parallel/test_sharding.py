"""Meshes, PartitionSpec, NamedSharding and arrays laid out over 8 virtual devices."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec as P,
                            get_abstract_mesh, set_mesh, use_mesh)


@pytest.fixture(scope="module")
def mesh24():
    return Mesh(np.array(pyjax.devices()).reshape(2, 4), ("x", "y"))


def test_partition_spec_and_mesh_basics(mesh24):
    assert repr(P("x", None)) == "P('x', None)"     # JAX 0.10.2's repr
    assert repr(P()) == "P()" and str(P(("x", "y"),)) == "P(('x', 'y'),)"
    assert P() == () and pyjax.P is P
    assert mesh24.shape == {"x": 2, "y": 4} and mesh24.size == 8
    assert mesh24.axis_types == (AxisType.Auto, AxisType.Auto)
    # JAX 0.10.2's forms: repr long, str short (as printed inside a NamedSharding)
    assert repr(mesh24) == ("Mesh(axis_sizes=(2, 4), axis_names=('x', 'y'), "
                            "axis_types=(Auto, Auto))")
    assert str(mesh24) == "Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))"
    assert repr(NamedSharding(mesh24, P("x"))) == (
        "NamedSharding(mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), spec=P('x',), "
        "memory_kind=device)")
    m = pyjax.make_mesh((8,), ("data",))
    assert m.axis_types == (AxisType.Explicit,)  # JAX 0.10's default
    assert m.abstract_mesh == AbstractMesh((8,), ("data",), (AxisType.Explicit,))
    # fewer axes than devices: the first prod(axis_shapes) devices, in the order given
    assert list(pyjax.make_mesh((3,), ("a",)).devices) == pyjax.devices()[:3]
    assert list(pyjax.make_mesh((2,), ("a",), devices=pyjax.devices()[::-1]).devices) == \
        pyjax.devices()[::-1][:2]
    with pytest.raises(ValueError, match=r"Number of devices 8 must be >= the product of "
                                         r"mesh_shape \(16,\)"):
        pyjax.make_mesh((16,), ("a",))
    with pytest.raises(TypeError):
        P(3)


def test_named_sharding_layout(mesh24):
    s = NamedSharding(mesh24, P("x", "y"))
    assert s.shard_shape((4, 8)) == (2, 2)
    assert not s.is_fully_replicated
    assert NamedSharding(mesh24, P()).is_fully_replicated
    idx = s.devices_indices_map((4, 8))
    assert idx[mesh24.devices[1, 2]] == (slice(2, 4), slice(4, 6))
    # ("x", "y") on one dimension: x major
    s2 = NamedSharding(mesh24, P(("x", "y")))
    assert s2.devices_indices_map((16,))[mesh24.devices[1, 0]] == (slice(8, 10),)
    # replicated over the axis a spec leaves out
    sy = NamedSharding(mesh24, P(None, "y"))
    assert sy.devices_indices_map((2, 8))[mesh24.devices[1, 3]] == (slice(None), slice(6, 8))
    assert s.is_equivalent_to(NamedSharding(mesh24, P("x", "y", None)), 2)
    assert not s.is_equivalent_to(sy, 2)
    with pytest.raises(ValueError, match="divisible by 4"):
        s.shard_shape((4, 6))
    with pytest.raises(ValueError, match="'z'|z"):
        NamedSharding(mesh24, P("z"))


def test_set_mesh_and_use_mesh(mesh24):
    assert get_abstract_mesh().empty
    with use_mesh(mesh24):
        assert get_abstract_mesh() == mesh24.abstract_mesh
    with set_mesh(mesh24):
        assert get_abstract_mesh().axis_names == ("x", "y")
    with mesh24:
        assert pyjax.sharding.get_mesh() is mesh24
    assert get_abstract_mesh().empty


def test_sharded_array_pieces_and_host_value(mesh24):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    a = pyjax.device_put(x, NamedSharding(mesh24, P("x", "y")))
    assert a.sharding.spec == P("x", "y") and not a.is_fully_replicated
    assert a.devices() == set(pyjax.devices())
    shards = a.addressable_shards
    assert len(shards) == 8
    for sh in shards:
        np.testing.assert_array_equal(np.asarray(sh.data), x[sh.index])
        assert sh.data.devices() == {sh.device}
    np.testing.assert_array_equal(np.asarray(a), x)
    np.testing.assert_array_equal(pyjax.device_get(a), x)
    assert "31." in repr(a)
    # eager operations and indexing work and give NumPy's numbers; elementwise results stay
    # laid out over the mesh (one SPMD program per operation)
    c = jnp.sin(a) * 2.0
    assert c.sharding == a.sharding
    np.testing.assert_allclose(np.asarray(c), np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.sin(a) + a[1]), np.sin(x) + x[1], rtol=1e-6)
    np.testing.assert_allclose(float(a.sum()), x.sum())
    # back to one device
    b = pyjax.device_put(a, pyjax.devices()[3])
    assert b.devices() == {pyjax.devices()[3]}
    np.testing.assert_array_equal(np.asarray(b), x)


def test_device_put_spec_under_mesh_and_pytrees():
    mesh = pyjax.make_mesh((8,), ("data",))
    with pytest.raises(ValueError, match="no mesh"):
        pyjax.device_put(np.ones(8), P("data"))
    with set_mesh(mesh):
        u, v = pyjax.device_put((np.ones((16, 3)), np.arange(16.0)), P("data"))
    assert u.sharding == NamedSharding(mesh, P("data"))
    assert v.addressable_shards[2].data.shape == (2,)
    np.testing.assert_array_equal(np.asarray(v.addressable_shards[2].data), [4.0, 5.0])
    w = pyjax.device_put({"a": np.ones(8), "b": np.ones(8)},
                         {"a": NamedSharding(mesh, P("data")), "b": NamedSharding(mesh, P())})
    assert w["b"].is_fully_replicated and not w["a"].is_fully_replicated


def test_make_array_from_callback_and_single_device_arrays(mesh24):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    s = NamedSharding(mesh24, P("x"))
    a = pyjax.make_array_from_callback(x.shape, s, lambda idx: x[idx])
    np.testing.assert_array_equal(np.asarray(a), x)
    assert a.addressable_shards[0].data.shape == (2, 6)
    pieces = [pyjax.device_put(x[idx], d) for d, idx in s.devices_indices_map(x.shape).items()]
    b = pyjax.make_array_from_single_device_arrays(x.shape, s, pieces)
    np.testing.assert_array_equal(np.asarray(b), x)
    with pytest.raises(ValueError, match="shard shape"):
        pyjax.make_array_from_single_device_arrays((8, 6), s, pieces)


def test_typeof_shows_explicit_axes_and_reshard():
    mesh = pyjax.make_mesh((8,), ("data",))  # Explicit by default
    x = pyjax.device_put(np.ones((8, 3), np.float32), NamedSharding(mesh, P("data")))
    t = pyjax.typeof(x)
    assert str(t) == "float32[8@data,3]" and t.sharding.spec == P("data")
    auto = pyjax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
    y = pyjax.device_put(np.ones((8, 4), np.float32), NamedSharding(auto, P("a", "b")))
    assert str(pyjax.typeof(y)) == "float32[8,4]"  # Auto axes are not part of the type
    r = pyjax.reshard(x, NamedSharding(mesh, P()))
    assert r.is_fully_replicated
    np.testing.assert_array_equal(np.asarray(r), np.ones((8, 3)))


def test_visualize_array_sharding(capsys, mesh24):
    a = pyjax.device_put(np.ones((8, 8)), NamedSharding(mesh24, P("x")))
    pyjax.debug.visualize_array_sharding(a)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and "CPU 0,1,2,3" in lines[1] and "CPU 4,5,6,7" in lines[3]
    pyjax.debug.visualize_sharding((8,), NamedSharding(mesh24, P("y")))
    out = capsys.readouterr().out
    assert [c.strip() for c in out.splitlines()[1].strip("│").split("│")] == [
        "CPU 0,4", "CPU 1,5", "CPU 2,6", "CPU 3,7"]
    with pytest.raises(ValueError, match="1-D or 2-D"):
        pyjax.debug.visualize_sharding((2, 2, 2), NamedSharding(mesh24, P()))
