"""Three programs of tests/ecosystem/test_ecosystem_more.py at a benchmark size, under pyjax
(``pyjax.install_as_jax()``) and under real JAX (a subprocess with benchmarks/.jaxvenv or
$JAX_PYTHON, skipped when absent), rounds interleaved so both sides see the same load:

    python benchmarks/bench_ecosystem_more.py [--rounds 3]

* diffrax: Tsit5 with a PID controller on a damped oscillator over [0, 10], in ``jax.jit``, and
  ``jax.jit(jax.grad)`` of the final position w.r.t. the damping: first call (trace + compile
  + run, s) and the best of 10 later calls (ms);
* blackjax: 500 NUTS steps on a 10-dimensional Gaussian in one jitted ``lax.scan``: first call
  (s) and best of 3 (ms);
* numpyro: ``MCMC(NUTS)`` (200 warmup + 200 samples) on a normal model with 50 observations:
  the first ``run`` (s) and a second ``run`` of the same MCMC object (s).
"""
import time

import numpy as np
from timing import IS_JAX_WORKER, best_ms, main_interleaved

if not IS_JAX_WORKER:
    import pyjax
    pyjax.install_as_jax()

import blackjax  # noqa: E402
import diffrax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402


def diffrax_solve(grad):
    term = diffrax.ODETerm(lambda t, y, c: jnp.stack([y[1], -4.0 * y[0] - c * y[1]]))

    def end(c):
        return diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 10.0, 0.05, jnp.array([1.0, 0.0]),
                                   args=c, stepsize_controller=diffrax.PIDController(
                                       rtol=1e-6, atol=1e-8)).ys[-1, 0]
    fn = jax.jit(jax.grad(end) if grad else end)
    return lambda: fn(0.2).block_until_ready()


def blackjax_nuts():
    scales = jnp.linspace(0.5, 2.0, 10)
    kernel = blackjax.nuts(lambda x: -0.5 * jnp.sum((x / scales) ** 2), step_size=0.4,
                           inverse_mass_matrix=scales ** 2)

    @jax.jit
    def chain(key):
        def one(state, k):
            state, _ = kernel.step(k, state)
            return state, state.position
        return jax.lax.scan(one, kernel.init(jnp.zeros(10)), jax.random.split(key, 500))[1]
    return lambda: chain(jax.random.PRNGKey(0)).block_until_ready()


def numpyro_runs():
    data = np.random.RandomState(0).normal(1.5, 1.0, size=50).astype(np.float32)

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(2.0))
        with numpyro.plate("data", y.shape[0]):
            numpyro.sample("obs", dist.Normal(mu, sigma), obs=y)
    mcmc = MCMC(NUTS(model), num_warmup=200, num_samples=200, progress_bar=False)
    times = []
    for seed in (0, 1):
        t = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(seed), data)
        jax.block_until_ready(mcmc.get_samples())
        times.append(time.perf_counter() - t)
    return times


def measure():
    out = {}
    for name, run, n in (("diffrax Tsit5 solve", diffrax_solve(False), 10),
                         ("diffrax grad of a solve", diffrax_solve(True), 10),
                         ("blackjax 500 NUTS steps", blackjax_nuts(), 3)):
        t = time.perf_counter()
        run()
        out[name + ", first call (s)"] = time.perf_counter() - t
        out[name + " (ms)"] = best_ms(run, n)
    first, second = numpyro_runs()
    out["numpyro MCMC run, first (s)"] = first
    out["numpyro MCMC run, second (s)"] = second
    return out


if __name__ == "__main__":
    main_interleaved(measure, __file__)
