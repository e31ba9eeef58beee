"""``jax.numpy.fft``: NumPy's FFT functions on the ``fft`` primitive.

XLA transforms the 1 to 3 trailing axes only, so the transformed axes are moved to the end and
back. ``n``/``s`` crop or zero-pad each transformed axis first (for the inverse real transforms,
the last axis to ``s[-1] // 2 + 1`` bins). XLA's FFT and RFFT are unscaled and its IFFT and
IRFFT scale by 1/N, which is NumPy's "backward" norm; "ortho" and "forward" multiply by a
constant afterwards. ``hfft``/``ihfft`` are ``irfft``/``rfft`` of the conjugate with the norm's
direction swapped, as NumPy defines them.
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.axes import canonicalize_axes, canonicalize_axis, index
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax.fft import FftType, fft as lax_fft
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import _place, asarray
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.shape import moveaxis, roll

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check_norm(norm):
    if norm is None:
        return "backward"
    if not isinstance(norm, str) or norm not in _SWAPPED:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    return norm


def _scale(y, fft_type, lengths, norm):
    """NumPy's ``norm`` on top of XLA's scaling (which is "backward")."""
    if norm == "backward":
        return y
    n = math.prod(lengths)
    inverse = fft_type in (FftType.IFFT, FftType.IRFFT)
    factor = math.sqrt(n) if norm == "ortho" else float(n)
    factor = factor if inverse else 1.0 / factor
    return lax_ew.mul(y, np.array(factor, util.dtype_of(y)))


def _crop_or_pad(x, shape):
    """``x`` cut down or zero-padded at the end of each axis to ``shape``."""
    have = util.shape_of(x)
    if any(h > s for h, s in zip(have, shape)):
        x = lax_shape.slice(x, (0,) * len(shape), tuple(min(h, s) for h, s in zip(have, shape)))
        have = util.shape_of(x)
    if any(h < s for h, s in zip(have, shape)):
        zero = np.zeros((), util.dtype_of(x))[()]
        x = lax_shape.pad(x, zero, [(0, s - h, 0) for h, s in zip(have, shape)])
    return x


def _points(n):
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _fft_core(name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{name}"
    util.check_arraylike(full_name, a)
    norm = _check_norm(norm)
    arr = asarray(a)
    if arr.dtype == np.bool_:  # JAX 0.10.2: bool input transforms in float32 even with x64
        arr = lax_ew.convert_element_type(arr, np.dtype(np.float32))
    if fft_type == FftType.RFFT:
        if dtypes.is_complex(arr.dtype):
            raise ValueError(f"only real valued inputs supported for rfft; {full_name} got "
                             f"{arr.dtype}")
        want = dtypes.to_inexact_dtype(arr.dtype)
        want = want if want in (np.float32, np.float64) else np.dtype(np.float32)
    else:
        want = dtypes.to_complex_dtype(arr.dtype)
    if arr.dtype != want:
        arr = lax_ew.convert_element_type(arr, want)
    if s is not None:
        if not isinstance(s, (tuple, list)) and np.ndim(s) != 1:
            raise TypeError(f"{full_name}: s must be a sequence of integers, got {s!r}")
        s = tuple(index(n, "s", full_name) for n in s)
        if any(n < 0 for n in s):
            raise ValueError(f"{full_name}: shape should be a non-negative tuple, got s={s}")
    ndim = arr.ndim
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
        if s is not None and len(s) > ndim:
            raise ValueError(f"{full_name}: s={s} has more entries than the input has "
                             f"dimensions ({ndim})")
    elif isinstance(axes, (tuple, list)):
        axes = tuple(axes)
    else:
        raise TypeError(f"{full_name}: axes must be a sequence of integers, got {axes!r}")
    axes = canonicalize_axes(axes, ndim, "axes", full_name)
    if s is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if len(axes) > 3:  # XLA transforms at most three axes at once, as in JAX
        raise ValueError(f"{full_name} only supports 1D, 2D, and 3D FFTs. Got axes {axes} "
                         f"with input rank {ndim}.")
    if not axes:
        return arr
    trailing = tuple(range(ndim - len(axes), ndim))
    arr = moveaxis(arr, axes, trailing)
    shape = list(arr.shape)
    if s is None:
        lengths = [shape[a] for a in trailing]
        if fft_type == FftType.IRFFT:
            lengths[-1] = 2 * (lengths[-1] - 1)
    else:
        lengths = list(s)
    if s is None and fft_type != FftType.RFFT and min(lengths) <= 0:
        # an empty axis (or one bin for irfft) gives an empty result as in JAX 0.10.2
        # (NumPy raises); an explicit n=0 or s with a 0 still raises
        shape[trailing[-1]] = 0 if fft_type == FftType.IRFFT else shape[trailing[-1]]
        out_dt = (dtypes.to_real_dtype(arr.dtype) if fft_type == FftType.IRFFT
                  else arr.dtype)
        return moveaxis(asarray(np.zeros(shape, out_dt)), trailing, axes)
    for n in lengths:
        _points(n)
    for a, n in zip(trailing, lengths):
        shape[a] = n
    if fft_type == FftType.IRFFT:
        shape[-1] = lengths[-1] // 2 + 1
    arr = _crop_or_pad(arr, shape)
    y = _scale(lax_fft(arr, fft_type, tuple(lengths)), fft_type, lengths, norm)
    return moveaxis(y, trailing, axes)


def _one_axis(name, axis):
    if isinstance(axis, (tuple, list)):
        raise ValueError(f"jax.numpy.fft.{name} does not support multiple axes. Please use "
                         f"jax.numpy.fft.{name}n. Got axis = {axis}.")
    return (axis,)


def _one_n(n):
    return None if n is None else (n,)


_1D = ("n", "axis", "norm")
_ND = ("s", "axes", "norm")


@compiled_when_eager(*_1D)
def fft(a, n=None, axis=-1, norm=None):
    """The 1-D discrete Fourier transform along ``axis`` (NumPy's ``fft.fft``)."""
    return _fft_core("fft", FftType.FFT, a, _one_n(n), _one_axis("fft", axis), norm)


@compiled_when_eager(*_1D)
def ifft(a, n=None, axis=-1, norm=None):
    """The 1-D inverse discrete Fourier transform along ``axis``."""
    return _fft_core("ifft", FftType.IFFT, a, _one_n(n), _one_axis("ifft", axis), norm)


@compiled_when_eager(*_1D)
def rfft(a, n=None, axis=-1, norm=None):
    """The 1-D transform of real input: the ``n // 2 + 1`` non-negative frequency bins."""
    return _fft_core("rfft", FftType.RFFT, a, _one_n(n), _one_axis("rfft", axis), norm)


@compiled_when_eager(*_1D)
def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``rfft``: ``n`` real points (default ``2 * (m - 1)`` for ``m`` bins)."""
    return _fft_core("irfft", FftType.IRFFT, a, _one_n(n), _one_axis("irfft", axis), norm)


@compiled_when_eager(*_1D)
def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a Hermitian-symmetric signal given by its first half: real output."""
    util.check_arraylike("jax.numpy.fft.hfft", a)
    conj = lax_ew.conj(asarray(a)) if dtypes.is_complex(util.dtype_of(a)) else a
    return _fft_core("hfft", FftType.IRFFT, conj, _one_n(n), _one_axis("hfft", axis),
                     _SWAPPED[_check_norm(norm)])


@compiled_when_eager(*_1D)
def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``hfft``: the first half of the Hermitian spectrum of real input."""
    y = _fft_core("ihfft", FftType.RFFT, a, _one_n(n), _one_axis("ihfft", axis),
                  _SWAPPED[_check_norm(norm)])
    return lax_ew.conj(y)


@compiled_when_eager(*_ND)
def fftn(a, s=None, axes=None, norm=None):
    """The N-D discrete Fourier transform over ``axes`` (all of them by default; at most 3)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def ifftn(a, s=None, axes=None, norm=None):
    """The N-D inverse discrete Fourier transform."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def rfftn(a, s=None, axes=None, norm=None):
    """The N-D transform of real input (the last of ``axes`` is halved)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of ``rfftn``."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def fft2(a, s=None, axes=(-2, -1), norm=None):
    """``fftn`` over two axes (the last two by default)."""
    return _fft_core("fft2", FftType.FFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """``ifftn`` over two axes (the last two by default)."""
    return _fft_core("ifft2", FftType.IFFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """``rfftn`` over two axes (the last two by default)."""
    return _fft_core("rfft2", FftType.RFFT, a, s, axes, norm)


@compiled_when_eager(*_ND)
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """``irfftn`` over two axes (the last two by default)."""
    return _fft_core("irfft2", FftType.IRFFT, a, s, axes, norm)


# ---- frequencies and shifts ----

def _freq_args(name, n, d, dtype):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")
    n = index(n, "n", f"jax.numpy.fft.{name}")
    if n < 0:  # a negative n has no frequencies; n=0 gives none, as JAX 0.10.2
        raise ValueError(f"jax.numpy.fft.{name}: n must be non-negative, got {n}")
    dt = dtypes.default_float_dtype() if dtype is None else dtypes.check_user_dtype(
        dtype, f"jax.numpy.fft.{name}")
    return n, dt


def _frequencies(k, n, d, dt, device):
    """``k / (d * n)`` in ``dt`` (``k``, the integer bins, are known on the host)."""
    k = asarray(np.asarray(k).astype(dt))
    out = lax_ew.div(k, lax_ew.mul(asarray(d, dt), np.array(n, dt)))
    return _place(out, device)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of the bins of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)``."""
    n, dt = _freq_args("fftfreq", n, d, dtype)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies(k, n, d, dt, device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of the bins of an ``n``-point ``rfft``: ``[0, ..., n//2] / (d * n)``."""
    n, dt = _freq_args("rfftfreq", n, d, dtype)
    # an integer dtype computes in the inexact one (JAX 0.10.2: float32 values; truncating
    # gave zeros); fftfreq keeps the integer dtype, as JAX's does
    dt = dtypes.to_inexact_dtype(dt)
    return _frequencies(np.arange(0, n // 2 + 1), n, d, dt, device)


def _shift(name, x, axes, sign):
    util.check_arraylike(f"jax.numpy.fft.{name}", x)
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not isinstance(axes, (tuple, list)):
        axes = (canonicalize_axis(axes, x.ndim, "axes", f"jax.numpy.fft.{name}"),)
    axes = canonicalize_axes(tuple(axes), x.ndim, "axes", f"jax.numpy.fft.{name}",
                             unique=False)
    if not axes:
        return x
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axes)


def fftshift(x, axes=None):
    """``x`` with the zero-frequency bin moved to the centre of each of ``axes`` (all)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift`` (they differ for odd lengths)."""
    return _shift("ifftshift", x, axes, -1)
