"""Memory guard: eager operations and distinct compilations must not grow resident memory
without bound. Run in a fresh interpreter (other tests' caches and buffers would blur the
figure). The counts are cut for CI; benchmarks/stress_memory.py runs 100k ops and 1,000
compilations and reports the measured growth."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def test_eager_ops_and_compilations_keep_memory_bounded():
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(HERE, "memory_workload.py"), "20000", "60"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    res = json.loads([l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1][7:])
    # Generous bounds (measured: ~0.1 MB and ~0.1 MB): a leak of one small buffer (256 bytes)
    # per op would be 5 MB here; a leaked executable per compilation (~0.11 MB) 6.8 MB.
    assert res["eager_growth_mb"] < 4.0, res
    assert res["compile_growth_mb"] < 3.0, res


def test_a_dropped_jitted_function_frees_its_executable():
    """A const-free traced Jaxpr used to be cached as its own call Jaxpr in a weak-keyed
    dict (the value held the key), so every jitted function leaked its executable
    (~0.1 MB each)."""
    import gc

    import numpy as np

    import pyjax as jax
    from pyjax._src.runtime.executable import Executable

    def live():
        gc.collect()
        return sum(isinstance(o, Executable) for o in gc.get_objects())

    x = np.zeros((3, 5), np.float32)
    before = live()
    for i in range(10):
        f = jax.jit(lambda a, c=float(i): a * c + 7.0)
        np.testing.assert_array_equal(np.asarray(f(x)), x * i + 7.0)
    del f
    assert live() - before <= 1, "jitted functions' executables outlive them"
