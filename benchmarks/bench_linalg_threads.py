"""OpenBLAS threads inside pyjax's host LAPACK kernels (issue 19, item 2), run by hand:

    python benchmarks/bench_linalg_threads.py [--rounds 6] [--calls 20] [--load N]

Times jitted solve (8 right-hand sides), det, inv and cholesky of 512² float32 matrices (their
LAPACK runs on the host, lax/linalg_host.py) with the OpenBLAS libraries of NumPy and SciPy at
their default thread count and at one thread inside the kernels (pyjax's default since issue
19: ``lax/blas_threads.pinned``), switched in the same process and interleaved: each round runs
every case ``--calls`` times at each setting, alternating which goes first. The default-threads
setting turns the pinning off by replacing ``blas_threads.single_threaded`` for its calls.
``--load N`` starts N busy-looping processes for the run (stopped at the end) to see the
behaviour on an oversubscribed machine. Reported per case and setting: min, median and 90th
percentile (ms) over all calls, and the process CPU time per call.
"""
import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--load", type=int, default=0, help="busy processes to start")
    parser.add_argument("--n", type=int, default=512)
    args = parser.parse_args()

    import pyjax
    import pyjax.numpy as jnp
    from pyjax._src.lax import blas_threads

    rng = np.random.default_rng(0)
    n = args.n
    a = (rng.normal(size=(n, n)) / np.sqrt(n)).astype(np.float32)
    spd = (a @ a.T + np.eye(n)).astype(np.float32)
    b = rng.normal(size=(n, 8)).astype(np.float32)
    cases = {f"solve {n}² (8 rhs)": (jnp.linalg.solve, (a, b)),
             f"det {n}²": (jnp.linalg.det, (a,)), f"inv {n}²": (jnp.linalg.inv, (a,)),
             f"cholesky {n}²": (jnp.linalg.cholesky, (spd,))}
    runs = {}
    for name, (f, xs) in cases.items():
        jf, dev = pyjax.jit(f), [pyjax.device_put(x) for x in xs]
        pyjax.block_until_ready(jf(*dev))
        runs[name] = lambda jf=jf, dev=dev: pyjax.block_until_ready(jf(*dev))
    default = blas_threads.get_num_threads()
    print(f"OpenBLAS libraries loaded: {len(default)}, default threads {default}; "
          f"os.cpu_count() {os.cpu_count()}")
    settings = {f"default ({max(default)})": False, "1 thread": True}
    pinning = blas_threads.single_threaded

    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.load)]
    print(f"load average at start: {os.getloadavg()[0]:.1f} (+{args.load} busy processes)")
    times = {(c, s): [] for c in cases for s in settings}
    cpu = {(c, s): [] for c in cases for s in settings}
    try:
        for r in range(args.rounds):
            order = list(settings.items()) if r % 2 == 0 else list(settings.items())[::-1]
            for name, run in runs.items():
                for label, pin in order:
                    blas_threads.single_threaded = pinning if pin else contextlib.nullcontext
                    run()
                    for _ in range(args.calls):
                        t, c = time.perf_counter(), time.process_time()
                        run()
                        times[name, label].append((time.perf_counter() - t) * 1e3)
                        cpu[name, label].append((time.process_time() - c) * 1e3)
    finally:
        blas_threads.single_threaded = pinning
        for p in busy:
            p.kill()
            p.wait()
    print(f"load average at end: {os.getloadavg()[0]:.1f}\n")
    print(f"{'ms per call':22s}" + "".join(f"{label + ' ' + k:>22s}" for label in settings
                                           for k in ("min/med/p90", "cpu")))
    for name in cases:
        row = f"{name:22s}"
        for label in settings:
            ts = sorted(times[name, label])
            p90 = ts[int(0.9 * (len(ts) - 1))]
            row += f"{f'{ts[0]:.2f}/{statistics.median(ts):.2f}/{p90:.2f}':>22s}"
            row += f"{statistics.median(cpu[name, label]):22.2f}"
        print(row)


if __name__ == "__main__":
    main()
