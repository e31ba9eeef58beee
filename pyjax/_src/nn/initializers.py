"""``jax.nn.initializers``: functions ``init(key, shape, dtype)`` that make parameter arrays.

The arithmetic is JAX's, step for step (the variance as an array of ``dtype``, the truncated
normal's standard deviation divided by that of a standard normal truncated to (-2, 2)), so the
same key gives JAX's numbers.
"""
from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pyjax import numpy as jnp
from pyjax import random
from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.random import matrix as random_matrix

_DEFAULT_DTYPE = np.float64  # jnp.float_: canonicalised to float32 unless x64 is on


@runtime_checkable
class Initializer(Protocol):
    """What an initializer is: ``init(key, shape, dtype) -> Array``."""

    def __call__(self, key: Any, shape: Any, dtype: Any = _DEFAULT_DTYPE) -> Any:
        raise NotImplementedError


def _shape(name, shape):
    return axes_mod.canonicalize_shape(shape, "shape", name)


def _dtype(dtype):
    return dtypes.canonicalize_dtype(dtype)


def zeros(key, shape, dtype=_DEFAULT_DTYPE):
    """An initializer returning zeros (``key`` is ignored)."""
    return jnp.zeros(_shape("zeros", shape), _dtype(dtype))


def ones(key, shape, dtype=_DEFAULT_DTYPE):
    """An initializer returning ones (``key`` is ignored)."""
    return jnp.ones(_shape("ones", shape), _dtype(dtype))


def constant(value, dtype=_DEFAULT_DTYPE):
    """An initializer returning arrays filled with ``value``."""
    def init(key, shape, dtype=dtype):
        return jnp.full(_shape("constant", shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=_DEFAULT_DTYPE):
    """Uniform samples in ``[0, scale)``."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, _shape("uniform", shape), dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=_DEFAULT_DTYPE):
    """Normal samples with mean 0 and standard deviation ``stddev``."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.normal(key, _shape("normal", shape), dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=_DEFAULT_DTYPE, lower=-2.0, upper=2.0):
    """Standard normal samples truncated to ``(lower, upper)``, times ``stddev`` (so
    ``stddev`` is the scale of the untruncated normal)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape("truncated_normal", shape),
                                       dtype) * jnp.array(stddev, dtype)
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the in/out sizes times the receptive field (every axis that is
    none of in, out, batch)."""
    if len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor. Must be at least 2D.")

    def size(axes):
        if isinstance(axes, int):
            return shape[axes]
        return math.prod(shape[i] for i in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_dtype(dtype):
    return np.zeros((), dtype).real.dtype


def _complex_uniform(key, shape, dtype):
    """Uniform over the unit disk: ``sqrt(2 u1) * exp(2 pi i u2)`` (variance 1)."""
    key_r, key_theta = random.split(key)
    real_dtype = _real_dtype(dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * jnp.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex normal with its modulus truncated to ``upper`` (inverse-CDF sampling)."""
    key_r, key_theta = random.split(key)
    real_dtype = _real_dtype(dtype)
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real_dtype).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * jnp.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=_DEFAULT_DTYPE):
    """Samples with variance ``scale / n``, ``n`` the fan chosen by ``mode`` (``fan_in``,
    ``fan_out``, their mean ``fan_avg`` or geometric mean ``fan_geo_avg``), from
    ``distribution`` (``truncated_normal``, ``normal`` or ``uniform``)."""
    if mode not in _MODES:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype):
        shape = _shape("variance_scaling", shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = jnp.array(scale / denominator, dtype=dtype)
        is_real = jnp.issubdtype(dtype, jnp.floating)
        if distribution == "truncated_normal":
            if is_real:
                # .8796... is the standard deviation of a standard normal truncated to (-2, 2)
                stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if is_real:
            return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    return init


def _named(scale, mode, distribution, doc):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_DEFAULT_DTYPE):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    make.__doc__ = doc
    return make


glorot_uniform = _named(1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform: variance "
                        "1/fan_avg.")
glorot_normal = _named(1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) truncated "
                       "normal: variance 1/fan_avg.")
lecun_uniform = _named(1.0, "fan_in", "uniform", "LeCun uniform: variance 1/fan_in.")
lecun_normal = _named(1.0, "fan_in", "truncated_normal", "LeCun truncated normal: variance "
                      "1/fan_in.")
he_uniform = _named(2.0, "fan_in", "uniform", "He (Kaiming) uniform: variance 2/fan_in.")
he_normal = _named(2.0, "fan_in", "truncated_normal", "He (Kaiming) truncated normal: "
                   "variance 2/fan_in.")
for _f, _n in ((glorot_uniform, "glorot_uniform"), (glorot_normal, "glorot_normal"),
               (lecun_uniform, "lecun_uniform"), (lecun_normal, "lecun_normal"),
               (he_uniform, "he_uniform"), (he_normal, "he_normal")):
    _f.__name__ = _f.__qualname__ = _n
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def _reduced_q(a):
    """Q of the reduced QR of the tall (m, n) matrix ``a`` with ``diag(R)`` made positive.

    The Householder QR of ``a`` padded with zero columns to (m, m) has the same first n
    columns of Q (reflection k only reads columns up to k)."""
    m, n = a.shape
    padded = jnp.concatenate([a, jnp.zeros((m, m - n), a.dtype)], axis=1) if m > n else a
    q, r = random_matrix.qr(padded)
    q, d = q[:, :n], jnp.diagonal(r)[:n]
    return q * jnp.sign(d)[None, :]


def orthogonal(scale=1.0, column_axis=-1, dtype=_DEFAULT_DTYPE):
    """Uniformly distributed orthogonal matrices (rows or columns orthonormal, whichever are
    fewer), reshaped so that ``column_axis`` holds the columns; times ``scale``."""
    def init(key, shape, dtype=dtype):
        shape = _shape("orthogonal", shape)
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        col = axes_mod.canonicalize_axis(column_axis, len(shape), "column_axis", "orthogonal")
        n_rows, n_cols = math.prod(shape) // shape[col], shape[col]
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        a = random.normal(key, matrix_shape, dtype)
        q = _reduced_q(a)
        if n_rows < n_cols:
            q = q.T
        q = jnp.reshape(q, tuple(np.delete(shape, col)) + (shape[col],))
        q = jnp.moveaxis(q, -1, col)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=_DEFAULT_DTYPE):
    """For convolution kernels (3-D, 4-D or 5-D, spatial axes first): zeros except an
    orthogonal matrix at the spatial centre (Xiao et al., 2018)."""
    def init(key, shape, dtype=dtype):
        shape = _shape("delta_orthogonal", shape)
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        w = jnp.zeros(shape, dtype=dtype)
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return w.at[centre].set(ortho)
    return init


__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]
