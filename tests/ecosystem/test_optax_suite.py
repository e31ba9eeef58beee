"""optax's own tests (shipped in its wheel) pass under pyjax: a fixed selection of its test
modules run by pytest in a subprocess, `jax` resolved to pyjax by optax_suite_plugin.py.
docs/ecosystem.md lists what the wider runs gave and why the rest fail."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# modules of optax 0.2.8 that pass in full, and how many tests each has there
MODULES = {
    "_src/base_test.py": 11,
    "_src/combine_test.py": 15,
    "_src/update_test.py": 6,
    "_src/transform_test.py": 23,
    "_src/numerics_test.py": 87,  # needed Lowered.compiler_ir(dialect="hlo")
    "_src/factorized_test.py": 9,  # needed jnp.dtype('bfloat16') before ml_dtypes loaded
    "transforms/_clipping_test.py": 9,
    "transforms/_masking_test.py": 20,
    "schedules/_inject_test.py": 21,  # needed jnp.asarray(key) to return the key array
    "contrib/_reduce_on_plateau_test.py": 8,
    # these three needed key arrays to be pytree leaves, as in JAX
    "_src/float64_test.py": 24,
    "tree_utils/_state_utils_test.py": 8,
    "tree_utils/_random_test.py": 16,
}


def test_optax_test_modules_pass(tmp_path):
    spec = importlib.util.find_spec("optax")
    if spec is None:
        pytest.skip("optax is not installed (see shims/README.md for the install command)")
    base = os.path.dirname(spec.origin)
    files = [os.path.join(base, m) for m in MODULES]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # -c /dev/null and a scratch rootdir: none of this project's pytest options or conftests
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.ecosystem.optax_suite_plugin",
         "-c", os.devnull, "--rootdir", str(tmp_path), "-q", "-p", "no:cacheprovider",
         "--tb=short", *files],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    passed = re.search(r"(\d+) passed", tail)
    assert passed and int(passed.group(1)) >= sum(MODULES.values()), tail
    assert "failed" not in tail.splitlines()[-1] and "error" not in tail.splitlines()[-1], tail
