"""Benchmarks of the jnp functions added for JAX's full ``jax.numpy`` surface (run by hand),
each jitted on 10^6 elements, side by side with NumPy and JAX (in a subprocess with
benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON; skipped when absent).

    python benchmarks/bench_numpy_extra.py [--n 1000000] [--rounds 3]

Rows (ms, min of 10 after a warm-up call; pyjax and JAX alternate in rounds and the best
round is kept): pad (reflect, odd), percentile (linear), isin (binary search), unique,
lexsort (two keys), interp, histogram2d, vectorize (a scalar function).
"""
import argparse
import importlib

import numpy as np
from timing import IS_JAX_WORKER, best_ms, jax_side, ms, print_table, worker_print


def cases(jnp, n, rng, numpy_side):
    x = rng.normal(size=n).astype(np.float32)
    y = rng.normal(size=n).astype(np.float32)
    tests = rng.normal(size=1000).astype(np.float32)
    k1, k2 = rng.integers(0, 100, n), rng.integers(0, 100, n)
    k3 = rng.integers(0, 1000, n).astype(np.int32)
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
        "unique 1e6 ints in [0, 1000) (size=1000 under jit)": (
            (lambda a: jnp.unique(a)) if numpy_side
            else (lambda a: jnp.unique(a, size=1000, fill_value=0)), (k3,)),
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
            out[name] = best_ms(lambda: fn(*args))
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
        out[name] = best_ms(lambda: jax.block_until_ready(f(*dev)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker-jax", action="store_true")
    args = parser.parse_args()
    n = args.n
    if IS_JAX_WORKER:
        worker_print(run_jax_like("jax", n))
        return
    ours, theirs = [], []
    for _ in range(args.rounds):  # interleaved: both sides see the same machine load
        ours.append(run_jax_like("pyjax", n))
        got = jax_side(__file__, ["--n", str(n)])
        if got:
            theirs.append(got)
    rows = list(ours[0])
    results = {"pyjax": {k: min(r[k] for r in ours) for k in rows}, "numpy": run_numpy(n)}
    if theirs:
        results["jax"] = {k: min(r[k] for r in theirs) for k in rows}
        results["pyjax/jax"] = {k: results["pyjax"][k] / results["jax"][k] for k in rows}
    print_table(results, label=f"min ms per call, n={n}", width=52)


if __name__ == "__main__":
    main()
