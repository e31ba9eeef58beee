"""Asynchronous dispatch: a jitted call returns before its program has run, so a loop of
dependent steps (with device or NumPy inputs) never waits for the device; only reading a
value does. The program is held inside a host callback until the test releases it, so no
timing is involved: a call that waited would find the gate closed and fail."""
import threading

import numpy as np

import pyjax
import pyjax.numpy as jnp


def _gated_step():
    gate = threading.Event()
    seen = []

    def wait_for_gate(v):
        seen.append(gate.wait(timeout=10))  # False: the caller waited for this program
        return v

    @pyjax.jit
    def step(w, x):
        w = pyjax.pure_callback(wait_for_gate, pyjax.ShapeDtypeStruct(w.shape, w.dtype), w)
        return w - 0.1 * jnp.tanh(x @ w)

    return step, gate, seen


def test_a_loop_of_steps_returns_before_its_programs_run():
    step, gate, seen = _gated_step()
    # 32 x 32: the plugin runs programs it deems cheap (e.g. 4 x 4) inline, in the call
    w = jnp.ones((32, 32)) / 32
    x_dev = jnp.full((32, 32), 0.5)
    x_host = np.full((32, 32), 0.5, np.float32)
    outs = []
    v = w
    for x in (x_dev, x_host, x_dev, x_host):  # device and NumPy batches
        v = step(v, x)
        outs.append(v)
    # every call has returned while the first program is still held at the gate
    assert not any(o.is_ready() for o in outs)
    assert seen == []
    gate.set()
    got = np.asarray(outs[-1])  # reading a value waits
    assert seen == [True] * 4
    want = np.ones((32, 32), np.float32) / 32
    for _ in range(4):
        want = want - 0.1 * np.tanh(x_host @ want)
    np.testing.assert_allclose(got, want, rtol=1e-5)
