"""What ``jit(f).lower(x).as_text(dialect="hlo")`` costs (run by hand), side by side with JAX in
a subprocess (benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON; skipped when absent). pyjax gets the
HLO from one more XLA compile with dump options (PJRT has no call for the translation alone);
JAX translates in-process. Each measurement lowers afresh (a new ``jit``), so nothing is cached
but the traced primitives' rules. The sides alternate in rounds (``--rounds``, default 3);
the table gives min and median ms over all calls of all rounds.

    python benchmarks/bench_hlo_text.py [--rounds 3]
"""
import statistics
import sys

import numpy as np
from timing import IS_JAX_WORKER, _call_times_ms, jax_side, print_table, worker_print

ROWS = ["x * x, f32[]", "grad of a 3-layer MLP loss, f32[64,32]",
        "print_saved_residuals, docs' 3-layer example"]


def _jax_like(jax, jnp, print_saved_residuals):
    import contextlib
    import io
    x = np.float32(3.0)
    ws = [np.ones((32, 32), np.float32) * 0.1 for _ in range(3)]
    batch = np.ones((64, 32), np.float32)

    def loss(ws, b):
        for w in ws:
            b = jnp.tanh(b @ w)
        return jnp.mean(b ** 2)

    def layer(W, v):
        return jnp.sin(jnp.dot(W, v))

    def three(W1, W2, W3, v):
        return layer(W3, layer(W2, layer(W1, v)))

    args = (np.ones((5, 4), np.float32), np.ones((6, 5), np.float32),
            np.ones((7, 6), np.float32), np.ones(4, np.float32))

    def residuals():
        with contextlib.redirect_stdout(io.StringIO()):
            print_saved_residuals(three, *args)
    return {ROWS[0]: _call_times_ms(
                lambda: jax.jit(lambda v: v * v).lower(x).as_text(dialect="hlo"), 10),
            ROWS[1]: _call_times_ms(
                lambda: jax.jit(jax.grad(loss)).lower(ws, batch).as_text(dialect="hlo"), 10),
            ROWS[2]: _call_times_ms(residuals, 10)}


def bench_pyjax():
    import pyjax
    import pyjax.numpy as jnp
    from pyjax.ad_checkpoint import print_saved_residuals
    return _jax_like(pyjax, jnp, print_saved_residuals)


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
        from jax.ad_checkpoint import print_saved_residuals
    except ImportError:
        return None
    return _jax_like(jax, jnp, print_saved_residuals)


def _summary(rounds, how):
    return {k: how([t for r in rounds for t in r[k]]) for k in ROWS}


if __name__ == "__main__":
    if IS_JAX_WORKER:
        worker_print(bench_jax())
        sys.exit()
    n_rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    ours, theirs = [], []
    for _ in range(n_rounds):  # interleaved: both sides see the same machine load
        ours.append(bench_pyjax())
        got = jax_side(__file__)
        if got is not None:
            theirs.append(got)
    results = {"pyjax min": _summary(ours, min), "pyjax median": _summary(ours, statistics.median)}
    if theirs:
        results["jax min"] = _summary(theirs, min)
        results["jax median"] = _summary(theirs, statistics.median)
    print_table(results, rows=ROWS, label="ms per call", width=48, cell=14)
