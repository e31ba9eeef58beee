"""The ``fft`` primitive: XLA's native FFT over the trailing 1 to 3 axes (``stablehlo.fft``).

Its four types are linear maps (over the reals for RFFT and IRFFT), so the JVP applies the
primitive to the tangent and reverse mode needs only the transposes, which use JAX's
convention for complex cotangents (the pairing ``Re(sum(ct * y))``, no conjugation):

* FFT and IFFT: the DFT matrix is symmetric, so each is its own transpose.
* RFFT = slice to ``n//2+1`` ∘ FFT ∘ (real -> complex); transposed: zero-pad the cotangent
  to ``n`` on the last axis, FFT, take the real part.
* IRFFT reads ``z_j`` for ``j < n//2+1`` as the Hermitian half of a spectrum: each inner bin
  stands for itself and its mirror, the DC bin (and the Nyquist bin of an even ``n``) for
  itself only, and their imaginary parts are ignored. With ``x = irfft(z)``,
  ``sum(ct * x) = Re(sum(z_j * w_j / N * conj(rfft(ct)_j)))``, ``w_j`` 2 on inner bins and 1
  on DC/Nyquist, ``N`` the product of the lengths; so the transpose is
  ``conj(rfft(ct)) * w / N``.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import shape_ops
from pyjax._src.lax.ad_util import linear_jvp, zero_cts
from pyjax._src.lax.base import aval_of
from pyjax._src.lowering import mlir

__all__ = ["fft", "FftType", "fft_p"]


class FftType(enum.IntEnum):
    """The kind of transform, as XLA (and JAX) number them."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_BY_NAME = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
            "irfft": FftType.IRFFT}


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str) and fft_type.lower() in _BY_NAME:
        return _BY_NAME[fft_type.lower()]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _out_shape(shape, fft_type, lengths):
    if fft_type == FftType.RFFT:
        return shape[:len(shape) - len(lengths)] + lengths[:-1] + (lengths[-1] // 2 + 1,)
    if fft_type == FftType.IRFFT:
        return shape[:len(shape) - len(lengths)] + lengths
    return shape


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    lengths = tuple(fft_lengths)
    if not 1 <= len(lengths) <= 3:
        raise ValueError(f"fft_lengths must have 1 to 3 entries, got {lengths}")
    if any(type(n) is not int or n < 1 for n in lengths):
        raise ValueError(f"fft_lengths must be positive integers, got {lengths}")
    if x.ndim < len(lengths):
        raise ValueError(f"fft of {len(lengths)} dimensions needs an operand of rank at least "
                         f"{len(lengths)}, got shape {x.shape}")
    trailing = tuple(x.shape[x.ndim - len(lengths):])
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        want, dtype = lengths, dtypes.to_complex_dtype(x.dtype)
    else:
        if x.dtype not in (np.dtype(np.complex64), np.dtype(np.complex128)):
            name = FftType(fft_type).name
            raise ValueError(f"{name} input must be complex64 or complex128, got {x.dtype}")
        if fft_type == FftType.IRFFT:
            want, dtype = lengths[:-1] + (lengths[-1] // 2 + 1,), dtypes.to_real_dtype(x.dtype)
        else:
            want, dtype = lengths, x.dtype
    if trailing != want:
        raise ValueError(f"{FftType(fft_type).name} with fft_lengths {lengths} needs trailing "
                         f"dimensions {want}, got operand shape {x.shape}")
    return ShapedArray(_out_shape(tuple(x.shape), fft_type, lengths), dtype)


def _fft_lower(ctx, x, *, fft_type, fft_lengths):
    return ctx.op("stablehlo.fft", [x], ctx.avals_out[0],
                  attrs={"fft_type": f"#stablehlo<fft_type {FftType(fft_type).name}>",
                         "fft_length": mlir.i64_array(fft_lengths)})


def _rfft_transpose(ct, lengths):
    """real(FFT(ct zero-padded to n on the last axis)) (see the module docstring)."""
    n, m = lengths[-1], ct.shape[-1]
    zero = np.zeros((), ct.dtype)[()]
    config = [(0, 0, 0)] * (ct.ndim - 1) + [(0, n - m, 0)]
    padded = shape_ops.pad(ct, zero, config)
    return ew.real(fft_p.bind(padded, fft_type=FftType.FFT, fft_lengths=lengths))


def _irfft_transpose(ct, lengths):
    """conj(RFFT(ct)) * w / N (see the module docstring)."""
    spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=lengths)
    n = lengths[-1]
    m = n // 2 + 1
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights = (weights / math.prod(lengths)).astype(spectrum.dtype)
    shape = tuple(aval_of(spectrum).shape)
    w = shape_ops.broadcast_in_dim(weights, shape, (len(shape) - 1,))
    return ew.mul(ew.conj(spectrum), w)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if type(ct) is Zero:
        return zero_cts([x])
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    ndim = len(bu.shape_of(x))
    if d >= ndim - len(fft_lengths):  # the batch axis is among the transformed ones
        x, d = bu.move_axis(x, d, 0), 0
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), d


fft_p = Primitive("fft", abstract_eval=_fft_abstract_eval, lower=_fft_lower, linear=True,
                  jvp=linear_jvp(), transpose=_fft_transpose, batch=_fft_batch)


def fft(x, fft_type, fft_lengths):
    """The FFT of type ``fft_type`` (an ``FftType`` or "fft"/"ifft"/"rfft"/"irfft") over the
    trailing ``len(fft_lengths)`` axes of ``x``. RFFT takes real input (integers and bools
    become the default float, float16/bfloat16 float32); the others take complex input (real
    input is converted). For IRFFT the trailing axes of ``x`` are
    ``fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)``."""
    typ = _fft_type(fft_type)
    dt = dtypes.dtype_of(x)
    if typ == FftType.RFFT:
        if dtypes.is_complex(dt):
            raise ValueError("only real valued inputs supported for rfft")
        want = dtypes.to_inexact_dtype(dt)
        if want not in (np.dtype(np.float32), np.dtype(np.float64)):
            want = np.dtype(np.float32)  # float16/bfloat16: XLA's FFT is f32/f64 only
    else:
        want = dtypes.to_complex_dtype(dt)
    if dt != want:
        x = ew.convert_element_type(x, want)
    try:
        lengths = tuple(int(n) if isinstance(n, (int, np.integer)) else n for n in fft_lengths)
    except TypeError:
        raise TypeError(f"fft_lengths must be a sequence of ints, got {fft_lengths!r}") from None
    return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)
