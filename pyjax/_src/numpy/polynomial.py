"""Polynomials as coefficient vectors (highest degree first): ``polyval`` by Horner's
method in a ``lax.scan`` over the coefficients (as JAX does), so a long coefficient vector
compiles to one loop; ``poly``, ``polyadd``, ``polysub``, ``polymul``, ``polydiv``,
``polyder``, ``polyint``, ``vander`` and ``polyfit`` (least squares through
``jnp.linalg.lstsq``). ``roots`` (and ``poly`` of a matrix) need the eigenvalues of a
non-symmetric matrix, which pyjax does not compute yet."""
from __future__ import annotations

from pyjax._src.control_flow.scan import scan
from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
import numpy as np
from operator import index as operator_index

from pyjax._src.numpy import util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy import creation
from pyjax._src.numpy import reductions
from pyjax._src.numpy import shape as jshape

__all__ = ["polyval", "poly", "polyadd", "polysub", "polymul", "polydiv", "polyder",
           "polyint", "vander", "polyfit", "roots"]


def _polyval(p, x, unroll):
    shape = util.broadcast_shapes(tuple(p.shape[1:]), tuple(x.shape))
    y = lax_shape.full(shape, 0, x.dtype)
    xb = util.broadcast_to(x, shape)

    def horner(y, c):
        return lax.add(lax.mul(y, xb), util.broadcast_to(c, shape)), None

    y, _ = scan(horner, y, p, unroll=unroll)
    return y


_polyval_jit = jit(_polyval, static_argnums=2)  # one call in a user's Jaxpr, as in JAX


def polyval(p, x, *, unroll=16):
    """Evaluate the polynomial with coefficients ``p`` (highest degree first) at ``x``:
    ``p[0] * x**(n-1) + ... + p[n-1]``, by Horner's method.

    ``p`` may have more than one dimension: its leading axis holds the coefficients and the
    rest broadcasts against ``x``. Both are promoted to a common numeric dtype (integer
    polynomials stay integer, as in JAX 0.10.2 and NumPy). ``unroll`` is how many Horner steps each iteration of the compiled
    loop runs. An empty ``p`` gives zeros.
    """
    util.check_arraylike("polyval", p, x)
    p, x = util.promote_dtypes_numeric(creation.asarray(p), creation.asarray(x))
    p, x = creation.asarray(p), creation.asarray(x)
    if p.ndim == 0:
        raise ValueError("polyval: p must be an array of coefficients with at least one "
                         "dimension, got a scalar")
    if isinstance(unroll, bool):
        unroll = p.shape[0] if unroll else 1
    try:
        unroll = int(unroll)
    except (TypeError, ValueError):
        raise TypeError(f"polyval: unroll must be a static int, got {unroll!r}") from None
    if unroll < 1:
        raise ValueError(f"polyval: unroll must be at least 1, got {unroll}")
    return _polyval_jit(p, x, unroll)


# ---------------------------------------------------------------------------------------
# coefficient arithmetic
# ---------------------------------------------------------------------------------------

def _coeffs(fun, *ps, inexact=True):
    util.check_arraylike(fun, *ps)
    arrs = [creation.asarray(p) for p in ps]
    for a in arrs:
        if a.ndim != 1:
            raise ValueError(f"{fun}: coefficient arrays must be 1-D, got shape {a.shape}")
    promote = util.promote_dtypes_inexact if inexact else util.promote_dtypes
    return [creation.asarray(a) for a in promote(*arrs)]


def _pad_front(a, n):
    if a.shape[0] == n:
        return a
    return jshape.concatenate([lax_shape.full((n - a.shape[0],), 0, a.dtype), a])


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros)."""
    a1, a2 = _coeffs("polyadd", a1, a2, inexact=False)
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = _coeffs("polysub", a1, a2, inexact=False)
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n) - _pad_front(a2, n)


def _convolve_full(a, b):
    """c[k] = sum over i + j = k of a[i] b[j]: an outer product summed along
    anti-diagonals by one scatter-add (no separate convolution primitive needed)."""
    n, m = a.shape[0], b.shape[0]
    if n == 0 or m == 0:
        return lax_shape.full((0,), 0, a.dtype)
    k = (np.arange(n)[:, None] + np.arange(m)[None, :]).astype(np.int32)
    prod = a[:, None] * b[None, :]
    out = lax_shape.full((n + m - 1,), 0, prod.dtype)
    return out.at[creation.asarray(k)].add(prod)


def _trim_concrete(a, fun):
    from pyjax._src.numpy.editing import trim_zeros
    return trim_zeros(a, "f") if a.shape[0] else a


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (``trim_leading_zeros`` needs concrete inputs)."""
    a1, a2 = _coeffs("polymul", a1, a2)
    if trim_leading_zeros:
        a1, a2 = _trim_concrete(a1, "polymul"), _trim_concrete(a2, "polymul")
    if a1.shape[0] == 0:
        a1 = lax_shape.full((1,), 0, a1.dtype)
    if a2.shape[0] == 0:
        a2 = lax_shape.full((1,), 0, a2.dtype)
    return _convolve_full(a1, a2)


def polydiv(u, v, *, trim_leading_zeros=False):
    """``(quotient, remainder)`` of polynomial long division. As in JAX the remainder keeps
    ``u``'s length (leading zeros) unless ``trim_leading_zeros`` (concrete inputs only)."""
    u, v = _coeffs("polydiv", u, v)
    if v.shape[0] == 0:
        raise ValueError("polydiv: the divisor must have at least one coefficient")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = lax_shape.full((max(m - n + 1, 1),), 0, u.dtype)
    for k in range(m - n + 1):  # static: one step per quotient coefficient
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        from pyjax._src.numpy.editing import trim_zeros
        tol = np.sqrt(np.finfo(np.dtype(u.dtype)).eps)
        uv = np.asarray(u)
        nz = np.nonzero(np.abs(uv) > tol)[0]
        u = u[int(nz[0]):] if nz.size else u[-1:]
        q = trim_zeros(q, "f") if np.asarray(q).any() else q[-1:]
    return q, u


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial."""
    (p,) = _coeffs("polyder", p)
    m = _order(m, "polyder")
    n = p.shape[0]
    if m == 0:
        return p
    if m >= n:
        return lax_shape.full((0,), 0, p.dtype)
    powers = np.arange(n - 1, -1, -1, dtype=np.float64)[:n - m]  # degree of each kept term
    factor = np.ones(n - m)
    for j in range(m):
        factor *= powers - j
    return p[:n - m] * creation.asarray(factor.astype(np.dtype(p.dtype).type(0).real.dtype))


@compiled_when_eager("m")
def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (a
    scalar or ``m`` values, the first used first; default zeros)."""
    (p,) = _coeffs("polyint", p)
    m = _order(m, "polyint")
    if m == 0:
        if k is not None:
            raise ValueError("polyint: k must be None when m is 0")
        return p
    if k is None:
        k = lax_shape.full((m,), 0, p.dtype)
    else:
        util.check_arraylike("polyint", k)
        k = creation.asarray(k).astype(p.dtype)
        if k.ndim == 0:
            k = util.broadcast_to(k, (m,))
        if k.shape != (m,):
            raise ValueError(f"polyint: k must be a scalar or have length m={m}, got shape "
                             f"{k.shape}")
    for j in range(m):
        n = p.shape[0]
        div = np.arange(n, 0, -1, dtype=np.float64)
        p = jshape.concatenate([p / creation.asarray(div.astype(np.dtype(p.dtype).type(0)
                                                               .real.dtype)), k[j:j + 1]])
    return p


def _order(m, fun):
    try:
        m = int(m) if not isinstance(m, bool) and int(m) == m else None
    except (TypeError, ValueError):
        m = None
    if m is None or m < 0:
        raise ValueError(f"Order of derivative/integral must be a non-negative static "
                         f"integer ({fun})")
    return m


@compiled_when_eager()
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial whose roots are ``seq_of_zeros`` (1-D)."""
    util.check_arraylike("poly", seq_of_zeros)
    z = creation.asarray(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        # the characteristic polynomial; complex coefficients, as JAX
        from pyjax._src.numpy.linalg import eigvals
        z = eigvals(z)
    if z.ndim != 1:
        raise ValueError(f"input must be 1d or non-empty square 2d array, got shape "
                         f"{z.shape}")
    (z,) = util.promote_dtypes_inexact(z)
    z = creation.asarray(z)
    a = lax_shape.full((1,), 1, z.dtype)
    for i in range(z.shape[0]):  # static: multiply by (x - z[i]) once per root
        a = _convolve_full(a, jshape.stack([creation.asarray(1).astype(z.dtype), -z[i]]))
    return a


@compiled_when_eager("N", "increasing")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns are powers ``x**(N-1) ... x**0``
    (or increasing), computed by running products like NumPy."""
    util.check_arraylike("vander", x)
    x = creation.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"x must be a one-dimensional array, got shape {x.shape}")
    if N is None:
        N = x.shape[0]
    try:
        N = int(N) if int(N) == N else None
    except (TypeError, ValueError):
        N = None
    if N is None or N < 0:
        raise ValueError("N must be a non-negative static integer")
    if N == 0:
        return lax_shape.full((x.shape[0], 0), 0, x.dtype)
    rest = reductions.cumprod(util.broadcast_to(x[:, None], (x.shape[0], N - 1)), axis=1)
    out = jshape.concatenate([lax_shape.full((x.shape[0], 1), 1, x.dtype), rest], axis=1)
    return out if increasing else jshape.flip(out, 1)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` (coefficients highest power first), as
    NumPy: columns of the Vandermonde matrix are scaled to unit norm before ``lstsq``; ``w``
    weights the residuals; ``full`` also returns (residuals, rank, singular values, rcond);
    ``cov`` the covariance of the coefficients (``"unscaled"``: without the residual
    factor). ``y`` may be 2-D (one fit per column)."""
    from pyjax._src.numpy import linalg
    util.check_arraylike("polyfit", x, y)
    try:
        deg = operator_index(deg)
    except TypeError:
        raise TypeError(f"polyfit: deg must be an int, got {deg!r}") from None
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    x, y = util.promote_dtypes_inexact(creation.asarray(x), creation.asarray(y))
    if x.ndim != 1:
        raise TypeError(f"polyfit: expected 1D vector for x, got shape {x.shape}")
    if x.shape[0] == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError(f"polyfit: expected 1D or 2D array for y, got shape {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"polyfit: expected x and y to have same length, got {x.shape[0]} "
                        f"and {y.shape[0]}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = creation.asarray(w)
        if w.ndim != 1 or w.shape[0] != y.shape[0]:
            raise TypeError(f"polyfit: expected a 1D w of length {y.shape[0]}, got shape "
                            f"{w.shape}")
        w = w.astype(lhs.dtype)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = lax.sqrt(reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        vbase = linalg.inv(lhs.T @ lhs) / (scale[:, None] * scale[None, :])
        if cov == "unscaled":
            fac = 1.0
        else:
            if x.shape[0] <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, vbase * fac
        return c, vbase[:, :, None] * fac
    return c


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients ``p`` (1-D, highest power first), complex:
    the eigenvalues of its companion matrix, as NumPy. ``strip_zeros`` drops leading zero
    coefficients (needs a concrete ``p``); without it the degree stays ``len(p) - 1`` and the
    roots lost to leading zeros are NaN (traceable)."""
    util.check_arraylike("roots", p)
    (p,) = util.promote_dtypes_inexact(creation.asarray(p))
    p = creation.asarray(p)
    if p.ndim == 0:
        p = jshape.reshape(p, (1,))
    if p.ndim != 1:
        raise ValueError(f"Input argument p must be 1-D, got shape {p.shape}")
    if strip_zeros:
        return _roots_no_zeros(_trim_concrete(p, "roots"))
    return _roots_with_zeros(p)


def _complex_of(dtype):
    return np.result_type(dtype, np.complex64)


def _roots_no_zeros(p):
    n = p.shape[0]
    if n < 2:
        return creation.zeros((0,), _complex_of(p.dtype))
    from pyjax._src.numpy.linalg import eigvals
    top = jshape.reshape(-p[1:] / p[0], (1, n - 1))
    below = creation.eye(n - 2, n - 1, dtype=p.dtype)   # ones on the subdiagonal
    return eigvals(jshape.concatenate([top, below], axis=0))


def _roots_with_zeros(p):
    """Leading zeros rolled to the end make ``x**k * q(x)``: its ``k`` extra zero roots are
    moved last (stably) and replaced by NaN."""
    n = p.shape[0]
    if n < 2:
        return creation.zeros((0,), _complex_of(p.dtype))
    k = reductions.sum(reductions.cumprod((p == 0).astype(np.int32)))
    all_zero = k == n
    idx = (creation.arange(n) + k) % n
    rolled = creation.asarray(p)[idx]
    rolled = lax.select(jshape.broadcast_to(all_zero, (n,)), creation.ones_like(rolled),
                        rolled)
    r = _roots_no_zeros(rolled)
    order = reductions.argsort((r == 0).astype(np.int32), stable=True)
    r = r[order]
    keep = creation.arange(n - 1) < (n - 1) - k
    return lax.select(keep, r, creation.full_like(r, complex(np.nan, np.nan)))
