"""What the parallelism issue left out, closed: host callbacks, ``ffi_call``, ``call_exported``
and ``linear_call`` on operands split over Explicit mesh axes; ``device_put`` to a
NamedSharding over an ``AbstractMesh`` under ``jit``; ``jit(f).lower(x).as_text()`` and
``.compile()`` of an SPMD program. Oracles: NumPy values, the host functions' own records of
what they were given; JAX 0.10.2's behaviour is quoted where a test follows it."""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.experimental import io_callback
from pyjax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4) - 7.5


@pytest.fixture(scope="module")
def mesh():
    m = pyjax.make_mesh((2, 4), ("x", "y"))  # Explicit axes
    with pyjax.sharding.set_mesh(m):
        yield m


@pytest.fixture(scope="module")
def x(mesh):
    return pyjax.device_put(X, P("x", "y"))


# first: the module's mesh fixture has not set a mesh yet
def test_device_put_to_an_abstract_mesh_needs_a_mesh():
    m = AbstractMesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    with pytest.raises(ValueError, match=r"Length of device assignment 1 is not equal to the "
                       r"size of the mesh 8.*jax.set_mesh"):
        pyjax.jit(lambda a: pyjax.device_put(a, NamedSharding(m, P("x"))) + 1)(X)


# ---- host callbacks ----
# JAX 0.10.2 (8 CPU devices, x: f32[16] on P('x') of an Explicit mesh): inside jit the
# pure_callback / io_callback function got the whole f32[16] once per call, its result was
# typed float32[16] (replicated), `y + x` float32[16@x]; debug.callback got the whole value
# and debug.print printed all 16 numbers.

def test_pure_callback_sees_the_whole_value_once(mesh, x):
    seen, types = [], []

    def host(a):
        seen.append(np.array(a))
        return np.asarray(a) * 2

    @pyjax.jit
    def f(a):
        y = pyjax.pure_callback(host, pyjax.ShapeDtypeStruct(a.shape, a.dtype), a)
        types.append(str(pyjax.typeof(y)))
        return y, y + a

    y, z = f(x)
    np.testing.assert_array_equal(np.asarray(y), 2 * X)
    np.testing.assert_array_equal(np.asarray(z), 3 * X)
    assert types == ["float32[8,4]"]
    assert str(pyjax.typeof(z)) == "float32[8@x,4@y]" and z.sharding.spec == P("x", "y")
    assert y.sharding.is_fully_replicated
    assert len(seen) == 1  # once per execution, not once per device
    np.testing.assert_array_equal(seen[0], X)
    f(x)[1].block_until_ready()
    assert len(seen) == 2


def test_io_callback_results_of_several_dtypes_and_debug_print(mesh, x, capsys):
    got = []

    @pyjax.jit
    def g(a):
        # an ordered io_callback with a scalar and a bool result (JAX 0.10.2 runs these on
        # a sharded operand too)
        total, big = io_callback(lambda v: (v.sum(), v > 3),
                                 (pyjax.ShapeDtypeStruct((), np.float32),
                                  pyjax.ShapeDtypeStruct((8, 4), np.bool_)), a, ordered=True)
        pyjax.debug.callback(lambda v: got.append(np.asarray(v)), a)
        pyjax.debug.print("whole={v}", v=a)
        return total, big

    total, big = g(x)
    assert float(total) == X.sum()
    np.testing.assert_array_equal(np.asarray(big), X > 3)
    assert big.dtype == np.bool_ and str(pyjax.typeof(total)) == "float32[]"
    assert len(got) == 1
    np.testing.assert_array_equal(got[0], X)
    assert capsys.readouterr().out.strip() == f"whole={X}"


def test_callback_results_are_exact_and_vmap_follows_jax(mesh, x):
    # partition 0's result reaches every partition bit for bit (a sum with zeros would turn
    # -0.0 into 0.0)
    odd = np.array([-0.0, 1, -0.0, np.nan, np.inf, -np.inf, 2, 3], np.float32)
    same = lambda v: pyjax.pure_callback(  # noqa: E731
        np.asarray, pyjax.ShapeDtypeStruct(v.shape, v.dtype), v)
    out = np.asarray(pyjax.jit(same)(pyjax.device_put(odd, P("x"))))
    np.testing.assert_array_equal(np.signbit(out), np.signbit(odd))
    np.testing.assert_array_equal(out, odd)
    # JAX 0.10.2 on f32[8@x,4@y]: vmap_method="sequential" raises "0th dimension of all xs
    # should be replicated. Got P('x', 'y')" (its scan); broadcast_all calls once
    seq = lambda v: pyjax.pure_callback(  # noqa: E731
        lambda a: np.asarray(a) * 2, pyjax.ShapeDtypeStruct(v.shape, v.dtype), v,
        vmap_method="sequential")
    with pytest.raises(ValueError, match=r"0th dimension of all xs should be replicated\. "
                       r"Got P\('x', 'y'\)"):
        pyjax.jit(pyjax.vmap(seq))(x)


def test_callbacks_inside_loops_and_on_auto_axes():
    auto = pyjax.make_mesh((8,), ("a",), axis_types=(AxisType.Auto,))
    v = pyjax.device_put(np.arange(16, dtype=np.float32), NamedSharding(auto, P("a")))
    calls = []

    def host(c):
        calls.append(np.asarray(c).shape)
        return np.asarray(c)[::-1] + 1  # not elementwise: a block-wise call would differ

    step = lambda i, c: pyjax.pure_callback(  # noqa: E731
        host, pyjax.ShapeDtypeStruct(c.shape, c.dtype), c)
    out = pyjax.jit(lambda c: lax.fori_loop(0, 3, step, c * 1))(v)
    want = np.arange(16, dtype=np.float32)
    for _ in range(3):
        want = want[::-1] + 1
    np.testing.assert_array_equal(np.asarray(out), want)
    assert calls == [(16,)] * 3


# ---- ffi_call, call_exported, linear_call ----

@pytest.fixture(scope="module")
def ffi_target(tmp_path_factory):
    from tests.test_ffi import HANDLER_C  # out0 = scale * x + y + offset; out1 = row sums
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("ffi_spmd")
    (d / "h.c").write_text(HANDLER_C)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(d / "h.so"), str(d / "h.c")],
                   check=True, capture_output=True, timeout=60)
    lib = ctypes.CDLL(str(d / "h.so"))
    pyjax.ffi.register_ffi_target("pyjax_test_scaled_add_spmd",
                                  pyjax.ffi.pycapsule(lib.scaled_add), platform="cpu")
    return lib


def test_ffi_call_gets_whole_operands(mesh, x, ffi_target):
    # out1 sums rows of the whole x: a call on blocks would sum 1-element rows
    shapes = [pyjax.ShapeDtypeStruct((8, 4), np.float32), pyjax.ShapeDtypeStruct((8,), np.float32)]
    y = pyjax.device_put(X[::-1].copy(), P(None, "y"))
    for effect in (False, True):
        call = pyjax.ffi.ffi_call("pyjax_test_scaled_add_spmd", shapes, has_side_effect=effect)
        out, sums = pyjax.jit(lambda a, b: call(a, b, scale=np.float32(2.0)))(x, y)
        np.testing.assert_array_equal(np.asarray(out), 2 * X + X[::-1])
        np.testing.assert_array_equal(np.asarray(sums), X.sum(1))
        assert out.sharding.is_fully_replicated  # JAX's ffi_call results: the mesh, P()


def test_linear_call_keeps_types_and_call_exported_replicates(mesh, x):
    from pyjax.custom_derivatives import linear_call
    r = jnp.full((8, 4), 3.0)
    types = []

    def f(a):
        y = linear_call(lambda r, t: t * r, lambda r, c: c * r, r, a)
        types.append(str(pyjax.typeof(y)))
        return y

    # JAX 0.10.2: linear_call's result float32[8@x,4@y] (the callee's type), its gradient too
    out = pyjax.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(out), 3 * X)
    g = pyjax.jit(pyjax.grad(lambda a: f(a).sum()))(x)
    np.testing.assert_array_equal(np.asarray(g), np.full((8, 4), 3.0))
    assert types[0] == "float32[8@x,4@y]" and str(pyjax.typeof(g)) == "float32[8@x,4@y]"
    # JAX 0.10.2: a one-device export called on f32[8@x,4@y] gives float32[8,4]
    exp = pyjax.export.export(pyjax.jit(lambda a: a.sum(0) * 2))(
        pyjax.ShapeDtypeStruct((8, 4), np.float32))
    out = pyjax.jit(lambda a: exp.call(a) + 1)(x)
    np.testing.assert_array_equal(np.asarray(out), X.sum(0) * 2 + 1)
    assert str(pyjax.typeof(out)) == "float32[4]"


def test_vmap_of_gamma_over_split_keys(mesh):
    # JAX 0.10.2: these values, typed float32[8@x] (it used to raise the scan's "0th dimension
    # of all xs should be replicated" here, then lose the type across the jit inside gamma)
    keys = pyjax.random.split(pyjax.random.key(0), 8)
    out = pyjax.jit(pyjax.vmap(lambda k: pyjax.random.gamma(k, 2.0)))(
        pyjax.device_put(keys, P("x")))
    one = pyjax.jit(lambda k: pyjax.random.gamma(k, 2.0))  # compiled once, called per key
    want = [float(one(keys[i])) for i in range(8)]
    np.testing.assert_array_equal(np.asarray(out), np.float32(want))
    assert str(pyjax.typeof(out)) == "float32[8@x]" and out.sharding.spec == P("x")


def test_vmap_of_jit_keeps_the_batch_sharding(mesh, x):
    # vmap of jit, custom_jvp and checkpoint bodies traced on their operands' types, as JAX's
    f = pyjax.custom_jvp(lambda v: v * 2)
    f.defjvp(lambda p, t: (f(p[0]), 2 * t[0]))
    types = [str(t) for t in pyjax.make_jaxpr(pyjax.vmap(pyjax.jit(lambda v: v + 1)))(x).out_avals]
    types += [str(t) for t in pyjax.make_jaxpr(pyjax.vmap(f))(x).out_avals]
    types += [str(t) for t in pyjax.make_jaxpr(pyjax.vmap(pyjax.checkpoint(jnp.sin)))(x).out_avals]
    assert types == ["float32[8@x,4@y]"] * 3
    out = pyjax.jit(pyjax.vmap(pyjax.jit(lambda v: v.sum())))(x)
    np.testing.assert_array_equal(np.asarray(out), X.sum(1))
    assert out.sharding.spec == P("x")


# ---- device_put to an AbstractMesh NamedSharding under jit ----
# JAX 0.10.2, under set_mesh(2x4 Explicit mesh): jax.device_put(a, NamedSharding(
# mesh.abstract_mesh, P('x'))) inside jit typed float32[8@x,4] and gave P('x', None) on the
# concrete mesh; an abstract ('x': 4, 'y': 2) gave a result on Mesh('x': 4, 'y': 2); eagerly:
# "ValueError: is_fully_addressable is not implemented for `jax.sharding.AbstractMesh`.";
# with no mesh set: "ValueError: Length of device assignment 1 is not equal to the size of
# the mesh 8 ... Please enter your `jit` into a mesh context via `jax.set_mesh`."

def test_device_put_to_an_abstract_mesh_sharding(mesh):
    to_x = NamedSharding(mesh.abstract_mesh, P("x"))
    types = []

    def f(a):
        y = pyjax.device_put(a, to_x)
        types.append(str(pyjax.typeof(y)))
        return y * 2

    out = pyjax.jit(f)(X)
    np.testing.assert_array_equal(np.asarray(out), 2 * X)
    assert types == ["float32[8@x,4]"]
    assert out.sharding == NamedSharding(mesh, P("x", None))
    other = AbstractMesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    out = pyjax.jit(lambda a: pyjax.device_put(a, NamedSharding(other, P("x"))))(X)
    assert out.sharding.mesh.shape_tuple == (("x", 4), ("y", 2))
    assert {s.data.shape for s in out.addressable_shards} == {(2, 4)}
    np.testing.assert_array_equal(np.asarray(out), X)
    grad = pyjax.jit(pyjax.grad(lambda a: (pyjax.device_put(a, to_x) ** 2).sum()))(X)
    np.testing.assert_array_equal(np.asarray(grad), 2 * X)
    with pytest.raises(ValueError, match="is_fully_addressable is not implemented"):
        pyjax.device_put(X, to_x)


# ---- the AOT stages of an SPMD program ----

def test_lowered_as_text_is_the_spmd_module(mesh):
    xs = pyjax.device_put(X, NamedSharding(mesh, P("x", None)))
    f = pyjax.jit(lambda a: jnp.sin(a).sum(axis=1))
    lowered = f.lower(xs)
    text = lowered.as_text()
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text  # the argument
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>' in text  # its result type
    assert "mhlo.num_partitions = 8" in text
    spec = pyjax.ShapeDtypeStruct((8, 4), np.float32, sharding=NamedSharding(mesh, P("x", None)))
    assert f.lower(spec).as_text() == text
    compiled = lowered.compile()
    out = compiled(xs)
    np.testing.assert_allclose(np.asarray(out), np.sin(X).sum(1), rtol=1e-6)
    assert out.sharding == NamedSharding(mesh, P("x"))
    hlo = compiled.as_text()  # XLA's partitioned module: one partition's shapes
    assert "num_partitions=8" in hlo and "f32[4,4]" in hlo


def test_a_trace_is_per_current_mesh():
    # a PartitionSpec in the body resolves against the current mesh at trace time, so the
    # trace cache is keyed by it (it used to reuse the first mesh's trace under another)
    f = pyjax.jit(lambda a: lax.with_sharding_constraint(a * 2, P("x")))
    wide = pyjax.make_mesh((2, 4), ("x", "y"))
    tall = pyjax.make_mesh((4, 2), ("x", "y"))
    for m, rows in ((wide, 4), (tall, 2), (wide, 4)):
        with pyjax.sharding.set_mesh(m):
            out = f(X)
        assert out.sharding.mesh == m
        assert {s.data.shape for s in out.addressable_shards} == {(rows, 4)}
        np.testing.assert_array_equal(np.asarray(out), 2 * X)
