"""The dispatch fast paths keep the behaviour of the general ones.

Covers the runtime's device-0 specialisation of portable executables, the identity-keyed
caches of eager dispatch and of cached jit calls, and their fall-backs (other devices,
committed arrays, x64 changes, constants, several outputs). No timings here: the speed
itself is measured by benchmarks/bench_foundation.py and benchmarks/bench_runtime.py.
"""


import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.primitive import Primitive, registry
from pyjax._src.dispatch import eager as dispatch
from pyjax.test_util import cache_sizes, count_compiles
from pyjax._src.runtime import XlaRuntimeError, get_client

F32_4 = (np.float32, (4,))
ADD = """module {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"""


@pytest.fixture(scope="module")
def client():
    return get_client()


def need_devices(client, n):
    if len(client.devices) < n:
        pytest.skip(f"needs {n} devices (set PYJAX_CPU_DEVICES)")


# --- runtime: portable programs specialised to the default device ----------------------
def test_portable_program_specialised_then_portable_on_demand(client):
    need_devices(client, 4)
    exe = client.compile(ADD, [F32_4, F32_4], [F32_4])
    assert exe.portable and exe.devices == [client.devices[0]]
    assert exe._portable_ptr is None  # not compiled until another device needs it
    x = np.arange(4, dtype=np.float32)
    a0 = client.buffer_from_pyval(x)
    (out,) = exe.execute_unchecked([a0, a0])
    assert out.device is client.devices[0]
    np.testing.assert_array_equal(out.to_numpy(), 2 * x)
    assert exe._portable_ptr is None
    for d in client.devices[1:4]:
        a = client.buffer_from_pyval(x, device=d)
        (out,) = exe.execute_unchecked([a, a])  # device=None: the arguments' device
        assert out.device is d
        np.testing.assert_array_equal(out.to_numpy(), 2 * x)
        (out,) = exe.execute([a, a], d)
        np.testing.assert_array_equal(out.to_numpy(), 2 * x)
    assert exe._portable_ptr is not None


def test_specialised_program_rejects_arguments_elsewhere(client):
    need_devices(client, 2)
    exe = client.compile(ADD, [F32_4, F32_4], [F32_4])
    a1 = client.buffer_from_pyval(np.ones(4, np.float32), device=client.devices[1])
    with pytest.raises(XlaRuntimeError):  # PJRT's device check, not a silent wrong read
        exe.execute_unchecked([a1, a1], client.devices[0])[0].to_numpy()
    a0 = client.buffer_from_pyval(np.ones(4, np.float32))
    with pytest.raises(XlaRuntimeError):
        exe.execute_unchecked([a0, a1], client.devices[1])[0].to_numpy()


def test_serialized_specialised_program_runs_anywhere(client):
    exe = client.compile(ADD, [F32_4, F32_4], [F32_4])
    again = client.deserialize_executable(exe.serialize(), exe.in_types, exe.out_types,
                                          portable=True)
    x = np.arange(4, dtype=np.float32)
    for d in {client.devices[0], client.devices[-1]}:
        a = client.buffer_from_pyval(x, device=d)
        (out,) = again.execute([a, a])
        assert out.device is d
        np.testing.assert_array_equal(out.to_numpy(), 2 * x)


def test_specialised_program_from_threads_on_several_devices(client, in_threads):
    need_devices(client, 4)
    exe = client.compile(ADD, [F32_4, F32_4], [F32_4])

    def work(k):
        d = client.devices[k]
        x = client.buffer_from_pyval(np.full(4, k, np.float32), device=d)
        for _ in range(200):
            (y,) = exe.execute_unchecked([x, x])
            assert y.device is d and y.to_numpy()[0] == 2 * k

    in_threads(work, 4)


def test_executable_with_several_outputs_on_other_device(client):
    need_devices(client, 2)
    src = """module {
      func.func public @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
        %0 = stablehlo.sine %x : tensor<3xf32>
        %1 = stablehlo.cosine %x : tensor<3xf32>
        return %0, %1 : tensor<3xf32>, tensor<3xf32>
      }
    }"""
    exe = client.compile(src, [(np.float32, (3,))], [(np.float32, (3,))] * 2)
    x = np.array([0.0, 0.5, 1.0], np.float32)
    for d in (client.devices[0], client.devices[1]):
        s, c = exe.execute_unchecked([client.buffer_from_pyval(x, device=d)])
        assert s.device is d and c.device is d
        np.testing.assert_allclose(s.to_numpy(), np.sin(x), rtol=1e-6)
        np.testing.assert_allclose(c.to_numpy(), np.cos(x), rtol=1e-6)


# --- eager dispatch ------------------------------------------------------------------------
def test_eager_ops_on_equal_but_distinct_avals():
    from pyjax._src.core.abstract import ShapedArray
    from pyjax._src.core.array import ArrayImpl
    a = jnp.asarray(np.arange(4, dtype=np.float32))
    b = jnp.asarray(np.arange(4, dtype=np.float32) + 1)
    b = ArrayImpl(ShapedArray(b.shape, b.dtype), b._buf)  # an aval of its own
    assert a.aval == b.aval and a.aval is not b.aval
    for _ in range(3):
        np.testing.assert_allclose(jnp.sin(a), np.sin(np.arange(4, dtype=np.float32)),
                                   rtol=1e-6)
        np.testing.assert_array_equal(a + b, 2 * np.arange(4) + 1)
        np.testing.assert_array_equal(b + 1.0, np.arange(4) + 2)
        np.testing.assert_array_equal(2 + b, np.arange(4) + 3)


def test_eager_results_keep_dtype_weak_type_and_value():
    x = jnp.ones(4, jnp.float32)
    y = x + 1.0
    assert type(y) is ArrayImpl and y.dtype == np.float32 and not y.weak_type
    assert not y.committed and y.device is x.device
    w = jnp.asarray(2.0) * 3.0  # weak scalar with a weak scalar stays weak
    assert w.weak_type and float(w) == 6.0
    i = jnp.arange(3) + True
    np.testing.assert_array_equal(i, [1, 2, 3])
    np.testing.assert_array_equal(jnp.arange(3) * 2, [0, 2, 4])


def test_eager_scalar_cache_follows_x64():
    x = jnp.ones(3, jnp.int32)
    assert (x + 1.5).dtype == np.float32
    pyjax.config.update("jax_enable_x64", True)
    try:
        assert (jnp.ones(3) + 1.5).dtype == np.float64
        assert (jnp.asarray(1.5) + 1.0).dtype == np.float64
    finally:
        pyjax.config.update("jax_enable_x64", False)
    assert (jnp.asarray(1.5) + 1.0).dtype == np.float32


def test_eager_committed_arrays():
    client = get_client()
    need_devices(client, 3)
    d1, d2 = client.devices[1], client.devices[2]
    x = pyjax.device_put(jnp.arange(4.0), d1)
    y = x + 1.0
    assert y.committed and y.device is d1
    np.testing.assert_array_equal(y, np.arange(4.0) + 1)
    z = jnp.sin(x)
    assert z.committed and z.device is d1
    s = x + x
    assert s.committed and s.device is d1
    other = pyjax.device_put(jnp.arange(4.0), d2)
    with pytest.raises(ValueError, match="incompatible devices"):
        x + other
    u = jnp.arange(4.0) * 2.0  # uncommitted, on the default device: follows x to d1
    for v in (x + u, u + x, x * 2.0 + u):
        assert v.committed and v.device is d1
    np.testing.assert_array_equal(x + u, 3 * np.arange(4.0))


def test_eager_multiple_results_primitive():
    name = "test_hot_paths_sin_cos"
    p = Primitive(
        name, abstract_eval=lambda a: [a, a], multiple_results=True,
        lower=lambda ctx, x: [ctx.op("stablehlo.sine", [x], ctx.avals_out[0]),
                              ctx.op("stablehlo.cosine", [x], ctx.avals_out[1])])
    registry.pop(name)  # a test-only primitive: keep it out of the rule-completeness walk
    x = jnp.asarray(np.array([0.0, 1.0], np.float32))
    for _ in range(2):
        s, c = p.bind(x)
        np.testing.assert_allclose(s, np.sin([0.0, 1.0]), rtol=1e-6)
        np.testing.assert_allclose(c, np.cos([0.0, 1.0]), rtol=1e-6)


def test_fast_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(dispatch._primitives, "max_size", 4)
    for n in range(1, 10):
        a = jnp.asarray(np.ones(n, np.float32))
        np.testing.assert_allclose(jnp.sin(a), np.sin(np.ones(n)), rtol=1e-6)
        np.testing.assert_allclose(a * float(n) + a, np.full(n, n + 1.0))
        np.testing.assert_allclose(jnp.negative(a), -np.ones(n))  # the general eager path
        assert len(dispatch._primitives.fast) <= 4
    b = jnp.ones(3)
    for k in range(1, 10):  # many scalars with one aval
        np.testing.assert_allclose(b * float(k), np.full(3, float(k)))
        assert len(dispatch._primitives.fast) <= 4
    assert cache_sizes()["eager primitives"] <= 4


def test_primitive_cache_is_a_bounded_lru(monkeypatch):
    from pyjax import lax
    monkeypatch.setattr(dispatch._primitives, "max_size", 3)
    pyjax.clear_caches()
    x = jnp.ones(3)
    keep = lambda i, c: c * 2.0  # noqa: E731 - the same body every call: one executable
    np.testing.assert_allclose(lax.fori_loop(0, 2, keep, x), 4.0)
    for k in range(8):  # a fresh body per call: a new executable per call, old ones dropped
        with count_compiles() as n:
            np.testing.assert_allclose(lax.fori_loop(0, 3, lambda i, c: c + float(k), x),
                                       1 + 3 * k)
            np.testing.assert_allclose(lax.fori_loop(0, 2, keep, x), 4.0)
        assert cache_sizes()["eager primitives"] <= 3
        assert n() == 1  # keep's stays: it is used every round (LRU)


# --- cached jit calls ----------------------------------------------------------------------
def test_jit_hits_follow_x64():
    f = pyjax.jit(lambda a: a + jnp.zeros(a.shape))
    x = jnp.ones(3, jnp.int32)
    assert f(x).dtype == np.float32 and f(x).dtype == np.float32
    pyjax.config.update("jax_enable_x64", True)
    try:
        assert f(x).dtype == np.float64
    finally:
        pyjax.config.update("jax_enable_x64", False)
    assert f(x).dtype == np.float32


def test_jit_fast_paths():
    c = jnp.arange(4.0)
    f = pyjax.jit(lambda a: a * 2.0 + c)  # closes over an array: a constant argument
    g = pyjax.jit(lambda a, b: (a + b, a - b))
    h = pyjax.jit(lambda: jnp.arange(3))
    x = jnp.ones(4)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), 2 + np.arange(4))
        s, d = g(x, c)
        np.testing.assert_array_equal(s, 1 + np.arange(4))
        np.testing.assert_array_equal(d, 1 - np.arange(4))
        np.testing.assert_array_equal(h(), [0, 1, 2])
    other = jnp.asarray(np.full(4, 3.0, np.float32))  # same aval, another object
    np.testing.assert_array_equal(f(other), 6 + np.arange(4))
    np.testing.assert_array_equal(f(2.0 * x), 4 + np.arange(4))
    np.testing.assert_array_equal(g(x, 1.0)[0], np.full(4, 2.0))  # a scalar argument


def test_jit_fast_path_devices():
    client = get_client()
    need_devices(client, 2)
    d1 = client.devices[1]
    f = pyjax.jit(lambda a: a + 1.0)
    x = jnp.arange(4.0)
    f(x)
    y = f(pyjax.device_put(x, d1))
    assert y.committed and y.device is d1
    np.testing.assert_array_equal(y, np.arange(4.0) + 1)
    z = f(x)
    assert not z.committed and z.device is client.devices[0]
    c = jnp.arange(4.0)  # a constant of g, on the default device
    g = pyjax.jit(lambda a: a * c)
    for _ in range(2):
        w = g(pyjax.device_put(x, d1))
        assert w.committed and w.device is d1
        np.testing.assert_array_equal(w, np.arange(4.0) ** 2)
        np.testing.assert_array_equal(g(x), np.arange(4.0) ** 2)
    k = pyjax.jit(lambda a, b: a + b)
    np.testing.assert_array_equal(k(pyjax.device_put(x, d1), x), 2 * np.arange(4.0))
    assert k(x, pyjax.device_put(x, d1)).device is d1
    placed = pyjax.jit(lambda a: a + 1.0, device=d1)
    for _ in range(2):
        p = placed(x)
        assert p.device is d1
        np.testing.assert_array_equal(p, np.arange(4.0) + 1)


def test_jit_in_a_transformation_after_cached_calls():
    f = pyjax.jit(lambda a: jnp.sin(a) * 2.0)
    x = jnp.asarray(np.float32(0.5))
    f(x)
    f(x)
    np.testing.assert_allclose(pyjax.grad(f)(x), 2 * np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(pyjax.vmap(f)(jnp.ones(3)), 2 * np.sin(np.ones(3)), rtol=1e-6)


def test_eager_fast_paths_from_threads(in_threads):
    # the runners share their executables' pools of prepared structs between threads
    x = jnp.arange(4.0)
    f = pyjax.jit(lambda a: a * 3.0)
    base = np.arange(4.0, dtype=np.float32)

    def work(k):
        for _ in range(500):
            r = (x + float(k)) * 2.0 - x
            want = (base + k) * 2 - base
            np.testing.assert_array_equal(r, want)
            np.testing.assert_allclose(jnp.sin(r), np.sin(want), rtol=1e-6)
            np.testing.assert_array_equal(f(r), want * 3)

    in_threads(work, 4)


def test_eager_fast_paths_on_deleted_arrays():
    # PJRT's error comes back through the runner, whose struct goes back to its pool
    x = jnp.arange(4.0)
    x + 1.0, jnp.sin(x), x * x  # noqa: B018 - compiles and caches the runners
    f = pyjax.jit(lambda a: a * 3.0)
    f(x)
    gone = jnp.arange(4.0)
    gone.delete()
    for op in (lambda: gone + 1.0, lambda: jnp.sin(gone), lambda: gone * gone, lambda: f(gone)):
        with pytest.raises(XlaRuntimeError, match=r"^Array has been deleted with shape=float32\[4\]\.$"):
            op()
    for _ in range(3):
        np.testing.assert_array_equal(x + 1.0, np.arange(4.0) + 1)
        np.testing.assert_array_equal(f(x), np.arange(4.0) * 3)


def test_nan_scalars_do_not_fill_the_first_level():
    x = jnp.ones(3)
    x * 2.0
    before = len(dispatch._primitives.fast)
    for _ in range(20):
        assert np.isnan(np.asarray(x * float("nan"))).all()
    assert len(dispatch._primitives.fast) <= before + 1


def test_eager_primitives_with_params_on_one_array():
    # one Array and parameters: the first-level runner keyed by (primitive, aval id, params)
    client = get_client()
    need_devices(client, 2)
    x = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    for _ in range(2):  # a miss, then a hit
        np.testing.assert_array_equal(pyjax.lax.reshape(x, (4, 3)), np.arange(12.0).reshape(4, 3))
        np.testing.assert_array_equal(pyjax.lax.reshape(x, (2, 6)), np.arange(12.0).reshape(2, 6))
        np.testing.assert_array_equal(jnp.sum(x, axis=0), np.arange(12.0).reshape(3, 4).sum(0))
        np.testing.assert_array_equal(pyjax.lax.transpose(x, (1, 0)), np.arange(12.0)
                                      .reshape(3, 4).T)
    # same values under other parameter names do not meet: (a, b) names are in the key
    np.testing.assert_array_equal(pyjax.lax.reduce_sum(x, (1,)), [6.0, 22.0, 38.0])
    np.testing.assert_array_equal(pyjax.lax.reduce_max(x, (1,)), [3.0, 7.0, 11.0])
    # a committed array keeps its device and commitment
    d1 = client.devices[1]
    y = pyjax.device_put(x, d1)
    r = pyjax.lax.reshape(y, (12,))
    assert r.committed and r.device is d1
    u = pyjax.lax.reshape(x, (12,))
    assert not u.committed
    np.testing.assert_array_equal(r, u)
    # results keep dtype and weak type
    w = jnp.ones((2, 2), jnp.int32)
    assert pyjax.lax.reshape(w, (4,)).dtype == np.int32
    weak = jnp.asarray(3.0)
    assert weak.weak_type and pyjax.lax.reshape(weak, (1,)).weak_type


def test_jnp_reshape_transpose_fast_paths_keep_checks():
    x = jnp.arange(12.0).reshape(3, 4)
    a = np.arange(12.0).reshape(3, 4)
    for shape in [(4, 3), (2, -1), (-1,), (12,), (3, 4)]:
        np.testing.assert_array_equal(jnp.reshape(x, shape), a.reshape(shape))
        np.testing.assert_array_equal(x.reshape(*shape), a.reshape(*shape))
    assert jnp.reshape(x, (3, 4)) is x
    np.testing.assert_array_equal(jnp.ravel(x), a.ravel())
    np.testing.assert_array_equal(jnp.ravel(jnp.asarray(5.0)), [5.0])
    np.testing.assert_array_equal(x.flatten(), a.flatten())
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        jnp.reshape(x, (5, -1))
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        jnp.reshape(x, (5, 2))
    with pytest.raises(ValueError, match="one unknown dimension"):
        jnp.reshape(x, (-1, -1))
    with pytest.raises(TypeError):
        jnp.reshape(x, (3.0, 4))
    for axes in [None, (1, 0), [1, 0], (0, 1), (-1, 0)]:
        np.testing.assert_array_equal(jnp.transpose(x, axes), np.transpose(a, axes))
    np.testing.assert_array_equal(jnp.swapaxes(x, 0, 1), a.T)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.transpose(x, (0, 0))
    with pytest.raises(ValueError, match="don't match"):
        jnp.transpose(x, (0,))
    # under a trace the same calls stage the primitives
    jaxpr = pyjax.make_jaxpr(lambda z: jnp.transpose(jnp.reshape(z, (4, 3))))(x)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["reshape", "transpose"]
