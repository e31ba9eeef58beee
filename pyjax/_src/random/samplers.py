"""Samplers that JAX builds on ``while`` loops: gamma (and the distributions made from it),
Poisson, binomial.

pyjax has no ``lax.while_loop`` yet, so every rejection loop here is *vectorised over a fixed
number of rounds*: each element draws all its candidate proposals at once (a leading axis of
size ``R``, from one Threefry call per pair of random streams) and keeps the first accepted
one. This is the same rejection sampler, so the samples have exactly the target distribution
except in the event that all ``R`` proposals of an element are rejected, whose probability the
constants below bound (< 4e-9 per element); such an element falls back to its last valid
(unaccepted) proposal. Counting loops (Knuth's Poisson method, binomial inversion) are replaced
by inversion of the CDF over a fixed table of ``COUNT_TERMS`` terms.

The values are a deterministic function of the key (the same eagerly, under ``jit`` and under
``vmap``) but are not JAX's values for these distributions. Extra uniforms come from counter
ranges of the same key (``prng.bit_streams``) rather than from split keys, which keeps each
program small and quick to compile. ``lax.while_loop`` can later bring back JAX's exact loops.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops
from pyjax._src.lax import special
from pyjax._src.transformations.custom_derivatives import custom_jvp
from pyjax._src.lax.base import aval_of
from pyjax._src.numpy import indexing as jix
from pyjax._src.numpy import products as jpr
from pyjax._src.numpy import reductions as jred
from pyjax._src.numpy import ufuncs as jnp
from pyjax._src.random.distributions import (
    bcast_to, canonical_shape, check_arraylike, check_shape, const, convert, dtype_of,
    exponential_core, float_dtype, int_dtype, normal_core, optional_shape, rademacher_core,
    sampler_args, shape_of, split_keys, uniform_core)
from pyjax._src.random.distributions import (
    normal_from_bits, uniform_bits_width, uniform_from_bits)
from pyjax._src.random.prng import bit_streams, check_key

# Per-round acceptance rates, measured at each method's worst case on 10^5 draws: Marsaglia-
# Tsang 0.951 (alpha = 1 after the boost; an invalid v <= 0 proposal counts as a rejection),
# Hormann's PTRS 0.752 (lambda = 10), BTRS 0.709 (n p = 10, p = 1/2). The round counts make
# an element that no round accepts a < 4e-9 event: 0.049**7, 0.248**14, 0.291**16.
GAMMA_ROUNDS = 7
POISSON_ROUNDS = 14
BTRS_ROUNDS = 16
# CDF inversion for Poisson(lambda < 10) and Binomial(n p <= 10): P(X >= 48) < 1e-14.
COUNT_TERMS = 48


def _rounds(x, r):
    """``x`` (any shape, flattened to ``(M,)``) broadcast to ``(r, M)``: the candidates of all
    rounds sit on a leading axis so that the long element axis stays innermost (XLA's CPU loops
    vectorize along it; a short trailing round axis made them several times slower)."""
    m = math.prod(aval_of(x).shape)
    return shape_ops.broadcast_in_dim(shape_ops.reshape(x, (m,)), (r, m), (1,))


def _first_accepted(accept, values, fallback_ok, fallback):
    """Along the leading round axis of ``(R, M)`` candidates: the value of the first round
    whose ``accept`` is set; when none is, of the last round whose ``fallback_ok`` holds;
    else ``fallback`` (``(M,)``)."""
    rounds, m = aval_of(accept).shape
    dtype = dtype_of(values)
    # One small matrix product encodes, per element, the first accepted round (the highest
    # set bit of sum_r accept_r 2**(R-1-r)) and the last valid one (of sum_r ok_r 2**r): a
    # dot is not fused with its operands, so the candidates are computed once, and the
    # selection reads the chosen one back (a reduction over the rounds would inline the
    # whole candidate computation into it, which compiles slowly).
    flags = shape_ops.concatenate([convert(accept, np.float32),
                                   convert(fallback_ok, np.float32)], 0)
    w = np.zeros((2, 2 * rounds), np.float32)
    w[0, :rounds] = 2.0 ** np.arange(rounds - 1, -1, -1)
    w[1, rounds:] = 2.0 ** np.arange(rounds)
    codes = convert(jpr.matmul(w, flags), np.int32)  # exact: sums of distinct powers of 2
    first_code = shape_ops.index_in_dim(codes, 0, 0, keepdims=False)
    last_code = shape_ops.index_in_dim(codes, 1, 0, keepdims=False)
    # the highest set bit is 31 - clz
    first = lax.sub(np.int32(rounds - 1), lax.sub(np.int32(31), lax.clz(first_code)))
    last = lax.sub(np.int32(31), lax.clz(last_code))
    zero = shape_ops.full((m,), np.int32(0), np.int32)
    best = lax.select(lax.gt(first_code, zero), first, lax.max(last, zero))
    picked = shape_ops.squeeze(
        jix.take_along_axis(values, shape_ops.expand_dims(best, (0,)), axis=0), (0,))
    found = lax.bitwise_or(lax.gt(first_code, zero), lax.gt(last_code, zero))
    return lax.select(found, picked, convert(fallback, dtype))


# ---------------------------------------------------------------------------------------
# gamma: Marsaglia & Tsang, "A simple method for generating gamma variables" (2000)
# ---------------------------------------------------------------------------------------

def gamma_core(kd, a, log_space):
    """Gamma(``a``) draws (log-gamma with ``log_space``) of the shape of ``a``."""
    dtype = dtype_of(a)
    shape = tuple(aval_of(a).shape)
    m = math.prod(shape)
    if m == 0:
        return a
    c_ = functools.partial(const, dtype)
    one = c_(1)
    R = GAMMA_ROUNDS
    a = shape_ops.reshape(a, (m,))
    # alpha < 1: sample Gamma(alpha + 1) * U**(1/alpha) (in log space: + log(U) / alpha)
    boost_mask = lax.ge(a, one)
    alpha = lax.select(boost_mask, a, lax.add(a, one))
    d = lax.sub(alpha, c_(1.0 / 3.0))
    c = lax.div(c_(1.0 / 3.0), lax.sqrt(d))
    width = uniform_bits_width(dtype)
    x_bits, u_bits = bit_streams(kd, (R, m), width, 2)
    x = normal_from_bits(x_bits, dtype)
    u = uniform_from_bits(u_bits, dtype)
    v = lax.add(one, lax.mul(x, _rounds(c, R)))
    valid = lax.gt(v, c_(0))
    X = lax.mul(x, x)
    V = lax.mul(lax.mul(v, v), v)
    squeeze_ok = lax.lt(u, lax.sub(one, lax.mul(c_(0.0331), lax.mul(X, X))))
    log_ok = lax.lt(lax.log(u), lax.add(lax.mul(X, c_(0.5)), lax.mul(
        _rounds(d, R), lax.add(lax.sub(one, V), lax.log(V)))))
    accept = lax.bitwise_and(valid, lax.bitwise_or(squeeze_ok, log_ok))
    V = _first_accepted(accept, V, valid, shape_ops.full((m,), one, dtype))
    ub = uniform_from_bits(bit_streams(kd, (m,), width, 1, first_stream=2)[0], dtype)
    zero = shape_ops.full((m,), c_(0), dtype)
    if log_space:
        log_u = lax.log1p(lax.neg(ub))  # log of a uniform on (0, 1]
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_u, zero)), zero,
                               lax.mul(log_u, lax.div(one, a)))
        out = lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    else:
        boost = lax.select(boost_mask, shape_ops.full((m,), one, dtype),
                           lax.pow(lax.sub(one, ub), lax.div(one, a)))
        out = lax.mul(lax.mul(d, V), boost)
    # a negative shape parameter has no distribution: NaN, as JAX (not a negative draw)
    out = lax.select(lax.lt(a, c_(0)), shape_ops.full((m,), c_(np.nan), dtype), out)
    return shape_ops.reshape(out, shape)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gamma_jit(kd, shape, dtype, log_space, a):
    a = bcast_to(convert(a, dtype), shape)
    return gamma_core(kd, a, log_space)


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
    if log_space:
        x = lax.exp(out)
        dout = lax.div(special.random_gamma_grad(a, x), x)
    else:
        dout = special.random_gamma_grad(a, out)
    return out, lax.mul(ta, dout)


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
    # both log-gamma draws from one sampler call (one compiled kernel instead of two)
    log_g = gamma_core(kd, shape_ops.concatenate([shape_ops.expand_dims(a, (0,)),
                                                  shape_ops.expand_dims(b, (0,))], 0), True)
    log_ga, log_gb = _halves(log_g)
    # ga / (ga + gb) without losing precision
    log_max = lax.max(log_ga, log_gb)
    ga = lax.exp(lax.sub(log_ga, log_max))
    gb = lax.exp(lax.sub(log_gb, log_max))
    return lax.div(ga, lax.add(ga, gb))


def _halves(x):
    return [shape_ops.squeeze(shape_ops.slice_in_dim(x, i, i + 1, axis=0), (0,)) for i in (0, 1)]


def beta(key, a, b, shape=None, dtype=float):
    """Sample Beta(``a``, ``b``) values: ``Ga / (Ga + Gb)`` from two log-gamma draws."""
    kd, shape, dtype = sampler_args("beta", key, shape, dtype, (a, b), ("a", "b"))
    return _beta_jit(kd, shape, dtype, a, b)


@functools.partial(jit, static_argnums=(1, 2))
def _dirichlet_jit(kd, shape, dtype, alpha):
    alpha = convert(alpha, dtype)
    full = tuple(shape) + tuple(aval_of(alpha).shape[-1:])
    log_g = gamma_core(kd, bcast_to(alpha, full), True)
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
    g = gamma_core(key_g, half_df, False)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def t(key, df, shape=(), dtype=float):
    """Sample Student's t values with ``df`` degrees of freedom: ``N * sqrt(df/2 / G)``,
    G ~ Gamma(df/2)."""
    kd, shape, dtype = sampler_args("t", key, shape, dtype, (df,), ("df",))
    return _t_jit(kd, shape, dtype, df)


@functools.partial(jit, static_argnums=(1, 2))
def _chisquare_jit(kd, shape, dtype, df):
    half_df = lax.div(bcast_to(convert(df, dtype), shape), const(dtype, 2))
    return lax.mul(lax.exp(gamma_core(kd, half_df, True)), const(dtype, 2))


def chisquare(key, df, shape=None, dtype=float):
    """Sample chi-square values with ``df`` degrees of freedom (``2 * Gamma(df/2)``)."""
    kd, shape, dtype = sampler_args("chisquare", key, shape, dtype, (df,), ("a",))
    return _chisquare_jit(kd, shape, dtype, df)


@functools.partial(jit, static_argnums=(1, 2))
def _f_jit(kd, shape, dtype, dfnum, dfden):
    dfden = bcast_to(convert(dfden, dtype), shape)
    dfnum = bcast_to(convert(dfnum, dtype), shape)
    two = const(dtype, 2)
    half = shape_ops.concatenate([shape_ops.expand_dims(lax.div(dfnum, two), (0,)),
                                  shape_ops.expand_dims(lax.div(dfden, two), (0,))], 0)
    chi2_num, chi2_den = _halves(lax.mul(lax.exp(gamma_core(kd, half, True)), two))
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
    g = gamma_core(k_g, bcast_to(inv_p, shape), False)
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
# Poisson: CDF inversion below lambda = 10, Hormann's transformed rejection (PTRS) above
# ---------------------------------------------------------------------------------------

def _invert_cdf(u, p0, ratio):
    """The smallest ``j`` with ``CDF(j) >= u * CDF(COUNT_TERMS)`` where ``pmf(0) = p0`` and
    ``pmf(j + 1) = pmf(j) * ratio(j)``; ``u`` uniform in [0, 1). Scaling by the table's total
    keeps rounding in the summed CDF from pushing a draw past the table."""
    p, cdf = p0, p0
    cdfs = [cdf]
    for j in range(COUNT_TERMS):
        p = lax.mul(p, ratio(j))
        cdf = lax.add(cdf, p)
        cdfs.append(cdf)
    thr = lax.mul(u, cdf)
    count = None
    for c in cdfs[:-1]:
        below = convert(lax.lt(c, thr), np.int32)
        count = below if count is None else lax.add(count, below)
    return count


def _poisson_small(kd, lam, shape, dtype):
    f32 = np.dtype(np.float32)
    u = uniform_from_bits(bit_streams(kd, shape, 32, 1)[0], f32)
    k = _invert_cdf(u, lax.exp(lax.neg(lam)),
                    lambda j: lax.div(lam, const(f32, j + 1)))
    return convert(k, dtype)


def _poisson_rejection(kd, lam, shape, dtype):
    """Hormann's PTRS for ``lam >= 10``; ``lam`` is flat (``shape == (M,)``)."""
    f32 = np.dtype(np.float32)
    c_ = functools.partial(const, f32)
    R = POISSON_ROUNDS
    log_lam = lax.log(lam)
    b = lax.add(c_(0.931), lax.mul(c_(2.53), lax.sqrt(lam)))
    a = lax.add(c_(-0.059), lax.mul(c_(0.02483), b))
    inv_alpha = lax.add(c_(1.1239), lax.div(c_(1.1328), lax.sub(b, c_(3.4))))
    v_r = lax.sub(c_(0.9277), lax.div(c_(3.6224), lax.sub(b, c_(2))))
    lam_r, log_lam, b, a, inv_alpha, v_r = (_rounds(x, R) for x in
                                            (lam, log_lam, b, a, inv_alpha, v_r))
    u_bits, v_bits = bit_streams(kd, (R,) + tuple(shape), 32, 2, first_stream=2)
    u = lax.sub(uniform_from_bits(u_bits, f32), c_(0.5))
    v = uniform_from_bits(v_bits, f32)
    u_shifted = lax.sub(c_(0.5), lax.abs(u))
    k = lax.floor(lax.add(lax.add(lax.mul(lax.add(lax.div(lax.mul(c_(2), a), u_shifted), b),
                                          u), lam_r), c_(0.43)))
    s = lax.log(lax.div(lax.mul(v, inv_alpha),
                        lax.add(lax.div(a, lax.mul(u_shifted, u_shifted)), b)))
    t_ = lax.sub(lax.add(lax.neg(lam_r), lax.mul(k, log_lam)), lax.lgamma(lax.add(k, c_(1))))
    accept1 = lax.bitwise_and(lax.ge(u_shifted, c_(0.07)), lax.le(v, v_r))
    reject = lax.bitwise_or(lax.lt(k, c_(0)), lax.bitwise_and(lax.lt(u_shifted, c_(0.013)),
                                                              lax.gt(v, u_shifted)))
    accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t_)))
    k = _first_accepted(accept, k, lax.ge(k, c_(0)), lax.round(lam))
    return convert(k, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _poisson_jit(kd, shape, dtype, lam):
    f32 = np.dtype(np.float32)
    m = math.prod(shape)
    flat = (m,)
    lam = shape_ops.reshape(bcast_to(convert(lam, f32), shape), flat)
    use_small = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, const(f32, 10)))
    lam_small = lax.select(use_small, lam, shape_ops.full(flat, const(f32, 0), f32))
    lam_rejection = lax.select(use_small, shape_ops.full(flat, const(f32, 1e5), f32), lam)
    result = lax.select(use_small, _poisson_small(kd, lam_small, flat, dtype),
                        _poisson_rejection(kd, lam_rejection, flat, dtype))
    result = lax.select(lax.eq(lam, const(f32, 0)), shape_ops.full(flat, dtype.type(0), dtype),
                        result)
    # a negative rate gives -1, as JAX (its Knuth loop stops before the first draw)
    result = lax.select(lax.lt(lam, const(f32, 0)), shape_ops.full(flat, dtype.type(-1), dtype),
                        result)
    return shape_ops.reshape(result, shape)


def poisson(key, lam, shape=None, dtype=int):
    """Sample Poisson(``lam``) counts (CDF inversion for ``lam < 10``, Hormann's transformed
    rejection above)."""
    kd, shape, dtype = sampler_args("poisson", key, shape, dtype, (lam,), ("lam",), int_dtype)
    return _poisson_jit(kd, shape, dtype, lam)


@functools.partial(jit, static_argnums=(1, 2))
def _geometric_jit(kd, shape, dtype, p):
    if not dtypes.issubdtype(dtype_of(p), np.inexact):
        p = convert(p, dtypes.canonicalize_dtype(float))
    fdt = dtype_of(p)
    u = uniform_core(kd, shape, fdt)
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
    """Stirling's series remainder ``log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]``:
    tabulated for k <= 9, the asymptotic series above."""
    dtype = dtype_of(k)
    use_table = lax.le(k, const(dtype, 9))
    kc = lax.clamp(const(dtype, 0), k, const(dtype, 9))
    # (JAX evaluates this series at the clamped k, i.e. at 9 for every k > 9; the series at
    # k itself is the correct tail and what we use)
    kp1 = lax.add(k, const(dtype, 1))
    kp1sq = lax.mul(kp1, kp1)
    approx = lax.div(lax.sub(const(dtype, 1.0 / 12), lax.div(
        lax.sub(const(dtype, 1.0 / 360), lax.div(const(dtype, 1.0 / 1260), kp1sq)), kp1sq)),
        kp1)
    # the table entry for floor(k): a select chain over the ten values
    idx = lax.floor(kc)
    table = shape_ops.full(aval_of(k).shape, const(dtype, _STIRLING_TAIL[0]), dtype)
    for i in range(1, 10):
        table = lax.select(lax.eq(idx, const(dtype, i)),
                           shape_ops.full(aval_of(k).shape, const(dtype, _STIRLING_TAIL[i]),
                                          dtype), table)
    return lax.select(use_table, table, approx)


def _binomial_inversion(kd, count, prob, shape, dtype):
    fdt = dtype_of(prob)
    one = const(fdt, 1)
    u = uniform_from_bits(bit_streams(kd, shape, uniform_bits_width(fdt), 1)[0], fdt)
    p0 = lax.exp(lax.mul(count, lax.log1p(lax.neg(prob))))   # (1 - p)**n
    odds = lax.div(prob, lax.sub(one, prob))
    zero = shape_ops.full(shape, const(fdt, 0), fdt)

    def ratio(j):  # pmf(j + 1) / pmf(j) = (n - j) / (j + 1) * p / (1 - p), 0 past n
        return lax.mul(lax.div(lax.max(lax.sub(count, const(fdt, j)), zero), const(fdt, j + 1)),
                       odds)
    return convert(_invert_cdf(u, p0, ratio), dtype)


def _btrs(kd, count, prob, shape, dtype):
    """Hormann's BTRS for ``n p > 10``; ``count`` and ``prob`` are flat (``shape == (M,)``)."""
    fdt = dtype_of(prob)
    c_ = functools.partial(const, fdt)
    one = c_(1)
    R = BTRS_ROUNDS
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(one, prob)))
    b = lax.add(c_(1.15), lax.mul(c_(2.53), stddev))
    a = lax.add(lax.add(c_(-0.0873), lax.mul(c_(0.0248), b)), lax.mul(c_(0.01), prob))
    c = lax.add(lax.mul(count, prob), c_(0.5))
    v_r = lax.sub(c_(0.92), lax.div(c_(4.2), b))
    r = lax.div(prob, lax.sub(one, prob))
    alpha = lax.mul(lax.add(c_(2.83), lax.div(c_(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, one), prob))
    fallback = m
    # the per-element constants of the bound, once per element rather than per round
    st_m = lax.add(_stirling_approx_tail(m), _stirling_approx_tail(lax.sub(count, m)))
    log = lax.log
    ub_m = lax.add(lax.mul(lax.add(m, c_(0.5)), log(lax.div(lax.add(m, one), lax.mul(
        r, lax.add(lax.sub(count, m), one))))), st_m)
    count, b, a, c, v_r, r, alpha, m, ub_m = (_rounds(x, R) for x in
                                              (count, b, a, c, v_r, r, alpha, m, ub_m))
    u_bits, v_bits = bit_streams(kd, (R,) + tuple(shape), uniform_bits_width(fdt), 2,
                                 first_stream=2)
    u = lax.sub(uniform_from_bits(u_bits, fdt), c_(0.5))
    v = uniform_from_bits(v_bits, fdt)
    us = lax.sub(c_(0.5), lax.abs(u))
    accept1 = lax.bitwise_and(lax.ge(us, c_(0.07)), lax.le(v, v_r))
    k = lax.floor(lax.add(lax.mul(lax.add(lax.div(lax.mul(c_(2), a), us), b), u), c))
    reject = lax.bitwise_or(lax.lt(k, c_(0)), lax.gt(k, count))
    v = log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
    ub = lax.add(lax.add(ub_m,
        lax.mul(lax.add(count, one),
                log(lax.div(lax.add(lax.sub(count, m), one), lax.add(lax.sub(count, k), one))))),
        lax.mul(lax.add(k, c_(0.5)),
                log(lax.div(lax.mul(r, lax.add(lax.sub(count, k), one)), lax.add(k, one)))))
    ub = lax.sub(lax.sub(ub, _stirling_approx_tail(k)),
                 _stirling_approx_tail(lax.sub(count, k)))
    accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub)))
    k = _first_accepted(accept, k, lax.bitwise_not(reject), fallback)
    return convert(k, dtype)


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
    samples = lax.select(use_inversion,
                         _binomial_inversion(kd, count_inv, q, shape, dtype),
                         _btrs(kd, count_btrs, q_btrs, shape, dtype))
    invalid = lax.bitwise_or(lax.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = lax.select(invalid, full(const(dtype, np.nan), dtype), samples)
    samples = lax.select(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)),
                         full(const(dtype, np.inf), dtype), samples)
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_nan_or_neg),
                          lax.bitwise_or(q_is_nan, count_inf))
    samples = lax.select(keep, samples, lax.sub(convert(count, dtype), samples))
    return shape_ops.reshape(samples, out_shape)


def binomial(key, n, p, shape=None, dtype=float):
    """Sample Binomial(``n``, ``p``) counts (as floats, like JAX)."""
    kd, shape, dtype = sampler_args("binomial", key, shape, dtype, (n, p), ("n", "p"))
    return _binomial_jit(kd, shape, dtype, n, p)


__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball", "poisson", "geometric", "binomial"]
