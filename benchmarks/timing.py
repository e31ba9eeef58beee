"""Timing helpers shared by the benchmark scripts (run from this folder's parent as
``python benchmarks/bench_x.py``; Python puts this folder on the path)."""
import json
import os
import statistics
import subprocess
import sys
import time


def per_call_us(fn, n=20000, repeat=5):
    """Best-of-``repeat`` mean time of one call, in microseconds, after a warm-up call."""
    fn()
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t) / n * 1e6)
    return min(best)


def _call_times_ms(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def ms(fn, repeat=10):
    """Median time of one call, in milliseconds, after a warm-up call."""
    return statistics.median(_call_times_ms(fn, repeat))


def print_table(results, rows=None, label="measurement", width=45, cell=12, digits=2):
    """Print ``{library: {row: value}}`` side by side, one row per measurement ("-" where a
    library has no value); rows default to those of the first library."""
    names = list(results)
    rows = list(results[names[0]]) if rows is None else rows
    print(f"{label:{width}s}" + "".join(f"{n:>{cell}s}" for n in names))
    for row in rows:
        cells = "".join(f"{results[n][row]:{cell}.{digits}f}" if row in results[n]
                        else f"{'-':>{cell}s}" for n in names)
        print(f"{row:{width}s}{cells}")


def use_eight_cpu_devices():
    """Asks both sides for 8 virtual CPU devices; call before importing pyjax or jax."""
    os.environ.setdefault("PYJAX_CPU_DEVICES", "8")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if "--worker-jax" in sys.argv:  # JAX reads its device count from XLA_FLAGS at import
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + " --xla_force_host_platform_device_count=8").strip()


# --- JAX side in a subprocess (pyjax never imports jax) -----------------------------------
# A benchmark written once against a JAX-like module runs itself again under JAX's interpreter
# with ``--worker-jax``; that run prints its results as one JSON line, read back here.

# made by benchmarks/setup_jax_side.sh; $JAX_PYTHON names another JAX interpreter
JAX_PYTHON = (os.environ.get("JAX_PYTHON")
              or os.path.join(os.path.dirname(os.path.abspath(__file__)), ".jaxvenv", "bin",
                              "python"))
IS_JAX_WORKER = "--worker-jax" in sys.argv


def best_ms(fn, repeat=10):
    """Minimum time of one call, in milliseconds, after a warm-up call (steadier than the
    median on a shared machine)."""
    return min(_call_times_ms(fn, repeat))


def jax_side(script, args=(), timeout=1800):
    """Run ``script --worker-jax *args`` under ``JAX_PYTHON`` (JAX_PLATFORMS=cpu) and return
    the dict its last stdout line holds, or None (with a note) when JAX is absent or fails."""
    if not os.path.exists(JAX_PYTHON):
        print(f"(JAX side skipped: {JAX_PYTHON} not found)", file=sys.stderr)
        return None
    cmd = [JAX_PYTHON, os.path.abspath(script), "--worker-jax", *args]
    try:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout,
                             env=dict(os.environ, JAX_PLATFORMS="cpu"))
        return json.loads(res.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        print(f"(JAX side skipped: {e})", file=sys.stderr)
        return None


def main_interleaved(measure, script):
    """The ``__main__`` of a benchmark measured by ``measure()`` (a dict of numbers): as the JAX
    worker, print one run; else ``--rounds N`` (default 3) interleaved rounds as a table."""
    if IS_JAX_WORKER:
        worker_print(measure())
        sys.exit()
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    print_table(interleaved_rounds(measure, script, rounds), digits=3)


def interleaved_rounds(measure_ours, script, rounds):
    """``rounds`` rounds of ``measure_ours()`` (a dict of numbers) each followed by the JAX
    worker's run of ``script`` (same machine load on both sides); returns the per-key
    ``pyjax min``/``pyjax median``/``jax min``/``jax median`` rows and the ``min ratio``."""
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(measure_ours())
        got = jax_side(script)
        if got is not None:
            theirs.append(got)
    results = {}
    for name, runs in (("pyjax", ours), ("jax", theirs)):
        if runs:
            results[name + " min"] = {k: min(r[k] for r in runs) for k in runs[0]}
            results[name + " median"] = {k: statistics.median(r[k] for r in runs)
                                         for k in runs[0]}
    if theirs:
        results["min ratio"] = {k: results["pyjax min"][k] / results["jax min"][k]
                                for k in results["jax min"]}
    return results


def worker_print(results):
    """Inside the JAX worker: hand ``results`` back as the last stdout line."""
    print(json.dumps(results))
