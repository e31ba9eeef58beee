"""Debug flags with effect: jax_check_tracer_leaks / checking_leaks() and jax_transfer_guard
(with its per-direction flags and context managers)."""
import logging

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.errors import JaxRuntimeError


def _sin2(x):
    return jnp.sin(x) * 2


def test_leaked_tracers_raise_with_jax_style_message():
    stash = []

    def leaky(x):
        stash.append(x * 2)
        return x + 1
    with jax.checking_leaks():
        for transform, arg, trace in [(jax.jit, 1.0, "StagingTrace"),
                                      (jax.vmap, jnp.ones(2), "BatchTrace"),
                                      (jax.grad, 1.0, "JVPTrace")]:
            with pytest.raises(Exception, match=rf"Leaked trace {trace}\. Leaked tracer"
                                                r"\(s\):\n\nTraced<f32\[\]>") as info:
                transform(leaky)(arg)
            assert "is referred to by <list" in str(info.value)
            stash.clear()
        # programs that keep nothing pass, control flow and nesting included
        assert float(jax.jit(jax.grad(_sin2))(0.0)) == 2.0
        out = jax.jit(lambda x: jax.lax.scan(lambda c, y: (c + y, c), x, jnp.ones(3)))(1.0)
        np.testing.assert_allclose(np.asarray(out[1]), [1.0, 2.0, 3.0])
        assert float(jax.jit(lambda x: jax.lax.cond(x > 0, jnp.sin, jnp.cos, x))(0.0)) == 1.0
        np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(_sin2))(jnp.zeros(2))), 2.0)
    assert jax.config.jax_check_tracer_leaks is False
    transform = jax.jit(lambda x: stash.append(x) or x)  # the flag off: no check
    assert float(transform(3.0)) == 3.0


_double = jax.jit(lambda x: x * 2)


def _cases():
    x = jnp.arange(3.0)
    _double(x)
    y = x * x  # computed: its value is on the device only
    host = np.ones(3, np.float32)
    return {
        "jit(array)": (lambda: _double(x), None),
        "jit(numpy)": (lambda: _double(host), "host-to-device"),
        "jit(python scalar)": (lambda: _double(2.0), "host-to-device"),
        "x + 1.0": (lambda: x + 1.0, "host-to-device"),
        "jnp.asarray(numpy)": (lambda: jnp.asarray(host), "host-to-device"),
        "np.asarray(result)": (lambda: np.asarray(y), "device-to-host"),
        "device_put(numpy)": (lambda: jax.device_put(host), "explicit"),
        "device_get(result)": (lambda: jax.device_get(y * y), "explicit"),
    }


@pytest.mark.parametrize("level", ["allow", "disallow", "disallow_explicit"])
def test_transfer_guard_levels(level):
    for name, (run, kind) in _cases().items():
        with jax.transfer_guard(level):
            refused = (level == "disallow" and kind not in (None, "explicit")
                       or level == "disallow_explicit" and kind is not None)
            if refused:
                with pytest.raises(JaxRuntimeError, match="INVALID_ARGUMENT: Disallowed "
                                                          r"\w+-to-\w+ transfer: aval="):
                    run()
            else:
                run()
    assert jax.config.jax_transfer_guard is None  # the context manager restores it


def test_transfer_guard_log_and_directions(caplog):
    x = jnp.arange(3.0)
    with caplog.at_level(logging.WARNING, logger="pyjax"):
        with jax.transfer_guard("log"):
            _double(np.ones(3, np.float32))
            jax.device_put(np.ones(2, np.float32))  # explicit: not logged at 'log'
        with jax.transfer_guard("log_explicit"):
            jax.device_put(np.ones(2, np.float32))
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("host-to-device transfer: aval=ShapedArray(float32[3])")
    assert len(messages) == 2 and "float32[2]" in messages[1]
    # a per-direction guard overrides the global one
    with jax.transfer_guard("disallow"), jax.transfer_guard_device_to_host("allow"):
        np.asarray(x * x)
        with pytest.raises(JaxRuntimeError, match="host-to-device"):
            x + np.ones(3, np.float32)
    with jax.transfer_guard_host_to_device("disallow"):
        np.asarray(x * x)  # other directions stay allowed
    d0, d1 = jax.devices()[:2]
    on1 = jax.device_put(x, d1)
    with jax.transfer_guard_device_to_device("disallow"):
        jax.device_put(on1, d0)  # explicit
        with pytest.raises(JaxRuntimeError, match="Disallowed device-to-device transfer"):
            on1 * x  # the uncommitted x follows the committed on1
    with pytest.raises(ValueError):
        jax.config.update("jax_transfer_guard", "sometimes")


def test_guard_in_a_loop_keeps_compiled_programs():
    from pyjax.test_util import count_compiles
    f = jax.jit(lambda x: jnp.sin(x) * 2)
    x = jnp.ones(3)
    f(x), x * x, x + 1.0  # noqa: B018 - compiled once before the loop
    with count_compiles() as n:
        for _ in range(5):
            with jax.transfer_guard("disallow"):
                f(x), x * x  # noqa: B018
            x + 1.0  # noqa: B018 - the fast path is back after the block
    assert n() == 0
