"""Window functions (``bartlett``, ``blackman``, ``hamming``, ``hanning``, ``kaiser``) and the
modified Bessel function ``i0`` the Kaiser window needs.

``i0`` is its power series sum_k (x^2/4)^k / (k!)^2 (a polynomial in x^2/4 evaluated by
Horner's rule in a compiled loop) for |x| <= 30 and the asymptotic expansion
e^|x| / sqrt(2 pi |x|) * sum_k ((2k-1)!!)^2 / (k! (8|x|)^k) above: 64 series terms and 16
asymptotic ones reach float64 precision on each side of the switch. Both pieces are
differentiable, so ``grad(i0)`` is ``i1`` to the same precision.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src.control_flow.scan import scan
from pyjax._src.core import dtypes
from pyjax._src.numpy import util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.creation import asarray, arange, ones, zeros
from pyjax._src.numpy.polynomial import polyval
from pyjax._src.numpy.ufuncs import abs as _abs, cos, exp, sqrt, where, less_equal

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "i0"]

# Horner's steps y <- 1 + t * y / k^2 for k = 63..1 (no coefficient underflows in float32)
_INV_K2 = np.array([1.0 / k ** 2 for k in range(63, 0, -1)])
_ASYMPTOTIC = np.array([
    math.prod((2 * j - 1) ** 2 for j in range(1, k + 1)) / (math.factorial(k) * 8.0 ** k)
    for k in range(16)][::-1])
_SWITCH = 30.0


@compiled_when_eager()
def i0(x):
    """The modified Bessel function of the first kind of order 0, elementwise (real
    inputs, promoted to a floating dtype)."""
    util.check_arraylike("i0", x)
    (x,) = util.promote_dtypes_inexact(asarray(x))
    x = asarray(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("i0: complex input is not supported")
    ax = _abs(x)
    small = less_equal(ax, _SWITCH)
    xs = where(small, ax, 0)  # each branch sees values in its own range (finite grads)
    t = xs * xs * 0.25
    series, _ = scan(lambda y, c: (1 + t * y * c, None), ones(x.shape, x.dtype),
                     asarray(_INV_K2.astype(x.dtype)), unroll=8)
    xl = where(small, _SWITCH * 2, ax)
    # e**x / sqrt(2 pi x) as two halves of e**x: finite up to where I0 itself overflows, and
    # no inf / inf for huge x
    half = exp(xl * 0.5)
    big = half * (half / (sqrt(xl) * math.sqrt(2 * math.pi))
                  * polyval(_ASYMPTOTIC.astype(x.dtype), 1.0 / xl))
    return where(small, series, big)


def _m(M, fun):
    try:
        return operator.index(M)
    except TypeError:
        raise TypeError(f"{fun}: M must be a static integer, got {M!r}") from None


def _window(M, fun, body):
    M = _m(M, fun)
    dt = dtypes.default_float_dtype()
    if M < 1:
        return zeros((0,), dt)
    if M == 1:
        return ones((1,), dt)
    return body(arange(M, dtype=dt), M)


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points."""
    return _window(M, "bartlett",
                   lambda n, M: 1 - _abs(2 * n - (M - 1)) / (M - 1))


def blackman(M):
    """The Blackman window of ``M`` points."""
    return _window(M, "blackman", lambda n, M: (0.42 - 0.5 * cos(2 * np.pi * n / (M - 1))
                                                + 0.08 * cos(4 * np.pi * n / (M - 1))))


def hamming(M):
    """The Hamming window of ``M`` points."""
    return _window(M, "hamming", lambda n, M: 0.54 - 0.46 * cos(2 * np.pi * n / (M - 1)))


def hanning(M):
    """The Hann window of ``M`` points."""
    return _window(M, "hanning", lambda n, M: 0.5 - 0.5 * cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (may be traced)."""
    util.check_arraylike("kaiser", beta)

    def body(n, M):
        alpha = (M - 1) / 2.0
        b = asarray(beta).astype(n.dtype)
        r = (n - alpha) / alpha
        return i0(b * sqrt(1 - r * r)) / i0(b)
    return _window(M, "kaiser", body)
