"""Errors that point at user code: jax_traceback_filtering's modes at the API boundaries, the
source location every staged equation records, and the loc(...) metadata of the module."""
import inspect
import traceback

import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.core.source_info import PYJAX_DIR


@pytest.fixture
def mode():
    old = jax.config.jax_traceback_filtering

    def set_(m):
        jax.config.update("jax_traceback_filtering", m)
    yield set_
    jax.config.update("jax_traceback_filtering", old)


def _bad(x):
    return jnp.add(x, "not an array")


def _user(x):
    return jax.grad(lambda y: _bad(y).sum())(x) * 2


ENTRY_POINTS = {
    "jit": lambda: jax.jit(_user)(jnp.ones(())),
    "vmap": lambda: jax.vmap(_user)(jnp.ones(2)),
    "scan": lambda: jax.lax.scan(lambda c, _: (_user(c), None), jnp.ones(()), None, length=2),
    "make_jaxpr": lambda: jax.make_jaxpr(_user)(1.0),
}


def _frames(exc):
    return [(f.filename, f.name) for f in traceback.extract_tb(exc.__traceback__)]


def _internal(frames):
    return [f for f in frames if f[0].startswith(PYJAX_DIR)]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_default_removes_pyjax_frames_with_a_note(entry, mode):
    mode("auto")  # remove_frames outside IPython
    with pytest.raises(TypeError) as info:
        ENTRY_POINTS[entry]()
    frames = _frames(info.value)
    assert not _internal(frames)
    names = [name for _, name in frames]
    assert names[-2:] == ["<lambda>", "_bad"] and "_user" in names
    assert info.value.__notes__[-1].endswith(
        "Set JAX_TRACEBACK_FILTERING=off to include these.")


def test_other_modes(mode):
    mode("off")
    with pytest.raises(TypeError) as info:
        ENTRY_POINTS["jit"]()
    assert _internal(_frames(info.value)) and not getattr(info.value, "__notes__", None)
    mode("quiet_remove_frames")
    with pytest.raises(TypeError) as info:
        ENTRY_POINTS["jit"]()
    assert not _internal(_frames(info.value))
    assert not getattr(info.value, "__notes__", None)
    mode("tracebackhide")  # frames kept, marked for IPython / pytest to hide
    with pytest.raises(TypeError) as info:
        ENTRY_POINTS["jit"]()
    tb, hidden = info.value.__traceback__, []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(PYJAX_DIR):
            hidden.append(tb.tb_frame.f_locals.get("__tracebackhide__"))
        tb = tb.tb_next
    assert hidden and all(hidden)


def test_pyjax_own_errors_keep_their_traceback(mode):
    # nothing of the user's ran below the boundary: not filtered, no note (a bad argument)
    mode("auto")
    with pytest.raises(ValueError) as info:
        jax.vmap(jnp.sin)(jnp.ones(()))
    assert not getattr(info.value, "__notes__", None)


def _located(x):
    y = jnp.sin(x)
    return jnp.log(y) * 2


def test_equations_and_module_carry_the_user_line():
    src, start = inspect.getsourcelines(_located)
    sin_line, log_line = start + 1, start + 2
    jaxpr = jax.make_jaxpr(_located)(1.0)
    where = {e.primitive.name: e.source_info for e in jaxpr.eqns}
    assert where["sin"].line == sin_line and where["log"].line == log_line
    assert where["mul"].function == "_located" and where["sin"].file == __file__
    # transformations give their equations the location of the equation they came from
    grad_jaxpr = jax.make_jaxpr(jax.grad(_located))(1.0)
    cos = next(e for e in grad_jaxpr.eqns if e.primitive.name == "cos")
    assert cos.source_info.line == sin_line
    text = jax.jit(_located).lower(1.0).as_text()
    assert f'loc("sin"("{__file__}":{sin_line}:0))' in text
    assert f'loc("log"("{__file__}":{log_line}:0))' in text
