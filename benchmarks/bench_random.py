"""pyjax.random benchmarks (run by hand): ``normal(key, (10_000_000,))`` under ``jit`` and
friends, side by side with NumPy's default generator (and JAX / PyTorch when installed).

    python benchmarks/bench_random.py
"""
import time

import numpy as np
from timing import ms, print_table

SIZE = 10_000_000


def bench_pyjax():
    import pyjax
    from pyjax import random
    r = {}
    key = random.key(0)
    normal = pyjax.jit(lambda k: random.normal(k, (SIZE,)))
    t = time.perf_counter()
    normal(key).block_until_ready()
    r["normal f32[10M] first call: trace+compile+run"] = (time.perf_counter() - t) * 1e3
    r["normal f32[10M] (jit)"] = ms(lambda: normal(key).block_until_ready())
    uniform = pyjax.jit(lambda k: random.uniform(k, (SIZE,)))
    r["uniform f32[10M] (jit)"] = ms(lambda: uniform(key).block_until_ready())
    bits = pyjax.jit(lambda k: random.bits(k, (SIZE,)))
    r["bits u32[10M] (jit)"] = ms(lambda: bits(key).block_until_ready())
    split_normal = pyjax.jit(lambda k: random.normal(random.split(k)[1], (SIZE,)))
    r["normal of a split key f32[10M] (jit)"] = ms(
        lambda: split_normal(key).block_until_ready())
    gamma = pyjax.jit(lambda k: random.gamma(k, 2.0, (1_000_000,)))
    r["gamma(2) f32[1M] (jit)"] = ms(lambda: gamma(key).block_until_ready(), repeat=5)
    r["eager normal f32[4] (cached)"] = ms(
        lambda: random.normal(key, (4,)).block_until_ready(), repeat=200)
    r["eager split (cached)"] = ms(
        lambda: random.split(key).block_until_ready(), repeat=200)
    return r


def bench_numpy():
    r = {}
    g = np.random.default_rng(0)
    r["normal f32[10M] (jit)"] = ms(lambda: g.standard_normal(SIZE, dtype=np.float32))
    r["normal f64[10M] (default dtype)"] = ms(lambda: g.standard_normal(SIZE))
    r["uniform f32[10M] (jit)"] = ms(lambda: g.random(SIZE, dtype=np.float32))
    r["bits u32[10M] (jit)"] = ms(lambda: g.integers(0, 2 ** 32, SIZE, dtype=np.uint32))
    r["gamma(2) f32[1M] (jit)"] = ms(lambda: g.standard_gamma(2.0, 1_000_000,
                                                             dtype=np.float32), repeat=5)
    r["eager normal f32[4] (cached)"] = ms(lambda: g.standard_normal(4, dtype=np.float32),
                                           repeat=200)
    return r


def bench_jax():
    try:
        import jax
    except ImportError:
        return None
    r = {}
    key = jax.random.key(0)
    normal = jax.jit(lambda k: jax.random.normal(k, (SIZE,)))
    r["normal f32[10M] (jit)"] = ms(lambda: normal(key).block_until_ready())
    uniform = jax.jit(lambda k: jax.random.uniform(k, (SIZE,)))
    r["uniform f32[10M] (jit)"] = ms(lambda: uniform(key).block_until_ready())
    gamma = jax.jit(lambda k: jax.random.gamma(k, 2.0, (1_000_000,)))
    r["gamma(2) f32[1M] (jit)"] = ms(lambda: gamma(key).block_until_ready(), repeat=5)
    return r


def bench_torch():
    try:
        import torch
    except ImportError:
        return None
    g = torch.Generator().manual_seed(0)
    return {"normal f32[10M] (jit)": ms(lambda: torch.randn(SIZE, generator=g))}


def main():
    results = {"pyjax": bench_pyjax(), "numpy": bench_numpy()}
    for name, fn in (("jax", bench_jax), ("torch", bench_torch)):
        res = fn()
        if res:
            results[name] = res
    print_table(results, rows=list(dict.fromkeys(r for res in results.values() for r in res)),
                label="measurement (ms)", width=46, cell=10)


if __name__ == "__main__":
    main()
