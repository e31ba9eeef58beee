"""Control-flow benchmarks (run by hand), side by side with NumPy (a Python loop) and JAX /
PyTorch when installed.

    python benchmarks/bench_control_flow.py

* ``lax.fori_loop`` of 10,000 iterations of ``x = x * 0.999 + 0.001`` on f32[16] inside jit
  (ms per call);
* a 1,000-step tanh RNN (hidden 64) written with ``lax.scan``: first call of the jitted forward
  (trace + compile + run), first call of ``jit(grad(loss))``, and their steady-state calls (ms).

Reference (the issue, JAX 0.10.2 on the 2-core machine): the fori_loop 0.041 ms per call
(Python loops: NumPy 9 ms, PyTorch 42 ms).
"""
import time

import numpy as np
from timing import ms, print_table

N_ITER = 10_000
STEPS, HIDDEN = 1000, 64


def rnn_data():
    rng = np.random.default_rng(0)
    w = (rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    xs = rng.normal(size=(STEPS, HIDDEN)).astype(np.float32)
    return w, np.zeros(HIDDEN, np.float32), xs


def rnn_loss(lax, jnp):
    def loss(w, h0, xs):
        def step(h, x):
            h = jnp.tanh(w @ h + x)
            return h, jnp.sum(h)
        h, ys = lax.scan(step, h0, xs)
        return jnp.sum(ys) + jnp.sum(h)
    return loss


def _first_call_ms(fn, *args, block):
    t = time.perf_counter()
    block(fn(*args))
    return (time.perf_counter() - t) * 1e3


def bench_jax_like(jax, jnp, lax):
    r = {}
    body = lambda i, x: x * 0.999 + 0.001  # noqa: E731
    f = jax.jit(lambda x: lax.fori_loop(0, N_ITER, body, x))
    x = jnp.ones(16, dtype=jnp.float32)
    r["fori_loop 10k iters f32[16], jit (ms)"] = ms(
        lambda: jax.block_until_ready(f(x)), repeat=50)
    w, h0, xs = (jnp.asarray(a) for a in rnn_data())
    loss = rnn_loss(lax, jnp)
    fwd, grad = jax.jit(loss), jax.jit(jax.grad(loss))
    block = jax.block_until_ready
    r["scan RNN 1000 steps: first call fwd (ms)"] = _first_call_ms(fwd, w, h0, xs, block=block)
    r["scan RNN 1000 steps: first call grad (ms)"] = _first_call_ms(grad, w, h0, xs,
                                                                    block=block)
    r["scan RNN 1000 steps: fwd (ms)"] = ms(lambda: block(fwd(w, h0, xs)))
    r["scan RNN 1000 steps: grad (ms)"] = ms(lambda: block(grad(w, h0, xs)))
    return r


def bench_pyjax():
    import pyjax
    import pyjax.numpy as jnp
    from pyjax import lax
    return bench_jax_like(pyjax, jnp, lax)


def bench_numpy():
    r = {}
    x0 = np.ones(16, np.float32)
    a, b = np.float32(0.999), np.float32(0.001)

    def loop():
        x = x0
        for _ in range(N_ITER):
            x = x * a + b
        return x
    r["fori_loop 10k iters f32[16], jit (ms)"] = ms(loop, repeat=5)
    w, h0, xs = rnn_data()

    def fwd():
        h, total = h0, 0.0
        for x in xs:
            h = np.tanh(w @ h + x)
            total += h.sum()
        return total + h.sum()
    r["scan RNN 1000 steps: fwd (ms)"] = ms(fwd, repeat=5)
    return r


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        return None
    return bench_jax_like(jax, jnp, lax)


def bench_torch():
    try:
        import torch
    except ImportError:
        return None
    x0 = torch.ones(16)

    def loop():
        x = x0
        for _ in range(N_ITER):
            x = x * 0.999 + 0.001
        return x
    return {"fori_loop 10k iters f32[16], jit (ms)": ms(loop, repeat=5)}


def main():
    results = {"pyjax": bench_pyjax(), "numpy": bench_numpy()}
    for name, fn in (("jax", bench_jax), ("torch", bench_torch)):
        res = fn()
        if res:
            results[name] = res
    print_table(results, digits=3)


if __name__ == "__main__":
    main()
