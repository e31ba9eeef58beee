"""Parallelism benchmarks (run by hand, 8 virtual CPU devices): the seeds' data-parallel
example (784-512-512-10 MLP, batch 1024) as a cached SPMD jit(grad) call against the
one-device jit(grad), a cached pmap of psum on f32[8,1024], and NumPy doing the same work.
JAX is timed side by side when it is installed.

    PYJAX_CPU_DEVICES=8 python benchmarks/bench_parallel.py
"""
import os

os.environ.setdefault("PYJAX_CPU_DEVICES", "8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
from timing import ms, per_call_us, print_table  # noqa: E402

SIZES = [784, 512, 512, 10]
BATCH = 1024


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


def bench_library(jax, label):
    jnp, lax = jax.numpy, jax.lax
    AxisType, P, set_mesh = jax.sharding.AxisType, jax.sharding.PartitionSpec, jax.set_mesh
    out = {}
    params, inputs, targets = data(np.random.default_rng(0))
    params = jax.tree.map(jnp.asarray, params)
    loss_fn = make_loss(jnp)
    one = jax.jit(jax.grad(loss_fn))
    x1, y1 = jnp.asarray(inputs), jnp.asarray(targets)
    out["seeds' jit(grad), one device (ms)"] = ms(
        lambda: jax.block_until_ready(one(params, (x1, y1))), repeat=20)
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    with set_mesh(mesh):
        xs, ys = jax.device_put((x1, y1), P("data"))
        grad_fn = jax.jit(jax.grad(loss_fn))
        out["seeds' jit(grad), 8 devices, cached (ms)"] = ms(
            lambda: jax.block_until_ready(grad_fn(params, (xs, ys))), repeat=20)
    f = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    v = jnp.asarray(np.ones((8, 1024), np.float32))
    out["pmap psum f32[8,1024], cached (us)"] = per_call_us(
        lambda: jax.block_until_ready(f(v)), n=500)
    vp = f(v)
    out["pmap psum on a pmap result (us)"] = per_call_us(
        lambda: jax.block_until_ready(f(vp)), n=500)
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
    return {"seeds' jit(grad), one device (ms)": ms(grad, repeat=20),
            "pmap psum f32[8,1024], cached (us)": per_call_us(
                lambda: np.broadcast_to(v.sum(0), v.shape).copy(), n=500)}


def main():
    import pyjax
    results = {"pyjax": bench_library(pyjax, "pyjax"), "numpy": bench_numpy()}
    try:
        import jax  # noqa: F401
        results["jax"] = bench_library(jax, "jax")
    except ImportError:
        pass
    print_table(results, label=f"({len(pyjax.devices())} devices)", width=46)


if __name__ == "__main__":
    main()
