"""Choosing the backend (JAX_PLATFORMS, devices('gpu'), default_backend) as JAX does, with and
without the CUDA PJRT plugin (docs/gpu.md).

The backend is chosen once per process, so each scenario runs in a fresh interpreter. Tests
that need a GPU skip unless the CUDA plugin is installed (pip install 'pyjax[cuda13]')."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from pyjax._src.runtime import plugin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_CUDA_PLUGIN = plugin.find_cuda_plugin_path() is not None

# What each scenario reports: the default backend, or the error of each query.
_PROBE = """
import json, warnings
warnings.simplefilter("always")
out = {}
with warnings.catch_warnings(record=True) as caught:
    import pyjax
    for q in ["default", "gpu", "cuda", "cpu", "tpu"]:
        try:
            out[q] = (pyjax.default_backend() if q == "default"
                      else sorted({d.platform for d in pyjax.devices(q)}))
        except Exception as e:
            out[q] = f"{type(e).__name__}: {e}"
out["warnings"] = [str(w.message) for w in caught if "CUDA" in str(w.message)]
print(json.dumps(out))
"""


def _probe(**env_changes):
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAX_PLATFORMS", "PYJAX_PLATFORMS", "PYJAX_CUDA_PLUGIN_PATH")}
    env.update(env_changes)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_PROBE)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


GPU_ERROR = ("RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are "
             "instances of gpu are present. Platforms present are: cpu")


@pytest.mark.skipif(HAVE_CUDA_PLUGIN, reason="a CUDA plugin is installed")
@pytest.mark.parametrize("platforms", [None, "cpu", "cuda,cpu"])
def test_without_a_gpu_plugin_the_backend_is_cpu(platforms):
    out = _probe(**({} if platforms is None else {"JAX_PLATFORMS": platforms}))
    assert out["default"] == "cpu"
    assert out["cpu"] == ["cpu"]
    assert out["gpu"] == GPU_ERROR                       # JAX 0.10.2's text, word for word
    assert out["cuda"] == "RuntimeError: Unknown backend cuda. Available backends are ['cpu']"
    assert out["tpu"] == "RuntimeError: Unknown backend tpu. Available backends are ['cpu']"
    assert out["warnings"] == []


@pytest.mark.skipif(HAVE_CUDA_PLUGIN, reason="a CUDA plugin is installed")
@pytest.mark.parametrize("name", ["cuda", "gpu"])
def test_asking_for_cuda_without_the_plugin_says_how_to_install_it(name):
    out = _probe(JAX_PLATFORMS=name)
    for q in ("default", "cpu", "gpu"):   # every query fails: no backend can start
        assert out[q].startswith(f"RuntimeError: Unable to initialize backend '{name}': no "
                                 "CUDA PJRT plugin is installed"), out[q]
    assert "pip install 'pyjax[cuda13]'" in out["default"]
    assert "set JAX_PLATFORMS='' to automatically choose" in out["default"]


def test_a_broken_cuda_plugin_falls_back_to_cpu_with_a_warning(tmp_path):
    fake = tmp_path / "jax_plugins" / "xla_cuda13" / "xla_cuda_plugin.so"
    fake.parent.mkdir(parents=True)
    fake.write_bytes(b"not a shared object")
    out = _probe(PYJAX_CUDA_PLUGIN_PATH=str(fake))
    assert out["default"] == "cpu"
    assert out["cpu"] == ["cpu"]
    assert out["gpu"].startswith("RuntimeError: Backend 'gpu' failed to initialize: Could not "
                                 f"load the PJRT plugin {fake}: the file has 19 bytes")
    assert "pip install 'pyjax[cuda13]'" in out["gpu"]
    assert len(out["warnings"]) == 1 and "falling back to cpu" in out["warnings"][0]
    # explicitly asked for, the broken plugin is an error, not a fallback
    out = _probe(PYJAX_CUDA_PLUGIN_PATH=str(fake), JAX_PLATFORMS="cuda")
    assert out["default"].startswith("RuntimeError: Unable to initialize backend 'cuda': "
                                     "Could not load the PJRT plugin")


def test_the_plugin_is_found_where_the_wheels_put_it(tmp_path, monkeypatch):
    monkeypatch.delenv(plugin.CUDA_PLUGIN_PATH_ENV, raising=False)
    for flavour in ("xla_cuda12", "xla_cuda13"):
        so = tmp_path / "jax_plugins" / flavour / "xla_cuda_plugin.so"
        so.parent.mkdir(parents=True)
        so.write_bytes(b"")
    monkeypatch.setattr(sys, "path", ["/nonexistent", str(tmp_path)])
    assert plugin.find_cuda_plugin_path() == str(
        tmp_path / "jax_plugins" / "xla_cuda13" / "xla_cuda_plugin.so")   # CUDA 13 first
    monkeypatch.setenv(plugin.CUDA_PLUGIN_PATH_ENV, str(tmp_path / "missing.so"))
    with pytest.raises(plugin.PluginNotFoundError, match="does not name an existing file"):
        plugin.find_cuda_plugin_path()


def test_cuda_client_options_follow_jax_environment_variables(monkeypatch):
    for var in ("XLA_PYTHON_CLIENT_ALLOCATOR", "XLA_CLIENT_MEM_FRACTION",
                "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_PREALLOCATE",
                "XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB"):
        monkeypatch.delenv(var, raising=False)
    assert plugin.cuda_client_options() == {"platform_name": "cuda", "allocator": "default"}
    monkeypatch.setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "Platform")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ".5")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB", "3")
    assert plugin.cuda_client_options() == {
        "platform_name": "cuda", "allocator": "platform", "memory_fraction": 0.5,
        "preallocate": False, "collective_memory_size": 3 << 20}
    monkeypatch.setenv("XLA_CLIENT_MEM_FRACTION", ".6")
    with pytest.raises(ValueError, match="Remove the latter one"):
        plugin.cuda_client_options()
    monkeypatch.setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "magic")
    with pytest.raises(ValueError, match='got "magic"'):
        plugin.cuda_client_options()


# --- with a GPU ---------------------------------------------------------------------------

_GPU_PROGRAM = """
import json
import numpy as np
import pyjax, pyjax.numpy as jnp
gpus = pyjax.devices("gpu")
x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
y = pyjax.jit(lambda a: jnp.tanh(a @ a.T) + 1)(x)
on_cpu = pyjax.device_put(x, pyjax.devices("cpu")[0])
print(json.dumps({
    "default": pyjax.default_backend(), "platforms": sorted({d.platform for d in gpus}),
    "same_as_cuda": gpus == pyjax.devices("cuda"), "result_device": str(y.devices()),
    "max_err": float(np.max(np.abs(np.asarray(y) - (np.tanh(x @ x.T) + 1)))),
    "cpu_copy": np.asarray(on_cpu).tolist() == x.tolist(),
}))
"""


@pytest.mark.skipif(not HAVE_CUDA_PLUGIN, reason="no CUDA PJRT plugin installed "
                    "(pip install 'pyjax[cuda13]')")
def test_on_a_gpu():
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "PYJAX_PLATFORMS")}
    proc = subprocess.run([sys.executable, "-c", _GPU_PROGRAM], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    if "failed to initialize" in proc.stderr or "found no GPU" in proc.stderr:
        pytest.skip("the CUDA plugin is installed but finds no GPU")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["default"] == "gpu"
    assert out["platforms"] == ["gpu"] and out["same_as_cuda"]
    assert "Cuda" in out["result_device"] or "cuda" in out["result_device"].lower()
    assert out["max_err"] < 1e-5
    assert out["cpu_copy"]
