"""Kernel least squares in the style of JAX's examples/kernel_lsq.py: the predictor is
f(x) = sum_i v_i k(x_i, x); the coefficients v minimise the ridge objective
    0.5 * ||y - K v||^2 + 0.5 * lam * v^T K v
by gradient descent (grad, jit, lax.fori_loop) on a Gram matrix built with vmap. With the
linear kernel the predictor is the weight vector w = X^T v, which the script prints together
with the residual of the ridge normal equations.

    python -m pyjax examples/jax_style/kernel_lsq.py
"""
import numpy.random as npr

import jax.numpy as jnp
from jax import grad, jit, lax, vmap


def gram(kernel, xs):
    return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)


def minimize(f, x, num_steps, step_size):
    g = grad(f)
    return lax.fori_loop(0, num_steps, lambda i, x: x - step_size * g(x), x)


def train(kernel, xs, ys, regularization, num_steps):
    n = xs.shape[0]
    k = gram(kernel, xs)
    # a step of 1/L, L the largest eigenvalue of the objective's Hessian K^2 + lam K
    lmax = jnp.linalg.eigvalsh(k)[-1]
    step = 1.0 / (lmax * (lmax + regularization))

    def objective(v):
        risk = 0.5 * jnp.sum((ys - jnp.dot(k, v)) ** 2)
        reg = 0.5 * regularization * jnp.dot(v, jnp.dot(k, v))
        return risk + reg

    v = jit(minimize, static_argnums=(0, 2))(objective, jnp.zeros(n), num_steps, step)
    return jit(lambda x: jnp.dot(vmap(lambda xi: kernel(xi, x))(xs), v)), v


if __name__ == "__main__":
    rng = npr.RandomState(0)
    n, d, lam = 40, 3, 0.5
    truth = rng.randn(d)
    xs = rng.randn(n, d).astype("float32")
    ys = (xs @ truth + 0.1 * rng.randn(n)).astype("float32")
    linear_kernel = lambda x, y: jnp.dot(x, y)
    predict, v = train(linear_kernel, xs, ys, lam, num_steps=300)
    w = jnp.dot(xs.T, v)  # the linear predictor the coefficients define
    print("weights", " ".join(f"{float(t):.6f}" for t in w))
    print("truth", " ".join(f"{float(t):.6f}" for t in truth))
    print(f"predict_at_ones {float(predict(jnp.ones(d))):.6f}")
    normal_residual = jnp.dot(xs.T, jnp.dot(xs, w) - ys) + lam * w
    print(f"normal_equation_residual {float(jnp.linalg.norm(normal_residual)):.6e}")
