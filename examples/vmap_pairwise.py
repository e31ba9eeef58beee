"""vmap: pairwise L1 distances from a function written for one pair of points.

    python examples/vmap_pairwise.py [--quick]
"""
import argparse
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import random


def l1_distance(x, y):
    return jnp.sum(jnp.abs(x - y))


# The inner vmap maps over the rows of x (y fixed), the outer one over the rows of y:
# pairwise(xs, ys)[j, i] = l1_distance(xs[i], ys[j]).
pairwise = jax.vmap(jax.vmap(l1_distance, (0, None)), (None, 0))


def main(quick=False):
    n, m, dim = (30, 20, 3) if quick else (1000, 800, 3)
    kx, ky = random.split(random.key(0))
    xs = random.normal(kx, (n, dim))
    ys = random.normal(ky, (m, dim))

    distances = pairwise(xs, ys)
    fast_pairwise = jax.jit(pairwise)
    jax.block_until_ready(fast_pairwise(xs, ys))
    start = time.perf_counter()
    jitted = jax.block_until_ready(fast_pairwise(xs, ys))
    jit_s = time.perf_counter() - start

    xs_np, ys_np = np.asarray(xs), np.asarray(ys)
    start = time.perf_counter()
    expected = np.abs(ys_np[:, None, :] - xs_np[None, :, :]).sum(-1)
    numpy_s = time.perf_counter() - start
    err = float(np.max(np.abs(np.asarray(distances) - expected)))
    print(f"pairwise L1 distances of {n} x {m} points in {dim}-D: shape {distances.shape}")
    print(f"  max |vmap - NumPy broadcasting| = {err:.2e}")
    print(f"  jit(vmap): {jit_s * 1e3:.2f} ms   NumPy: {numpy_s * 1e3:.2f} ms")
    return {"xs": xs_np, "ys": ys_np, "distances": np.asarray(distances),
            "jitted": np.asarray(jitted), "max_error": err, "jit_s": jit_s,
            "numpy_s": numpy_s}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few points")
    main(quick=parser.parse_args().quick)
