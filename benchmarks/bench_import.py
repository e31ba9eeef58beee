"""``import pyjax`` against ``import jax`` (and their parts), fresh processes, best of N.

Run by hand from the repository root: ``python benchmarks/bench_import.py [N]``.
The JAX side runs with benchmarks/.jaxvenv (setup_jax_side.sh) or $JAX_PYTHON when it exists and is skipped otherwise.
Bytecode caches are allowed (PYTHONDONTWRITEBYTECODE is unset) and a first, untimed import
writes them: an installed package has them, and without them pyjax's time is mostly the
compilation of its ~180 modules. Wall time is what a user waits; CPU time (user + system of
the importing process) is steadier on a busy machine. docs/performance_import.md has results.
"""
import os
import subprocess
import sys

from timing import JAX_PYTHON  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CODE = ("import time; t = time.perf_counter(); c = time.process_time(); import {mod}; "
         "print(time.perf_counter() - t, time.process_time() - c)")


def best_of(python, module, n, extra_path=None):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if extra_path:
        env["PYTHONPATH"] = extra_path
    cmd = [python, "-c", _CODE.format(mod=module)]
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True)  # writes .pyc
    runs = []
    for _ in range(n):
        out = subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
        runs.append(tuple(map(float, out.stdout.split())))
    return min(r[0] for r in runs), min(r[1] for r in runs)


def versions(python):
    code = "import numpy, importlib.metadata as m; print(numpy.__version__, m.version('ml_dtypes'))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=ROOT)
    return out.stdout.strip() or "?"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rows = [("pyjax", sys.executable, "pyjax"), ("numpy", sys.executable, "numpy"),
            ("ml_dtypes", sys.executable, "ml_dtypes")]
    have_jax = os.path.exists(JAX_PYTHON)
    if have_jax:
        rows.append(("jax", JAX_PYTHON, "jax"))
    print(f"numpy, ml_dtypes here: {versions(sys.executable)}"
          + (f"; in the JAX venv: {versions(JAX_PYTHON)}" if have_jax else ""))
    results = {}
    for name, python, mod in rows:
        results[name] = best_of(python, mod, n)
        wall, cpu = results[name]
        print(f"import {name:10s} wall {wall * 1e3:7.1f} ms   cpu {cpu * 1e3:7.1f} ms  (best of {n})")
    if have_jax:
        (pw, pc), (jw, jc) = results["pyjax"], results["jax"]
        print(f"pyjax / jax: wall {pw / jw:.2f}x, cpu {pc / jc:.2f}x (goal <= 0.35x)")
    else:
        print(f"JAX not installed at {JAX_PYTHON}: no side-by-side ratio")


if __name__ == "__main__":
    main()
