"""Host callbacks: pure_callback, io_callback, debug.callback and debug.print, eagerly and in
compiled code, under vmap, grad and control flow; errors raised inside them; ordering."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import io_callback
from pyjax._src.runtime.errors import XlaRuntimeError

F32 = jnp.float32

# Registry coverage (tests/lax/test_registry.py): lowered and run under jit, JVP rules (JAX's
# refusals, and the debug callback's primal-only rule under grad), batching against loops.
_CALLBACKS = {"pure_callback", "io_callback", "debug_callback"}
TESTED_PRIMITIVES = JVP_TESTED = BATCH_TESTED = _CALLBACKS


def _sds(shape=(), dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def test_pure_callback_equals_numpy_eagerly_and_under_jit():
    x = np.linspace(-2, 2, 7).astype(np.float32)
    f = lambda v: jax.pure_callback(np.sin, _sds(v.shape), v)  # noqa: E731
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(x))), np.sin(x), rtol=1e-6)
    g = jax.jit(lambda v: f(v) * 2 + v)
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(x))), np.sin(x) * 2 + x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(x[::-1]))),
                               np.sin(x[::-1]) * 2 + x[::-1], rtol=1e-6)


def test_pure_callback_pytrees_and_keywords():
    def host(a, b, *, scale):
        return {"sum": (a + b) * scale, "diff": (a - b).astype(np.int32)}
    out_type = {"sum": _sds((3,)), "diff": _sds((3,), jnp.int32)}
    a, b = jnp.arange(3.0), jnp.ones(3)
    out = jax.jit(lambda a, b: jax.pure_callback(host, out_type, a, b,
                                                 scale=np.float32(2)))(a, b)
    np.testing.assert_array_equal(np.asarray(out["sum"]), (np.arange(3) + 1) * 2)
    np.testing.assert_array_equal(np.asarray(out["diff"]), np.arange(3) - 1)
    assert out["diff"].dtype == np.int32


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all"])
def test_pure_callback_vmap_methods_equal_a_loop(method):
    seen = []

    def host(x, y):
        seen.append((x.shape, y.shape))
        return (x * y + 1).astype(np.float32)

    def f(x, y):
        return jax.pure_callback(host, _sds(x.shape), x, y, vmap_method=method)
    xs = jnp.arange(12.0).reshape(4, 3)
    y = jnp.full((3,), 2.0)
    out = jax.jit(jax.vmap(f, in_axes=(0, None)))(xs, y)
    np.testing.assert_array_equal(np.asarray(out), np.arange(12.0).reshape(4, 3) * 2 + 1)
    shapes = {"sequential": ((3,), (3,)), "sequential_unrolled": ((3,), (3,)),
              "expand_dims": ((4, 3), (1, 3)), "broadcast_all": ((4, 3), (4, 3))}[method]
    assert seen[-1] == shapes
    # batch axis not first
    out = jax.vmap(f, in_axes=(1, None))(xs.T, y)
    np.testing.assert_array_equal(np.asarray(out), np.arange(12.0).reshape(4, 3) * 2 + 1)


def test_pure_callback_refuses_vmap_without_method_and_grad():
    f = lambda v: jax.pure_callback(np.sin, _sds(), v)  # noqa: E731
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(f)(jnp.ones(2))
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(f)(1.0)
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        jax.pure_callback(np.sin, _sds(), 1.0, vmap_method="loop")


def test_pure_callback_inside_custom_jvp_is_differentiable():
    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(np.sin, _sds(x.shape, x.dtype), x)

    @host_sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return host_sin(x), jax.pure_callback(np.cos, _sds(x.shape, x.dtype), x) * t

    g = jax.jit(jax.grad(lambda x: jnp.sum(host_sin(x) ** 2)))
    x = np.array([0.3, -1.2, 2.0], np.float32)
    want = 2 * np.sin(x) * np.cos(x)
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(x))), want, rtol=1e-5)


def test_wrong_result_shape_or_dtype_is_an_error():
    bad_shape = lambda v: jax.pure_callback(lambda a: np.zeros(4, np.float32), _sds((3,)), v)  # noqa: E731
    with pytest.raises(RuntimeError, match=r"Incorrect output shape for return value #0"):
        bad_shape(jnp.ones(3))
    with pytest.raises(XlaRuntimeError, match="Incorrect output shape") as e:
        np.asarray(jax.jit(bad_shape)(jnp.ones(3)))
    assert isinstance(e.value.__cause__, RuntimeError)
    bad_dtype = jax.jit(lambda v: jax.pure_callback(lambda a: a.astype(np.float64), _sds((3,)), v))
    with pytest.raises(XlaRuntimeError, match="Incorrect output dtype"):
        np.asarray(bad_dtype(jnp.ones(3)))
    with pytest.raises(TypeError, match="structure"):
        jax.pure_callback(lambda a: (a, a), _sds((3,)), jnp.ones(3))


def test_raising_callback_surfaces_the_exception_and_the_next_call_works():
    calls = []

    def host(a):
        calls.append(1)
        if a < 0:
            raise KeyError(f"negative input {a}")
        return np.float32(a * 10)
    f = jax.jit(lambda v: jax.pure_callback(host, _sds(), v) + 1)
    for _ in range(100):
        with pytest.raises(XlaRuntimeError, match="negative input") as e:
            np.asarray(f(-1.0))
        assert isinstance(e.value.__cause__, KeyError)
    assert float(f(2.0)) == 21.0
    assert len(calls) == 101


def test_bad_arguments():
    with pytest.raises(TypeError, match="callback must be callable"):
        jax.pure_callback(3, _sds(), 1.0)
    with pytest.raises(TypeError, match="result_shape_dtypes"):
        jax.pure_callback(np.sin, [3], 1.0)
    with pytest.raises(TypeError, match="fmt must be a str"):
        jax.debug.print(3)
    with pytest.raises(ValueError, match="invalid format string"):
        jax.debug.print("{", 1.0)
    with pytest.raises(TypeError, match="callback must be callable"):
        io_callback(None, _sds(), 1.0)


def test_debug_print_prints_runtime_values_every_call(capsys):
    @jax.jit
    def f(x):
        jax.debug.print("x={} sum={s}", x, s=jnp.sum(x))
        return x * 2
    for v in ([1.0, 2.0], [3.0, 4.0], [0.0, -1.0]):
        f(jnp.asarray(v, F32)).block_until_ready()
    assert capsys.readouterr().out.splitlines() == [
        "x=[1. 2.] sum=3.0", "x=[3. 4.] sum=7.0", "x=[ 0. -1.] sum=-1.0"]


def test_debug_print_under_vmap_scan_cond_while_and_grad(capsys):
    jax.vmap(lambda x: jax.debug.print("elem {}", x))(jnp.arange(3.0))
    assert capsys.readouterr().out.splitlines() == ["elem 0.0", "elem 1.0", "elem 2.0"]

    def body(c, x):
        jax.debug.print("step {} carry {}", x, c)
        return c + x, None
    jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs))(jnp.arange(4.0))
    assert capsys.readouterr().out.splitlines() == [
        "step 0.0 carry 0.0", "step 1.0 carry 0.0", "step 2.0 carry 1.0", "step 3.0 carry 3.0"]

    def branch(x):
        return jax.lax.cond(x > 0, lambda v: (jax.debug.print("pos {}", v), v)[1],
                            lambda v: (jax.debug.print("neg {}", v), -v)[1], x)
    jax.jit(branch)(2.0)
    jax.jit(branch)(-3.0)
    assert capsys.readouterr().out.splitlines() == ["pos 2.0", "neg -3.0"]

    def loop(n):
        def step(c):
            jax.debug.print("i={}", c)
            return c + 1
        return jax.lax.while_loop(lambda c: c < n, step, 0)
    assert int(jax.jit(loop)(3)) == 3
    assert capsys.readouterr().out.splitlines() == ["i=0", "i=1", "i=2"]

    def f(x):
        jax.debug.print("primal {}", x)
        return jnp.sin(x) * x
    assert float(jax.grad(f)(1.0)) == pytest.approx(np.sin(1.0) + np.cos(1.0), rel=1e-5)
    assert float(jax.grad(jax.jit(f))(2.0)) == pytest.approx(np.sin(2) + 2 * np.cos(2),
                                                              rel=1e-5)
    assert capsys.readouterr().out.splitlines() == ["primal 1.0", "primal 2.0"]


def test_debug_print_with_unused_result_survives_linearize(capsys):
    def f(x):
        jax.debug.print("seen {}", x * 3)
        return x ** 2
    y, f_lin = jax.linearize(jax.jit(f), 2.0)
    assert float(f_lin(1.0)) == 4.0
    assert capsys.readouterr().out.splitlines() == ["seen 6.0"]


def test_ordered_debug_print_keeps_program_order_across_calls(capsys):
    f = jax.jit(lambda i: (jax.debug.print("{}", i, ordered=True), i + 1)[1])
    for i in range(60):
        f(i)
    assert capsys.readouterr().out.split() == [str(i) for i in range(60)]


def test_debug_callback_gets_arrays_and_works_eagerly(capsys):
    got = []
    jax.jit(lambda x: jax.debug.callback(lambda a: got.append((type(a), a.shape,
                                                                a.tolist())), x))(jnp.ones(2))
    jax.debug.callback(lambda a, *, k: got.append((type(a), a.shape, k)), jnp.zeros(3), k=5)
    assert got[0][0] is type(jnp.ones(1)) and got[0][1:] == ((2,), [1.0, 1.0])
    assert got[1][1:] == ((3,), 5)
    with jax.disable_jit():
        jax.jit(lambda x: jax.debug.print("nojit {}", x))(3.0)
    assert capsys.readouterr().out.splitlines() == ["nojit 3.0"]


def test_io_callback_runs_every_time_and_refuses_what_jax_refuses():
    log = []

    def record(a):
        log.append(float(a))
        return np.float32(a + 1)
    f = jax.jit(lambda x: io_callback(record, _sds(), x))
    assert [float(f(float(i))) for i in range(3)] == [1.0, 2.0, 3.0]
    assert log == [0.0, 1.0, 2.0]
    out = jax.vmap(lambda x: io_callback(record, _sds(), x))(jnp.arange(3.0) + 10)
    assert np.asarray(out).tolist() == [11.0, 12.0, 13.0] and log[-3:] == [10.0, 11.0, 12.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        jax.vmap(lambda x: io_callback(record, _sds(), x, ordered=True))(jnp.ones(2))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        jax.grad(lambda x: io_callback(record, _sds(), x))(1.0)
    # its result unused, it still runs (an effect)
    n = len(log)
    jax.jit(lambda x: (io_callback(record, _sds(), x), x)[1])(5.0)
    assert log[n:] == [5.0]


def test_recompiling_reuses_the_host_function_id():
    from pyjax._src.runtime import ffi
    f = lambda v: jax.pure_callback(np.sin, _sds((3,)), v)  # noqa: E731
    jax.jit(f)(jnp.ones(3))
    n = len(ffi._targets)
    for _ in range(3):
        jax.clear_caches()
        np.testing.assert_allclose(np.asarray(jax.jit(f)(jnp.ones(3))), np.sin(np.ones(3)),
                                   rtol=1e-6)
    assert len(ffi._targets) == n  # the same callback and types: the same id
    def other(a):  # another host function: another id
        return np.cos(a)
    jax.jit(lambda v: jax.pure_callback(other, _sds((3,)), v))(jnp.ones(3))
    assert len(ffi._targets) == n + 1
