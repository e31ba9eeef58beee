"""Automatic differentiation variational inference (ADVI), in the style of JAX's
examples/advi.py: fit a diagonal Gaussian q(z) to an unnormalised 2-D log density by maximising a
Monte-Carlo ELBO estimate with reparameterised samples (vmap over samples, grad, and adam from
jax.example_libraries.optimizers).

The target here is itself a diagonal Gaussian (mean TRUE_MEAN, standard deviations TRUE_STD),
so the best q is the target: the fitted mean and standard deviations should match it.

    python -m pyjax examples/jax_style/advi.py
"""
import jax
import jax.numpy as jnp
from jax import jit, grad, vmap, random
from jax.example_libraries import optimizers
import jax.scipy.stats.norm as norm

TRUE_MEAN = jnp.array([1.0, -2.0])
TRUE_STD = jnp.array([0.5, 1.5])


def target_log_density(z):
    return jnp.sum(norm.logpdf(z, TRUE_MEAN, TRUE_STD)) + 3.0  # unnormalised


def diag_gaussian_sample(rng, mean, log_std):
    return mean + jnp.exp(log_std) * random.normal(rng, mean.shape)


def diag_gaussian_logpdf(x, mean, log_std):
    return jnp.sum(vmap(norm.logpdf)(x, mean, jnp.exp(log_std)))


def elbo(logprob, rng, mean, log_std):
    sample = diag_gaussian_sample(rng, mean, log_std)
    return logprob(sample) - diag_gaussian_logpdf(sample, mean, log_std)


def batch_elbo(logprob, rng, params, num_samples):
    rngs = random.split(rng, num_samples)
    vectorized_elbo = vmap(lambda r: elbo(logprob, r, *params))
    return jnp.mean(vectorized_elbo(rngs))


if __name__ == "__main__":
    num_samples, num_steps = 64, 300
    init_params = (jnp.zeros(2), jnp.zeros(2))
    opt_init, opt_update, get_params = optimizers.adam(step_size=0.05)

    def objective(params, t):
        rng = random.PRNGKey(t)
        return -batch_elbo(target_log_density, rng, params, num_samples)

    @jit
    def update(t, opt_state):
        params = get_params(opt_state)
        return opt_update(t, grad(objective)(params, t), opt_state)

    opt_state = opt_init(init_params)
    print(f"initial_neg_elbo {float(objective(init_params, 10_000)):.6f}")
    for t in range(num_steps):
        opt_state = update(t, opt_state)
    mean, log_std = get_params(opt_state)
    print(f"final_neg_elbo {float(objective((mean, log_std), 10_000)):.6f}")
    print("mean", " ".join(f"{float(v):.6f}" for v in mean))
    print("std", " ".join(f"{float(v):.6f}" for v in jnp.exp(log_std)))
