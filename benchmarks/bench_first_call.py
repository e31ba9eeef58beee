"""First calls and asynchronous dispatch, side by side with JAX 0.10.2 (when its venv exists).

1. The first call of ``jit(grad(MLP loss))`` (784-512-512-10, batch 128) in a fresh process,
   the persistent compilation cache off on both sides: pyjax with tiered compilation (the
   default), pyjax without it, and JAX; pyjax's call split into trace, lower, compile and run;
   JAX's split from its ahead-of-time API in a separate fresh process; and pyjax with a
   persistent cache filled by an earlier process. Then the steady-state step of each
   (pyjax's after the full build was swapped in).
2. A 100-step SGD loop on the same MLP: its wall time against the sum of its step times
   (each step timed alone, blocking), with device-resident and with NumPy batches, and how
   long the loop's Python waits in one dispatch.

Run by hand: ``python benchmarks/bench_first_call.py [--repeats 5] [--skip-loop]``. The rounds
interleave the libraries and report min and median: the machine is shared, timings are noisy.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from timing import JAX_PYTHON  # noqa: E402

COMMON = r"""
import json, os, sys, time, threading
t0 = time.perf_counter()
LIB = os.environ["BENCH_LIB"]
if LIB == "jax":
    import jax, jax.numpy as jnp
else:
    import pyjax as jax, pyjax.numpy as jnp
import numpy as np
t_import = time.perf_counter() - t0

def loss(params, x, y):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = jnp.tanh(x @ w1 + b1)
    h = jnp.tanh(h @ w2 + b2)
    logits = h @ w3 + b3
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(logp * y, axis=1))

rng = np.random.default_rng(0)
sizes = [(784, 512), (512, 512), (512, 10)]
params_np = [(rng.normal(size=s).astype(np.float32) * 0.05, np.zeros(s[1], np.float32))
             for s in sizes]
xs = [rng.normal(size=(128, 784)).astype(np.float32) for _ in range(10)]
ys = [np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)] for _ in range(10)]
params = jax.device_put(params_np)
xd, yd = jax.device_put(xs), jax.device_put(ys)
jax.block_until_ready((params, xd, yd))

def wait_upgrades():
    if LIB != "jax":
        from pyjax._src.runtime import tiered
        tiered.wait_for_upgrades()

def steady(fn, n=20):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        jax.block_until_ready(fn())
        ts.append(time.perf_counter() - t)
    return min(ts)
"""

FIRST_CALL = COMMON + r"""
acc = {"lower": 0.0, "compile": 0.0}
if LIB != "jax":  # time pyjax's stages on this thread (not the background compile)
    from pyjax._src.interpreters import lowering
    from pyjax._src.runtime import client as client_mod
    main = threading.main_thread()
    def timed(fn, what):
        def wrapper(*a, **k):
            if threading.current_thread() is not main:
                return fn(*a, **k)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                acc[what] += time.perf_counter() - t
        return wrapper
    lowering.lower_module = timed(lowering.lower_module, "lower")
    client_mod.Client._compile_loaded = timed(client_mod.Client._compile_loaded, "compile")
step = jax.jit(jax.grad(loss))
out = {"import": t_import}
if os.environ.get("BENCH_AOT"):  # JAX's stages through its ahead-of-time API
    t = time.perf_counter(); traced = step.trace(params, xd[0], yd[0])
    t1 = time.perf_counter(); lowered = traced.lower()
    t2 = time.perf_counter(); compiled = lowered.compile()
    t3 = time.perf_counter(); jax.block_until_ready(compiled(params, xd[0], yd[0]))
    t4 = time.perf_counter()
    out.update(trace=t1 - t, lower=t2 - t1, compile=t3 - t2, run=t4 - t3, first_call=t4 - t)
else:
    t = time.perf_counter()
    if LIB != "jax":
        step.trace(params, xd[0], yd[0])  # fills the trace cache the call then uses
    t1 = time.perf_counter()
    jax.block_until_ready(step(params, xd[0], yd[0]))
    t2 = time.perf_counter()
    out["first_call"] = t2 - t
    if LIB != "jax":
        out.update(trace=t1 - t, lower=acc["lower"], compile=acc["compile"],
                   run=t2 - t1 - acc["lower"] - acc["compile"])
        out["low_tier_step"] = steady(lambda: step(params, xd[0], yd[0]), 3)
        t = time.perf_counter(); wait_upgrades(); out["upgrade_wait"] = time.perf_counter() - t
    out["steady_step"] = steady(lambda: step(params, xd[0], yd[0]))
print(json.dumps(out))
"""

LOOP = COMMON + r"""
@jax.jit
def update(params, x, y):
    g = jax.grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, g)

p = update(params, xd[0], yd[0])
wait_upgrades()
for _ in range(5):
    p = update(p, xd[0], yd[0])
jax.block_until_ready(p)

def loop(numpy_batches, blocking):
    global p
    dispatch, steps = [], []
    t0 = time.perf_counter()
    for i in range(100):
        x, y = (xs[i % 10], ys[i % 10]) if numpy_batches else (xd[i % 10], yd[i % 10])
        t = time.perf_counter()
        p = update(p, x, y)
        dispatch.append(time.perf_counter() - t)
        if blocking:
            jax.block_until_ready(p)
            steps.append(time.perf_counter() - t)
    jax.block_until_ready(p)
    return time.perf_counter() - t0, sum(steps), statistics.median(dispatch)

import statistics
out = {}
for numpy_batches in (False, True):
    walls, sums, disp = [], [], []
    for _ in range(int(os.environ.get("BENCH_LOOP_REPEATS", "3"))):
        w, _, d = loop(numpy_batches, False)
        _, s, _ = loop(numpy_batches, True)
        walls.append(w); sums.append(s); disp.append(d)
    tag = "numpy" if numpy_batches else "device"
    out[tag] = {"wall": min(walls), "sum_steps": min(sums), "dispatch_median": min(disp),
                "ratio_of_mins": min(walls) / min(sums),
                "ratios": [w / s for w, s in zip(walls, sums)]}
print(json.dumps(out))
"""


def child(lib, program, **env):
    python = JAX_PYTHON if lib == "jax" else sys.executable
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    e = dict(os.environ, BENCH_LIB=lib, PYTHONPATH=root, PYJAX_COMPILATION_CACHE="0",
             JAX_ENABLE_COMPILATION_CACHE="0", TF_CPP_MIN_LOG_LEVEL="2")
    e.update(env)
    p = subprocess.run([python, "-c", program], env=e, capture_output=True, text=True,
                       timeout=600)
    if p.returncode:
        raise RuntimeError(f"{lib} child failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def have_jax():
    if not os.path.exists(JAX_PYTHON):
        return False
    return subprocess.run([JAX_PYTHON, "-c", "import jax"], capture_output=True).returncode == 0


def first_calls(repeats, jax_ok):
    cache_dir = tempfile.mkdtemp(prefix="bench-first-call-")
    warm = {"PYJAX_COMPILATION_CACHE": "1", "PYJAX_COMPILATION_CACHE_DIR": cache_dir}
    child("pyjax", FIRST_CALL, **warm)  # fills the cache (it waits for the full build)
    modes = {"pyjax tiered": ("pyjax", {}),
             "pyjax untiered": ("pyjax", {"PYJAX_TIERED_COMPILATION": "0"}),
             "pyjax warm cache": ("pyjax", warm)}
    if jax_ok:
        modes["jax"] = ("jax", {})
        modes["jax (AOT stages)"] = ("jax", {"BENCH_AOT": "1"})
    runs = {m: [] for m in modes}
    try:
        for _ in range(repeats):  # interleaved: each round runs every mode once
            for m, (lib, env) in modes.items():
                runs[m].append(child(lib, FIRST_CALL, **env))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    cols = ["first_call", "trace", "lower", "compile", "run", "steady_step",
            "low_tier_step", "upgrade_wait"]
    print(f"\nFirst call of jit(grad(MLP loss)), fresh process, cache off; ms, min / median "
          f"of {repeats}")
    print(f"{'':18s}" + "".join(f"{c:>17s}" for c in cols))
    for m, rs in runs.items():
        cells = []
        for c in cols:
            v = [r[c] * 1e3 for r in rs if c in r]
            cells.append(f"{min(v):8.1f}/{statistics.median(v):<8.1f}" if v else f"{'-':>17s}")
        print(f"{m:18s}" + "".join(cells))
    if jax_ok:
        for m in ("pyjax tiered", "pyjax untiered", "pyjax warm cache"):
            mine = [r["first_call"] for r in runs[m]]
            theirs = [r["first_call"] for r in runs["jax"]]
            print(f"{m} / jax first call: min {min(mine) / min(theirs):.2f}, median "
                  f"{statistics.median(mine) / statistics.median(theirs):.2f}")
    return runs


def loops(jax_ok, repeats):
    libs = ["pyjax"] + (["jax"] if jax_ok else [])
    print("\n100-step SGD loop (MLP 784-512-512-10, batch 128): wall vs sum of step times")
    print(f"{'':24s}{'wall ms':>10s}{'sum steps ms':>14s}{'ratio':>8s}  {'ratio per round':30s}"
          f"{'dispatch us':>12s}")
    for lib in libs:
        out = child(lib, LOOP, BENCH_LOOP_REPEATS=str(repeats))
        for tag, r in out.items():
            ratios = " ".join(f"{v:.2f}" for v in r["ratios"])
            print(f"{lib + ' ' + tag + ' batches':24s}{r['wall'] * 1e3:10.1f}"
                  f"{r['sum_steps'] * 1e3:14.1f}{r['ratio_of_mins']:8.3f}  {ratios:30s}"
                  f"{r['dispatch_median'] * 1e6:12.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-loop", action="store_true")
    ap.add_argument("--skip-first", action="store_true")
    args = ap.parse_args()
    jax_ok = have_jax()
    if not jax_ok:
        print(f"(JAX not found at {JAX_PYTHON}: pyjax only)")
    if not args.skip_first:
        first_calls(args.repeats, jax_ok)
    if not args.skip_loop:
        loops(jax_ok, args.repeats)


if __name__ == "__main__":
    main()
