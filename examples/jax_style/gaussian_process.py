"""Gaussian process regression in the style of JAX's examples/gaussian_process_regression.py:
an RBF kernel's amplitude, length scale and noise are fitted by maximising the log marginal
likelihood (Cholesky factor, cho_solve, grad and adam from jax.example_libraries.optimizers),
then the posterior mean and variance are computed at test inputs.

    python -m pyjax examples/jax_style/gaussian_process.py
"""
import numpy as np

import jax.numpy as jnp
from jax import grad, jit, vmap
from jax.example_libraries import optimizers
import jax.scipy as scipy


def softplus(x):
    return jnp.logaddexp(x, 0.)


def cov_map(cov_func, xs, xs2):
    """The matrix cov_func(xs[i], xs2[j]), computed with vmap."""
    return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs2))(xs)


def exp_quadratic(x1, x2):
    return jnp.exp(-0.5 * jnp.sum((x1 - x2) ** 2))


def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
    noise = softplus(params["noise"])[0, 0]
    amp = softplus(params["amplitude"])[0, 0]
    ls = softplus(params["lengthscale"])[0, 0]
    ymean = jnp.mean(y)
    y = y - ymean
    x = x / ls
    train_cov = amp * cov_map(exp_quadratic, x, x) + (noise + 1e-6) * jnp.eye(x.shape[0])
    chol = scipy.linalg.cholesky(train_cov, lower=True)
    kinvy = scipy.linalg.solve_triangular(
        chol.T, scipy.linalg.solve_triangular(chol, y, lower=True))
    if compute_marginal_likelihood:
        log2pi = jnp.log(2. * jnp.pi)
        ml = jnp.sum(-0.5 * jnp.dot(y.T, kinvy) - jnp.sum(jnp.log(jnp.diag(chol)))
                     - (x.shape[0] / 2.) * log2pi)
        return ml
    xtest = xtest / ls
    cross_cov = amp * cov_map(exp_quadratic, x, xtest)
    mu = jnp.dot(cross_cov.T, kinvy) + ymean
    v = scipy.linalg.solve_triangular(chol, cross_cov, lower=True)
    var = amp * jnp.ones(xtest.shape[0]) - jnp.sum(v * v, axis=0)
    return mu, var


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    numpts = 25
    x = np.sort(rng.uniform(-3, 3, numpts))[:, None].astype(np.float32)
    y = (np.sin(x[:, 0]) + 0.1 * rng.randn(numpts)).astype(np.float32)
    xtest = np.linspace(-3, 3, 7)[:, None].astype(np.float32)

    params = {"amplitude": jnp.zeros((1, 1)), "noise": jnp.zeros((1, 1)) - 5.,
              "lengthscale": jnp.zeros((1, 1))}
    marginal_likelihood = jit(lambda p: -gp(p, x, y, compute_marginal_likelihood=True))
    opt_init, opt_update, get_params = optimizers.adam(0.05)

    @jit
    def step(i, opt_state):
        return opt_update(i, grad(marginal_likelihood)(get_params(opt_state)), opt_state)

    opt_state = opt_init(params)
    print(f"initial_neg_log_marginal_likelihood {float(marginal_likelihood(params)):.6f}")
    for i in range(300):
        opt_state = step(i, opt_state)
    params = get_params(opt_state)
    print(f"final_neg_log_marginal_likelihood {float(marginal_likelihood(params)):.6f}")
    for name in ("amplitude", "lengthscale", "noise"):
        print(name, f"{float(softplus(params[name])[0, 0]):.8f}")
    mu, var = jit(lambda p: gp(p, x, y, xtest))(params)
    print("posterior_mean", " ".join(f"{float(m):.6f}" for m in mu))
    print("posterior_var", " ".join(f"{float(s):.6f}" for s in var))
