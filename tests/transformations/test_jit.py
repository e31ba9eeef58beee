"""jit: caching per signature, static and donated arguments, pytrees, AOT API, errors."""
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax._src.core.jaxpr import check_jaxpr


def arr(x, dtype=np.float32):
    return pyjax.device_put(np.asarray(x, dtype))


def test_jit_matches_eager_and_numpy():
    def f(x):
        return lax.add(lax.mul(x, x), lax.mul(x, 2.0))
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    out = pyjax.jit(f)(arr(x))
    np.testing.assert_allclose(np.asarray(out), x * x + 2 * x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(arr(x))), np.asarray(out), rtol=1e-6)
    assert out.dtype == np.float32 and out.shape == (3, 4)


def test_compiles_once_per_signature():
    traces = []

    @pyjax.jit
    def f(x):
        traces.append(x.aval)
        return lax.sin(x)

    f(arr([1.0, 2.0]))
    f(arr([3.0, 4.0]))
    assert len(traces) == 1
    f(arr([1.0, 2.0, 3.0]))          # new shape
    f(arr([1.0, 2.0], np.float16))    # new dtype
    assert len(traces) == 3
    f(1.0)                            # weakly typed Python scalar: its own signature
    f(np.float32(1.0))                # strong float32 scalar
    assert len(traces) == 5
    assert traces[3].weak_type and not traces[4].weak_type


def test_static_argnums_and_argnames():
    traces = []

    def f(x, n, *, mode="sin"):
        traces.append((n, mode))
        y = x
        for _ in range(n):             # Python control flow on a static value
            y = lax.sin(y) if mode == "sin" else lax.cos(y)
        return y

    g = pyjax.jit(f, static_argnums=1, static_argnames="mode")
    x = arr([0.5])
    np.testing.assert_allclose(np.asarray(g(x, 2)), np.sin(np.sin(0.5)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g(x, 2, mode="cos")), np.cos(np.cos(0.5)), rtol=1e-6)
    g(x, 2)
    g(x, 3)
    assert traces == [(2, "sin"), (2, "cos"), (3, "sin")]
    # static by name also works when the argument is passed positionally
    h = pyjax.jit(f, static_argnames=("n",))
    np.testing.assert_allclose(np.asarray(h(x, 1)), np.sin(0.5), rtol=1e-6)


def test_unhashable_static_argument():
    f = pyjax.jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f(arr([1.0]), [1, 2])


def test_pytrees_in_and_out():
    @pyjax.jit
    def f(params, x):
        return {"y": lax.add(lax.mul(params["w"], x), params["b"]), "aux": (x, None)}

    out = f({"w": arr([2.0]), "b": arr([1.0])}, arr([3.0]))
    assert set(out) == {"y", "aux"}
    assert out["aux"][1] is None
    np.testing.assert_allclose(np.asarray(out["y"]), [7.0])
    np.testing.assert_allclose(np.asarray(out["aux"][0]), [3.0])


def test_kwargs_and_closure_constants():
    c = arr([10.0, 20.0])
    c_np = np.array([1.0, 2.0], np.float32)

    @pyjax.jit
    def f(x, *, y):
        return lax.add(lax.add(x, c), lax.mul(y, c_np))

    out = f(arr([1.0, 1.0]), y=arr([2.0, 2.0]))
    np.testing.assert_allclose(np.asarray(out), [13.0, 25.0])


def test_constant_output_and_python_scalar_args():
    f = pyjax.jit(lambda x: (x, 3))
    a, b = f(2.0)
    assert a.dtype == np.float32 and a.weak_type
    assert int(b) == 3 and b.dtype == np.int32


def test_nested_jit_is_one_call_in_the_outer_jaxpr():
    inner = pyjax.jit(lambda x: lax.mul(lax.sin(x), 2.0))

    def outer(x):
        return lax.add(inner(x), 1.0)

    jaxpr = pyjax.make_jaxpr(outer)(1.0)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names == ["jit", "add"]
    assert "jit[" in str(jaxpr) and "sin" in str(jaxpr)
    check_jaxpr(jaxpr.jaxpr)
    np.testing.assert_allclose(float(pyjax.jit(outer)(1.0)), 2 * np.sin(1.0) + 1, rtol=1e-6)
    text = pyjax.jit(outer).lower(1.0).as_text()
    assert "func.call" in text and "callee = @" in text and "func.func private" in text


def test_make_jaxpr_format():
    jaxpr = pyjax.make_jaxpr(lambda x: lax.mul(lax.sin(x), 2.0))(1.0)
    assert str(jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }"


def test_lower_compile_and_eval_shape():
    f = pyjax.jit(lambda x: lax.sin(x))
    lowered = f.lower(arr([1.0, 2.0, 3.0]))
    text = lowered.as_text()
    assert "func.func public @main" in text and "stablehlo.sine" in text
    assert "tensor<3xf32>" in text
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(arr([1.0, 2.0, 3.0]))), np.sin([1, 2, 3]),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="compiled"):
        compiled(arr([1.0, 2.0]))
    shape = pyjax.eval_shape(lambda x: lax.convert_element_type(x, np.int32),
                             pyjax.ShapeDtypeStruct((2, 5), np.float32))
    assert shape.shape == (2, 5) and shape.dtype == np.int32


def test_eval_shape_passes_returned_shape_dtype_structs_through():
    # JAX 0.10.2: eval_shape(lambda: struct) is struct (lineax compares structures this way),
    # while jit(lambda: struct)() raises TypeError
    struct = pyjax.ShapeDtypeStruct((4,), jnp.float32)
    assert pyjax.eval_shape(lambda: struct) is struct
    out = pyjax.eval_shape(lambda x: {"s": struct, "y": x * 2, "n": None}, jnp.ones(3))
    assert out["s"] is struct and out["n"] is None
    assert out["y"] == pyjax.ShapeDtypeStruct((3,), jnp.float32)
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):
        pyjax.jit(lambda: struct)()


def test_concretization_error_names_the_argument():
    @pyjax.jit
    def f(x, y):
        if lax.gt(y, 0.0):
            return x
        return y

    with pytest.raises(pyjax.errors.ConcretizationTypeError) as e:
        f(1.0, 2.0)
    msg = str(e.value)
    assert "argument y" in msg and "static_argnums" in msg
    assert isinstance(e.value, TypeError)
    for conv in (int, float):
        with pytest.raises(pyjax.errors.ConcretizationTypeError):
            pyjax.jit(lambda x: conv(x))(1.0)
    with pytest.raises(pyjax.errors.TracerArrayConversionError):
        pyjax.jit(lambda x: np.asarray(x))(1.0)


def test_escaped_tracer_raises_unexpected_tracer_error():
    leaked = []

    @pyjax.jit
    def f(x):
        leaked.append(x)
        return x

    f(1.0)
    with pytest.raises(pyjax.errors.UnexpectedTracerError):
        lax.sin(leaked[0])
    with pytest.raises(pyjax.errors.UnexpectedTracerError):
        pyjax.jit(lambda y: lax.add(y, leaked[0]))(1.0)


def test_donation_deletes_the_input():
    f = pyjax.jit(lambda x: lax.mul(x, 2.0), donate_argnums=0)
    x = arr(np.ones(1000))
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), 2 * np.ones(1000))
    assert x.is_deleted()
    with pytest.raises(Exception):
        np.asarray(x)


def test_devices_and_placement():
    devs = pyjax.devices()
    assert len(devs) == pyjax.device_count() == 8
    assert devs[3].id == 3 and devs[3].platform == "cpu" and "3" in repr(devs[3])
    x = pyjax.device_put(np.arange(4, dtype=np.float32), devs[3])
    assert x.devices() == {devs[3]}
    y = pyjax.jit(lambda a: lax.add(a, 1.0))(x)
    assert y.devices() == {devs[3]}
    z = lax.sin(x)
    assert z.devices() == {devs[3]}
    w = pyjax.device_put(np.arange(4, dtype=np.float32), devs[1])
    with pytest.raises(ValueError, match="incompatible devices"):
        lax.add(x, w)


def test_block_until_ready_and_device_get():
    tree = {"a": lax.sin(arr([1.0])), "b": [lax.cos(arr([1.0]))]}
    assert pyjax.block_until_ready(tree) is tree
    host = pyjax.device_get(tree)
    assert isinstance(host["a"], np.ndarray) and isinstance(host["b"][0], np.ndarray)


def test_jit_decorator_forms_and_method():
    from functools import partial

    @partial(pyjax.jit, static_argnames=["k"])
    def f(x, k):
        return lax.mul(x, float(k))

    assert float(f(2.0, k=3)) == 6.0

    class M:
        @pyjax.jit
        def g(self, x):
            return lax.add(x, 1.0)

    with pytest.raises(Exception):
        M().g(1.0)   # `self` is not an array: a clear type error
    assert f.__name__ == "f"


def test_invalid_arguments():
    with pytest.raises(TypeError, match="not a valid pyjax type"):
        pyjax.jit(lambda x: x)("a string")
    with pytest.raises(OverflowError):
        pyjax.jit(lambda x: x)(2 ** 40)
    with pytest.raises(TypeError):
        pyjax.jit(3)


def test_grad_of_jit_calling_jit_splits_the_inner_call():
    # the inner jit equation is split (known call, staged call) when the outer one is
    # partially evaluated, so the transposed program is linear
    inner = pyjax.jit(lambda x: pyjax.numpy.sin(x) * x)
    f = pyjax.jit(lambda x: inner(x) * 2.0)
    x = 0.5
    want = 2 * (np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(float(pyjax.grad(f)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(float(pyjax.jit(pyjax.grad(f))(x)), want, rtol=1e-6)
    np.testing.assert_allclose(float(pyjax.grad(pyjax.grad(f))(x)),
                               2 * (2 * np.cos(x) - x * np.sin(x)), rtol=1e-5)
    jaxpr = pyjax.make_jaxpr(pyjax.grad(f))(x)
    for e in jaxpr.eqns:
        check_jaxpr(e.params["jaxpr"].jaxpr)


def test_calls_with_static_args_and_keywords_hit_their_entries():
    traces = []

    def f(x, n, scale=1.0):
        traces.append(n)
        return x * n * scale

    g = pyjax.jit(f, static_argnums=1)
    x = jnp.arange(3.0)
    for _ in range(3):
        np.testing.assert_allclose(g(x, 2), 2 * np.arange(3.0))
        np.testing.assert_allclose(g(x, 3, scale=0.5), 1.5 * np.arange(3.0))
        np.testing.assert_allclose(g(x, n=4), 4 * np.arange(3.0))
    for s in (2.0, -1.0, 7.5):  # a dynamic Python scalar: new values, no new trace
        np.testing.assert_allclose(g(x, 3, scale=s), 3 * s * np.arange(3.0))
    assert sorted(traces) == [2, 3, 4]
    np.testing.assert_allclose(g(x, 2, 1), 2 * np.arange(3.0))  # int scale: a new signature
    assert g(x.astype(jnp.int32), 2, 1).dtype == np.int32
    pyjax.config.update("jax_enable_x64", True)
    try:
        assert g(x, 2, scale=2.0).dtype == np.float32  # x is still f32; the weak scalar follows
        assert g(jnp.arange(3), 2, 1).dtype == np.int64
    finally:
        pyjax.config.update("jax_enable_x64", False)
    assert g(jnp.arange(3), 2, 1).dtype == np.int32
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(x, [2])


def test_compiled_signatures_are_bounded(monkeypatch):
    f = pyjax.jit(lambda a, k: a * k, static_argnums=1)
    f.max_entries = 3
    for n in range(1, 7):
        for k in (2, 3):
            np.testing.assert_allclose(f(jnp.ones(n), k), np.full(n, float(k)))
        assert f._cache_size() <= 3
    np.testing.assert_allclose(f(jnp.ones(1), 2), [2.0])  # dropped long ago: compiled again
    np.testing.assert_allclose(f(jnp.ones(6), 3), np.full(6, 3.0))
    from pyjax._src.numpy import reductions
    compiled = reductions.sum.compiled  # eager jnp functions: the same bound, their own value
    monkeypatch.setattr(compiled, "max_entries", 2)
    for n in range(1, 6):
        np.testing.assert_allclose(jnp.sum(jnp.ones((n, 2)), axis=0), [n, n])
        assert compiled._cache_size() <= 2



# Read by tests/lax/test_registry.py (jit's JVP: tests/interpreters/test_ad.py).
TESTED_PRIMITIVES = {"jit"}


def test_array_methods_of_traced_values_are_the_jnp_functions():
    # a tracer's private fields must not hide array methods (x.var() once called a Var)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = pyjax.jit(lambda a: (a.var(), a.std(axis=0), a.mean(), a.sum(1)))
    for got, want in zip(f(x), (x.var(), x.std(axis=0), x.mean(), x.sum(1))):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_keyword_only_static_argument_and_positional_hot_path():
    # A call without keywords takes the positional hot path (keyed by the arguments' avals);
    # a keyword-only static argument then holds its default, and a call that passes it must
    # not reuse that entry, nor the other way round.
    traces = []

    def f(x, *, scale=2.0):
        traces.append(scale)
        return x * scale
    g = pyjax.jit(f, static_argnames="scale")
    x = jnp.arange(3.0)
    for _ in range(2):
        np.testing.assert_array_equal(g(x), [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(g(x, scale=3.0), [0.0, 3.0, 6.0])
        np.testing.assert_array_equal(g(x, scale=2.0), [0.0, 2.0, 4.0])
    assert traces.count(3.0) == 1 and 1 <= traces.count(2.0) <= 2


def test_positional_static_argument_left_at_default_takes_the_hot_path():
    # Calls stopping before the first static position key on the avals alone (hot path);
    # calls passing it, positionally or by keyword, must get their own entries, both ways.
    traces = []

    def f(x, y, scale=2.0, shift=0.0):
        traces.append((scale, shift))
        return x * scale + y + shift
    g = pyjax.jit(f, static_argnums=(2,), static_argnames="shift")
    x, y = jnp.arange(3.0), jnp.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(g(x, y), [1.0, 3.0, 5.0])
        np.testing.assert_array_equal(g(x, y, 3.0), [1.0, 4.0, 7.0])
        np.testing.assert_array_equal(g(x, y, scale=5.0), [1.0, 6.0, 11.0])
        np.testing.assert_array_equal(g(x, y, 2.0, 1.0), [2.0, 4.0, 6.0])
    # each signature traced once: a hot-path call that retraced would count 3
    assert traces.count((2.0, 0.0)) == 1 and traces.count((3.0, 0.0)) == 1
    assert traces.count((5.0, 0.0)) == 1 and traces.count((2.0, 1.0)) == 1
    with pytest.raises(ValueError, match="static"):  # an array as the static value
        g(x, y, jnp.ones(3))
