"""A pre-LayerNorm transformer block (run by hand): d_model 256, 4 heads, sequence 128,
batch 8, gelu MLP 1024, causal attention. Forward pass and a ``jit(grad)`` + SGD training step
(ms), side by side with NumPy (forward only: it has no autodiff) and JAX in a subprocess
(benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON; skipped when absent). pyjax and JAX alternate in
rounds (``--rounds``, default 3); each cell is the minimum over rounds of min-of-10 times.

    python benchmarks/bench_nn_transformer.py [--rounds 3]
"""
import importlib
import os
import sys

# OpenBLAS's threads thrash on the small batched products of attention on this shared 2-core
# machine (measured: 2.2 s per NumPy forward with them, 0.39 s without)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from timing import (IS_JAX_WORKER, best_ms, jax_side, print_table,  # noqa: E402
                    worker_print)

D, HEADS, SEQ, BATCH, MLP = 256, 4, 128, 8, 1024
LR = 1e-3


def init(rng):
    def w(m, n):
        return (rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)
    return {"ln1_s": np.ones(D, np.float32), "ln1_b": np.zeros(D, np.float32),
            "qkv": w(D, 3 * D), "proj": w(D, D),
            "ln2_s": np.ones(D, np.float32), "ln2_b": np.zeros(D, np.float32),
            "w1": w(D, MLP), "b1": np.zeros(MLP, np.float32),
            "w2": w(MLP, D), "b2": np.zeros(D, np.float32)}


def numpy_forward(p, x):
    def lin(x, w):  # as one 2-D product: NumPy's 3-D @ 2-D matmul is ~15x slower here
        return (x.reshape(-1, x.shape[-1]) @ w).reshape(x.shape[:-1] + (w.shape[1],))

    def ln(x, s, b):
        m = x.mean(-1, keepdims=True)
        v = x.var(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-5) * s + b
    h = lin(ln(x, p["ln1_s"], p["ln1_b"]), p["qkv"])
    # contiguous copies: NumPy's matmul of strided stacks skips BLAS (seconds, not ms)
    q, k, v = (np.ascontiguousarray(a.reshape(BATCH, SEQ, HEADS, D // HEADS)
                                    .transpose(0, 2, 1, 3)) for a in np.split(h, 3, -1))
    logits = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(D // HEADS))
    logits = np.where(np.tril(np.ones((SEQ, SEQ), bool)), logits, -1e30)
    logits = np.exp(logits - logits.max(-1, keepdims=True))
    probs = logits / logits.sum(-1, keepdims=True)
    attn = (probs @ v).transpose(0, 2, 1, 3).reshape(BATCH, SEQ, D)
    x = x + lin(attn, p["proj"])
    h = lin(ln(x, p["ln2_s"], p["ln2_b"]), p["w1"]) + p["b1"]
    h = 0.5 * h * (1 + np.tanh(np.float32(np.sqrt(2 / np.pi)) * (h + 0.044715 * h ** 3)))
    return x + lin(h, p["w2"]) + p["b2"]


def jax_like(jax, jnp, nn):
    """The block and its SGD step written against a JAX-like module (pyjax or jax)."""
    def forward(p, x):
        def ln(x, s, b):
            return nn.standardize(x, axis=-1, epsilon=1e-5) * s + b
        q, k, v = jnp.split(ln(x, p["ln1_s"], p["ln1_b"]) @ p["qkv"], 3, axis=-1)
        heads = lambda a: a.reshape(BATCH, SEQ, HEADS, D // HEADS)  # noqa: E731
        attn = nn.dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + attn.reshape(BATCH, SEQ, D) @ p["proj"]
        h = nn.gelu(ln(x, p["ln2_s"], p["ln2_b"]) @ p["w1"] + p["b1"])
        return x + h @ p["w2"] + p["b2"]

    def loss(p, x, y):
        return jnp.mean((forward(p, x) - y) ** 2)

    @jax.jit
    def step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - LR * b, p, g)

    return jax.jit(forward), step


def bench(module, params, x, y, check=False):
    """Forward and training-step times (min ms) for the JAX-like ``module``."""
    jax = importlib.import_module(module)
    forward, step = jax_like(jax, importlib.import_module(module + ".numpy"),
                             importlib.import_module(module + ".nn"))
    p = jax.tree.map(jax.numpy.asarray, params)
    out = forward(p, x)
    if check:
        np.testing.assert_allclose(np.asarray(out), numpy_forward(params, x), rtol=2e-3,
                                   atol=2e-3)
    return {"forward": best_ms(lambda: forward(p, x).block_until_ready()),
            "train step (jit(grad) + SGD)": best_ms(
                lambda: jax.block_until_ready(step(p, x, y)))}


def main():
    rng = np.random.default_rng(0)
    params = init(rng)
    x = rng.normal(size=(BATCH, SEQ, D)).astype(np.float32)
    y = rng.normal(size=(BATCH, SEQ, D)).astype(np.float32)
    if IS_JAX_WORKER:
        worker_print(bench("jax", params, x, y))
        return
    n_rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    ours, theirs = [], []
    for i in range(n_rounds):  # interleaved: both sides see the same machine load
        ours.append(bench("pyjax", params, x, y, check=(i == 0)))
        got = jax_side(__file__)
        if got is not None:
            theirs.append(got)
    rows = ["forward", "train step (jit(grad) + SGD)"]
    results = {"numpy": {"forward": best_ms(lambda: numpy_forward(params, x))},
               "pyjax": {k: min(r[k] for r in ours) for k in rows}}
    if theirs:
        results["jax"] = {k: min(r[k] for r in theirs) for k in rows}
        results["pyjax/jax"] = {k: results["pyjax"][k] / results["jax"][k] for k in rows}
    if importlib.util.find_spec("torch") is None:
        print("(PyTorch not installed: skipped)")
    print(f"pre-LN transformer block, d_model {D}, {HEADS} heads, seq {SEQ}, batch {BATCH}, "
          f"MLP {MLP}, causal (ms, min over rounds of min-of-10)")
    print_table(results, rows=rows, label="ms")


if __name__ == "__main__":
    main()
