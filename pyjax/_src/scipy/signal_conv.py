"""The direct part of ``scipy.signal``: N-d ``convolve``/``correlate`` and ``convolve2d``/
``correlate2d`` as one ``lax.conv_general_dilated`` (as JAX). ``method='fft'`` hands over to
``fftconvolve`` (``signal_spectral.py``); 2-D boundaries other than ``'fill'`` with 0 are
refused, as in JAX."""
from __future__ import annotations

from pyjax._src.core import dtypes
from pyjax._src.lax import convolution as lax_conv
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import asarray
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]


def _flip(x):
    return lax_shape.rev(x, tuple(range(x.ndim)))


def _conj(x):
    return lax_ew.conj(x) if dtypes.is_complex(x.dtype) else x


def _convolve_nd(in1, in2, mode, precision, name):
    util.check_arraylike(name, in1, in2)
    in1, in2 = asarray(in1), asarray(in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    if in1.ndim != in2.ndim:
        raise ValueError(f"in1 and in2 must have the same number of dimensions, got shapes "
                         f"{in1.shape} and {in2.shape}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = util.promote_dtypes_inexact(in1, in2)
    no_swap = all(a >= b for a, b in zip(in1.shape, in2.shape))
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension, got "
                         f"shapes {in1.shape} and {in2.shape}.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = _flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":  # centred on in1 (the original first argument's shape)
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    out = lax_conv.conv_general_dilated(
        lax_shape.reshape(in1, (1, 1) + in1.shape), lax_shape.reshape(in2, (1, 1) + shape),
        (1,) * len(shape), padding, precision=precision)
    return lax_shape.reshape(out, out.shape[2:])


def _fft(in1, in2, mode, name):
    try:
        from pyjax._src.scipy.signal_spectral import fftconvolve
    except ImportError:
        raise NotImplementedError(f"{name}: method='fft' is not supported yet; use "
                                  "method='direct' or 'auto'") from None
    return fftconvolve(in1, in2, mode=mode)


def _check_method(method):
    if method not in ("fft", "direct", "auto"):
        raise ValueError(f"Got unknown value for argument `method`: {method!r}; expected "
                         "'auto', 'direct' or 'fft'")


@compiled_when_eager("mode", "method", "precision")
def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution (``scipy.signal.convolve``); ``'auto'`` and ``'direct'``
    compute it directly as one XLA convolution, ``'fft'`` with ``fftconvolve``."""
    _check_method(method)
    if method == "fft":
        return _fft(in1, in2, mode, "convolve")
    return _convolve_nd(in1, in2, mode, precision, "convolve")


@compiled_when_eager("mode", "method", "precision")
def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation (``scipy.signal.correlate``): the convolution with
    ``in2`` flipped and conjugated."""
    _check_method(method)
    util.check_arraylike("correlate", in1, in2)
    in2 = _flip(_conj(asarray(in2)))
    if method == "fft":
        return _fft(in1, in2, mode, "correlate")
    return _convolve_nd(in1, in2, mode, precision, "correlate")


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0; got "
                                  f"boundary={boundary!r}, fillvalue={fillvalue!r}")
    util.check_arraylike(name, in1, in2)
    in1, in2 = asarray(in1), asarray(in2)
    if in1.ndim != 2 or in2.ndim != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    return in1, in2


@compiled_when_eager("mode", "boundary", "fillvalue", "precision")
def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution (``scipy.signal.convolve2d``) with zero fill at the boundary."""
    in1, in2 = _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision, "convolve2d")


@compiled_when_eager("mode", "boundary", "fillvalue", "precision")
def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation (``scipy.signal.correlate2d``) with zero fill at the boundary;
    when ``in2`` is the larger operand the result is SciPy's (the correlation of the swapped
    operands, reversed and conjugated)."""
    in1, in2 = _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same = in1.shape == in2.shape
    if mode == "same":
        return _flip(_convolve_nd(_flip(in1), _conj(in2), mode, precision, "correlate2d"))
    if mode == "valid":
        if swap and not same:
            return _convolve_nd(_flip(in2), _conj(in1), mode, precision, "correlate2d")
        return _flip(_convolve_nd(_flip(in1), _conj(in2), mode, precision, "correlate2d"))
    if swap:
        return _conj(_convolve_nd(_flip(in2), _conj(in1), mode, precision, "correlate2d"))
    return _flip(_convolve_nd(_flip(in1), _conj(in2), mode, precision, "correlate2d"))
