"""Which CPU plugin pyjax loads, and that the one it does not load still runs pyjax's programs.

The YNNPACK build (``pip install 'pyjax[cpu-ynn]'``, package ``fastatomstruct_xla_cpu``) is
preferred when installed, ``xla-cpu-pjrt`` otherwise, ``PYJAX_PLUGIN_PATH`` over both
(runtime/plugin.py). The test suite runs on whichever is loaded; the second test runs a small
program of each kind (a training step's gradient, NaN-propagating reductions, a blocked LU,
a scan) on every other installed plugin in a fresh process, against NumPy."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pyjax._src.runtime import plugin


def _installed_plugins():
    found = {}
    ynn = plugin.find_ynn_plugin_path()
    if ynn:
        found["ynn"] = ynn
    spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
    for d in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(d, "xla_cpu_pjrt.so")
        if os.path.isfile(path):
            found["xla-cpu-pjrt"] = path
    return found


def test_discovery_order(monkeypatch, tmp_path):
    monkeypatch.delenv(plugin.PLUGIN_PATH_ENV, raising=False)
    installed = _installed_plugins()
    want = installed.get("ynn") or installed.get("xla-cpu-pjrt")
    assert plugin.find_plugin_path() == want
    # without the YNNPACK package, the dependency's plugin
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == plugin.YNN_PLUGIN[0]
                        else real_find_spec(name, *a))
    assert plugin.find_ynn_plugin_path() is None
    if "xla-cpu-pjrt" in installed:
        assert plugin.find_plugin_path() == installed["xla-cpu-pjrt"]
    # an explicit path wins over both
    other = tmp_path / "other.so"
    other.write_bytes(b"\x7fELF")
    monkeypatch.setenv(plugin.PLUGIN_PATH_ENV, str(other))
    assert plugin.find_plugin_path() == str(other)


def test_log_level_default_per_plugin(monkeypatch, tmp_path):
    # The YNNPACK build logs two spurious ERROR lines at every compile: its log level
    # defaults to 3 (errors reach pyjax as PJRT errors); any other plugin keeps 1.
    folder = tmp_path / plugin.YNN_PLUGIN[0]
    folder.mkdir()
    for path, level in ((folder / plugin.YNN_PLUGIN[1], "3"), (tmp_path / "x.so", "1")):
        monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
        monkeypatch.delenv("XLA_FLAGS", raising=False)
        plugin.prepare_environment(str(path))
        assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == level
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")  # a user's choice stays
    plugin.prepare_environment(str(folder / plugin.YNN_PLUGIN[1]))
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0"


_PROGRAMS = """
    import json, numpy as np, pyjax, pyjax.numpy as jnp
    from pyjax import lax
    from pyjax._src.runtime import get_client
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(20, 16)), rng.normal(size=(16, 3))
    x = rng.normal(size=(32, 20))
    def loss(p, x):
        h = jnp.tanh(x @ p[0])
        return jnp.mean((h @ p[1]) ** 2)
    g = pyjax.jit(pyjax.grad(loss))((w1.astype(np.float32), w2.astype(np.float32)),
                                    x.astype(np.float32))
    v = rng.normal(size=65537).astype(np.float32)
    v[7] = np.nan
    m = pyjax.jit(lambda v: (jnp.max(v), jnp.min(v), jnp.max(v.reshape(-1, 1), axis=0)))(v)
    a = rng.normal(size=(70, 66))
    lu, piv, perm = lax.linalg.lu(jnp.asarray(a, np.float32))
    s = pyjax.jit(lambda c: lax.scan(lambda c, x: (c * 0.5 + x, c), c, jnp.arange(5.0)))(1.0)
    print(json.dumps({"path": get_client()._api.path,
                      "g": [np.asarray(t, np.float64).tolist() for t in g],
                      "nan": [bool(np.isnan(np.asarray(t)).all()) for t in m],
                      "lu": np.asarray(lu, np.float64).tolist(), "perm": np.asarray(perm).tolist(),
                      "scan": float(s[0])}))
"""


def _numpy_grad(w1, w2, x):
    h = np.tanh(x @ w1)
    out = h @ w2
    d_out = 2 * out / out.size
    d_w2 = h.T @ d_out
    d_w1 = x.T @ ((d_out @ w2.T) * (1 - h ** 2))
    return d_w1, d_w2


@pytest.mark.parametrize("name", ["ynn", "xla-cpu-pjrt"])
def test_each_installed_plugin_runs_programs_right(name):
    import json
    path = _installed_plugins().get(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    env = dict(os.environ, PYJAX_PLUGIN_PATH=path, PYJAX_CPU_DEVICES="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(_PROGRAMS)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert os.path.samefile(got["path"], path)
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(20, 16)), rng.normal(size=(16, 3))
    x = rng.normal(size=(32, 20))
    for g, want in zip(got["g"], _numpy_grad(w1, w2, x)):
        np.testing.assert_allclose(g, want, rtol=2e-4, atol=2e-5)
    assert got["nan"] == [True, True, True]  # max/min of data holding a NaN are NaN
    rng.normal(size=65537)
    a = rng.normal(size=(70, 66))
    lu, perm = np.array(got["lu"]), np.array(got["perm"])
    l = np.tril(lu, -1)[:, :66] + np.eye(70, 66)
    np.testing.assert_allclose(l @ np.triu(lu)[:66], a[perm], rtol=1e-4, atol=1e-4)
    assert sorted(perm) == list(range(70))
    c = 1.0
    for t in range(5):
        c = c * 0.5 + t
    assert got["scan"] == pytest.approx(c)
