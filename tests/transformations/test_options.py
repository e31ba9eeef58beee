"""jit's options: each does what JAX documents or raises a clear error."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.sharding import Sharding, SingleDeviceSharding


def _f(x):
    return x * 2.0 + 1.0


# ---- backend / device ----

def test_backend_cpu_and_missing_backends():
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(pyjax.jit(_f, backend="cpu")(x), np.arange(3.0) * 2 + 1)
    with pytest.raises(RuntimeError, match=r"^Unknown backend tpu\. Available backends are "
                                           r"\['cpu'\]$"):
        pyjax.jit(_f, backend="tpu")
    with pytest.raises(RuntimeError, match=r"Unknown backend: 'gpu' requested, but no "
                                           r"platforms that are instances of gpu are present"):
        pyjax.jit(_f, backend="gpu")
    with pytest.raises(RuntimeError, match="Unknown backend nonsense"):
        pyjax.jit(_f, backend="nonsense")
    with pytest.raises(TypeError, match="backend"):
        pyjax.jit(_f, backend=3)
    # the device queries say the same
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        pyjax.devices("tpu")
    with pytest.raises(RuntimeError, match="'gpu' requested"):
        pyjax.device_count("gpu")
    assert pyjax.devices("cpu") == pyjax.devices()


def test_device_option():
    d = pyjax.devices()
    y = pyjax.jit(_f, device=d[5])(jnp.ones(2))
    assert y.devices() == {d[5]}
    np.testing.assert_array_equal(y, [3.0, 3.0])
    with pytest.raises(TypeError, match="Device"):
        pyjax.jit(_f, device=5)
    with pytest.raises(ValueError, match="both a device and a backend"):
        pyjax.jit(_f, device=d[0], backend="cpu")


# ---- shardings ----

def test_single_device_shardings_place_the_call():
    d = pyjax.devices()
    s = SingleDeviceSharding(d[4])
    for kw in (dict(in_shardings=s), dict(out_shardings=s),
               dict(in_shardings=(s,), out_shardings=s), dict(in_shardings=None)):
        f = pyjax.jit(_f, **kw)
        y = f(jnp.ones(3))
        np.testing.assert_array_equal(y, np.full(3, 3.0))
        if kw != dict(in_shardings=None):
            assert y.sharding == s and y.committed
    f = pyjax.jit(_f, in_shardings=s)
    assert f(pyjax.device_put(jnp.ones(3), d[4])).devices() == {d[4]}  # committed there: ok
    with pytest.raises(ValueError, match="incompatible devices"):
        f(pyjax.device_put(jnp.ones(3), d[1]))


def test_sharding_values_that_are_refused():
    d = pyjax.devices()
    with pytest.raises(TypeError, match="in_shardings"):
        pyjax.jit(_f, in_shardings="nonsense")
    with pytest.raises(TypeError, match="out_shardings"):
        pyjax.jit(_f, out_shardings=(None, 3))
    with pytest.raises(NotImplementedError, match="several devices"):
        pyjax.jit(_f, in_shardings=(SingleDeviceSharding(d[0]), SingleDeviceSharding(d[1])))

    class OtherSharding(Sharding):
        pass

    with pytest.raises(NotImplementedError, match="in_shardings.*OtherSharding"):
        pyjax.jit(_f, in_shardings=OtherSharding())
    with pytest.raises(ValueError, match="in_shardings and out_shardings should not be"):
        pyjax.jit(_f, in_shardings=SingleDeviceSharding(d[0]), device=d[0])


# ---- compiler_options ----

def test_compiler_options_reach_xla():
    x = jnp.array([np.nan, 1.0, 2.0])
    y = jnp.array([1.0, np.nan, 0.0])
    plain = pyjax.jit(lambda a, b: jnp.maximum(a, b))
    fast = pyjax.jit(lambda a, b: jnp.maximum(a, b),
                     compiler_options={"xla_cpu_enable_fast_min_max": True})
    np.testing.assert_array_equal(plain(x, y), [np.nan, np.nan, 2.0])  # JAX's NaN semantics
    # XLA's fast min/max drops NaNs: the option reached the compiler
    np.testing.assert_array_equal(fast(x, y), [np.nan, 1.0, 2.0])
    assert fast._cache_size() == 1
    fast(x, y)
    assert fast._cache_size() == 1  # compiled once for these options
    # options given to an AOT compile go over the jit's own, in a separate executable
    aot = plain.lower(x, y).compile(compiler_options={"xla_cpu_enable_fast_min_max": True})
    np.testing.assert_array_equal(aot(x, y), [np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(plain(x, y), [np.nan, np.nan, 2.0])


def test_compiler_options_errors():
    x = jnp.ones(2)
    with pytest.raises(RuntimeError, match="No such compile option: 'xla_bogus_option'"):
        pyjax.jit(_f, compiler_options={"xla_bogus_option": True})(x)
    with pytest.raises(RuntimeError, match="'yes' is not a valid bool"):
        pyjax.jit(_f, compiler_options={"xla_cpu_enable_fast_math": "yes"})(x)
    with pytest.raises(TypeError, match="must be a str, bool, int or float"):
        pyjax.jit(_f, compiler_options={"xla_cpu_enable_fast_math": [True]})
    with pytest.raises(TypeError, match="dict"):
        pyjax.jit(_f, compiler_options=["xla_cpu_enable_fast_math"])
    with pytest.raises(TypeError, match="option names"):
        pyjax.jit(_f, compiler_options={1: True})
    with pytest.raises(ValueError, match="int64"):
        pyjax.jit(_f, compiler_options={"xla_backend_optimization_level": 1 << 70})
    # the process is still fine
    np.testing.assert_array_equal(pyjax.jit(_f)(x), [3.0, 3.0])


# ---- inline, keep_unused, abstracted_axes, donation ----

def test_inline():
    def g(x):
        return lax.sin(x) + 1.0

    outer = pyjax.make_jaxpr(lambda x: pyjax.jit(g)(x) * 2.0)(1.0)
    inlined = pyjax.make_jaxpr(lambda x: pyjax.jit(g, inline=True)(x) * 2.0)(1.0)
    assert [e.primitive.name for e in outer.jaxpr.eqns][0] == "jit"
    assert "jit" not in [e.primitive.name for e in inlined.jaxpr.eqns]
    assert "sin" in [e.primitive.name for e in inlined.jaxpr.eqns]
    h = pyjax.jit(lambda x: pyjax.jit(g, inline=True)(x) * 2.0)
    np.testing.assert_allclose(h(0.5), (np.sin(0.5) + 1) * 2, rtol=1e-6)
    np.testing.assert_allclose(pyjax.grad(lambda x: pyjax.jit(g, inline=True)(x))(0.5),
                               np.cos(0.5), rtol=1e-6)


def test_keep_unused_keeps_arguments():
    for keep in (False, True):
        f = pyjax.jit(lambda x, unused: x + 1.0, keep_unused=keep)
        np.testing.assert_array_equal(f(jnp.ones(2), jnp.zeros(5)), [2.0, 2.0])
        # pyjax never prunes an argument, which keep_unused=True asks for
        assert f.lower(jnp.ones(2), jnp.zeros(5)).as_text().count("tensor<5xf32>") >= 1


def test_abstracted_axes_is_not_implemented():
    with pytest.raises(NotImplementedError, match="abstracted_axes"):
        pyjax.jit(_f, abstracted_axes=("n",))
    with pytest.raises(NotImplementedError, match="abstracted_axes"):
        pyjax.make_jaxpr(_f, abstracted_axes=("n",))
    # make_jaxpr(axis_env=...) is supported now: tests/transformations/test_refused_calls.py


def test_donate_argnums_donates():
    f = pyjax.jit(lambda a, b: (a + b, b), donate_argnums=(0,))
    x, y = jnp.ones(3) + 0.0, jnp.ones(3) * 2.0
    s, b = f(x, y)
    np.testing.assert_array_equal(s, np.full(3, 3.0))
    assert x.is_deleted() and not y.is_deleted()


# ---- other transformations: options that are not implemented raise ----

def test_transformation_options_that_raise():
    from pyjax._src.transformations.custom_derivatives import custom_vjp

    f = lambda x: jnp.sum(x ** 2)  # noqa: E731
    x = jnp.arange(3.0)
    np.testing.assert_allclose(pyjax.grad(f, reduce_axes=())(x), 2 * np.arange(3.0))
    with pytest.raises(NotImplementedError, match="reduce_axes argument to grad is deprecated"):
        pyjax.grad(f, reduce_axes=("i",))
    with pytest.raises(NotImplementedError, match="reduce_axes"):
        pyjax.value_and_grad(f, reduce_axes=("i",))
    with pytest.raises(NotImplementedError, match="reduce_axes argument to transpose"):
        pyjax.linear_transpose(lambda v: v * 2.0, x, reduce_axes=("i",))
    # spmd_axis_name is supported now: tests/transformations/test_refused_calls.py
    np.testing.assert_allclose(pyjax.vmap(f, spmd_axis_name=None)(jnp.ones((2, 3))), [3, 3])
    # jacrev(allow_int=True) is supported now: tests/transformations/test_refused_calls.py

    g = custom_vjp(lambda v: v * 2.0)
    fwd, bwd = (lambda v: (v * 2.0, None)), (lambda _, ct: (ct * 2.0,))
    # symbolic_zeros=True is supported now: tests/ecosystem/test_api_names.py
    # optimize_remat=True is accepted now (tests/transformations/test_refused_calls.py)
    with pytest.raises(NotImplementedError, match="symbolic zeros"):
        g.defvjp(fwd, bwd, optimize_remat=True, symbolic_zeros=True)
    g.defvjp(fwd, bwd)
    np.testing.assert_allclose(pyjax.grad(lambda v: g(v))(1.5), 2.0)

    with pytest.raises(NotImplementedError, match="_split_transpose"):
        lax.scan(lambda c, v: (c + v, v), 0.0, x, _split_transpose=True)


def test_lowered_dialects():
    lowered = pyjax.jit(_f).lower(jnp.ones(2))
    assert "stablehlo" in lowered.as_text() and lowered.as_text("stablehlo") == lowered.as_text()
    assert lowered.compiler_ir("stablehlo") == lowered.as_text()
    assert lowered.as_text(dialect="hlo").startswith("HloModule jit__f")  # tests/lowering
    with pytest.raises(ValueError, match="unknown dialect: mhlo"):
        lowered.as_text(dialect="mhlo")


def test_compiled_as_text_is_the_optimized_hlo():
    # JAX's Compiled.as_text(): XLA's HLO after optimization (fusions, layouts), with the
    # user's source lines as metadata; the jit's own XLA options are used
    def f(x, w):
        return jnp.tanh(x @ w).sum()

    x, w = jnp.ones((4, 3)), jnp.ones((3, 2))
    compiled = pyjax.jit(f).lower(x, w).compile()
    text = compiled.as_text()
    assert text.startswith("HloModule") and "ENTRY" in text and "fusion" in text
    assert "stablehlo" not in text
    line = f.__code__.co_firstlineno + 1
    # in the instruction's metadata, or (newer XLA) in the module's table of file locations
    assert f"source_line={line}" in text or f" line={line} " in text
    assert compiled.as_text() is text  # made once
    np.testing.assert_allclose(compiled(x, w), np.tanh(np.ones((4, 2)) * 3).sum(), rtol=1e-6)
    opt = pyjax.jit(f, compiler_options={"xla_backend_optimization_level": 0})
    assert opt.lower(x, w).compile().as_text().startswith("HloModule")


def test_unusable_donation_warns_and_keeps_the_input():
    g = pyjax.jit(lambda a: a.sum(), donate_argnums=0)
    x = jnp.ones(4)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: "
                                         r"ShapedArray\(float32\[4\]\)"):
        assert float(g(x)) == 4.0
    assert not x.is_deleted()
    np.testing.assert_array_equal(x, np.ones(4))
    f = pyjax.jit(lambda a, b: a + b, donate_argnums=(0,))
    y = jnp.ones(4) + 0.0
    with pytest.raises(RuntimeError, match="previously donated in the same call"):
        f(y, y)
