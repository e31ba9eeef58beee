"""einops, lineax, optimistix, diffrax, numpyro and blackjax run as `jax` libraries on pyjax:
small programs as their documentation teaches them, with oracles that are not JAX (NumPy,
SciPy closed forms and solvers, analytic derivatives, conjugate posteriors). A library that is
not installed skips its test (requirements-ecosystem.txt installs them all)."""
import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import scipy.stats

from tests.ecosystem.conftest import import_library


def test_einops_rearrange_reduce_repeat_einsum_pack():
    einops = import_library("einops")
    import jax
    import jax.numpy as jnp

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    xj = jnp.asarray(x)
    np.testing.assert_array_equal(einops.rearrange(xj, "b h w -> b (w h)"),
                                  x.transpose(0, 2, 1).reshape(2, 12))
    np.testing.assert_array_equal(
        jax.jit(lambda a: einops.rearrange(a, "b (h1 h2) w -> (b h1) h2 w", h1=3))(xj),
        x.reshape(6, 1, 4))
    np.testing.assert_allclose(einops.reduce(xj, "b h w -> h", "mean"), x.mean((0, 2)))
    np.testing.assert_array_equal(einops.reduce(xj, "b h (w2 w) -> b h w", "max", w2=2),
                                  x.reshape(2, 3, 2, 2).max(2))
    np.testing.assert_array_equal(einops.repeat(xj, "b h w -> b h w c", c=2),
                                  np.repeat(x[..., None], 2, -1))
    np.testing.assert_allclose(einops.einsum(xj, xj, "b h w, b h v -> b w v"),
                               np.einsum("bhw,bhv->bwv", x, x), rtol=1e-6)
    packed, shapes = einops.pack([xj[:, :, 0], xj], "b *")
    np.testing.assert_array_equal(packed, np.concatenate([x[:, :, 0], x.reshape(2, 12)], 1))
    back = einops.unpack(packed, shapes, "b *")
    np.testing.assert_array_equal(back[1], x)


def test_lineax_solvers_vmap_and_grad():
    lx = import_library("lineax")
    import jax
    import jax.numpy as jnp

    rng = np.random.RandomState(0)
    a = rng.randn(4, 4).astype(np.float32)
    spd = (a @ a.T + 4 * np.eye(4)).astype(np.float32)
    b = rng.randn(4).astype(np.float32)
    general = lx.MatrixLinearOperator(jnp.asarray(a))
    positive = lx.MatrixLinearOperator(jnp.asarray(spd), lx.positive_semidefinite_tag)
    # QR needed lax.linalg.ormqr; CG and GMRES run while loops of lineax's own primitives
    for op, solver, m in [(general, lx.LU(), a), (general, lx.QR(), a), (general, lx.SVD(), a),
                          (positive, lx.Cholesky(), spd),
                          (positive, lx.CG(rtol=1e-6, atol=1e-6), spd),
                          (general, lx.GMRES(rtol=1e-6, atol=1e-6), a)]:
        got = lx.linear_solve(op, jnp.asarray(b), solver).value
        np.testing.assert_allclose(got, np.linalg.solve(m, b), rtol=2e-3, atol=2e-4,
                                   err_msg=type(solver).__name__)
    # least squares through QR on a tall matrix
    tall = rng.randn(6, 3).astype(np.float32)
    rhs = rng.randn(6).astype(np.float32)
    got = lx.linear_solve(lx.MatrixLinearOperator(jnp.asarray(tall)), jnp.asarray(rhs),
                          lx.QR()).value
    np.testing.assert_allclose(got, np.linalg.lstsq(tall, rhs, rcond=None)[0], rtol=1e-3,
                               atol=1e-4)

    # vmap batches lineax's equinox primitives (JAX's axis_primitive_batchers signature)
    bs = np.stack([b, 2 * b, -b])
    got = jax.vmap(lambda v: lx.linear_solve(general, v).value)(jnp.asarray(bs))
    np.testing.assert_allclose(got, np.linalg.solve(a, bs.T).T, rtol=2e-3, atol=2e-4)

    # reverse mode: lineax's JVP rule applies a custom_jvp function to the tangents, which
    # then has to be transposed; d/db |A^-1 b|^2 = 2 A^-T A^-1 b
    def loss(v):
        return jnp.sum(lx.linear_solve(general, v, lx.LU()).value ** 2)
    expected = 2 * np.linalg.solve(a.T, np.linalg.solve(a, b))
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(jnp.asarray(b)), expected, rtol=2e-3)
    # d/dA of a function of A: x = A^-1 b, d(sum x)/dA = -A^-T 1 x^T
    x = np.linalg.solve(a, b)
    grad_a = jax.grad(lambda m: jnp.sum(lx.linear_solve(lx.MatrixLinearOperator(m),
                                                        jnp.asarray(b)).value))(jnp.asarray(a))
    np.testing.assert_allclose(grad_a, -np.outer(np.linalg.solve(a.T, np.ones(4)), x),
                               rtol=5e-3, atol=1e-4)


def test_optimistix_minimise_root_find_least_squares_and_implicit_grad():
    optx = import_library("optimistix")
    import jax
    import jax.numpy as jnp

    def rosenbrock(x, args):
        return jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    x0 = np.array([-1.2, 1.0], np.float32)  # in 2-D the only minimum is (1, 1)
    got = optx.minimise(rosenbrock, optx.BFGS(rtol=1e-6, atol=1e-6), jnp.asarray(x0),
                        max_steps=500).value
    ref = scipy.optimize.minimize(scipy.optimize.rosen, x0.astype(np.float64),
                                  jac=scipy.optimize.rosen_der, method="BFGS").x
    np.testing.assert_allclose(got, ref, atol=2e-3)

    got = optx.root_find(lambda y, args: jnp.cos(y) - y, optx.Newton(rtol=1e-6, atol=1e-6),
                         jnp.array(1.0)).value
    np.testing.assert_allclose(got, scipy.optimize.brentq(lambda y: np.cos(y) - y, 0, 1),
                               rtol=1e-5)

    t = np.linspace(0, 1, 10).astype(np.float32)
    obs = (2 * np.exp(-0.5 * t) + 0.01 * np.sin(7 * t)).astype(np.float32)

    def residuals(p, args):
        return p[0] * jnp.exp(p[1] * args[0]) - args[1]
    got = optx.least_squares(residuals, optx.LevenbergMarquardt(rtol=1e-6, atol=1e-6),
                             jnp.array([1.0, 0.0]), args=(jnp.asarray(t), jnp.asarray(obs))).value
    ref = scipy.optimize.least_squares(lambda p: p[0] * np.exp(p[1] * t) - obs, [1.0, 0.0]).x
    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-4)

    # implicit differentiation of the root of y^3 = a: dy/da = a^(-2/3) / 3 (optimistix's
    # symbolic-zero custom rules: perturbed flags and SymbolicZero tangents)
    def cube_root(a):
        return optx.root_find(lambda y, a: y ** 3 - a, optx.Newton(rtol=1e-6, atol=1e-6),
                              jnp.array(1.0), args=a).value
    np.testing.assert_allclose(cube_root(2.0), 2.0 ** (1 / 3), rtol=1e-5)
    np.testing.assert_allclose(jax.grad(cube_root)(2.0), 2.0 ** (-2 / 3) / 3, rtol=1e-4)


def test_diffrax_ode_solutions_and_gradients():
    diffrax = import_library("diffrax")
    import jax
    import jax.numpy as jnp

    decay = diffrax.ODETerm(lambda t, y, k: -k * y)
    ts = np.linspace(0, 2, 5).astype(np.float32)
    controller = diffrax.PIDController(rtol=1e-6, atol=1e-8)

    def solve(k, adjoint=diffrax.RecursiveCheckpointAdjoint()):
        return diffrax.diffeqsolve(decay, diffrax.Tsit5(), 0.0, 2.0, 0.1, jnp.array(1.0),
                                   args=k, saveat=diffrax.SaveAt(ts=jnp.asarray(ts)),
                                   stepsize_controller=controller, adjoint=adjoint).ys
    np.testing.assert_allclose(solve(0.7), np.exp(-0.7 * ts), rtol=2e-5, atol=1e-6)
    # d y(2) / dk = -2 exp(-2k), through the checkpointed loop and through the adjoint ODE
    for adjoint in (diffrax.RecursiveCheckpointAdjoint(), diffrax.BacksolveAdjoint()):
        grad = jax.grad(lambda k: solve(k, adjoint)[-1])(0.7)
        np.testing.assert_allclose(grad, -2 * np.exp(-1.4), rtol=1e-4,
                                   err_msg=type(adjoint).__name__)

    # a harmonic oscillator y' = A y from several starts (vmap), against expm(A t) y0
    mat = np.array([[0.0, 1.0], [-4.0, -0.2]], np.float32)
    oscillator = diffrax.ODETerm(lambda t, y, args: jnp.asarray(mat) @ y)
    y0s = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -1.0]], np.float32)
    ends = jax.jit(jax.vmap(lambda y0: diffrax.diffeqsolve(
        oscillator, diffrax.Dopri5(), 0.0, 3.0, 0.05, y0,
        stepsize_controller=controller).ys[-1]))(jnp.asarray(y0s))
    np.testing.assert_allclose(ends, y0s @ scipy.linalg.expm(3.0 * mat.astype(np.float64)).T,
                               rtol=1e-4, atol=1e-5)

    # a stiff decay with an implicit solver (its Newton solve runs through optimistix/lineax)
    stiff = diffrax.diffeqsolve(decay, diffrax.Kvaerno5(), 0.0, 0.2, 0.01, jnp.array(1.0),
                                args=50.0, stepsize_controller=diffrax.PIDController(
                                    rtol=1e-6, atol=1e-9)).ys
    np.testing.assert_allclose(stiff, [np.exp(-10.0)], rtol=2e-3)


def test_numpyro_log_probs_against_scipy_stats():
    import_library("numpyro")
    import jax.numpy as jnp
    import numpyro.distributions as dist

    x = np.array([0.3, -1.2, 2.5, 0.7], np.float32)
    counts = np.array([0, 3, 10])
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    cases = [
        (dist.Normal(1.0, 2.0), x, scipy.stats.norm(1, 2).logpdf(x)),
        (dist.Gamma(2.0, 3.0), np.abs(x), scipy.stats.gamma(2, scale=1 / 3).logpdf(np.abs(x))),
        (dist.Beta(2.0, 3.0), np.array([0.2, 0.7]), scipy.stats.beta(2, 3).logpdf([0.2, 0.7])),
        (dist.StudentT(4.0, 1.0, 2.0), x, scipy.stats.t(4, 1, 2).logpdf(x)),
        (dist.Poisson(3.0), counts, scipy.stats.poisson(3).logpmf(counts)),
        (dist.Binomial(10, 0.3), counts, scipy.stats.binom(10, 0.3).logpmf(counts)),
        (dist.MultivariateNormal(jnp.zeros(2), jnp.asarray(cov)), np.array([0.3, -0.4]),
         scipy.stats.multivariate_normal(np.zeros(2), cov).logpdf([0.3, -0.4])),
        (dist.Dirichlet(jnp.array([1.0, 2.0, 3.0])), np.array([0.2, 0.3, 0.5]),
         scipy.stats.dirichlet([1, 2, 3]).logpdf([0.2, 0.3, 0.5])),
    ]
    for d, value, expected in cases:
        np.testing.assert_allclose(d.log_prob(jnp.asarray(value)), expected, rtol=1e-5,
                                   atol=1e-5, err_msg=type(d).__name__)

    # a model's joint log density (numpyro.infer.util.log_density) with a plate
    import numpyro
    y = np.random.RandomState(0).normal(1.5, 1.0, size=20).astype(np.float32)

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(2.0))
        with numpyro.plate("data", y.shape[0]):
            numpyro.sample("obs", dist.Normal(mu, sigma), obs=y)
    got = numpyro.infer.util.log_density(model, (y,), {}, {"mu": 1.0, "sigma": 0.8})[0]
    expected = (scipy.stats.norm(0, 10).logpdf(1.0) + scipy.stats.halfnorm(scale=2).logpdf(0.8)
                + scipy.stats.norm(1.0, 0.8).logpdf(y).sum())
    np.testing.assert_allclose(got, expected, rtol=1e-5)

    # provenance tracking walks the jaxpr by jax.extend.core.primitives (jit_p's body)
    import jax
    from numpyro.infer.inspect import get_dependencies
    from numpyro.ops.provenance import eval_provenance
    assert eval_provenance(lambda x, y, z: x + jax.jit(lambda a: a * 2)(y), x=1.0, y=2.0,
                           z=3.0) == frozenset({"x", "y"})
    deps = get_dependencies(model, (y,))["prior_dependencies"]
    assert deps["obs"] == {"obs": set(), "mu": set(), "sigma": set()}


@pytest.fixture(scope="module")
def conjugate_normal():
    """A normal mean with a N(0, 10^2) prior and 20 unit-variance observations: the posterior
    is normal with variance 1 / (1/100 + 20) and mean variance * sum(y)."""
    numpyro = import_library("numpyro")
    import numpyro.distributions as dist

    data = np.random.RandomState(0).normal(1.5, 1.0, size=20).astype(np.float32)

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)
    var = 1 / (1 / 100 + len(data))
    return model, data, var * data.sum(), var


def test_numpyro_nuts_conjugate_posterior(conjugate_normal):
    import jax
    from numpyro.infer import MCMC, NUTS

    model, data, mean, var = conjugate_normal
    # the tree builder calls lax.cond in its older 5-argument form; two chains run as one
    # vmapped program (vmap of NUTS's while loops and conds)
    mcmc = MCMC(NUTS(model), num_warmup=200, num_samples=300, num_chains=2,
                chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), data)
    chains = np.asarray(mcmc.get_samples(group_by_chain=True)["mu"])
    assert chains.shape == (2, 300)
    for samples in chains:
        assert abs(samples.mean() - mean) < 0.12, (samples.mean(), mean)  # posterior sd 0.22
        assert 0.6 * var < samples.var() < 1.6 * var, (samples.var(), var)
    assert not np.array_equal(chains[0], chains[1])  # the chains have their own keys


def test_numpyro_svi_autonormal_and_predictive(conjugate_normal):
    import jax
    import numpyro
    from numpyro.infer import SVI, Predictive, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal

    model, data, mean, var = conjugate_normal
    guide = AutoNormal(model)
    svi = SVI(model, guide, numpyro.optim.Adam(0.03), Trace_ELBO(num_particles=4))
    params = svi.run(jax.random.PRNGKey(1), 1000, data, progress_bar=False).params
    assert abs(float(params["mu_auto_loc"]) - mean) < 0.1, (params, mean)
    assert 0.7 * np.sqrt(var) < float(params["mu_auto_scale"]) < 1.4 * np.sqrt(var), params
    # the posterior predictive of one observation: N(mean, 1 + var)
    obs = np.asarray(Predictive(model, guide=guide, params=params, num_samples=400)(
        jax.random.PRNGKey(2), None)["obs"])
    assert obs.shape == (400,)
    assert abs(obs.mean() - mean) < 0.25 and 0.7 < obs.std() < 1.4, (obs.mean(), obs.std())


def test_blackjax_hmc_nuts_and_window_adaptation_on_a_gaussian():
    blackjax = import_library("blackjax")
    import jax
    import jax.numpy as jnp

    mu, sd = np.array([1.0, -2.0], np.float32), np.array([0.5, 2.0], np.float32)

    def logdensity(x):
        return -0.5 * jnp.sum(((x - mu) / sd) ** 2)

    def moments(kernel, n):
        def one(state, key):
            state, _ = kernel.step(key, state)
            return state, state.position
        _, xs = jax.lax.scan(one, kernel.init(jnp.zeros(2)),
                             jax.random.split(jax.random.PRNGKey(0), n))
        xs = np.asarray(xs)[n // 4:]
        return xs.mean(0), xs.std(0)

    mean, std = moments(blackjax.nuts(logdensity, step_size=0.5,
                                      inverse_mass_matrix=jnp.asarray(sd ** 2)), 600)
    np.testing.assert_allclose(mean, mu, atol=0.25 * sd.max())
    np.testing.assert_allclose(std, sd, rtol=0.25)
    mean, std = moments(blackjax.hmc(logdensity, step_size=0.2, num_integration_steps=8,
                                     inverse_mass_matrix=jnp.asarray(sd ** 2)), 600)
    np.testing.assert_allclose(mean, mu, atol=0.25 * sd.max())
    np.testing.assert_allclose(std, sd, rtol=0.3)

    # Stan-style warmup learns a diagonal inverse mass matrix near the target's variances
    warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)
    (_, params), _ = warmup.run(jax.random.PRNGKey(1), jnp.zeros(2), num_steps=200)
    assert 0.05 < float(params["step_size"]) < 3.0
    # weakly typed as in JAX 0.10.2 (loop carries keep the body's weak types: test_scan.py)
    assert params["step_size"].weak_type
    np.testing.assert_allclose(params["inverse_mass_matrix"], sd ** 2, rtol=0.6)


def test_stand_ins_these_libraries_import():
    import pyjax
    pyjax.install_as_jax()
    import jax
    import jax.extend.core.primitives as prims
    from jax._src.core import trace_state_clean
    from jax.experimental.sparse import BCOO

    # numpyro imports BCOO at import time; pyjax has no sparse arrays, so using it raises
    with pytest.raises(NotImplementedError, match="jax.experimental.sparse"):
        BCOO.fromdense(np.eye(2))
    # numpyro keys its provenance rules by these; jit_p is the one pyjax's jaxprs hold
    jaxpr = jax.make_jaxpr(lambda x: jax.jit(lambda y: y * 2)(x))(1.0)
    assert jaxpr.jaxpr.eqns[0].primitive is prims.jit_p
    with pytest.raises(NotImplementedError, match="call"):
        prims.call_p.bind(1.0)
    # numpyro asks whether a transformation is tracing before caching closures
    seen = []
    jax.jit(lambda x: seen.append(trace_state_clean()) or x)(1.0)
    assert trace_state_clean() and seen == [False]
