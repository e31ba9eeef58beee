"""Gaussian process regression: fit the kernel's hyperparameters by maximising the marginal
likelihood with ``grad``, then predict, using ``jax.scipy.linalg`` and ``jax.scipy.stats``.

    python examples/gaussian_process.py [--quick]

Data: noisy samples of sin(3x) + 0.3 x on [-2, 2]. Kernel: an RBF with amplitude and length
scale, plus observation noise; the three are optimised in log space with Adam.
"""
import argparse

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.scipy.linalg import cho_factor, cho_solve
from pyjax.scipy.stats import norm


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2.0, 2.0, n))
    y = np.sin(3.0 * x) + 0.3 * x + 0.1 * rng.normal(size=n)
    return x.astype(np.float32), y.astype(np.float32)


def rbf(x1, x2, log_amp, log_len):
    d = (x1[:, None] - x2[None, :]) / jnp.exp(log_len)
    return jnp.exp(2.0 * log_amp) * jnp.exp(-0.5 * d * d)


def neg_log_marginal_likelihood(params, x, y):
    """-log N(y | 0, K + s^2 I) through a Cholesky factor: 0.5 y^T a + sum log diag L +
    n/2 log 2 pi, with a = (K + s^2 I)^-1 y."""
    k = rbf(x, x, params["log_amp"], params["log_len"])
    k = k + (jnp.exp(2.0 * params["log_noise"]) + 1e-5) * jnp.eye(x.shape[0])
    factor = cho_factor(k, lower=True)
    alpha = cho_solve(factor, y)
    return (0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(factor[0])))
            + 0.5 * x.shape[0] * jnp.log(2.0 * jnp.pi))


def predict(params, x, y, x_new):
    """Posterior mean and standard deviation at ``x_new``."""
    k = rbf(x, x, params["log_amp"], params["log_len"])
    k = k + (jnp.exp(2.0 * params["log_noise"]) + 1e-5) * jnp.eye(x.shape[0])
    factor = cho_factor(k, lower=True)
    k_star = rbf(x_new, x, params["log_amp"], params["log_len"])
    mean = k_star @ cho_solve(factor, y)
    v = cho_solve(factor, k_star.T)
    var = jnp.exp(2.0 * params["log_amp"]) - jnp.sum(k_star * v.T, axis=1)
    return mean, jnp.sqrt(jnp.maximum(var, 1e-12))


def main(quick=False):
    n, steps = (40, 150) if quick else (120, 500)
    x, y = make_data(n)
    params = {"log_amp": jnp.float32(0.0), "log_len": jnp.float32(0.0),
              "log_noise": jnp.float32(-1.0)}
    loss_and_grad = jax.jit(jax.value_and_grad(neg_log_marginal_likelihood))
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    lr, b1, b2 = 0.05, 0.9, 0.999
    losses = []
    for t in range(1, steps + 1):
        loss, g = loss_and_grad(params, x, y)
        losses.append(float(loss))
        m = jax.tree.map(lambda a, b: b1 * a + (1 - b1) * b, m, g)
        v = jax.tree.map(lambda a, b: b2 * a + (1 - b2) * b * b, v, g)
        params = jax.tree.map(
            lambda p, a, b: p - lr * (a / (1 - b1 ** t)) / (jnp.sqrt(b / (1 - b2 ** t)) + 1e-8),
            params, m, v)
    x_test = np.linspace(-2.0, 2.0, 50).astype(np.float32)
    mean, std = jax.jit(predict)(params, x, y, x_test)
    truth = np.sin(3.0 * x_test) + 0.3 * x_test
    rmse = float(np.sqrt(np.mean((np.asarray(mean) - truth) ** 2)))
    # log-likelihood of the noise-free truth under the predictive distribution
    loglik = float(jnp.mean(norm.logpdf(truth, mean, std)))
    noise = float(jnp.exp(params["log_noise"]))
    print(f"negative log marginal likelihood {losses[0]:.2f} -> {losses[-1]:.2f} "
          f"in {steps} Adam steps")
    print(f"fitted noise {noise:.3f} (true 0.1), length scale "
          f"{float(jnp.exp(params['log_len'])):.3f}; test RMSE {rmse:.3f}, "
          f"mean predictive log density {loglik:.2f}")
    return {"losses": losses, "params": params, "rmse": rmse, "noise": noise, "x": x, "y": y,
            "x_test": x_test, "mean": np.asarray(mean), "std": np.asarray(std)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    main(quick=ap.parse_args().quick)
