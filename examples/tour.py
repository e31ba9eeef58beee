"""A short tour of pyjax: NumPy-style arrays, immutability, jit, Jaxprs, grad, vmap and random.

    python examples/tour.py
"""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def calculate(x):
    return x * x + x * 2.0


def main():
    print("devices:", jax.devices())

    # NumPy-style code runs eagerly on XLA ...
    x = jnp.ones((5000, 5000))
    eager = calculate(x)
    # ... and compiled: jit traces once, fuses the ops into one XLA kernel, caches it.
    fast_calculate = jax.jit(calculate)
    compiled = fast_calculate(x)
    print("calculate(x).sum() eager:", eager.sum(), "jit:", compiled.sum(), compiled.dtype)
    print("equal to NumPy:", bool(np.allclose(np.asarray(compiled),
                                              calculate(np.ones((5000, 5000), np.float32)))))

    # Arrays are immutable: .at[] returns a new array.
    arr = jnp.arange(5)
    new = arr.at[0].set(5)
    print("arr:", arr, " arr.at[0].set(5):", new)

    # Weak types: Python scalars don't widen arrays.
    print("bf16 + 1.0 ->", (jnp.ones(3, jnp.bfloat16) + 1.0).dtype,
          "; int8(1) + 1 ->", (jnp.int8(1) + 1).dtype)

    # The program jit compiles, as a Jaxpr and as StableHLO text.
    print(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0))
    print(jax.jit(lambda x: jnp.sin(x) * 2.0).lower(1.0).as_text())

    # Indexing, reductions and products follow NumPy.
    m = jnp.arange(12.0).reshape(3, 4)
    print("m[1:, ::-2] =", m[1:, ::-2])
    print("m.mean(axis=0) =", m.mean(axis=0), " m @ m.T =", (m @ m.T)[0])
    print("einsum('ij,kj->ik') trace =", jnp.trace(jnp.einsum("ij,kj->ik", m, m)))

    # Transformations compose: derivatives, batching, explicit random keys.
    def tanh(x):
        y = jnp.exp(-2.0 * x)
        return (1.0 - y) / (1.0 + y)
    print("grad(tanh)(1.0) =", jax.grad(tanh)(1.0),
          " grad(grad(grad(sin)))(1.0) =", jax.grad(jax.grad(jax.grad(jnp.sin)))(1.0))
    xs = jax.random.normal(jax.random.key(0), (100, 3))
    l1 = lambda x, y: jnp.sum(jnp.abs(x - y))  # noqa: E731
    pairwise = jax.jit(jax.vmap(jax.vmap(l1, (0, None)), (None, 0)))(xs, xs)
    print("pairwise L1 of 100 random points:", pairwise.shape, "total", pairwise.sum())

    # Structured control flow compiles to XLA loops and conditionals, and differentiates.
    from pyjax import lax
    steps = lax.while_loop(lambda c: c[0] != 1,
                           lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1),
                                      c[1] + 1), (27, 0))[1]
    print("Collatz steps from 27 (while_loop):", steps)
    newton = lambda a: lax.fori_loop(0, 8, lambda i, y: y - (y * y - a) / (2 * y), a)  # noqa: E731
    print("sqrt(2) by fori_loop:", newton(2.0), " its derivative:", jax.grad(newton)(2.0))
    carry, ys = lax.scan(lambda c, x: (c + x, c + x), 0.0, jnp.arange(5.0))
    print("cumulative sum by scan:", ys)


if __name__ == "__main__":
    main()
