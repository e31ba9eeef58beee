"""More of ``jax.random``'s samplers: closed-form transforms of uniform and normal draws
(``pareto``, ``weibull_min``, ``rayleigh``, ``lognormal``, ``triangular``, ``wald``,
``maxwell``, ``double_sided_maxwell``), written as JAX writes them, so the same key gives
JAX's values."""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.numpy import reductions as jred
from pyjax._src.numpy import ufuncs as jnp
from pyjax._src.random.distributions import (
    bcast_to, broadcast_shapes, canonical_shape, check_arraylike, const, convert,
    exponential_core, float_dtype, normal_core, rademacher_core, sampler_args, shape_of,
    split_keys, uniform_core)
from pyjax._src.random.prng import check_key


@functools.partial(jit, static_argnums=(1, 2))
def _pareto_jit(kd, shape, dtype, b):
    e = exponential_core(kd, shape, dtype)
    return lax.exp(lax.div(e, bcast_to(convert(b, dtype), shape)))


def pareto(key, b, shape=None, dtype=float):
    """Sample Pareto values (density ``b / x**(b + 1)`` on ``x >= 1``): ``exp(E / b)``."""
    kd, shape, dtype = sampler_args("pareto", key, shape, dtype, (b,), ("b",))
    return _pareto_jit(kd, shape, dtype, b)


@functools.partial(jit, static_argnums=(1, 2))
def _weibull_min_jit(kd, shape, dtype, scale, concentration):
    u = uniform_core(kd, shape, dtype)
    # inverse Weibull CDF
    return jnp.multiply(jnp.power(jnp.negative(jnp.log1p(jnp.negative(u))),
                                  jnp.divide(1.0, concentration)), scale)


def weibull_min(key, scale, concentration, shape=(), dtype=float):
    """Sample Weibull values (density ``∝ x**(c-1) exp(-(x/scale)**c)``) by inverting the
    CDF."""
    kd, _ = check_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    shape = canonical_shape("weibull_min", shape)
    check_arraylike("weibull_min", scale, concentration)
    return _weibull_min_jit(kd, shape, dtype, scale, concentration)


@functools.partial(jit, static_argnums=(1, 2))
def _rayleigh_jit(kd, shape, dtype, scale):
    u = uniform_core(kd, shape, dtype)
    scale = bcast_to(convert(scale, dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), const(dtype, -2))))


def rayleigh(key, scale, shape=None, dtype=float):
    """Sample Rayleigh values: ``scale * sqrt(-2 log u)``."""
    kd, shape, dtype = sampler_args("rayleigh", key, shape, dtype, (scale,), ("scale",))
    return _rayleigh_jit(kd, shape, dtype, scale)


@functools.partial(jit, static_argnums=(1, 2))
def _lognormal_jit(kd, shape, dtype, sigma):
    return lax.exp(jnp.multiply(normal_core(kd, shape, dtype), bcast_to(sigma, shape)))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=float):
    """Sample log-normal values: ``exp(sigma * N(0, 1))``."""
    kd, shape, dtype = sampler_args("lognormal", key, shape, dtype, (sigma,), ("sigma",),
                                    functools.partial(float_dtype, allow_complex=True))
    return _lognormal_jit(kd, shape, dtype, sigma)


@functools.partial(jit, static_argnums=(1, 2))
def _triangular_jit(kd, shape, dtype, left, mode, right):
    left, mode, right = (bcast_to(x, shape) for x in (left, mode, right))
    fc = jnp.divide(jnp.subtract(mode, left), jnp.subtract(right, left))
    u = uniform_core(kd, shape, dtype)
    width = jnp.subtract(right, left)
    out1 = jnp.add(left, jnp.sqrt(jnp.multiply(jnp.multiply(u, width),
                                               jnp.subtract(mode, left))))
    out2 = jnp.subtract(right, jnp.sqrt(jnp.multiply(jnp.multiply(jnp.subtract(1, u), width),
                                                     jnp.subtract(right, mode))))
    return jnp.where(jnp.less(u, fc), out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=float):
    """Sample triangular values on ``[left, right]`` with peak ``mode`` (inverse CDF)."""
    kd, shape, dtype = sampler_args("triangular", key, shape, dtype, (left, mode, right),
                                    ("left", "mode", "right"))
    return _triangular_jit(kd, shape, dtype, left, mode, right)


@functools.partial(jit, static_argnums=(1, 2))
def _wald_jit(kd, shape, dtype, mean):
    k1, k2 = split_keys(kd, 2)
    mean = bcast_to(convert(mean, dtype), shape)
    v = normal_core(k1, shape, dtype)
    z = uniform_core(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(lax.add(lax.mul(lax.mul(const(dtype, 4), mean), y),
                                 lax.mul(mean_sq, y_sq)))
    x = lax.sub(lax.add(mean, lax.div(lax.mul(mean_sq, y), const(dtype, 2))),
                lax.mul(lax.div(mean, const(dtype, 2)), sqrt_term))
    return lax.select(lax.le(z, lax.div(mean, lax.add(mean, x))), x, lax.div(mean_sq, x))


def wald(key, mean, shape=None, dtype=float):
    """Sample Wald (inverse Gaussian) values with mean ``mean`` (Michael et al.)."""
    kd, shape, dtype = sampler_args("wald", key, shape, dtype, (mean,), ("mean",))
    return _wald_jit(kd, shape, dtype, mean)


def _maxwell_core(kd, shape, dtype):
    x = normal_core(kd, tuple(shape) + (3,), dtype)
    return jnp.sqrt(jred.sum(jnp.multiply(x, x), axis=-1))


@functools.partial(jit, static_argnums=(1, 2))
def _maxwell_jit(kd, shape, dtype):
    return _maxwell_core(kd, shape, dtype)


def maxwell(key, shape=(), dtype=float):
    """Sample one-sided Maxwell values: the norm of three standard normals."""
    kd, _ = check_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell_jit(kd, canonical_shape("maxwell", shape), dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _double_sided_maxwell_jit(kd, shape, dtype, loc, scale):
    k_maxwell, k_sign = split_keys(kd, 2)
    m = _maxwell_core(k_maxwell, shape, dtype)
    sign = rademacher_core(k_sign, shape, dtype)
    return jnp.add(jnp.multiply(jnp.multiply(sign, m), scale), loc)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=float):
    """Sample double-sided Maxwell values: a random sign times a Maxwell draw, scaled and
    shifted. The result has shape ``shape + broadcast(loc, scale).shape``."""
    kd, _ = check_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    check_arraylike("double_sided_maxwell", loc, scale)
    params = broadcast_shapes(shape_of(loc), shape_of(scale))
    shape = canonical_shape("double_sided_maxwell", shape)
    if not shape:
        shape = params
    return _double_sided_maxwell_jit(kd, shape + params, dtype, loc, scale)


__all__ = ["pareto", "weibull_min", "rayleigh", "lognormal", "triangular", "wald", "maxwell",
           "double_sided_maxwell"]
