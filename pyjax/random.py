"""``pyjax.random``: pseudo-random numbers from explicit keys, as ``jax.random``.

Keys are typed key arrays (``key(seed)``, dtype ``key<fry>``) or legacy raw ``uint32[2]`` keys
(``PRNGKey(seed)``). The generator is Threefry-2x32 in JAX's default mode, so the same key gives
the same bits and values as JAX.
"""
from pyjax._src.random.prng import PRNGKeyArray as PRNGKeyArray  # noqa: F401
from pyjax._src.random.keys import (  # noqa: F401
    key as key, PRNGKey as PRNGKey, key_data as key_data, wrap_key_data as wrap_key_data,
    key_impl as key_impl, key_dtype as key_dtype, split as split, fold_in as fold_in,
    clone as clone, threefry_2x32 as threefry_2x32)
from pyjax._src.random.distributions import (  # noqa: F401
    bits as bits, uniform as uniform, normal as normal, randint as randint,
    permutation as permutation, choice as choice, truncated_normal as truncated_normal,
    bernoulli as bernoulli, exponential as exponential, laplace as laplace,
    logistic as logistic, cauchy as cauchy, gumbel as gumbel, categorical as categorical,
    rademacher as rademacher)
from pyjax._src.random.samplers import (  # noqa: F401
    gamma as gamma, loggamma as loggamma, beta as beta, dirichlet as dirichlet, t as t,
    chisquare as chisquare, f as f, generalized_normal as generalized_normal, ball as ball,
    poisson as poisson, geometric as geometric, binomial as binomial,
    multinomial as multinomial, random_gamma_p as random_gamma_p)
from pyjax._src.random.distributions import (  # noqa: F401
    multivariate_normal as multivariate_normal, orthogonal as orthogonal)
from pyjax._src.random.transforms import (  # noqa: F401
    pareto as pareto, weibull_min as weibull_min, rayleigh as rayleigh, lognormal as lognormal,
    triangular as triangular, wald as wald, maxwell as maxwell,
    double_sided_maxwell as double_sided_maxwell)
from pyjax._src.random.out_sharding import (  # noqa: F401,E402  (JAX's out_sharding=)
    ball, bernoulli, beta, bits, categorical, cauchy, chisquare, dirichlet, exponential, f,
    gamma, generalized_normal, geometric, gumbel, laplace, loggamma, logistic, lognormal,
    maxwell, multivariate_normal, normal, orthogonal, pareto, permutation, poisson, rademacher,
    randint, rayleigh, t, triangular, truncated_normal, uniform, wald)
