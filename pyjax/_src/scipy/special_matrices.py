"""``jax.scipy.linalg``'s special-matrix constructors.

Matrices that depend only on a size (``dft``, ``hadamard``, ``helmert``, ``hilbert``,
``invhilbert``, ``pascal``, ``invpascal``) are computed exactly on the host (Python integers
for the binomial ones, so they are correctly rounded where JAX's gammaln-based entries are
approximate) and then converted to the default float (complex) dtype. Matrices built from
arrays are traceable: each is a gather or scatter with positions known from the shapes, batched
over leading dimensions where JAX batches (``toeplitz``, ``hankel``, ``circulant``,
``convolution_matrix``, ``companion``, ``fiedler``, ``fiedler_companion``, ``leslie``).
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.axes import index
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import creation, shape as jshape, ufuncs, util
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


def _size(n, fun):
    n = index(n, "n", fun)
    if n < 0:
        raise ValueError(f"{fun}: n must be a non-negative integer, got {n}")
    return n


def _host_float(values, dtype=None):
    """A host-computed matrix as an Array of the default float dtype."""
    dt = dtypes.default_float_dtype() if dtype is None else dtype
    return creation.asarray(np.asarray(values, np.float64).astype(dt))


def _vector(x, fun, name="c"):
    util.check_arraylike(fun, x)
    x = creation.asarray(x)
    return jshape.reshape(x, (1,)) if x.ndim == 0 else x


def _concrete(x):
    return not isinstance(x, Tracer)


# ---- from arrays ----

def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default ``conj(c)``;
    ``r[0]`` is ignored), batched over leading dimensions."""
    c = _vector(c, "toeplitz")
    r = ufuncs.conjugate(c) if r is None else _vector(r, "toeplitz", "r")
    c, r = util.promote_dtypes(c, r)
    lead = tuple(util.broadcast_shapes(c.shape[:-1], r.shape[:-1]))
    n, m = c.shape[-1], r.shape[-1]
    c = jshape.broadcast_to(c, lead + (n,))
    r = jshape.broadcast_to(r, lead + (m,))
    # entry (i, j) is c[i - j] below the diagonal and r[j - i] above: one vector, reversed r
    # first, read at m - 1 + i - j
    vals = jshape.concatenate([jshape.flip(r[..., 1:], -1), c], axis=-1)
    return vals[..., (m - 1) + np.arange(n)[:, None] - np.arange(m)[None, :]]


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros; ``r[0]``
    is ignored), batched over leading dimensions."""
    c = _vector(c, "hankel")
    r = creation.zeros_like(c) if r is None else _vector(r, "hankel", "r")
    c, r = util.promote_dtypes(c, r)
    lead = tuple(util.broadcast_shapes(c.shape[:-1], r.shape[:-1]))
    n, m = c.shape[-1], r.shape[-1]
    c = jshape.broadcast_to(c, lead + (n,))
    r = jshape.broadcast_to(r, lead + (m,))
    vals = jshape.concatenate([c, r[..., 1:]], axis=-1)
    return vals[..., np.arange(n)[:, None] + np.arange(m)[None, :]]


def circulant(c):
    """The circulant matrix with first column ``c``: ``A[i, j] = c[(i - j) % n]``, batched."""
    c = _vector(c, "circulant")
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def convolution_matrix(a, n, mode="full"):
    """The matrix ``A`` with ``A @ v == jnp.convolve(a, v, mode)`` for ``v`` of length ``n``,
    batched over leading dimensions of ``a``."""
    a = _vector(a, "convolution_matrix", "a")
    n = index(n, "n", "convolution_matrix")
    m = a.shape[-1]
    if n <= 0:
        raise ValueError("n must be a positive integer")
    if m == 0:
        raise ValueError("len(a) must be at least 1")
    if mode not in ("full", "valid", "same"):
        raise ValueError("'mode' argument must be one of ('full', 'valid', 'same')")
    if mode == "full":
        start, rows = 0, m + n - 1
    elif mode == "same":
        start, rows = (min(m, n) - 1) // 2, max(m, n)
    else:
        start, rows = min(m, n) - 1, max(m, n) - min(m, n) + 1
    zeros = creation.zeros(a.shape[:-1] + (n - 1,), a.dtype)
    padded = jshape.concatenate([zeros, a, zeros], axis=-1)  # full[i, j] = padded[i - j + n - 1]
    i = start + np.arange(rows)[:, None]
    return padded[..., i - np.arange(n)[None, :] + n - 1]


def _scatter_matrix(shape_lead, size, rows, cols, values, dtype):
    """A ``size`` x ``size`` matrix (batched by ``shape_lead``) of zeros with ``values`` (the
    last axis) at the static positions ``rows``, ``cols``."""
    out = creation.zeros(shape_lead + (size * size,), dtype)
    out = out.at[..., np.asarray(rows) * size + np.asarray(cols)].set(values)
    return jshape.reshape(out, shape_lead + (size, size))


def _normalized_coefficients(a, fun):
    a = _vector(a, fun, "a")
    (a,) = util.promote_dtypes_inexact(a)
    if a.shape[-1] < 2:
        raise ValueError(f"{fun}: the length of a must be at least 2, got {a.shape[-1]}")
    if _concrete(a) and np.any(np.asarray(a[..., 0]) == 0):
        raise ValueError("Leading coefficient is zero.")
    return a[..., 1:] / a[..., :1]


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): first row ``-a[1:] / a[0]``, ones below the diagonal."""
    b = _normalized_coefficients(a, "companion")
    m = b.shape[-1]
    lead = b.shape[:-1]
    rows = [0] * m + list(range(1, m))
    cols = list(range(m)) + list(range(m - 1))
    ones = creation.ones(lead + (m - 1,), b.dtype)
    return _scatter_matrix(lead, m, rows, cols, jshape.concatenate([-b, ones], axis=-1),
                           b.dtype)


def fiedler_companion(a):
    """The pentadiagonal Fiedler companion matrix of the polynomial with coefficients ``a``
    (highest degree first); it has the eigenvalues of ``companion(a)``."""
    b = _normalized_coefficients(a, "fiedler_companion")  # b[k - 1] is a_k / a_0
    m = b.shape[-1]
    lead = b.shape[:-1]
    rows, cols = [0], [0]  # -a_1
    for j in range(2, m + 1):  # -a_j for even j at (j-2, j-1), for odd j at (j-1, j-2)
        rows.append(j - 2 if j % 2 == 0 else j - 1)
        cols.append(j - 1 if j % 2 == 0 else j - 2)
    one_rows = [r for r in range(0, m - 2, 2)] + [r for r in range(1, m, 2)]
    one_cols = [r + 2 for r in range(0, m - 2, 2)] + [max(r - 2, 0) for r in range(1, m, 2)]
    ones = creation.ones(lead + (len(one_rows),), b.dtype)
    return _scatter_matrix(lead, m, rows + one_rows, cols + one_cols,
                           jshape.concatenate([-b, ones], axis=-1), b.dtype)


def fiedler(a):
    """The symmetric Fiedler matrix ``A[i, j] = |a[i] - a[j]|``, batched."""
    a = _vector(a, "fiedler", "a")
    return ufuncs.abs(a[..., :, None] - a[..., None, :])


def leslie(f, s):
    """The Leslie matrix: fecundities ``f`` in the first row, survival rates ``s`` on the
    subdiagonal."""
    f, s = _vector(f, "leslie", "f"), _vector(s, "leslie", "s")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f.")
    if f.shape[-1] < 1:
        raise ValueError("The length of f must be at least 1.")
    f, s = util.promote_dtypes(f, s)
    lead = tuple(util.broadcast_shapes(f.shape[:-1], s.shape[:-1]))
    n = f.shape[-1]
    f = jshape.broadcast_to(f, lead + (n,))
    s = jshape.broadcast_to(s, lead + (n - 1,))
    rows = [0] * n + list(range(1, n))
    cols = list(range(n)) + list(range(n - 1))
    return _scatter_matrix(lead, n, rows, cols, jshape.concatenate([f, s], axis=-1), f.dtype)


def block_diag(*arrs):
    """The block-diagonal matrix of the given arrays (0-D and 1-D ones are 1-row blocks)."""
    if not arrs:
        return creation.zeros((1, 0), dtypes.default_float_dtype())
    util.check_arraylike("block_diag", *arrs)
    return _block_diag(*arrs)


@compiled_when_eager()
def _block_diag(*arrs):
    blocks = []
    for a in arrs:
        a = creation.asarray(a)
        if a.ndim > 2:
            raise ValueError("Input array dimensions must be less than or equal to 2. Got "
                             f"{a.ndim}.")
        blocks.append(jshape.reshape(a, (1,) * (2 - a.ndim) + a.shape))
    blocks = util.promote_dtypes(*blocks)
    width = sum(b.shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        h, w = b.shape
        left = creation.zeros((h, before), b.dtype)
        right = creation.zeros((h, width - before - w), b.dtype)
        rows.append(jshape.concatenate([left, b, right], axis=1))
        before += w
    return jshape.concatenate(rows, axis=0)


# ---- from a size ----

def dft(n, scale=None, *, dtype=None):
    """The ``n`` x ``n`` DFT matrix ``exp(-2j pi i k / n)``, unscaled, or scaled by
    ``1/sqrt(n)`` ("sqrtn") or ``1/n`` ("n")."""
    n = _size(n, "dft")
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid.")
    dt = dtypes.default_complex_dtype() if dtype is None else dtypes.check_user_dtype(dtype,
                                                                                     "dft")
    if not dtypes.is_complex(dt):
        raise ValueError(f"dft: dtype must be a complex dtype, got {dt}")
    k = np.outer(np.arange(n), np.arange(n)) % max(n, 1)  # exact angles: reduce mod n first
    m = np.exp(-2j * np.pi * k / max(n, 1))
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    return creation.asarray(m.astype(dt))


def hadamard(n, dtype=int):
    """The ``n`` x ``n`` Hadamard matrix (Sylvester's construction; ``n`` a power of 2)."""
    n = index(n, "n", "hadamard")
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive integer, and n must be a power of 2")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    dt = dtypes.check_user_dtype(dtype, "hadamard")
    return creation.asarray(h.astype(dt))


def helmert(n, full=False):
    """The Helmert matrix of order ``n`` (without its first, constant row unless ``full``)."""
    n = _size(n, "helmert")
    h = np.zeros((n, n))
    if n:
        h[0] = 1 / math.sqrt(n)
    for i in range(1, n):
        h[i, :i] = 1 / math.sqrt(i * (i + 1))
        h[i, i] = -i / math.sqrt(i * (i + 1))
    return _host_float(h if full else h[1:])


def hilbert(n):
    """The Hilbert matrix ``1 / (i + j + 1)``."""
    n = _size(n, "hilbert")
    i = np.arange(n)
    return _host_float(1.0 / (i[:, None] + i[None, :] + 1))


def invhilbert(n):
    """The inverse of the Hilbert matrix of order ``n`` (integer entries, computed exactly and
    rounded once to the float dtype)."""
    n = _size(n, "invhilbert")
    out = np.empty((n, n), object)
    for i in range(n):
        for j in range(n):
            out[i, j] = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return _host_float(out.astype(float))


def _pascal_kind(kind, fun):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{fun}: kind must be 'symmetric', 'lower', or 'upper', got {kind!r}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix: binomial coefficients, symmetric (default), lower or upper."""
    n = _size(n, "pascal")
    kind = _pascal_kind(kind, "pascal")
    if kind == "symmetric":
        out = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        out = [[math.comb(i, j) for j in range(n)] for i in range(n)]
    out = np.array(out, dtype=object).reshape(n, n).astype(float)
    return _host_float(out.T if kind == "upper" else out)


def invpascal(n, kind=None):
    """The inverse of ``pascal(n, kind)`` (integer entries, computed exactly)."""
    n = _size(n, "invpascal")
    kind = _pascal_kind(kind, "invpascal")
    lower = [[(-1) ** (i - j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":  # P = L U, so P^-1 = U^-1 L^-1 = L^-T L^-1
        out = [[sum(lower[k][i] * lower[k][j] for k in range(n)) for j in range(n)]
               for i in range(n)]
    else:
        out = lower
    out = np.array(out, dtype=object).reshape(n, n).astype(float)
    return _host_float(out.T if kind == "upper" else out)
