"""``jax.scipy.linalg``: thin SciPy-style wrappers over the ``lax.linalg`` primitives.

SciPy's ``overwrite_*`` and ``check_finite`` arguments are accepted and have no effect, as in
JAX (arrays are immutable; non-finite inputs give NaNs rather than errors). Each wrapper does
its work in a ``compiled_when_eager`` function of its array operands (its configuration
static), as JAX jits them: eagerly one cached call, not one dispatch per primitive.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.lax import linalg as lax_linalg
from pyjax._src.numpy import creation as jc
from pyjax._src.numpy import linalg as jla
from pyjax._src.numpy import products as jp
from pyjax._src.numpy import shape as js
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "inv", "lu", "lu_factor",
           "lu_solve", "qr", "solve", "solve_triangular", "svd"]


def _matrix(name, a, square=True):
    return jla._matrix(name, a, square=square)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Cholesky factor of the Hermitian positive definite ``a``: upper unless ``lower``."""
    return _cholesky(a, bool(lower))


@compiled_when_eager("lower")
def _cholesky(a, lower):
    a = _matrix("cholesky", a)
    # one triangle is read (the other ignored), as SciPy and JAX: no symmetrization
    l = lax_linalg.cholesky(a if lower else jla._H(a), symmetrize_input=False)
    return l if lower else jla._H(l)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)`` for ``cho_solve``; the other triangle of ``c`` is zero."""
    return _cholesky(a, bool(lower)), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a @ x == b`` given ``cho_factor(a)``."""
    c, lower = c_and_lower
    return _cho_solve(c, b, bool(lower))


@compiled_when_eager("lower")
def _cho_solve(c, b, lower):
    c, b = jla._inexact("cho_solve", c, b)
    c, x, vec = _batched_rhs("cho_solve", c, b)
    lo = lax_linalg.triangular_solve(c, x, left_side=True, lower=lower, transpose_a=not lower,
                                     conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, lo, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return x[..., 0] if vec else x


def _batched_rhs(name, a, b):
    """``(a, x, vec)``: ``b`` of shape (..., n) (a stack of vectors) or (..., n, k), both
    broadcast to one batch shape, as JAX's solvers take them."""
    vec = b.ndim in (1, a.ndim - 1)
    x = b[..., None] if vec else b
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or x.ndim < 2 or x.shape[-2] != a.shape[-1]:
        raise ValueError(f"{name}: incompatible shapes, {a.shape} and b {b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], x.shape[:-2])
    return (js.broadcast_to(a, batch + a.shape[-2:]), js.broadcast_to(x, batch + x.shape[-2:]),
            vec)


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``op(a) @ x == b`` for the triangular ``a``; ``trans`` is 0/'N', 1/'T' or
    2/'C'."""
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans!r}: expected 0, 1, 2, 'N', 'T' or 'C'")
    if debug is not None:
        raise NotImplementedError("solve_triangular: the debug argument is not supported")
    return _solve_triangular(a, b, trans, bool(lower), bool(unit_diagonal))


@compiled_when_eager("trans", "lower", "unit_diagonal")
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    a, b = jla._inexact("solve_triangular", a, b)
    transpose_a, conjugate_a = _TRANS[trans]
    vec = b.ndim in (1, a.ndim - 1)
    x = b[..., None] if vec else b
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or x.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve_triangular: incompatible shapes, a {a.shape} and b {b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], x.shape[:-2])
    a = js.broadcast_to(a, batch + a.shape[-2:])
    x = js.broadcast_to(x, batch + x.shape[-2:])
    out = lax_linalg.triangular_solve(a, x, left_side=True, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    return out[..., 0] if vec else out


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)`` as LAPACK's getrf (zero-based pivots)."""
    return _lu_factor(a)


@compiled_when_eager()
def _lu_factor(a):
    a = _matrix("lu_factor", a, square=False)
    lu_, piv, _ = lax_linalg.lu(a)
    return lu_, piv


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """Solve ``op(a) @ x == b`` given ``lu_factor(a)``; ``trans`` is 0, 1 (transpose) or 2
    (conjugate transpose)."""
    lu_, piv = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(f"Invalid 'trans' value {trans!r}: expected 0, 1 or 2")
    return _lu_solve(lu_, piv, b, trans)


@compiled_when_eager("trans")
def _lu_solve(lu_, piv, b, trans):
    lu_, b = jla._inexact("lu_solve", lu_, b)
    n = lu_.shape[-1]
    lu_, x, vec = _batched_rhs("lu_solve", lu_, b)
    piv = js.broadcast_to(piv, lu_.shape[:-1])
    perm = lax_linalg.lu_pivots_to_permutation(piv, n)
    if trans == 0:
        x = jla._lu_solve(lu_, perm, x)
    else:
        conj = trans == 2
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=conj)
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True,
                                        conjugate_a=conj, unit_diagonal=True)
        pmat = uf.equal(perm[..., :, None], jc.arange(n, dtype=np.int32)).astype(lu_.dtype)
        x = jp.matmul(jla._mT(pmat), x)
    return x[..., 0] if vec else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(p, l, u)`` with ``a == p @ l @ u`` (or ``(p @ l, u)`` when ``permute_l``)."""
    return _lu(a, bool(permute_l))


@compiled_when_eager("permute_l")
def _lu(a, permute_l):
    a = _matrix("lu", a, square=False)
    lu_, _, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    l = jc.tril(lu_[..., :, :k], -1) + jc.eye(m, k, dtype=a.dtype)
    u = jc.triu(lu_[..., :k, :])
    # p is real for complex a, as SciPy's and JAX's
    p = jla._mT(uf.equal(perm[..., :, None], jc.arange(m, dtype=np.int32))
                .astype(dtypes.to_real_dtype(a.dtype)))
    if permute_l:
        return jp.matmul(p.astype(a.dtype), l), u
    return p, l, u


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR decomposition: ``(q, r)`` for ``mode`` ``"full"`` or ``"economic"``, ``(r,)`` for
    ``"r"``; with ``pivoting``, the int32 column permutation ``p`` follows
    (``a[..., p] == q @ r``)."""
    if lwork is not None:
        raise NotImplementedError("scipy.linalg.qr: the lwork argument is not supported")
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return _qr(a, mode, bool(pivoting))


@compiled_when_eager("mode", "pivoting")
def _qr(a, mode, pivoting):
    a = _matrix("qr", a, square=False)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=(mode != "economic"))
    if mode == "r":
        return (r, *p)
    return (q, r, *p)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Determinant of the square ``a``."""
    return jla.det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """Inverse of the square ``a``."""
    return jla.inv(a)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solve ``a @ x == b``; ``assume_a="pos"`` uses a Cholesky factorization (of the
    ``lower`` or upper triangle), ``"gen"``/``"sym"``/``"her"`` an LU factorization."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of 'gen', 'sym', 'her', 'pos', got "
                         f"{assume_a!r}")
    return _solve(a, b, bool(lower), assume_a == "pos")


@compiled_when_eager("lower", "pos")
def _solve(a, b, lower, pos):
    a = _matrix("solve", a)
    if not pos:
        return jla.solve(a, b)
    a, b = jla._inexact("solve", a, b)
    c = lax_linalg.cholesky(a if lower else jla._H(a), symmetrize_input=False)
    return cho_solve((c, True), b)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True, subset_by_index=None):
    """Eigenvalues (ascending) and eigenvectors of the Hermitian ``a``: ``(w, v)``, or ``w``
    when ``eigvals_only``."""
    if b is not None:
        raise NotImplementedError("scipy.linalg.eigh: the generalized problem (b) is not "
                                  "implemented")
    if eigvals is not None:
        raise NotImplementedError("scipy.linalg.eigh: eigvals is not supported; use "
                                  "subset_by_index")
    if type != 1:
        raise NotImplementedError("scipy.linalg.eigh: only type=1 is supported")
    if subset_by_index is not None:
        subset_by_index = (int(subset_by_index[0]), int(subset_by_index[1]) + 1)
    return _eigh(a, bool(lower), bool(eigvals_only), subset_by_index)


@compiled_when_eager("lower", "eigvals_only", "subset_by_index")
def _eigh(a, lower, eigvals_only, subset_by_index):
    a = _matrix("eigh", a)
    # symmetrized as JAX's (not SciPy's one-triangle read): JAX 0.10.2 gives [0, 2] for
    # [[1, 2], [0, 1]] with lower=True and with lower=False
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=True,
                           subset_by_index=subset_by_index)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """Singular value decomposition ``(u, s, vh)``, or ``s`` when ``compute_uv=False``.
    ``gesdd`` whatever ``lapack_driver`` says, as JAX 0.10.2 (whose results this matches);
    ``lax.linalg.svd(algorithm=SvdAlgorithm.QR)`` runs ``gesvd``."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    out = jla.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out
