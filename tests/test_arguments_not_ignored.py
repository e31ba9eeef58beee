"""Arguments that used to be silently ignored or to fail obscurely now raise, saying what was
passed and what is expected (axis strings, device strings, device-count and platform
environment variables)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
X = np.ones((2, 3), np.float32)


@pytest.mark.parametrize("call", [
    lambda: jnp.sum(X, axis="0"),
    lambda: jnp.argmax(X, axis="0"),
    lambda: jnp.cumsum(X, axis="0"),
    lambda: jnp.concatenate([X, X], axis="0"),
    lambda: jnp.expand_dims(X, "0"),
    lambda: pyjax.vmap(lambda a: a, in_axes="0")(X),
    lambda: pyjax.vmap(lambda a: a, out_axes="0")(X),
], ids=["sum", "argmax", "cumsum", "concatenate", "expand_dims", "vmap_in", "vmap_out"])
def test_string_axis_raises_type_error(call):
    with pytest.raises(TypeError, match="'0'"):
        call()


@pytest.mark.parametrize("call", [
    lambda: pyjax.device_put(X, "cpu:1"),
    lambda: jnp.array(X, device="cpu:1"),
    lambda: jnp.asarray([1.0], device="cpu:1"),
    lambda: jnp.zeros(3, device="cpu:1"),
], ids=["device_put", "array", "asarray", "zeros"])
def test_device_string_raises_type_error_naming_it(call):
    with pytest.raises(TypeError, match=r"Device or a Sharding.*'cpu:1'.*str"):
        call()


def test_device_object_still_accepted():
    d = pyjax.devices()[-1]
    assert jnp.zeros(3, device=d).devices() == {d}


def _run_python(code, **env):
    e = dict(os.environ, PYTHONPATH=REPO, **env)
    for name in ("PYJAX_CPU_DEVICES", "JAX_NUM_CPU_DEVICES", "JAX_PLATFORMS", "PYJAX_PLATFORMS"):
        if name not in env:
            e.pop(name, None)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("name,value", [("PYJAX_CPU_DEVICES", str(10**12)),
                                        ("JAX_NUM_CPU_DEVICES", str(2**32 + 1))])
def test_huge_cpu_device_count_raises_clear_error(name, value):
    r = _run_python("import pyjax; print(len(pyjax.devices()))", **{name: value})
    assert r.returncode != 0, r.stdout
    assert "ValueError" in r.stderr and name in r.stderr and value in r.stderr, r.stderr
    assert "IndexError" not in r.stderr


def test_valid_cpu_device_count_env_is_honoured():
    r = _run_python("import pyjax; print(len(pyjax.devices()))", PYJAX_CPU_DEVICES="3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "3"


def test_huge_cpu_device_count_config_raises():
    with pytest.raises(ValueError, match=str(10**12)):
        pyjax.config.update("jax_num_cpu_devices", 10**12)


@pytest.mark.parametrize("value", ["gpu", "cuda", "tpu,cpu"])
def test_unavailable_platform_is_not_silently_cpu(value):
    r = _run_python("import pyjax, pyjax.numpy as jnp; print(pyjax.devices()); "
                    "print(jnp.ones(2) + 1)", JAX_PLATFORMS=value)
    assert r.returncode != 0, r.stdout
    # without a CUDA plugin, gpu/cuda fail to start (JAX's RuntimeError); tpu is refused
    expected = ("pyjax has the 'cpu' and 'cuda'" if "tpu" in value
                else f"Unable to initialize backend '{value}'")
    assert value in r.stderr and expected in r.stderr, r.stderr
