"""``jnp.convolve`` and ``jnp.correlate``: 1-D discrete convolution and cross-correlation as one
``lax.conv_general_dilated`` (as JAX): the shorter operand is the kernel, flipped for
``convolve``, conjugated for ``correlate``; the mode sets the padding."""
from __future__ import annotations

from pyjax._src.core import dtypes
from pyjax._src.lax import convolution as lax_conv
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import asarray
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _conv_1d(x, y, mode, op, precision, preferred_element_type):
    util.check_arraylike(op, x, y)
    x, y = asarray(x), asarray(y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        # NumPy's default for convolutions: an inexact result
        x, y = util.promote_dtypes_inexact(x, y)
    else:
        x, y = util.promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    reverse_out = False
    if op == "correlate":
        if dtypes.is_complex(y.dtype):
            y = lax_ew.conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse_out = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = lax_shape.rev(y, (0,))
    n = y.shape[0]
    padding = {"valid": [(0, 0)], "same": [(n // 2, n - n // 2 - 1)],
               "full": [(n - 1, n - 1)]}[mode]
    out = lax_conv.conv_general_dilated(
        lax_shape.reshape(x, (1, 1, x.shape[0])), lax_shape.reshape(y, (1, 1, n)), (1,),
        padding, precision=precision, preferred_element_type=preferred_element_type)
    out = lax_shape.reshape(out, (out.shape[2],))
    return lax_shape.rev(out, (0,)) if reverse_out else out


@compiled_when_eager("mode", "precision", "preferred_element_type")
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays (``jnp.convolve``); ``mode`` is 'full'
    (default), 'same' or 'valid'. Integer inputs give a floating result unless
    ``preferred_element_type`` says otherwise (JAX's rule)."""
    return _conv_1d(a, v, mode, "convolve", precision, preferred_element_type)


@compiled_when_eager("mode", "precision", "preferred_element_type")
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays (``jnp.correlate``), ``v`` conjugated as NumPy
    does; ``mode`` is 'valid' (default), 'same' or 'full'."""
    return _conv_1d(a, v, mode, "correlate", precision, preferred_element_type)
