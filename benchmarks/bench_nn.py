"""Neural-network benchmarks (run by hand): a CNN training step and the first convolution's
forward pass, side by side with NumPy (im2col + matmul for the convolution), JAX in a
subprocess (benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON) and PyTorch when installed (each skipped
otherwise). pyjax and JAX alternate in rounds (``--rounds``, default 3); each cell is the
minimum over all rounds of the per-call times.

    python benchmarks/bench_nn.py [--rounds 3]

* CNN training step, batch 64 of 32x32x3 (NHWC): conv 3x3x32 -> relu -> 2x2 max pool ->
  conv 3x3x64 -> relu -> mean pool -> dense 10, softmax cross-entropy, ``jit(grad)`` + SGD
  (one jitted step that returns the new parameters), ms per step;
* ``conv_general_dilated`` forward alone on the first layer (64x32x32x3 * 3x3x3x32, SAME), ms;
* the first call of the training step (trace + compile + run), s.

The pyjax step is one XLA executable; its Python dispatch costs about 4 us a call
(benchmarks/bench_foundation.py), so at these sizes the times are XLA's kernels.
"""
import sys
import time

import numpy as np
from timing import IS_JAX_WORKER, best_ms, jax_side, ms, print_table, worker_print

BATCH, SIZE, CHANNELS, CLASSES, LR = 64, 32, 3, 10, 0.01
DN = ("NHWC", "HWIO", "NHWC")


def init_params(rng):
    def he(shape, fan_in):
        return (rng.normal(size=shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return {"w1": he((3, 3, CHANNELS, 32), 9 * CHANNELS), "b1": np.zeros(32, np.float32),
            "w2": he((3, 3, 32, 64), 9 * 32), "b2": np.zeros(64, np.float32),
            "w3": he((64, CLASSES), 64), "b3": np.zeros(CLASSES, np.float32)}


def data(rng):
    x = rng.normal(size=(BATCH, SIZE, SIZE, CHANNELS)).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]
    return x, y


def make_step(jax, jnp, lax):
    """The training step written once against a JAX-like API (pyjax or JAX)."""
    def conv(x, w, b):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN) + b

    def loss(p, x, y):
        h = jnp.maximum(conv(x, p["w1"], p["b1"]), 0.0)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = jnp.maximum(conv(h, p["w2"], p["b2"]), 0.0)
        h = jnp.mean(h, axis=(1, 2))
        logits = h @ p["w3"] + p["b3"]
        shifted = logits - lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
        logp = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
        return -jnp.mean(jnp.sum(y * logp, axis=-1))

    @jax.jit
    def step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - LR * b, p, g)

    forward = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                            dimension_numbers=DN))
    return step, forward


def bench_jax_like(name, jax, jnp, lax, params, x, y):
    step, forward = make_step(jax, jnp, lax)
    p = jax.tree.map(jnp.asarray, params)
    xd, yd = jnp.asarray(x), jnp.asarray(y)
    t = time.perf_counter()
    jax.block_until_ready(step(p, xd, yd))
    first = time.perf_counter() - t
    state = {"p": p}

    def one_step():
        state["p"] = step(state["p"], xd, yd)
        jax.block_until_ready(state["p"])
    w1 = jnp.asarray(params["w1"])
    return {"CNN training step (ms)": best_ms(one_step, repeat=20),
            "conv1 forward (ms)": best_ms(lambda: jax.block_until_ready(forward(xd, w1)),
                                          repeat=50),
            "first step call (s)": first}


def numpy_conv_same(x, w):
    """SAME 3x3 convolution in NumPy: pad, gather the 9 shifted views (im2col), one matmul."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    p = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    cols = np.stack([p[:, i:i + h, j:j + wd] for i in range(kh) for j in range(kw)], axis=3)
    return cols.reshape(n * h * wd, kh * kw * c) @ w.reshape(kh * kw * c, o)


def main():
    rng = np.random.default_rng(0)
    params, (x, y) = init_params(rng), data(rng)
    if IS_JAX_WORKER:
        import jax
        import jax.numpy as jjnp
        from jax import lax as jlax
        worker_print(bench_jax_like("JAX", jax, jjnp, jlax, params, x, y))
        return
    n_rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    results = {}

    import pyjax
    import pyjax.numpy as pjnp
    from pyjax import lax as plax
    # correctness of what is timed: the forward pass against NumPy
    step, forward = make_step(pyjax, pjnp, plax)
    got = np.asarray(forward(x, params["w1"])).reshape(-1, 32)
    np.testing.assert_allclose(got, numpy_conv_same(x, params["w1"]), rtol=1e-4, atol=1e-4)
    ours, theirs = [], []
    for _ in range(n_rounds):  # interleaved: both sides see the same machine load
        ours.append(bench_jax_like("pyjax", pyjax, pjnp, plax, params, x, y))
        got = jax_side(__file__)
        if got is not None:
            theirs.append(got)
    results["pyjax"] = {k: min(r[k] for r in ours) for k in ours[0]}
    results["NumPy"] = {"conv1 forward (ms)": best_ms(lambda: numpy_conv_same(x, params["w1"]),
                                                      repeat=20)}
    if theirs:
        results["JAX"] = {k: min(r[k] for r in theirs) for k in theirs[0]}
        results["pyjax/JAX"] = {k: results["pyjax"][k] / results["JAX"][k] for k in ours[0]}
    try:
        import torch  # noqa: F401
        results["PyTorch"] = bench_torch(params, x, y)
    except ImportError:
        print("(PyTorch is not installed: skipped)")
    print_table(results, label=f"batch {BATCH} of {SIZE}x{SIZE}x{CHANNELS}, min")


def bench_torch(params, x, y):
    import torch
    import torch.nn.functional as F
    p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    xt = torch.tensor(x).permute(0, 3, 1, 2).contiguous()
    yt = torch.tensor(y)
    w1 = p["w1"].detach().permute(3, 2, 0, 1).contiguous()

    def step():
        w1_, w2_ = p["w1"].permute(3, 2, 0, 1), p["w2"].permute(3, 2, 0, 1)
        h = F.max_pool2d(F.relu(F.conv2d(xt, w1_, p["b1"], padding=1)), 2)
        h = F.relu(F.conv2d(h, w2_, p["b2"], padding=1)).mean(dim=(2, 3))
        loss = -(yt * F.log_softmax(h @ p["w3"] + p["b3"], -1)).sum(-1).mean()
        grads = torch.autograd.grad(loss, list(p.values()))
        with torch.no_grad():
            for v, g in zip(p.values(), grads):
                v -= LR * g
    return {"CNN training step (ms)": ms(step, repeat=20),
            "conv1 forward (ms)": ms(lambda: F.conv2d(xt, w1, padding=1), repeat=50)}


if __name__ == "__main__":
    main()
