"""Parallelism benchmarks (run by hand, 8 virtual CPU devices): the seeds' data-parallel
example (784-512-512-10 MLP, batch 1024) as a cached SPMD jit(grad) call against the
one-device jit(grad), a cached pmap of psum on f32[8,1024], and NumPy doing the same work.
JAX 0.10.2 is timed side by side in a subprocess (benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON,
``--xla_force_host_platform_device_count=8``), the two sides alternating round by round so
both see the same load; the table gives min and median over rounds of each round's best
wall time, and (rows ending in CPU) the process CPU time per call, all threads included.

    python benchmarks/bench_parallel.py [--rounds 5]
"""
import os
import sys
import time

from timing import use_eight_cpu_devices  # noqa: E402

use_eight_cpu_devices()

import numpy as np  # noqa: E402
from timing import (IS_JAX_WORKER, best_ms, interleaved_rounds, per_call_us,  # noqa: E402
                    print_table, worker_print)

SIZES = [784, 512, 512, 10]
BATCH = 1024
MLP1 = "seeds' jit(grad), one device (ms)"
MLP8 = "seeds' jit(grad), 8 devices, cached (ms)"
PSUM = "pmap psum f32[8,1024], cached (us)"
PSUM_R = "pmap psum on a pmap result (us)"
CPU = " CPU"   # the same call's process CPU time (every thread, the plugin's too)


def cpu_per_call(fn, n):
    """Process CPU time of one call (all threads), after a warm-up call: what a call costs
    the machine, steadier than wall time when other jobs share the cores."""
    fn()
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n


def data(rng):
    params = [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
               np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    inputs = rng.normal(size=(BATCH, SIZES[0])).astype(np.float32)
    targets = rng.normal(size=(BATCH, SIZES[-1])).astype(np.float32)
    return params, inputs, targets


def make_loss(jnp):
    def loss_fn(params, batch):
        inputs, targets = batch
        x = inputs
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return jnp.mean((x @ w + b - targets) ** 2)
    return loss_fn


def bench_library(jax):
    jnp, lax = jax.numpy, jax.lax
    AxisType, P, set_mesh = jax.sharding.AxisType, jax.sharding.PartitionSpec, jax.set_mesh
    out = {}
    params, inputs, targets = data(np.random.default_rng(0))
    params = jax.tree.map(jnp.asarray, params)
    loss_fn = make_loss(jnp)
    one = jax.jit(jax.grad(loss_fn))
    x1, y1 = jnp.asarray(inputs), jnp.asarray(targets)
    call1 = lambda: jax.block_until_ready(one(params, (x1, y1)))  # noqa: E731
    out[MLP1] = best_ms(call1, repeat=20)
    out[MLP1 + CPU] = cpu_per_call(call1, 10) * 1e3
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    with set_mesh(mesh):
        xs, ys = jax.device_put((x1, y1), P("data"))
        grad_fn = jax.jit(jax.grad(loss_fn))
        call8 = lambda: jax.block_until_ready(grad_fn(params, (xs, ys)))  # noqa: E731
        out[MLP8] = best_ms(call8, repeat=20)
        out[MLP8 + CPU] = cpu_per_call(call8, 10) * 1e3
    f = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    v = jnp.asarray(np.ones((8, 1024), np.float32))
    out[PSUM] = per_call_us(lambda: jax.block_until_ready(f(v)), n=300, repeat=3)
    out[PSUM + CPU] = cpu_per_call(lambda: jax.block_until_ready(f(v)), 300) * 1e6
    vp = f(v)
    out[PSUM_R] = per_call_us(lambda: jax.block_until_ready(f(vp)), n=300, repeat=3)
    out[PSUM_R + CPU] = cpu_per_call(lambda: jax.block_until_ready(f(vp)), 300) * 1e6
    return out


def bench_numpy():
    params, inputs, targets = data(np.random.default_rng(0))

    def grad():
        acts, x = [inputs], inputs
        for w, b in params[:-1]:
            x = np.tanh(x @ w + b)
            acts.append(x)
        w, b = params[-1]
        d = 2 * (x @ w + b - targets) / targets.size
        for i in range(len(params) - 1, -1, -1):
            w, _ = params[i]
            gw, gb = acts[i].T @ d, d.sum(0)
            if i:
                d = (d @ w.T) * (1 - acts[i] ** 2)
        return gw, gb

    v = np.ones((8, 1024), np.float32)
    return {MLP1: best_ms(grad, repeat=20),
            PSUM: per_call_us(lambda: np.broadcast_to(v.sum(0), v.shape).copy(), n=500)}


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    if IS_JAX_WORKER:
        import jax
        worker_print(bench_library(jax))
        return
    import pyjax
    results = interleaved_rounds(lambda: bench_library(pyjax), __file__, rounds)
    results["numpy"] = bench_numpy()
    print(f"load: {os.getloadavg()}, rounds: {rounds}")
    print_table(results, label=f"({len(pyjax.devices())} devices)", width=42, cell=11)


if __name__ == "__main__":
    main()
