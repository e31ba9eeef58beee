"""Samplers that JAX builds on ``while`` loops: gamma (and the distributions made from it),
Poisson, binomial, multinomial.

Each follows JAX's algorithm step for step, with JAX's key splitting, so that a key gives
JAX's numbers: gamma is Marsaglia and Tsang's method run per element under its own key
(``split(key, a.size)``), with an inner loop that redraws a normal until ``v > 0``; Poisson is
Knuth's multiplication method below ``lam = 10`` and Hormann's transformed rejection (PTRS)
above, each a loop over the whole array; binomial is inversion by geometric waiting times for
``n p <= 10`` and Hormann's BTRS above; multinomial is a ``scan`` of binomials over the
categories.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from pyjax._src.control_flow.loops import map as lax_map
from pyjax._src.core import dtypes
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, lower_fun
from pyjax._src.control_flow.scan import scan
from pyjax._src.control_flow.while_loop import while_loop
from pyjax._src.transformations.jit import jit
from pyjax._src.transformations.vmap import vmap
from pyjax._src.lax import batch_util
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import reductions as lax_red
from pyjax._src.lax import shape_ops
from pyjax._src.lax import special
from pyjax._src.transformations.custom_derivatives import custom_jvp
from pyjax._src.lax.base import aval_of
from pyjax._src.numpy import reductions as jred
from pyjax._src.numpy import shape as jshape
from pyjax._src.numpy import ufuncs as jnp
from pyjax._src.random.distributions import (
    bcast_to, canonical_shape, check_arraylike, check_shape, const, convert, dtype_of,
    exponential_core, float_dtype, int_dtype, normal_core, normal_real_core, optional_shape,
    rademacher_core, sampler_args, shape_of, split_keys, uniform_core)
from pyjax._src.random.prng import check_key, split_data
from pyjax._src.core.sharding_rules import replicated_results


# ---------------------------------------------------------------------------------------
# gamma: Marsaglia & Tsang, "A simple method for generating gamma variables" (2000)
# ---------------------------------------------------------------------------------------

def _gamma_one(kd, alpha, log_space):
    """One Gamma(``alpha``) draw (its log with ``log_space``) under the key ``kd``."""
    dtype = dtype_of(alpha)
    c_ = functools.partial(const, dtype)
    zero, one = c_(0), c_(1)
    # alpha < 1 is boosted: Gamma(alpha) ~ Gamma(alpha + 1) * U**(1 / alpha)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c_(1.0 / 3.0))
    c = lax.div(c_(1.0 / 3.0), lax.sqrt(d))

    def reject(state):
        _, x2, v, u = state
        return lax.bitwise_and(
            lax.ge(u, lax.sub(one, lax.mul(c_(0.0331), lax.mul(x2, x2)))),
            lax.ge(lax.log(u), lax.add(lax.mul(x2, c_(0.5)),
                                       lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))))

    def next_normal(state):
        k, sub = split_keys(state[0], 2)
        x = normal_real_core(sub, (), dtype)
        return k, x, lax.add(one, lax.mul(x, c))

    def propose(state):
        k, x_key, u_key = split_keys(state[0], 3)
        _, x, v = while_loop(lambda s: lax.le(s[2], zero), next_normal, (x_key, zero, c_(-1)))
        u = uniform_core(u_key, (), dtype)
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    k, sub = split_keys(kd, 2)
    # the initial state is one that `reject` rejects
    _, _, v, _ = while_loop(reject, propose, (k, zero, one, c_(2)))
    if log_space:
        log_u = lax.neg(exponential_core(sub, (), dtype))
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_u, zero)), zero,
                               lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(one, uniform_core(sub, (), dtype))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def gamma_core(kd, a, log_space):
    """Gamma(``a``) draws (log-gamma with ``log_space``) of the shape of ``a``: element ``i``
    (row-major) is drawn under ``split(key, a.size)[i]``, as JAX does."""
    shape = tuple(aval_of(a).shape)
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return a
    keys = split_data(kd, (n,))
    draws = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, shape_ops.reshape(a, (n,)))
    return shape_ops.reshape(draws, shape)


# ---- random_gamma_p: JAX's primitive for the gamma draws (key data, alphas) ----

def _random_gamma_abstract_eval(kd, a, *, log_space):
    if kd.dtype != np.uint32 or kd.ndim != 1:
        raise TypeError(f"random_gamma: expected the raw key data of one key (uint32[n]; a "
                        f"typed key's jax.random.key_data), got {kd.str_short()}")
    if not dtypes.is_floating(a.dtype):
        raise TypeError(f"random_gamma: a must be floating, got {a.dtype}")
    return a.update(weak_type=False)


def _random_gamma_jvp(primals, tangents, *, log_space):
    (kd, a), (_, ta) = primals, tangents
    out = random_gamma_p.bind(kd, a, log_space=log_space)
    if type(ta) is Zero:
        return out, Zero(aval_of(out))
    return out, lax.mul(ta, _gamma_sample_grad(a, out, log_space))


def _gamma_sample_grad(a, out, log_space):
    """d out / d a for gamma draws ``out`` (their logs with ``log_space``). In log space
    d log(x) = dx / x, with an ``x = exp(out)`` that underflowed to 0 taken as the smallest
    normal float, as JAX does (a finite slope where 0 / 0 would give NaN)."""
    if not log_space:
        return special.random_gamma_grad(a, out)
    dtype = dtype_of(out)
    x = lax.exp(out)
    x = lax.select(lax.eq(x, const(dtype, 0)),
                   shape_ops.full(aval_of(x).shape, const(dtype, dtypes.finfo(dtype).tiny), dtype),
                   x)
    return lax.div(special.random_gamma_grad(a, x), x)


def _random_gamma_batch(args, dims, *, log_space):
    # one application per batch element (a lax.map): each draws under its own key, as
    # unbatched
    size = batch_util.batch_size(args, dims)
    kd, a = [batch_util.bdim_to(x, d, 0, size) for x, d in zip(args, dims)]
    split = _split_batch(kd) or _split_batch(a)
    if split is not None:  # the loop runs over a whole batch, laid out as it came after
        mesh, axes = split
        kd, a = [_constrained(x, mesh, None) for x in (kd, a)]
    out = lax_map(lambda ka: random_gamma_p.bind(ka[0], ka[1], log_space=log_space), (kd, a))
    if split is not None:  # JAX 0.10.2 types vmap(gamma) over keys on P('X'): f32[8@X]
        out = _constrained(out, mesh, axes)
    return out, 0


def _split_batch(x):
    """(mesh, Explicit axes) of ``x``'s leading (batch) dimension when it is split, else None."""
    from pyjax._src.core.sharding_rules import explicit_spec
    spec = explicit_spec(aval_of(x))
    return (aval_of(x).sharding.mesh, spec[0]) if spec and spec[0] else None


def _constrained(x, mesh, lead_axes):
    """``x`` laid out with its leading dimension on ``lead_axes`` (None: unsplit), the others
    unsplit."""
    from pyjax._src.core.sharding import NamedSharding, PartitionSpec
    from pyjax._src.lax.sharding_constraint import sharding_constraint_p
    lead = None if not lead_axes else lead_axes[0] if len(lead_axes) == 1 else tuple(lead_axes)
    return sharding_constraint_p.bind(x, sharding=NamedSharding(mesh, PartitionSpec(lead)))


random_gamma_p = Primitive(
    "random_gamma", abstract_eval=_random_gamma_abstract_eval,
    lower=lower_fun(lambda kd, a, *, log_space: gamma_core(kd, a, log_space)),
    jvp=_random_gamma_jvp, batch=_random_gamma_batch,
    sharding_rule=replicated_results)

def gamma_draws(kd, a, log_space):
    """``gamma_core`` through ``random_gamma_p``, so that derivatives in ``a`` take the
    primitive's implicit-reparameterisation rule (differentiating the rejection loop itself
    fails: its tangent is not linear)."""
    return random_gamma_p.bind(kd, a, log_space=bool(log_space))


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gamma_jit(kd, shape, dtype, log_space, a):
    a = bcast_to(convert(a, dtype), shape)
    return random_gamma_p.bind(kd, a, log_space=bool(log_space))


def _gamma_sample(kd, a, shape, dtype, log_space):
    return _gamma_jit(kd, shape, dtype, log_space, a)


# Differentiable in ``a`` as in JAX: implicit reparameterisation, dx/da = -(dP(a, x)/da) / p(x)
# (lax.random_gamma_grad); for log-space samples d log(x)/da = (dx/da) / x.
_gamma_sample = custom_jvp(_gamma_sample, nondiff_argnums=(2, 3, 4))


@_gamma_sample.defjvp
def _gamma_sample_jvp(shape, dtype, log_space, primals, tangents):
    kd, a = primals
    ta = tangents[1]
    out = _gamma_sample(kd, a, shape, dtype, log_space)
    a = bcast_to(convert(a, dtype), shape)
    ta = bcast_to(convert(ta, dtype), shape)
    return out, lax.mul(ta, _gamma_sample_grad(a, out, log_space))


def gamma(key, a, shape=None, dtype=float):
    """Sample Gamma(``a``, 1) values (density ``x**(a-1) exp(-x) / Gamma(a)``)."""
    kd, shape, dtype = sampler_args("gamma", key, shape, dtype, (a,), ("a",))
    return _gamma_sample(kd, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=float):
    """Sample ``log(x)`` for x ~ Gamma(``a``, 1), computed in log space (accurate for tiny
    ``a``)."""
    kd, shape, dtype = sampler_args("loggamma", key, shape, dtype, (a,), ("a",))
    return _gamma_sample(kd, a, shape, dtype, True)


@functools.partial(jit, static_argnums=(1, 2))
def _beta_jit(kd, shape, dtype, a, b):
    a = bcast_to(convert(a, dtype), shape)
    b = bcast_to(convert(b, dtype), shape)
    key_a, key_b = split_keys(kd, 2)
    log_ga = gamma_draws(key_a, a, True)
    log_gb = gamma_draws(key_b, b, True)
    # ga / (ga + gb) without losing precision
    log_max = lax.max(log_ga, log_gb)
    ga = lax.exp(lax.sub(log_ga, log_max))
    gb = lax.exp(lax.sub(log_gb, log_max))
    return lax.div(ga, lax.add(ga, gb))


def beta(key, a, b, shape=None, dtype=float):
    """Sample Beta(``a``, ``b``) values: ``Ga / (Ga + Gb)`` from two log-gamma draws."""
    kd, shape, dtype = sampler_args("beta", key, shape, dtype, (a, b), ("a", "b"))
    return _beta_jit(kd, shape, dtype, a, b)


@functools.partial(jit, static_argnums=(1, 2))
def _dirichlet_jit(kd, shape, dtype, alpha):
    alpha = convert(alpha, dtype)
    full = tuple(shape) + tuple(aval_of(alpha).shape[-1:])
    log_g = gamma_draws(kd, bcast_to(alpha, full), True)
    # softmax along the last axis
    m = jred.max(log_g, axis=-1, keepdims=True)
    e = jnp.exp(jnp.subtract(log_g, m))
    return jnp.divide(e, jred.sum(e, axis=-1, keepdims=True))


def dirichlet(key, alpha, shape=None, dtype=float):
    """Sample Dirichlet(``alpha``) vectors (``alpha`` of shape ``(..., n)``) from normalized
    log-gamma draws."""
    kd, _ = check_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    shape = optional_shape("dirichlet", shape)
    check_arraylike("dirichlet", alpha)
    ashape = shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(ashape)}")
    if shape is None:
        shape = ashape[:-1]
    else:
        check_shape("dirichlet", shape, ashape[:-1], names=("alpha[..., 0]",))
    return _dirichlet_jit(kd, shape, dtype, alpha)


@functools.partial(jit, static_argnums=(1, 2))
def _t_jit(kd, shape, dtype, df):
    df = bcast_to(convert(df, dtype), shape)
    key_n, key_g = split_keys(kd, 2)
    n = normal_core(key_n, shape, dtype)
    half_df = lax.div(df, const(dtype, 2))
    g = gamma_draws(key_g, half_df, False)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def t(key, df, shape=(), dtype=float):
    """Sample Student's t values with ``df`` degrees of freedom: ``N * sqrt(df/2 / G)``,
    G ~ Gamma(df/2)."""
    kd, shape, dtype = sampler_args("t", key, shape, dtype, (df,), ("df",))
    return _t_jit(kd, shape, dtype, df)


@functools.partial(jit, static_argnums=(1, 2))
def _chisquare_jit(kd, shape, dtype, df):
    half_df = lax.div(bcast_to(convert(df, dtype), shape), const(dtype, 2))
    return lax.mul(lax.exp(gamma_draws(kd, half_df, True)), const(dtype, 2))


def chisquare(key, df, shape=None, dtype=float):
    """Sample chi-square values with ``df`` degrees of freedom (``2 * Gamma(df/2)``)."""
    kd, shape, dtype = sampler_args("chisquare", key, shape, dtype, (df,), ("a",))
    return _chisquare_jit(kd, shape, dtype, df)


@functools.partial(jit, static_argnums=(1, 2))
def _f_jit(kd, shape, dtype, dfnum, dfden):
    dfden = bcast_to(convert(dfden, dtype), shape)
    dfnum = bcast_to(convert(dfnum, dtype), shape)
    two = const(dtype, 2)
    key_dfd, key_dfn = split_keys(kd, 2)
    chi2_num = lax.mul(lax.exp(gamma_draws(key_dfn, lax.div(dfnum, two), True)), two)
    chi2_den = lax.mul(lax.exp(gamma_draws(key_dfd, lax.div(dfden, two), True)), two)
    return lax.div(lax.div(chi2_num, dfnum), lax.div(chi2_den, dfden))


def f(key, dfnum, dfden, shape=None, dtype=float):
    """Sample F-distribution values with ``dfnum``/``dfden`` degrees of freedom."""
    kd, shape, dtype = sampler_args("f", key, shape, dtype, (dfden, dfnum), ("dfden", "dfnum"))
    return _f_jit(kd, shape, dtype, dfnum, dfden)


def generalized_normal_core(kd, p, shape, dtype):
    """``p`` is a traced scalar: a constant would let the compiler fold the gamma sampler's
    per-element set-up over the whole (constant) shape array, slowly."""
    k_g, k_r = split_keys(kd, 2)
    inv_p = lax.div(const(dtype, 1), convert(p, dtype))
    g = gamma_draws(k_g, bcast_to(inv_p, shape), False)
    r = rademacher_core(k_r, shape, dtype)
    return lax.mul(r, lax.pow(g, bcast_to(inv_p, shape)))


@functools.partial(jit, static_argnums=(1, 2))
def _generalized_normal_jit(kd, shape, dtype, p):
    return generalized_normal_core(kd, p, shape, dtype)


def _scalar_param(name, what, v):
    if np.ndim(v):
        raise TypeError(f"{name}: `{what}` must be a scalar, got an array of shape "
                        f"{tuple(np.shape(v))}")
    return v


def generalized_normal(key, p, shape=(), dtype=float):
    """Sample generalized normal values (density proportional to ``exp(-|x|**p)``)."""
    kd, _ = check_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    shape = canonical_shape("generalized_normal", shape)
    return _generalized_normal_jit(kd, shape, dtype, _scalar_param("generalized_normal", "p", p))


@functools.partial(jit, static_argnums=(1, 2, 3))
def _ball_jit(kd, d, shape, dtype, p):
    k1, k2 = split_keys(kd, 2)
    g = generalized_normal_core(k1, p, tuple(shape) + (d,), dtype)
    e = exponential_core(k2, shape, dtype)
    p = convert(p, dtype)
    norm = jnp.power(jnp.add(jred.sum(jnp.power(jnp.abs(g), p), axis=-1), e),
                     lax.div(const(dtype, 1), p))
    return jnp.divide(g, shape_ops.expand_dims(norm, (len(shape),)))


def ball(key, d, p=2, shape=(), dtype=float):
    """Sample points uniformly from the unit Lp ball in ``d`` dimensions (Barthe et al.)."""
    kd, _ = check_key("ball", key)
    dtype = float_dtype("ball", dtype)
    shape = canonical_shape("ball", shape)
    d = canonical_shape("ball", (d,), "d")[0]
    return _ball_jit(kd, d, shape, dtype, _scalar_param("ball", "p", p))


# ---------------------------------------------------------------------------------------
# Poisson: Knuth's method below lambda = 10, Hormann's transformed rejection (PTRS) above
# ---------------------------------------------------------------------------------------

def _any(x):
    return lax_red.reduce_or(x, tuple(range(aval_of(x).ndim)))


def _poisson_knuth(kd, lam, shape, dtype, max_iters):
    """Multiply uniforms until the product drops below exp(-lam), the whole array at once."""
    f32 = np.dtype(np.float32)
    neg_lam = lax.neg(lam)

    def body(carry):
        i, k, key, log_prod = carry
        key, sub = split_keys(key, 2)
        k = lax.select(lax.gt(log_prod, neg_lam), lax.add(k, dtype.type(1)), k)
        u = uniform_core(sub, shape, f32)
        return lax.add(i, np.int32(1)), k, key, lax.add(log_prod, lax.log(u))

    def cond(carry):
        i, _, _, log_prod = carry
        return lax.bitwise_and(_any(lax.gt(log_prod, neg_lam)), lax.lt(i, max_iters))

    init = (np.int32(0), shape_ops.full(shape, dtype.type(0), dtype), kd,
            shape_ops.full(shape, const(f32, 0), f32))
    k = while_loop(cond, body, init)[1]
    return lax.sub(k, dtype.type(1))


def _poisson_rejection(kd, lam, shape, dtype, max_iters):
    """Hormann's PTRS for ``lam >= 10``, the whole array at once."""
    f32 = np.dtype(np.float32)
    c_ = functools.partial(const, f32)
    log_lam = lax.log(lam)
    b = lax.add(c_(0.931), lax.mul(c_(2.53), lax.sqrt(lam)))
    a = lax.add(c_(-0.059), lax.mul(c_(0.02483), b))
    inv_alpha = lax.add(c_(1.1239), lax.div(c_(1.1328), lax.sub(b, c_(3.4))))
    v_r = lax.sub(c_(0.9277), lax.div(c_(3.6224), lax.sub(b, c_(2))))

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = split_keys(key, 3)
        u = lax.sub(uniform_core(sub0, shape, f32), c_(0.5))
        v = uniform_core(sub1, shape, f32)
        u_shifted = lax.sub(c_(0.5), lax.abs(u))
        k = lax.floor(lax.add(lax.add(lax.mul(lax.add(lax.div(lax.mul(c_(2), a), u_shifted), b),
                                              u), lam), c_(0.43)))
        s = lax.log(lax.div(lax.mul(v, inv_alpha),
                            lax.add(lax.div(a, lax.mul(u_shifted, u_shifted)), b)))
        t_ = lax.sub(lax.add(lax.neg(lam), lax.mul(k, log_lam)), special.xla_lgamma(lax.add(k, c_(1))))  # JAX's bits
        accept1 = lax.bitwise_and(lax.ge(u_shifted, c_(0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(lax.lt(k, c_(0)), lax.bitwise_and(lax.lt(u_shifted, c_(0.013)),
                                                                  lax.gt(v, u_shifted)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject),
                                                         lax.le(s, t_)))
        return (lax.add(i, np.int32(1)), lax.select(accept, k, k_out),
                lax.bitwise_or(accepted, accept), key)

    def cond(carry):
        i, _, accepted, _ = carry
        return lax.bitwise_and(_any(lax.bitwise_not(accepted)), lax.lt(i, max_iters))

    init = (np.int32(0), shape_ops.full(shape, c_(-1), f32),
            shape_ops.full(shape, np.bool_(False), np.dtype(bool)), kd)
    return convert(while_loop(cond, body, init)[1], dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _poisson_jit(kd, shape, dtype, lam):
    f32 = np.dtype(np.float32)
    lam = bcast_to(convert(lam, f32), shape)
    use_knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, const(f32, 10)))
    lam_knuth = lax.select(use_knuth, lam, shape_ops.full(shape, const(f32, 0), f32))
    # PTRS accepts at most 89% of proposals as lam grows: any large rate keeps it quick
    lam_rejection = lax.select(use_knuth, shape_ops.full(shape, const(f32, 1e5), f32), lam)
    max_iters = np.array(dtypes.iinfo(dtype).max, dtype)[()]
    max_iters = np.int32(min(int(max_iters), np.iinfo(np.int32).max))
    result = lax.select(use_knuth, _poisson_knuth(kd, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(kd, lam_rejection, shape, dtype, max_iters))
    return lax.select(lax.eq(lam, const(f32, 0)), shape_ops.full(shape, dtype.type(0), dtype),
                      result)


def poisson(key, lam, shape=None, dtype=int):
    """Sample Poisson(``lam``) counts (Knuth's method for ``lam < 10``, Hormann's
    transformed rejection above), JAX's algorithm and numbers."""
    kd, shape, dtype = sampler_args("poisson", key, shape, dtype, (lam,), ("lam",), int_dtype)
    return _poisson_jit(kd, shape, dtype, lam)


@functools.partial(jit, static_argnums=(1, 2))
def _geometric_jit(kd, shape, dtype, p):
    if not dtypes.issubdtype(dtype_of(p), np.inexact):
        p = convert(p, dtypes.canonicalize_dtype(float))
    fdt = dtype_of(p)
    u = uniform_core(kd, shape, fdt)
    # a zero draw counts as 1 (one trial), as JAX does: log(0) / log1p(-p) is inf, which
    # became int32 max (1 draw in 1,024 in float16)
    u = lax.select(lax.eq(u, const(fdt, 0)), bcast_to(const(fdt, 1), shape), u)
    log_one_minus_p = bcast_to(lax.log1p(lax.neg(p)), shape)
    g = lax.add(lax.floor(lax.div(lax.log(u), log_one_minus_p)), const(fdt, 1))
    return convert(g, dtype)


def geometric(key, p, shape=None, dtype=int):
    """Sample the number of Bernoulli(``p``) trials up to and including the first success."""
    kd, shape, dtype = sampler_args("geometric", key, shape, dtype, (p,), ("p",), int_dtype)
    return _geometric_jit(kd, shape, dtype, p)


# ---------------------------------------------------------------------------------------
# binomial: inversion by geometric waiting times (n p <= 10), BTRS (Hormann 1993) above
# ---------------------------------------------------------------------------------------

_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_approx_tail(k):
    """Stirling's series remainder ``log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]``
    as JAX computes it: tabulated for k <= 9; above, JAX evaluates the series at k clamped to
    9 (not at k), and so do we, to give its numbers."""
    dtype = dtype_of(k)
    use_table = lax.le(k, const(dtype, 9))
    k = lax.clamp(const(dtype, 0), k, const(dtype, 9))
    kp1 = lax.add(k, const(dtype, 1))
    kp1sq = lax.mul(kp1, kp1)
    approx = lax.div(lax.sub(const(dtype, 1.0 / 12), lax.div(
        lax.sub(const(dtype, 1.0 / 360), lax.div(const(dtype, 1.0 / 1260), kp1sq)), kp1sq)),
        kp1)
    # the table entry for floor(k): a select chain over the ten values
    idx = lax.floor(k)
    table = shape_ops.full(aval_of(k).shape, const(dtype, _STIRLING_TAIL[0]), dtype)
    for i in range(1, 10):
        table = lax.select(lax.eq(idx, const(dtype, i)),
                           shape_ops.full(aval_of(k).shape, const(dtype, _STIRLING_TAIL[i]),
                                          dtype), table)
    return lax.select(use_table, table, approx)


def _binomial_inversion(kd, count, prob, shape, dtype, max_iters):
    """Count geometric waiting times until their sum passes ``count``."""
    fdt = dtype_of(prob)
    log1minusprob = lax.log1p(lax.neg(prob))

    def body(carry):
        i, num_geom, geom_sum, key = carry
        sub, key = split_keys(key, 2)
        num_geom_out = lax.select(lax.le(geom_sum, count), lax.add(num_geom, const(fdt, 1)),
                                  num_geom)
        u = uniform_core(sub, shape, fdt)
        geom = lax.ceil(lax.div(lax.log(u), log1minusprob))
        return lax.add(i, np.int32(1)), num_geom_out, lax.add(geom_sum, geom), key

    def cond(carry):
        i, _, geom_sum, _ = carry
        return lax.bitwise_and(_any(lax.le(geom_sum, count)),
                               lax.lt(convert(i, fdt), max_iters))

    zeros = shape_ops.full(shape, const(fdt, 0), fdt)
    k = while_loop(cond, body, (np.int32(0), zeros, zeros, kd))[1]
    return convert(lax.sub(k, const(fdt, 1)), dtype)


def _btrs(kd, count, prob, shape, dtype, max_iters):
    """Hormann's BTRS (transformed rejection with squeeze) for ``n p > 10``."""
    fdt = dtype_of(prob)
    c_ = functools.partial(const, fdt)
    one = c_(1)
    log = lax.log
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(one, prob)))
    b = lax.add(c_(1.15), lax.mul(c_(2.53), stddev))
    a = lax.add(lax.add(c_(-0.0873), lax.mul(c_(0.0248), b)), lax.mul(c_(0.01), prob))
    c = lax.add(lax.mul(count, prob), c_(0.5))
    v_r = lax.sub(c_(0.92), lax.div(c_(4.2), b))
    r = lax.div(prob, lax.sub(one, prob))
    alpha = lax.mul(lax.add(c_(2.83), lax.div(c_(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, one), prob))

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = split_keys(key, 3)
        u = uniform_core(sub0, shape, fdt)
        v = uniform_core(sub1, shape, fdt)
        u = lax.sub(u, c_(0.5))
        us = lax.sub(c_(0.5), lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, c_(0.07)), lax.le(v, v_r))
        k = lax.floor(lax.add(lax.mul(lax.add(lax.div(lax.mul(c_(2), a), us), b), u), c))
        reject = lax.bitwise_or(lax.lt(k, c_(0)), lax.gt(k, count))
        v = log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        ub = lax.add(
            lax.mul(lax.add(m, c_(0.5)),
                    log(lax.div(lax.add(m, one), lax.mul(r, lax.add(lax.sub(count, m), one))))),
            lax.mul(lax.add(count, one),
                    log(lax.div(lax.add(lax.sub(count, m), one),
                                lax.add(lax.sub(count, k), one)))))
        ub = lax.add(ub, lax.mul(lax.add(k, c_(0.5)),
                                 log(lax.div(lax.mul(r, lax.add(lax.sub(count, k), one)),
                                             lax.add(k, one)))))
        ub = lax.add(lax.add(ub, _stirling_approx_tail(m)),
                     _stirling_approx_tail(lax.sub(count, m)))
        ub = lax.sub(lax.sub(ub, _stirling_approx_tail(k)),
                     _stirling_approx_tail(lax.sub(count, k)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject),
                                                         lax.le(v, ub)))
        return (lax.add(i, np.int32(1)), lax.select(accept, k, k_out),
                lax.bitwise_or(accepted, accept), key)

    def cond(carry):
        i, _, accepted, _ = carry
        return lax.bitwise_and(_any(lax.bitwise_not(accepted)),
                               lax.lt(convert(i, fdt), max_iters))

    init = (np.int32(0), shape_ops.full(shape, c_(-1), fdt),
            shape_ops.full(shape, np.bool_(False), np.dtype(bool)), kd)
    return convert(while_loop(cond, body, init)[1], dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _binomial_jit(kd, shape, dtype, count, prob):
    if not dtypes.issubdtype(dtype_of(prob), np.inexact):
        prob = convert(prob, dtypes.canonicalize_dtype(float))
    fdt = dtype_of(prob)
    c_ = functools.partial(const, fdt)
    out_shape, shape = shape, (math.prod(shape),)  # work on flat arrays
    count = shape_ops.reshape(bcast_to(convert(count, fdt), out_shape), shape)
    prob = shape_ops.reshape(bcast_to(prob, out_shape), shape)
    full = functools.partial(shape_ops.full, shape)
    p_lt_half = lax.lt(prob, c_(0.5))
    q = lax.select(p_lt_half, prob, lax.sub(c_(1), prob))
    count_nan_or_neg = lax.bitwise_or(lax.ne(count, count), lax.lt(count, c_(0)))
    count_inf = jnp.isinf(count)
    q_is_nan = lax.ne(q, q)
    q_l_0 = lax.lt(q, c_(0))
    q = lax.select(lax.bitwise_or(q_is_nan, q_l_0), full(c_(0.01), fdt), q)
    use_inversion = lax.bitwise_or(count_nan_or_neg, lax.le(lax.mul(count, q), c_(10)))
    count = lax.floor(count)  # like NumPy for a float count
    count_inv = lax.select(use_inversion, count, full(c_(0), fdt))
    count_btrs = lax.select(use_inversion, full(c_(1e4), fdt), count)
    q_btrs = lax.select(use_inversion, full(c_(0.5), fdt), q)
    max_iters = c_(dtypes.finfo(fdt).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(kd, count_inv, q, shape, dtype, max_iters),
                         _btrs(kd, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = lax.bitwise_or(lax.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = lax.select(invalid, full(const(dtype, np.nan), dtype), samples)
    samples = lax.select(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)),
                         full(const(dtype, np.inf), dtype), samples)
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_nan_or_neg),
                          lax.bitwise_or(q_is_nan, count_inf))
    samples = lax.select(keep, samples, lax.sub(convert(count, dtype), samples))
    return shape_ops.reshape(samples, out_shape)


def binomial(key, n, p, shape=None, dtype=float):
    """Sample Binomial(``n``, ``p``) counts (as floats, like JAX): inversion by geometric
    waiting times for ``n p <= 10``, Hormann's BTRS above (JAX's algorithm and numbers)."""
    kd, shape, dtype = sampler_args("binomial", key, shape, dtype, (n, p), ("n", "p"))
    return _binomial_jit(kd, shape, dtype, n, p)


# ---------------------------------------------------------------------------------------
# multinomial: a scan of binomials over the categories
# ---------------------------------------------------------------------------------------

@functools.partial(jit, static_argnums=(1, 2, 3))
def _multinomial_jit(kd, shape, dtype, unroll, n, p):
    fdt = dtypes.result_type(n, p)
    if not dtypes.issubdtype(fdt, np.inexact):
        fdt = dtypes.canonicalize_dtype(float)
    n = bcast_to(convert(n, fdt), shape[:-1])
    p = jshape.moveaxis(bcast_to(convert(p, fdt), shape), -1, 0)
    # the share of what is left that each category takes
    remaining = jshape.flip(jred.cumsum(jshape.flip(p, 0), axis=0), 0)
    zero = lax.eq(remaining, const(fdt, 0))
    ratios = lax.div(p, lax.select(zero, shape_ops.full(aval_of(p).shape, const(fdt, 1), fdt),
                                   remaining))
    keys = split_data(kd, (shape[-1],))

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        ratio = lax.min(lax.max(ratio, const(fdt, 0)), const(fdt, 1))
        count = _binomial_jit(key, shape[:-1], fdt, remainder, ratio)
        return lax.sub(remainder, count), count

    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return convert(jshape.moveaxis(counts, 0, -1), dtype)


def multinomial(key, n, p, *, shape=None, dtype=float, unroll=1):
    """Sample multinomial counts of ``n`` trials over the categories of ``p`` (last axis),
    as JAX: a binomial per category of what the earlier ones left."""
    kd, _ = check_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    dtype = float_dtype("multinomial", dtype)
    pshape = shape_of(p)
    if len(pshape) < 1:
        raise ValueError(f"multinomial: p must have at least one dimension, got shape "
                         f"{tuple(pshape)}")
    shape = tuple(pshape) if shape is None else canonical_shape("multinomial", shape)
    if not shape:
        raise ValueError("multinomial: shape must have at least one dimension (the categories)")
    check_shape("multinomial", shape, pshape, names=("p",))
    check_shape("multinomial", shape[:-1], shape_of(n), names=("n",))
    return _multinomial_jit(kd, shape, dtype, unroll, n, p)


__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball", "poisson", "geometric", "binomial", "multinomial"]
