"""Resident-memory growth over many eager operations and many distinct compilations.

``python memory_workload.py EAGER_OPS COMPILATIONS`` prints ``RESULT {json}`` with the RSS
(from /proc/self/statm) after a warm-up, after the eager loop and after the compilations.
Used by tests/guard/test_memory.py (small counts, a generous bound) and
benchmarks/stress_memory.py (the full 100k / 1,000)."""
import gc
import json
import os
import sys
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE / 2**20


def eager_loop(n, x, y):
    """``n`` eager operations of a few kinds (each result dropped at once, some read)."""
    acc = 0.0
    for i in range(n):
        k = i % 5
        if k == 0:
            z = x + y
        elif k == 1:
            z = jnp.sin(x) * 2.0
        elif k == 2:
            z = jnp.sum(x)
        elif k == 3:
            z = x[i % 8]
        else:
            z = jnp.asarray(np.full(8, float(i % 7), np.float32)) @ y
            acc += float(z)  # a host read every few ops
    return acc


def compile_loop(n):
    """``n`` distinct compilations: a new constant and shape each time."""
    for i in range(n):
        f = jax.jit(lambda a, c=float(i): a * c + 1.0)
        f(np.zeros((i % 17 + 1, i % 3 + 1), np.float32)).block_until_ready()


def run(eager_ops, compilations):
    x = jnp.arange(64.0, dtype=jnp.float32).reshape(8, 8)
    y = jnp.ones(8, jnp.float32)
    eager_loop(2000, x, y)  # warm-up: executables of each kind compiled, pools filled
    compile_loop(min(50, compilations))
    gc.collect()
    start = rss_mb()
    t0 = time.perf_counter()
    eager_loop(eager_ops, x, y)
    gc.collect()
    after_eager = rss_mb()
    t1 = time.perf_counter()
    compile_loop(compilations)
    gc.collect()
    after_compile = rss_mb()
    t2 = time.perf_counter()
    return {"eager_ops": eager_ops, "compilations": compilations, "rss_start_mb": start,
            "eager_growth_mb": after_eager - start,
            "eager_growth_mb_per_100k": (after_eager - start) * 100_000 / max(1, eager_ops),
            "compile_growth_mb": after_compile - after_eager,
            "eager_us_per_op": (t1 - t0) / max(1, eager_ops) * 1e6,
            "compile_ms_each": (t2 - t1) / max(1, compilations) * 1e3}


if __name__ == "__main__":
    n_ops, n_comp = (int(a) for a in sys.argv[1:3])
    print("RESULT", json.dumps(run(n_ops, n_comp)), flush=True)
