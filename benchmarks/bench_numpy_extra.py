"""Benchmarks of the jnp functions added for JAX's full ``jax.numpy`` surface (run by hand),
each jitted on 10^6 elements, side by side with NumPy (JAX is timed too when installed).

    python benchmarks/bench_numpy_extra.py [--n 1000000]

Rows (ms, median of 10 after a warm-up call): pad (reflect, odd), percentile (linear),
isin (binary search), lexsort (two keys), interp, histogram2d, vectorize (a scalar function).
"""
import argparse
import importlib

import numpy as np
from timing import ms, print_table


def cases(jnp, n, rng, numpy_side):
    x = rng.normal(size=n).astype(np.float32)
    y = rng.normal(size=n).astype(np.float32)
    tests = rng.normal(size=1000).astype(np.float32)
    k1, k2 = rng.integers(0, 100, n), rng.integers(0, 100, n)
    xp = np.sort(rng.normal(size=1000)).astype(np.float32)
    fp = rng.normal(size=1000).astype(np.float32)
    side = 1000
    img = x[:side * side].reshape(side, side)
    scalar = (lambda v: v * v + 1.0 if v > 0 else -v) if numpy_side else \
        (lambda v: jnp.where(v > 0, v * v + 1.0, -v))
    return {
        "pad 1000x1000 by 16, reflect odd": (
            lambda a: jnp.pad(a, 16, mode="reflect", reflect_type="odd"), (img,)),
        "percentile 1e6 (q=10,50,90)": (
            lambda a: jnp.percentile(a, np.array([10.0, 50.0, 90.0])), (x,)),
        "isin 1e6 in 1000 (sorted search)": (
            (lambda a, t: jnp.isin(a, t)) if numpy_side
            else (lambda a, t: jnp.isin(a, t, method="binary_search")), (x, tests)),
        "lexsort 1e6, two keys": (lambda a, b: jnp.lexsort((a, b)), (k1, k2)),
        "interp 1e6 on 1000 points": (lambda a: jnp.interp(a, xp, fp), (x,)),
        "histogram2d 1e6, 32x32 bins": (lambda a, b: jnp.histogram2d(a, b, bins=32)[0], (x, y)),
        "vectorize scalar fn, 1e6": (jnp.vectorize(scalar), (x,)),
    }


def run_numpy(n):
    rng = np.random.default_rng(0)
    out = {}
    for name, (fn, args) in cases(np, n, rng, True).items():
        if name.startswith("vectorize"):
            args = (args[0][:n // 100],)  # np.vectorize is a Python loop: time 1% and scale
            out[name] = ms(lambda: fn(*args), repeat=3) * 100
        else:
            out[name] = ms(lambda: fn(*args))
    return out


def run_jax_like(mod_name, n):
    try:
        jax = importlib.import_module(mod_name)
        jnp = importlib.import_module(mod_name + ".numpy")
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    out = {}
    for name, (fn, args) in cases(jnp, n, rng, False).items():
        f = jax.jit(fn)
        dev = [jnp.asarray(a) for a in args]
        out[name] = ms(lambda: jax.block_until_ready(f(*dev)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    n = parser.parse_args().n
    results = {"pyjax": run_jax_like("pyjax", n), "numpy": run_numpy(n)}
    jax_results = run_jax_like("jax", n)
    if jax_results is not None:
        results["jax"] = jax_results
    print_table(results, label=f"ms per call, n={n}")


if __name__ == "__main__":
    main()
