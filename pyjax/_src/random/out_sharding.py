"""``out_sharding=`` of the ``jax.random`` samplers that take it in JAX 0.10.2: the values are
the unsharded ones (JAX's threefry is partitionable, so a sharded draw has the same values),
laid out as asked (a sharding constraint under a trace, which gives the result that
sharding in its type on Explicit axes; a transfer eagerly)."""
from __future__ import annotations

import functools
import inspect

from pyjax._src.core.sharding_rules import as_named_sharding
from pyjax._src.lax.sharding_constraint import with_sharding_constraint
from pyjax._src.random import distributions, samplers, transforms


def takes_out_sharding(fn):
    """``fn`` with JAX's keyword-only ``out_sharding=None``."""
    @functools.wraps(fn)
    def sampler(*args, out_sharding=None, **kwargs):
        out = fn(*args, **kwargs)
        s = as_named_sharding(out_sharding, f"random.{fn.__name__}")
        return out if s is None else with_sharding_constraint(out, s)
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.name != "out_sharding"]
    sampler.__signature__ = sig.replace(parameters=params + [inspect.Parameter(
        "out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return sampler


_d, _s, _t = distributions, samplers, transforms
ball = takes_out_sharding(_s.ball)
bernoulli = takes_out_sharding(_d.bernoulli)
beta = takes_out_sharding(_s.beta)
bits = takes_out_sharding(_d.bits)
categorical = takes_out_sharding(_d.categorical)
cauchy = takes_out_sharding(_d.cauchy)
chisquare = takes_out_sharding(_s.chisquare)
dirichlet = takes_out_sharding(_s.dirichlet)
exponential = takes_out_sharding(_d.exponential)
f = takes_out_sharding(_s.f)
gamma = takes_out_sharding(_s.gamma)
generalized_normal = takes_out_sharding(_s.generalized_normal)
geometric = takes_out_sharding(_s.geometric)
gumbel = takes_out_sharding(_d.gumbel)
laplace = takes_out_sharding(_d.laplace)
loggamma = takes_out_sharding(_s.loggamma)
logistic = takes_out_sharding(_d.logistic)
lognormal = takes_out_sharding(_t.lognormal)
maxwell = takes_out_sharding(_t.maxwell)
multivariate_normal = takes_out_sharding(_d.multivariate_normal)
normal = takes_out_sharding(_d.normal)
orthogonal = takes_out_sharding(_d.orthogonal)
pareto = takes_out_sharding(_t.pareto)
permutation = takes_out_sharding(_d.permutation)
poisson = takes_out_sharding(_s.poisson)
rademacher = takes_out_sharding(_d.rademacher)
randint = takes_out_sharding(_d.randint)
rayleigh = takes_out_sharding(_t.rayleigh)
t = takes_out_sharding(_s.t)
triangular = takes_out_sharding(_t.triangular)
truncated_normal = takes_out_sharding(_d.truncated_normal)
uniform = takes_out_sharding(_d.uniform)
wald = takes_out_sharding(_t.wald)
