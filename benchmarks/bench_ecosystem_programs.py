"""Two programs of tests/ecosystem/test_ecosystem_programs.py at a benchmark size, under pyjax
(``pyjax.install_as_jax()``) and under real JAX (a subprocess with benchmarks/.jaxvenv or
$JAX_PYTHON, skipped when absent), rounds interleaved so both sides see the same load:

    python benchmarks/bench_ecosystem_programs.py [--rounds 3]

* a flax.nnx transformer step: 4 blocks (LayerNorm, causal MultiHeadAttention with 4 heads,
  RMSNorm, Linear, Dropout; width 64) made by ``nnx.vmap`` and run by ``nnx.scan`` over
  ``nnx.remat``, batch 8 x 32 tokens, ``chain(clip_by_global_norm, adamw)`` in ``nnx.jit``:
  the first call (trace + compile + run, s) and the best of 10 later calls (ms);
* ``optax.lbfgs`` (zoom line search: nested while loops) on a 64-dimensional quartic, one
  ``jax.jit`` step: first call (s) and best of 20 (ms).
"""
import time

import numpy as np
from timing import IS_JAX_WORKER, best_ms, main_interleaved

if not IS_JAX_WORKER:
    import pyjax
    pyjax.install_as_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402

V, D, T, L, B = 50, 64, 32, 4, 8


def transformer_step():
    class Block(nnx.Module):
        def __init__(self, rngs):
            self.ln = nnx.LayerNorm(D, rngs=rngs)
            self.attn = nnx.MultiHeadAttention(num_heads=4, in_features=D, decode=False,
                                               rngs=rngs)
            self.rms = nnx.RMSNorm(D, rngs=rngs)
            self.mlp = nnx.Linear(D, D, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)

        def __call__(self, x):
            x = x + self.attn(self.ln(x), mask=nnx.make_causal_mask(jnp.ones(x.shape[:2])))
            return x + self.drop(nnx.gelu(self.mlp(self.rms(x))))

    class Model(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Embed(V, D, rngs=rngs)

            @nnx.split_rngs(splits=L)
            @nnx.vmap(in_axes=(0,), out_axes=0)
            def make(rngs):
                return Block(rngs)
            self.blocks = make(rngs)
            self.head = nnx.Linear(D, V, rngs=rngs)

        def __call__(self, tok):
            @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
            @nnx.remat
            def body(x, blk):
                return blk(x)
            return self.head(body(self.embed(tok), self.blocks))

    model = Model(nnx.Rngs(0, dropout=1))
    opt = nnx.Optimizer(model, optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3)),
                        wrt=nnx.Param)
    tok = jnp.asarray(np.random.RandomState(0).randint(0, V, (B, T)))

    @nnx.jit
    def step(model, opt, tok):
        def loss_fn(model):
            lg = model(tok[:, :-1])
            return optax.softmax_cross_entropy_with_integer_labels(lg, tok[:, 1:]).mean()
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        opt.update(model, grads)
        return loss
    return lambda: step(model, opt, tok).block_until_ready()


def lbfgs_step():
    rng = np.random.RandomState(0)
    A = jnp.asarray(rng.randn(96, 64).astype(np.float32))
    b = jnp.asarray(rng.randn(96).astype(np.float32))

    def f(w):
        return jnp.sum((A @ w - b) ** 2) + 0.1 * jnp.sum(w ** 4)
    opt, vg = optax.lbfgs(), optax.value_and_grad_from_state(f)

    @jax.jit
    def step(w, s):
        v, g = vg(w, state=s)
        u, s = opt.update(g, s, w, value=v, grad=g, value_fn=f)
        return optax.apply_updates(w, u), s
    state = [jnp.zeros(64), opt.init(jnp.zeros(64))]

    def run():
        state[:] = step(*state)
        jax.block_until_ready(state)
    return run


def measure():
    out = {}
    for name, make, n in (("nnx transformer step", transformer_step, 10),
                          ("optax lbfgs step", lbfgs_step, 20)):
        run = make()
        t = time.perf_counter()
        run()
        out[name + ", first call (s)"] = time.perf_counter() - t
        out[name + " (ms)"] = best_ms(run, n)
    return out


if __name__ == "__main__":
    main_interleaved(measure, __file__)
