"""Autodiff benchmarks (run by hand): eager ``grad`` dispatch and a jitted MLP training step,
side by side with NumPy (hand-written derivatives) and JAX / PyTorch when installed.

    python benchmarks/bench_autodiff.py

* eager ``grad(tanh)(1.0)`` with ``tanh`` written with ``exp`` (µs per call), and of a jitted
  ``tanh``;
* ``jit(grad(loss))`` of a 784-512-512-10 tanh MLP with a softmax cross-entropy loss: the first
  call (trace + compile + run; for pyjax also how many XLA compiles it makes and how long they
  take), the steady-state SGD step at batch 128, and eager ``grad(loss)`` (ms).

Reference (the issue, JAX 0.10.2 on the 2-core machine): eager grad(tanh) 977 µs (PyTorch 37),
MLP first call 127 ms, SGD step 1.52 ms.

pyjax's eager grad records the primitives the function binds on its first call and replays later
calls as one compiled executable (interpreters/ad.py), so the steady-state eager rows measure the
replay. The MLP first call is one XLA compile, almost all of it LLVM code generation of XLA's
fused loops; ``python benchmarks/bench_autodiff.py --compile`` compiles pyjax's module, JAX's
module for the same function (when JAX is installed) and pyjax's module at other XLA
optimization levels through pyjax's runtime, side by side.
"""
import time

import numpy as np
from timing import ms, per_call_us, print_table

SIZES = [784, 512, 512, 10]
BATCH = 128
LR = 0.01


def init_params(rng):
    params = []
    for m, n in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
                       np.zeros(n, np.float32)))
    return params


def data(rng):
    x = rng.normal(size=(BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], size=BATCH)
    y = np.eye(SIZES[-1], dtype=np.float32)[labels]
    return x, y


def mlp_loss(jnp, params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jnp.tanh(h)
    m = jnp.max(h, axis=1, keepdims=True)
    logz = jnp.log(jnp.sum(jnp.exp(h - m), axis=1, keepdims=True)) + m
    return -jnp.mean(jnp.sum(y * (h - logz), axis=1))


def tanh_with(exp):
    def tanh(x):
        y = exp(-2.0 * x)
        return (1.0 - y) / (1.0 + y)
    return tanh


def bench_pyjax():
    import pyjax
    import pyjax.numpy as jnp
    r = {}
    tanh = tanh_with(jnp.exp)
    g = pyjax.grad(tanh)
    assert str(g(1.0)) == "0.4199743"
    r["eager tanh(1.0), forward only (us)"] = per_call_us(lambda: tanh(1.0), n=2000)
    r["eager grad(tanh)(1.0) (us)"] = per_call_us(lambda: g(1.0), n=2000)
    gj = pyjax.grad(pyjax.jit(tanh))
    r["eager grad(jit(tanh))(1.0) (us)"] = per_call_us(lambda: gj(1.0), n=2000)

    rng = np.random.default_rng(0)
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in init_params(rng)]
    x, y = (jnp.asarray(a) for a in data(rng))
    pyjax.block_until_ready((params, x, y))
    loss = lambda p, x, y: mlp_loss(jnp, p, x, y)  # noqa: E731
    grad_loss = pyjax.jit(pyjax.grad(loss))
    compiles = _count_compiles()
    t = time.perf_counter()
    pyjax.block_until_ready(grad_loss(params, x, y))
    r["MLP jit(grad(loss)) first call (ms)"] = (time.perf_counter() - t) * 1e3
    n, compile_s = compiles.stop()
    r["  of which XLA compile (ms)"] = compile_s * 1e3
    r["  number of XLA compiles"] = n

    @pyjax.jit
    def sgd_step(params, x, y):
        grads = pyjax.grad(loss)(params, x, y)
        return pyjax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)

    state = [params]

    def step():
        state[0] = sgd_step(state[0], x, y)
        pyjax.block_until_ready(state[0])
    r["MLP SGD step, batch 128 (ms)"] = ms(step)
    r["MLP jit(grad(loss)) steady state (ms)"] = ms(
        lambda: pyjax.block_until_ready(grad_loss(params, x, y)))
    eager_grad = pyjax.grad(loss)
    r["MLP eager grad(loss) steady state (ms)"] = ms(
        lambda: pyjax.block_until_ready(eager_grad(params, x, y)))
    return r


class _count_compiles:
    """Counts and times the XLA compiles pyjax makes until ``stop()``."""

    def __init__(self):
        from pyjax._src.runtime import client as client_mod
        self.cls, self.orig = client_mod.Client, client_mod.Client.compile
        self.n, self.seconds = 0, 0.0
        counter = self

        def compile(client, *args, **kwargs):
            t = time.perf_counter()
            try:
                return counter.orig(client, *args, **kwargs)
            finally:
                counter.n += 1
                counter.seconds += time.perf_counter() - t
        self.cls.compile = compile

    def stop(self):
        self.cls.compile = self.orig
        return self.n, self.seconds


def bench_numpy():
    r = {}
    tanh = tanh_with(np.exp)

    def grad_tanh(x):  # hand-written derivative
        t = tanh(x)
        return 1.0 - t * t
    r["eager tanh(1.0), forward only (us)"] = per_call_us(lambda: tanh(np.float32(1.0)))
    r["eager grad(tanh)(1.0) (us)"] = per_call_us(lambda: grad_tanh(np.float32(1.0)))
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x, y = data(rng)

    def grads(params):  # hand-written backprop of the same network and loss
        hs, h = [x], x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = np.tanh(h)
            hs.append(h)
        m = h.max(axis=1, keepdims=True)
        p = np.exp(h - m)
        p /= p.sum(axis=1, keepdims=True)
        d = (p - y) / BATCH
        out = []
        for i in range(len(params) - 1, -1, -1):
            w, _ = params[i]
            out.append((hs[i].T @ d, d.sum(0)))
            if i:
                d = (d @ w.T) * (1 - hs[i] * hs[i])
        return out[::-1]

    state = [params]

    def step():
        state[0] = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in
                    zip(state[0], grads(state[0]))]
    r["MLP SGD step, batch 128 (ms)"] = ms(step)
    return r


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    r = {}
    tanh = tanh_with(jnp.exp)
    g = jax.grad(tanh)
    r["eager grad(tanh)(1.0) (us)"] = per_call_us(lambda: g(1.0), n=500)
    gj = jax.grad(jax.jit(tanh))
    r["eager grad(jit(tanh))(1.0) (us)"] = per_call_us(lambda: gj(1.0), n=500)
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in init_params(rng)]
    x, y = (jnp.asarray(a) for a in data(rng))
    loss = lambda p, x, y: mlp_loss(jnp, p, x, y)  # noqa: E731
    grad_loss = jax.jit(jax.grad(loss))
    t = time.perf_counter()
    jax.block_until_ready(grad_loss(params, x, y))
    r["MLP jit(grad(loss)) first call (ms)"] = (time.perf_counter() - t) * 1e3

    @jax.jit
    def sgd_step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    state = [params]

    def step():
        state[0] = jax.block_until_ready(sgd_step(state[0], x, y))
    r["MLP SGD step, batch 128 (ms)"] = ms(step)
    r["MLP jit(grad(loss)) steady state (ms)"] = ms(
        lambda: jax.block_until_ready(grad_loss(params, x, y)))
    eager_grad = jax.grad(loss)
    r["MLP eager grad(loss) steady state (ms)"] = ms(
        lambda: jax.block_until_ready(eager_grad(params, x, y)), repeat=3)
    return r


def bench_torch():
    try:
        import torch
    except ImportError:
        return None
    x = torch.tensor(1.0, requires_grad=True)

    def grad_tanh():
        y = torch.exp(-2.0 * x)
        (g,) = torch.autograd.grad((1.0 - y) / (1.0 + y), x)
        return g
    return {"eager grad(tanh)(1.0) (us)": per_call_us(grad_tanh, n=500)}


def compile_study():
    """``--compile``: where the MLP's first call goes. Compiles the module pyjax emits for
    jit(grad(loss)) through pyjax's runtime client (wall and CPU ms, three times), JAX's module
    text for the same function when JAX is installed, and pyjax's module at other XLA backend
    optimization levels."""
    import pyjax
    import pyjax.numpy as jnp
    from pyjax._src import runtime
    from pyjax._src.runtime.compile_options import DEFAULT_OPTION_OVERRIDES
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in init_params(rng)]
    x, y = (jnp.asarray(a) for a in data(rng))
    loss = lambda p, x, y: mlp_loss(jnp, p, x, y)  # noqa: E731
    texts = {"pyjax module": (pyjax.jit(pyjax.grad(loss)).lower(params, x, y).as_text(), {})}
    try:
        import jax
        import jax.numpy as jjnp
        jparams = [(jjnp.asarray(w), jjnp.asarray(b)) for w, b in init_params(rng)]
        jloss = lambda p, x, y: mlp_loss(jjnp, p, x, y)  # noqa: E731
        texts["JAX's module"] = (jax.jit(jax.grad(jloss)).lower(
            jparams, jjnp.asarray(np.asarray(x)), jjnp.asarray(np.asarray(y))).as_text(), {})
    except ImportError:
        pass
    for level in (0, 2):
        texts[f"pyjax module, opt level {level}"] = (texts["pyjax module"][0], dict(
            DEFAULT_OPTION_OVERRIDES, xla_backend_optimization_level=level))
    client = runtime.get_client()
    client.compile(texts["pyjax module"][0], None, None)  # warm-up
    for name, (text, overrides) in texts.items():
        runs = []
        for _ in range(3):
            t, c = time.perf_counter(), time.process_time()
            client.compile(text, None, None, **(
                {"env_option_overrides": overrides} if overrides else {}))
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            runs.append(f"{wall * 1e3:.0f}/{cpu * 1e3:.0f}")
        print(f"{name:35s} compile wall/CPU ms: {'  '.join(runs)}")


def main():
    import sys
    if "--compile" in sys.argv:
        compile_study()
        return
    results = {"pyjax": bench_pyjax(), "numpy": bench_numpy()}
    for name, fn in (("jax", bench_jax), ("torch", bench_torch)):
        res = fn()
        if res:
            results[name] = res
    print_table(results)


if __name__ == "__main__":
    main()
