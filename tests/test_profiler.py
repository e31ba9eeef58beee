"""pyjax.profiler: a trace file with host spans for tracing, compiling, running, transfers
and the user's annotations; the hooks go away when the trace stops."""
import glob
import gzip
import json
import os

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.dispatch import eager
from pyjax._src.transformations import jit as jit_mod


def _events(log_dir):
    (path,) = glob.glob(os.path.join(log_dir, "plugins", "profile", "*",
                                     "perfetto_trace.json.gz"))
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def test_trace_records_trace_compile_execute_transfer_and_annotations(tmp_path):
    f = jax.jit(lambda x: jnp.tanh(x) * 3.0)

    @jax.profiler.annotate_function
    def step(x):
        return f(x)
    with jax.profiler.trace(tmp_path):
        with jax.profiler.StepTraceAnnotation("train", step_num=7):
            x = jnp.ones(5) * 2.0
            y = step(x)
            got = np.asarray(y)
    np.testing.assert_allclose(got, np.tanh(2.0) * 3.0, rtol=1e-6)
    ev = _events(str(tmp_path))
    cats = {e["cat"] for e in ev}
    assert {"trace", "compile", "execute", "eager", "transfer", "user"} <= cats
    names = [e["name"] for e in ev]
    assert "jit(<lambda>)" in names and "train" in names and "jit(multiply)" in names
    assert any(n.endswith("step") for n in names)  # annotate_function's span
    train = next(e for e in ev if e["name"] == "train")
    assert train["args"] == {"step_num": "7"}
    inner = [e for e in ev if e["name"] == "jit(<lambda>)"][0]
    assert train["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= train["ts"] + train["dur"]
    assert all(e["dur"] >= 1 for e in ev)


def test_hooks_are_removed_after_stop_and_misuse_raises(tmp_path):
    jax.profiler.start_trace(str(tmp_path))
    assert eager.checking_values[0] and jit_mod._modes[0]
    with pytest.raises(RuntimeError, match="already been started"):
        jax.profiler.start_trace(str(tmp_path))
    path = jax.profiler.stop_trace()
    assert path.endswith("perfetto_trace.json.gz") and os.path.exists(path)
    assert not eager.checking_values[0] and not jit_mod._modes[0]
    with pytest.raises(RuntimeError, match="No profile started"):
        jax.profiler.stop_trace()
    with pytest.raises(NotImplementedError, match="profiler server"):
        jax.profiler.start_server(9999)


def test_profile_options_host_tracer_level_and_refusals(tmp_path):
    opts = jax.profiler.ProfileOptions()
    assert opts.host_tracer_level == 2 and opts.python_tracer_level == 1
    f = jax.jit(lambda x: x + 1.0)
    with jax.profiler.trace(tmp_path / "a", profiler_options=opts):
        f(jnp.ones(2)).block_until_ready()
    assert any(e["cat"] == "execute" for e in _events(str(tmp_path / "a")))
    opts.host_tracer_level = 0  # no host spans
    with jax.profiler.trace(tmp_path / "b", profiler_options=opts):
        f(jnp.ones(2)).block_until_ready()
    assert _events(str(tmp_path / "b")) == []
    opts.host_tracer_level, opts.duration_ms = 2, 100
    with pytest.raises(NotImplementedError, match=r"\['duration_ms'\]"):
        jax.profiler.start_trace(str(tmp_path / "c"), profiler_options=opts)
    with pytest.raises(TypeError, match="ProfileOptions"):
        jax.profiler.start_trace(str(tmp_path / "c"), profiler_options={"duration_ms": 1})
