"""``jax.scipy.fft``: the discrete cosine transform of type 2 and its inverse (``dct``,
``dctn``, ``idct``, ``idctn``), SciPy's definitions, computed through one complex FFT of the
same length (Makhoul's reordering): v = (x_0, x_2, x_4, ..., x_5, x_3, x_1),
y_k = 2 Re(exp(-i pi k / 2N) FFT(v)_k). The inverse undoes each step: with y_N = 0,
FFT(v)_k = exp(i pi k / 2N) (y_k - i y_{N-k}) / 2. As in JAX, only type 2 is implemented and
``norm`` is None, "backward" (the same) or "ortho"."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.core.axes import canonicalize_axes, canonicalize_axis

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(fun, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{fun}: norm={norm!r} is not implemented")


def _resize(x, n, axis, fun):
    """``x`` truncated or zero-padded to length ``n`` along ``axis`` (SciPy's ``n``)."""
    if n is None:
        return x
    if int(n) < 1:
        raise ValueError(f"jax.scipy.fft.{fun}: invalid number of data points ({n}) "
                         "specified; it must be at least 1")
    n, length = int(n), x.shape[axis]
    if n <= length:
        return jnp.take(x, np.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - length)
    return jnp.pad(x, pad)


def _as_inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(x, 1.0))


def _ortho_scale(n, dtype):
    """The per-index factor "ortho" applies to the unnormalised DCT-II."""
    scale = np.full(n, np.sqrt(1.0 / (2 * n)))
    scale[0] = np.sqrt(1.0 / (4 * n))
    return scale.astype(jnp.finfo(dtype).dtype)


def _dct_last(x, norm):
    n = x.shape[-1]
    order = np.concatenate([np.arange(0, n, 2), np.arange(n - 1 - n % 2, 0, -2)])
    spectrum = jnp.fft.fft(x[..., order], axis=-1)
    twiddle = np.exp(-1j * np.pi * np.arange(n) / (2 * n))
    y = 2 * jnp.real(spectrum * twiddle.astype(spectrum.dtype))
    if norm == "ortho":
        y = y * _ortho_scale(n, y.dtype)
    return y


def _idct_last(y, norm):
    n = y.shape[-1]
    if norm == "ortho":
        y = y / _ortho_scale(n, y.dtype)
    mirrored = jnp.concatenate([jnp.zeros_like(y[..., :1]), jnp.flip(y[..., 1:], axis=-1)],
                               axis=-1)  # y_{N-k}, with y_N = 0
    twiddle = np.exp(1j * np.pi * np.arange(n) / (2 * n))
    spectrum = (y - 1j * mirrored) * (twiddle / 2).astype(jnp.result_type(y, 1j))
    v = jnp.real(jnp.fft.ifft(spectrum, axis=-1))
    # v = (x_0, x_2, ..., x_3, x_1): undo the reordering
    inverse = np.argsort(np.concatenate([np.arange(0, n, 2), np.arange(n - 1 - n % 2, 0, -2)]))
    return v[..., inverse]


def _along(f, x, axis):
    return jnp.moveaxis(f(jnp.moveaxis(x, axis, -1)), -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The DCT-II of ``x`` along ``axis`` (``scipy.fft.dct``); ``n`` truncates or zero-pads."""
    _check("dct", type, norm)
    x = _as_inexact(x)
    axis = canonicalize_axis(axis, x.ndim, fun="jax.scipy.fft.dct")
    return _along(lambda v: _dct_last(v, norm), _resize(x, n, axis, "dct"), axis)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of ``dct`` with the same ``norm`` (``scipy.fft.idct``: a scaled DCT-III)."""
    _check("idct", type, norm)
    x = _as_inexact(x)
    axis = canonicalize_axis(axis, x.ndim, fun="jax.scipy.fft.idct")
    return _along(lambda v: _idct_last(v, norm), _resize(x, n, axis, "idct"), axis)


def _nd(fun, one, x, type, s, axes, norm):
    _check(fun, type, norm)
    x = _as_inexact(x)
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = canonicalize_axes(axes, x.ndim, "axes", fun=f"jax.scipy.fft.{fun}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"jax.scipy.fft.{fun}: shape s={tuple(s)} and axes={axes} must "
                         "have the same length")
    for i, axis in enumerate(axes):
        x = one(x, type=type, n=None if s is None else s[i], axis=axis, norm=norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """``dct`` over each of ``axes`` (all by default), ``s`` giving the lengths."""
    return _nd("dctn", dct, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """``idct`` over each of ``axes`` (all by default), ``s`` giving the lengths."""
    return _nd("idctn", idct, x, type, s, axes, norm)
