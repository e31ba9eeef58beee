"""``jax.numpy.linalg``: NumPy's linear algebra over the ``lax.linalg`` primitives.

Inputs are promoted to an inexact dtype as JAX does; matrices may carry leading batch
dimensions. Singular inputs give infs/NaNs (``inv``, ``solve``) or NaNs (``cholesky``), never
an exception, as JAX.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.lax import linalg as lax_linalg
from pyjax._src.lax.base import aval_of
from pyjax._src.numpy import creation as jc
from pyjax._src.numpy import products as jp
from pyjax._src.numpy import reductions as jr
from pyjax._src.numpy import shape as js
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.indexing import take_along_axis
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.transformations.custom_derivatives import custom_jvp

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
           "vector_norm", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _inexact(name, *args):
    check_arraylike(name, *args)
    out = promote_dtypes_inexact(*[jc.asarray(a) for a in args])
    return out[0] if len(out) == 1 else out


def _matrix(name, a, square=False):
    a = _inexact(name, a)
    if a.ndim < 2:
        raise ValueError(f"{name}: input must have at least 2 dimensions, got shape {a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: last 2 dimensions of the array must be square, got shape "
                         f"{a.shape}")
    return a


def _mT(x):
    return js.swapaxes(x, -1, -2)


def _H(x):
    return uf.conj(_mT(x)) if dtypes.is_complex(x.dtype) else _mT(x)


def _diag(x):
    return jp.diagonal(x, 0, -2, -1)


# ---- factorizations ----

@compiled_when_eager("upper", "symmetrize_input")
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Cholesky factor of the Hermitian positive definite ``a`` (NaNs if it is not)."""
    a = _matrix("cholesky", a, square=True)
    l = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(l) if upper else l


@compiled_when_eager("UPLO", "symmetrize_input")
def eigh(a, UPLO=None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors of the Hermitian ``a``: ``EighResult``."""
    a = _matrix("eigh", a, square=True)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@compiled_when_eager("UPLO", "symmetrize_input")
def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):
    """Eigenvalues of the Hermitian ``a``, ascending."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


@compiled_when_eager()
def eig(a):
    """Eigenvalues and right eigenvectors of the general square ``a`` (CPU only, as JAX):
    ``EigResult(eigenvalues, eigenvectors)``, complex, with ``a @ v == v * w``; the
    eigenvectors have unit norm and are not differentiable (JAX's rule)."""
    a = _matrix("eig", a, square=True)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@compiled_when_eager()
def eigvals(a):
    """Eigenvalues of the general square ``a``, complex (differentiable)."""
    a = _matrix("eigvals", a, square=True)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


@compiled_when_eager("full_matrices", "compute_uv", "hermitian", "subset_by_index")
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """Singular value decomposition: ``SVDResult(U, S, Vh)`` with ``a == U[..., :k] * S @
    Vh[..., :k, :]``, or only ``S`` when ``compute_uv=False``."""
    a = _matrix("svd", a)
    if subset_by_index is not None:
        subset_by_index = tuple(operator.index(i) for i in subset_by_index)
    return _svd(a, bool(full_matrices), bool(compute_uv), bool(hermitian), subset_by_index)


def _svd(a, full_matrices, compute_uv, hermitian, subset_by_index):
    if hermitian:
        if subset_by_index is not None:
            raise NotImplementedError("svd: subset_by_index with hermitian=True")
        v, w = lax_linalg.eigh(a)
        s = uf.abs(w)
        order = js.flip(jr.argsort(s, axis=-1), axis=-1)
        s = _take_last(s, order)
        if not compute_uv:
            return s
        sign = uf.sign(w).astype(a.dtype)
        u = _take_cols(v, order)
        vh = _H(_take_cols(v * sign[..., None, :], order))
        return SVDResult(u, s, vh)
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
    if not compute_uv:
        return out
    return SVDResult(*out)


def _take_last(x, idx):
    return take_along_axis(x, idx, axis=-1)


def _take_cols(x, idx):
    return take_along_axis(x, js.broadcast_to(idx[..., None, :], x.shape), axis=-1)


@compiled_when_eager()
def svdvals(x, /):
    """The singular values of ``x``, descending."""
    return svd(x, compute_uv=False)


@compiled_when_eager("mode")
def qr(a, mode: str = "reduced"):
    """QR decomposition: ``QRResult(Q, R)`` for ``mode`` ``"reduced"`` or ``"complete"``,
    only ``R`` for ``"r"``, and LAPACK's ``(h, tau)`` for ``"raw"``."""
    a = _matrix("qr", a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return _qr(a, mode)


def _qr(a, mode):
    if mode == "raw":
        h, tau = lax_linalg.geqrf(a)
        return QRResult(_mT(h), tau)
    q, r = lax_linalg.qr(a, full_matrices=(mode == "complete"))
    if mode == "r":
        return r
    return QRResult(q, r)


# ---- determinants, solves, inverses ----

def _lu_parts(a):
    lu, piv, perm = lax_linalg.lu(a)
    k = piv.shape[-1]
    swaps = jr.sum(uf.not_equal(piv, jc.arange(k, dtype=np.int32)), axis=-1)
    parity = uf.where(uf.equal(swaps % 2, 0), 1, -1).astype(a.dtype)
    return lu, perm, parity


@custom_jvp
def _det(a):
    return _det_value(a)


@compiled_when_eager()
def _det_value(a):
    lu, _, parity = _lu_parts(a)
    return parity * jr.prod(_diag(lu), axis=-1)


@_det.defjvp
def _det_jvp(primals, tangents):
    # d det = trace(adj(a) da). Differentiating through the LU divides by its pivots (NaN for a
    # singular a); the adjugate below stays exact there, as JAX's: the rank n-1 matrix's
    # adjugate, 0 below that.
    (a,), (t,) = primals, tangents
    return _det(a), _det_tangent(a, t)


@compiled_when_eager()
def _det_tangent(a, t):
    n = a.shape[-1]
    if n == 0:
        return jr.sum(t, axis=(-2, -1))
    return jr.sum(_adjugate(a) * _mT(t), axis=(-2, -1))


def _adjugate(a):
    """adj(a) from a[perm] = L U: adj(a) = parity adj(U) L^-1 P. With the smallest pivot u_k set
    to 1 (U'), and W = U'^-1, Sherman-Morrison gives exactly, with no division by u_k,
    adj(U) = c (u_k W + (1 - u_k) W e_k e_k^T W), c the product of the other pivots; other
    zero pivots are set to 1 as well (then c = 0: the adjugate of rank <= n-2 is 0)."""
    lu, perm, parity = _lu_parts(a)
    n = a.shape[-1]
    u = _diag(lu)
    cols = jc.arange(n)
    e_k = uf.equal(cols, jr.argmin(uf.abs(u), axis=-1)[..., None])
    u_k = jr.sum(uf.where(e_k, u, 0), axis=-1)[..., None, None]
    c = jr.prod(uf.where(e_k, 1, u), axis=-1)[..., None, None]
    eye = uf.equal(cols[:, None], cols)
    u_safe = uf.where(e_k | uf.equal(u, 0), 1, u).astype(a.dtype)
    u_prime = uf.where(eye, u_safe[..., None, :], lu)
    p = uf.equal(perm[..., :, None], cols).astype(a.dtype)
    x = lax_linalg.triangular_solve(lu, p, left_side=True, lower=True, unit_diagonal=True)
    x = lax_linalg.triangular_solve(u_prime, x, left_side=True, lower=False)
    w_k = lax_linalg.triangular_solve(u_prime, e_k[..., :, None].astype(a.dtype),
                                      left_side=True, lower=False)
    x_k = jr.sum(uf.where(e_k[..., :, None], x, 0), axis=-2, keepdims=True)
    adj_u = u_k * x + (1 - u_k) * w_k * x_k
    return parity[..., None, None] * c * adj_u


@compiled_when_eager()
def det(a):
    """Determinant of the square ``a`` (via LU with partial pivoting)."""
    return _det(_matrix("det", a, square=True))


def _slogdet(a, method):
    if method == "qr":
        q, r = lax_linalg.qr(a, full_matrices=True)
        d = _diag(r)
        qdet = _det(q)  # +-1 (a unit complex number)
        sign0 = qdet / uf.abs(qdet).astype(a.dtype)
    else:
        lu, _, sign0 = _lu_parts(a)
        d = _diag(lu)
    absd = uf.abs(d)
    is_zero = jr.any(uf.equal(d, 0), axis=-1)
    unit = d / uf.where(uf.equal(absd, 0), 1, absd).astype(a.dtype)
    sign = sign0 * jr.prod(unit, axis=-1)
    logdet = jr.sum(uf.log(absd), axis=-1)
    sign = uf.where(is_zero, 0, sign).astype(a.dtype)
    logdet = uf.where(is_zero, -np.inf, logdet)
    return SlogdetResult(sign, logdet)


@compiled_when_eager("method")
def slogdet(a, *, method=None):
    """Sign and natural log of the absolute determinant: ``SlogdetResult(sign, logabsdet)``;
    ``method`` is ``"lu"`` (default) or ``"qr"``."""
    a = _matrix("slogdet", a, square=True)
    if method not in (None, "lu", "qr"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         f"(`None`), and 'qr'.")
    return _slogdet(a, method or "lu")


def _lu_solve(lu, perm, b):
    """``a^-1 @ b`` for ``b`` of shape (..., n, m) from ``a``'s LU factors."""
    # b[perm]: a gather (a permutation matrix product costs n^2 m, as much as inv itself)
    x = take_along_axis(b, js.broadcast_to(perm[..., :, None], b.shape), axis=-2)
    return _lu_triangular_solves(lu, x)


def _lu_triangular_solves(lu, x):
    """``U^-1 L^-1 x``, ``L`` and ``U`` the unit lower and upper triangles of ``lu``."""
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)


def _solve(a, b):
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = js.broadcast_to(a, batch + a.shape[-2:])
    b = js.broadcast_to(b, batch + b.shape[-2:])
    lu, perm, _ = _lu_parts(a)
    x = _lu_solve(lu, perm, b)
    return x[..., 0] if vector else x


@compiled_when_eager()
def solve(a, b):
    """The solution ``x`` of ``a @ x == b``; ``b`` is a vector when 1-D, otherwise a stack of
    matrices (..., n, m)."""
    a = _matrix("solve", a, square=True)
    a, b = _inexact("solve", a, b)
    if b.ndim < 1 or b.shape[-1 if b.ndim == 1 else -2] != a.shape[-1]:
        raise ValueError(f"solve: b must have shape (..., {a.shape[-1]}) or "
                         f"(..., {a.shape[-1]}, m) to match a's shape {a.shape}, got {b.shape}")
    return _solve(a, b)


def _inv(a):
    lu, perm, _ = _lu_parts(a)
    # eye[perm], the same zeros and ones as _lu_solve's gather, by one comparison (XLA's
    # gather of n^2 elements cost more than a 512² trsm here)
    cols = jc.arange(a.shape[-1], dtype=perm.dtype)
    p = uf.equal(perm[..., :, None], cols).astype(a.dtype)
    return _lu_triangular_solves(lu, p)


@compiled_when_eager()
def inv(a):
    """The inverse of the square ``a`` (infs/NaNs when ``a`` is singular)."""
    return _inv(_matrix("inv", a, square=True))


@compiled_when_eager("n")
def matrix_power(a, n):
    """``a`` raised to the integer power ``n`` (negative: powers of the inverse)."""
    a = jc.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise TypeError(f"matrix_power requires a square matrix (..., n, n), got shape {a.shape}")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return js.broadcast_to(jc.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a = inv(a)
        n = -n
    result = None
    z = a
    while n:
        if n & 1:
            result = z if result is None else jp.matmul(result, z)
        n >>= 1
        if n:
            z = jp.matmul(z, z)
    return result


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """Moore-Penrose pseudo-inverse: singular values at or below ``rtol`` times the largest
    are dropped (default ``10 * max(m, n) * eps``)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    a = _matrix("pinv", a)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return jc.zeros(a.shape[:-2] + (n, m), a.dtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(np.finfo(dtypes.to_real_dtype(a.dtype)).eps)
    return _pinv_differentiable(a, jc.asarray(rtol), bool(hermitian))


def _pinv_differentiable(a, rtol, hermitian):
    return _pinv(a, rtol, hermitian)


_pinv_differentiable = custom_jvp(_pinv_differentiable, nondiff_argnums=(1, 2))


@_pinv_differentiable.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    # the derivative of the pseudo-inverse at constant rank (Golub & Pereyra), as JAX's:
    # 0 at the zero matrix, where differentiating the SVD gives NaN
    (a,), (t,) = primals, tangents
    p = _pinv(a, rtol, hermitian)
    m, n = a.shape[-2:]
    th, ph = _H(t), _H(p)
    out = -(p @ t @ p)
    out = out + p @ ph @ th @ (jc.eye(m, dtype=a.dtype) - a @ p)
    out = out + (jc.eye(n, dtype=a.dtype) - p @ a) @ th @ ph @ p
    return p, out


@compiled_when_eager("hermitian")
def _pinv(a, rtol, hermitian):
    ac = uf.conj(a)
    u, s, vh = svd(ac, full_matrices=False, hermitian=hermitian)
    rtol = rtol.astype(s.dtype)
    rtol = js.reshape(rtol, rtol.shape + (1,) * (s.ndim - rtol.ndim))
    cutoff = rtol * s[..., 0:1]
    s = uf.where(uf.greater(s, cutoff), s, np.inf).astype(u.dtype)
    return jp.matmul(_mT(vh), _mT(u) / s[..., :, None])


@compiled_when_eager("hermitian")
def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """The number of singular values above ``rtol`` times the largest (default
    ``max(m, n) * eps``)."""
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank: only one of rtol or tol may be specified")
    M = _inexact("matrix_rank", M)
    if M.ndim < 2:
        return jr.any(uf.not_equal(M, 0)).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if tol is not None:
        # tol is an absolute threshold, as NumPy's (and JAX 0.10.2: rank 4 for the 8x8
        # Hilbert matrix with tol=1e-3, whose 4th singular value is 1.3e-3); it was relative
        tol = jc.asarray(tol).astype(s.dtype)
        return jr.sum(uf.greater(s, tol[..., None]), axis=-1)
    if rtol is None:
        rtol = max(M.shape[-2:]) * float(np.finfo(s.dtype).eps)
    rtol = jc.asarray(rtol).astype(s.dtype)
    tol_ = rtol[..., None] * jr.max(s, axis=-1, keepdims=True) if s.shape[-1] else rtol
    return jr.sum(uf.greater(s, tol_), axis=-1)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of ``a @ x == b`` (2-D ``a``): ``(x, resid, rank, s)`` as
    NumPy's, via the SVD of ``a``."""
    x, resid, rank, s = _lstsq_checked(a, b, rcond)
    m, n = np.shape(a)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = jc.asarray([], dtype=resid.dtype)
    return x, resid, rank, s


@compiled_when_eager()
def _lstsq_checked(a, b, rcond):
    a, b = _inexact("lstsq", a, b)
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        f"two-dimensional")
    if b.shape[0] != a.shape[0]:
        raise ValueError(f"lstsq: a and b must have the same number of rows, got {a.shape} "
                         f"and {b.shape}")
    m, n = a.shape
    eps = float(np.finfo(dtypes.to_real_dtype(a.dtype)).eps)
    if rcond is None:
        rcond = eps * max(n, m)
    return _lstsq(a, b, jc.asarray(rcond))


def _lstsq(a, b, rcond):
    b1 = b.ndim == 1
    if b1:
        b = b[:, None]
    eps = float(np.finfo(dtypes.to_real_dtype(a.dtype)).eps)
    u, s, vt = lax_linalg.svd(a, full_matrices=False)
    rcond = uf.where(uf.less(rcond, 0), eps, rcond).astype(s.dtype)
    # strict, as NumPy's gelsd and JAX: the zero matrix has rank 0 (and x = 0), not 1/0
    mask = uf.greater(s, rcond * s[0]) if s.shape[0] else s > 0
    rank = jr.sum(mask)
    safe_s = uf.where(mask, s, 1).astype(a.dtype)
    s_inv = uf.where(mask, 1 / safe_s, 0)[:, None]
    utb = jp.matmul(_H(u), b)
    x = jp.matmul(_H(vt), s_inv * utb)
    resid = vector_norm(b - jp.matmul(a, x), axis=0) ** 2
    if b1:
        x = x[:, 0]
    return x, resid, rank, s


# ---- norms ----

@compiled_when_eager("axis", "keepdims", "ord")
def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """The vector ``ord``-norm of ``x`` over ``axis`` (all axes when None)."""
    x = _inexact("vector_norm", x)
    if axis is None:
        out = _vector_norm(js.ravel(x), 0, ord)
        return js.reshape(out, (1,) * x.ndim) if keepdims else out
    return _vector_norm(x, axis, ord, keepdims)


def _vector_norm(x, axis, ord, keepdims=False):
    ax = uf.abs(x)
    if ord is None or ord == 2:
        sq = uf.real(x * uf.conj(x)) if dtypes.is_complex(x.dtype) else x * x
        return uf.sqrt(jr.sum(sq, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        # JAX's max starts from 0: at x == 0 the tie with that initial halves the gradient
        return jr.max(ax, axis=axis, keepdims=keepdims, initial=0.0)
    if ord == -np.inf:
        return jr.min(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return jr.sum(uf.not_equal(x, 0).astype(ax.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return jr.sum(ax, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = float(ord)
    return uf.power(jr.sum(uf.power(ax, p), axis=axis, keepdims=keepdims), 1.0 / p)


@compiled_when_eager("keepdims", "ord")
def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """The matrix ``ord``-norm over the last two axes of ``x``."""
    x = _inexact("matrix_norm", x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@compiled_when_eager("ord", "axis", "keepdims")
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector or matrix norm as NumPy's ``linalg.norm``: every ``ord`` of either kind."""
    x = _inexact("norm", x)
    if axis is None:
        if ord is None:
            out = _vector_norm(js.ravel(x), 0, 2)
            return js.reshape(out, (1,) * x.ndim) if keepdims else out
        axis = tuple(range(x.ndim))
        if x.ndim > 2:
            raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, (int, np.integer)):
        axis = (operator.index(axis),)
    axis = tuple(operator.index(a) % x.ndim if x.ndim else operator.index(a) for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, axis, ord, keepdims)
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    r, c = axis
    if r == c:
        raise ValueError("Duplicate axes given.")
    ax = uf.abs(x)
    if ord is None or ord in ("fro", "f"):
        return _vector_norm(x, axis, 2, keepdims)
    if ord == 1:
        out = jr.max(jr.sum(ax, axis=r, keepdims=True), axis=c, keepdims=True, initial=0.0)
    elif ord == -1:
        out = jr.min(jr.sum(ax, axis=r, keepdims=True), axis=c, keepdims=True)
    elif ord == np.inf:
        out = jr.max(jr.sum(ax, axis=c, keepdims=True), axis=r, keepdims=True, initial=0.0)
    elif ord == -np.inf:
        out = jr.min(jr.sum(ax, axis=c, keepdims=True), axis=r, keepdims=True)
    elif ord in (2, -2, "nuc"):
        y = js.moveaxis(x, (r, c), (-2, -1))
        s = svd(y, compute_uv=False)
        # reductions, not s[..., 0]: tied singular values share the gradient, as in JAX
        if ord == 2:
            out = jr.max(s, axis=-1, initial=0.0)
        elif ord == -2:
            out = jr.min(s, axis=-1)
        else:
            out = jr.sum(s, axis=-1)
        if keepdims:
            out = js.expand_dims(out, tuple(sorted((r, c))))
        return out
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    return out if keepdims else js.squeeze(out, axis=(r, c))


@compiled_when_eager("p")
def cond(x, p=None):
    """Condition number of ``x`` in the ``p``-norm (2-norm by default)."""
    x = _matrix("cond", x)
    if p is None or p == 2:
        s = svdvals(x)
        r = s[..., 0] / s[..., -1]
    elif p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-1] != x.shape[-2]:
            raise ValueError(f"cond: p={p} needs square matrices, got shape {x.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # NaNs from a singular matrix become infs, as NumPy (not where x has NaNs itself)
    return uf.where(uf.isnan(r) & ~jr.any(uf.isnan(x), axis=(-2, -1)), np.inf, r)


# ---- products and the array-API aliases ----

def multi_dot(arrays, *, precision=None):
    """``arrays[0] @ arrays[1] @ ...``, the first and last may be 1-D, in the cheapest order."""
    arrays = [jc.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_1d:
        arrays[0] = arrays[0][None, :]
    if last_1d:
        arrays[-1] = arrays[-1][:, None]
    if any(a.ndim != 2 for a in arrays):
        raise ValueError("multi_dot: all arrays but the first and last must be 2-D")
    dims = [arrays[0].shape[0]] + [a.shape[1] for a in arrays]
    order = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = order[i][j]
        return jp.matmul(product(i, k), product(k + 1, j), precision=precision)
    out = product(0, len(arrays) - 1)
    if first_1d:
        out = out[0]
    if last_1d:
        out = out[..., 0]
    return out


def _chain_order(dims):
    """The matrix-chain split points that minimise the flops (dynamic programming)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def tensorinv(a, ind: int = 2):
    """The inverse of ``a`` seen as a matrix from its first ``ind`` axes to the rest."""
    a = jc.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}")
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = int(np.prod(a.shape[:ind]))
    cols = int(np.prod(a.shape[ind:]))
    if rows != cols:
        raise ValueError(f"tensorinv: the product of the first {ind} dimensions ({rows}) must "
                         f"equal the product of the rest ({cols}); got shape {a.shape}")
    return js.reshape(inv(js.reshape(a, (rows, cols))), out_shape)


def tensorsolve(a, b, axes=None):
    """The ``x`` with ``tensordot(a, x, x.ndim) == b``."""
    a, b = _inexact("tensorsolve", a, b)
    if axes is not None:
        axes = [operator.index(ax) % a.ndim for ax in axes]
        a = js.moveaxis(a, axes, list(range(a.ndim - len(axes), a.ndim)))
    out_shape = a.shape[b.ndim:]
    rows = int(np.prod(b.shape))
    cols = int(np.prod(out_shape))
    if rows != cols:
        raise ValueError(f"tensorsolve: a's shape {a.shape} does not give a square system for "
                         f"b's shape {b.shape}")
    x = solve(js.reshape(a, (rows, cols)), js.ravel(b))
    return js.reshape(x, out_shape)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis`` (the array API's ``linalg.cross``)."""
    x1, x2 = jc.asarray(x1), jc.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have shape[axis]={x1.shape[axis]} and {x2.shape[axis]}")
    return jp.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset: int = 0):
    """The diagonals of the matrices in the last two axes."""
    return jp.diagonal(x, offset, -2, -1)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """``x1 @ x2`` (``jnp.matmul``)."""
    return jp.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    return js.matrix_transpose(x)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays."""
    x1, x2 = jc.asarray(x1), jc.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}")
    return jp.outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """``jnp.tensordot`` with keyword ``axes``."""
    return jp.tensordot(x1, x2, axes, precision=precision,
                        preferred_element_type=preferred_element_type)


@compiled_when_eager("offset", "dtype")
def trace(x, /, *, offset: int = 0, dtype=None):
    """Sum of the diagonals of the matrices in the last two axes."""
    return jp.trace(x, offset, -2, -1, dtype=dtype)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Conjugated dot product of vectors along ``axis``."""
    return jp.vecdot(x1, x2, axis=axis, precision=precision,
                     preferred_element_type=preferred_element_type)


del aval_of
