"""Debugging aids: explain_cache_misses, debug.breakpoint, the flag context managers,
named_scope/named_call, Compiled.cost_analysis/memory_analysis, and the small top-level
helpers (live_arrays, print_environment_info, default_device, process queries)."""
import io
import logging
import sys

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_explain_cache_misses_says_what_changed(caplog):
    f = jax.jit(lambda x, y: x * y)
    with jax.explain_cache_misses(True), caplog.at_level(logging.WARNING, logger="pyjax"):
        f(jnp.ones(3), 2.0)
        f(jnp.ones(3), 2.0)  # a hit: nothing logged
        f(jnp.ones(4), 2.0)
        f(jnp.ones(4), jnp.float32(2.0))
        g = jax.jit(lambda x, n: x * n, static_argnums=1)
        g(jnp.ones(2), 2)
        g(jnp.ones(2), 3)
    msgs = [r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]
    assert len(msgs) == 5, msgs
    assert "never seen" in msgs[0]
    assert "type of argument 'x': seen f32[3], now f32[4]" in msgs[1]
    assert "weak type of argument 'y'" in msgs[2]
    assert "static arguments" in msgs[4] and "2" in msgs[4] and "3" in msgs[4]
    caplog.clear()
    f(jnp.ones(5), 2.0)  # the flag is off again outside the block
    assert not [r for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]


def _feed(monkeypatch, commands):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(c + "\n" for c in commands)))


def test_breakpoint_in_jit_shows_runtime_values(monkeypatch, capsys):
    def inner(y):
        z = y * 2
        jax.debug.breakpoint()
        return z + 1

    @jax.jit
    def f(x):
        w = x + 10
        return inner(w)
    _feed(monkeypatch, ["p z", "p float(y.sum())", "up", "p w", "p nope", "c"])
    out = f(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out), [21.0, 23.0, 25.0])
    text = capsys.readouterr().out
    assert "Array([20., 22., 24.], dtype=float32)" in text
    assert "33.0" in text
    assert "Array([10., 11., 12.], dtype=float32)" in text
    assert "NameError" in text  # a bad expression is reported; the prompt goes on


def test_breakpoint_under_vmap_stops_per_element_and_quit_raises(monkeypatch, capsys):
    def f(x):
        jax.debug.breakpoint()
        return x
    _feed(monkeypatch, ["p x", "c", "p x", "c"])
    jax.vmap(f)(jnp.array([5.0, 7.0]))
    out = capsys.readouterr().out
    assert out.index("Array(5.") < out.index("Array(7.")
    _feed(monkeypatch, ["q"])
    with pytest.raises(SystemExit):
        f(jnp.float32(1.0))


def test_flag_context_managers_restore():
    assert not jax.config.jax_debug_nans
    with jax.debug_nans(True):
        assert jax.config.jax_debug_nans
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.float32(-1.0))
    assert not jax.config.jax_debug_nans
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError):
            jnp.ones(3) + jnp.ones((2, 3))
    assert jax.config.jax_numpy_rank_promotion == "allow"
    with jax.enable_x64(True):
        assert jnp.array(1.0).dtype == np.float64
    assert jnp.array(1.0).dtype == np.float32
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks is True
    assert jax.config.jax_check_tracer_leaks is False


def test_named_scope_names_the_lowered_and_optimized_ops():
    def f(x):
        with jax.named_scope("encoder"):
            with jax.named_scope("layer1"):
                y = jnp.sin(x) * 2
        return jax.named_call(jnp.cos, name="head")(y) + 1
    lowered = jax.jit(f).lower(jnp.ones(3))
    text = lowered.as_text()
    assert 'loc("encoder/layer1/sin"(' in text and 'loc("head/cos"(' in text
    compiled = lowered.compile()
    _, hlo = compiled._entry.exe.optimized_program()
    assert b"encoder/layer1/sin" in hlo
    np.testing.assert_allclose(np.asarray(compiled(jnp.ones(3))),
                               np.cos(np.sin(1.0) * 2) + 1, rtol=1e-6)
    with pytest.raises(TypeError, match="must be a string"):
        jax.named_scope(3)


def test_cost_and_memory_analysis():
    c = jax.jit(lambda a, b: a @ b).lower(jnp.ones((8, 16)), jnp.ones((16, 4))).compile()
    cost = c.cost_analysis()
    assert cost["flops"] == 2 * 8 * 16 * 4
    assert cost["bytes accessed"] > 0
    mem = c.memory_analysis()
    assert mem.argument_size_in_bytes == (8 * 16 + 16 * 4) * 4
    assert mem.output_size_in_bytes == 8 * 4 * 4


def test_small_top_level_helpers():
    x = jnp.arange(4.0)
    assert any(a is x for a in jax.live_arrays())
    x.delete()
    assert not any(a is x for a in jax.live_arrays())
    info = jax.print_environment_info(return_string=True)
    assert "pyjax" in info and "numpy" in info and "devices" in info
    d = jax.devices()[-1]
    with jax.default_device(d):
        assert jnp.ones(2).devices() == {d}
    assert jnp.ones(2).devices() == {jax.devices()[0]}
    assert jax.host_count() == jax.process_count() == 1
    assert jax.process_indices() == [0] and jax.host_id() == 0
    assert isinstance(d, jax.Device)
    assert jax.copy_to_host_async(jnp.ones(2)) is None


def test_stages_describe_their_call():
    f = jax.jit(lambda x, y: {"s": x @ y, "t": x.sum()}, donate_argnums=1)
    x, y = jnp.ones((2, 3)), jnp.ones((3, 4))
    traced = f.trace(x, y)
    lowered = traced.lower()
    compiled = lowered.compile()
    assert isinstance(f, jax.stages.Wrapped) and isinstance(compiled, jax.stages.Compiled)
    for stage in (traced, lowered, compiled):
        assert stage.in_tree == jax.tree.structure(((x, y), {}))
        (a, b), kw = stage.args_info
        assert kw == {} and (a.shape, a.donated) == ((2, 3), False)
        assert (b.shape, b.dtype, b.donated) == ((3, 4), np.float32, True)
        assert stage.out_info["s"].shape == (2, 4) and stage.out_info["t"].shape == ()
    assert lowered.cost_analysis()["flops"] >= 2 * 2 * 3 * 4
