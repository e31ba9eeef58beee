"""jit: the same function eagerly (one XLA call per operation) and compiled (one fused call).

    python examples/calculate_jit.py [--quick]
"""
import argparse
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def calculate(x):
    return x * x + x * 2.0


def _best_time(fn, x, repeats):
    """The fastest of ``repeats`` timed calls (each waits for its result)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(x))
        best = min(best, time.perf_counter() - start)
    return best


def main(quick=False):
    n = 500 if quick else 5000
    repeats = 3 if quick else 5
    x = jnp.ones((n, n))
    fast_calculate = jax.jit(calculate)

    start = time.perf_counter()
    jax.block_until_ready(fast_calculate(x))  # the first call traces and compiles
    first_call_s = time.perf_counter() - start
    eager = calculate(x)
    jitted = fast_calculate(x)
    eager_s = _best_time(calculate, x, repeats)
    jit_s = _best_time(fast_calculate, x, repeats)

    agree = bool(np.array_equal(np.asarray(eager), np.asarray(jitted)))
    total = float(jitted.sum())
    print(f"calculate on a {n}x{n} {x.dtype} array")
    print(f"  eager:       {eager_s * 1e3:8.2f} ms")
    print(f"  jit:         {jit_s * 1e3:8.2f} ms  (first call, with compilation: "
          f"{first_call_s * 1e3:.1f} ms)")
    print(f"  results agree: {agree}; sum = {total}")
    return {"n": n, "eager_s": eager_s, "jit_s": jit_s, "first_call_s": first_call_s,
            "agree": agree, "sum": total, "eager": eager, "jitted": jitted}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small array")
    main(quick=parser.parse_args().quick)
