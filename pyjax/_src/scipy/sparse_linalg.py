"""``jax.scipy.sparse.linalg``: iterative solvers ``cg``, ``bicgstab`` and ``gmres``.

Each is a ``lax.custom_linear_solve`` over a ``lax.while_loop``, so derivatives are those of the
exact solution (computed by running the solver again on the tangent or cotangent), not of the
iterations. ``A`` (and the preconditioner ``M``) may be a matrix or a linear function of a
pytree shaped like ``b``. As JAX, they return ``(x, None)``: no convergence info.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.control_flow.custom_solve import custom_linear_solve
from pyjax._src.control_flow.loops import fori_loop
from pyjax._src.control_flow.while_loop import while_loop
from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.flatten_util import ravel_pytree

__all__ = ["cg", "bicgstab", "gmres"]


# ---- vector arithmetic on pytrees ----

def _add(x, y):
    return pytree.tree_map(operator.add, x, y)


def _sub(x, y):
    return pytree.tree_map(operator.sub, x, y)


def _mul(a, x):
    return pytree.tree_map(lambda v: a * v, x)


def _vdot(x, y):
    """``sum(conj(x) * y)`` over every leaf."""
    parts = [jnp.sum(jnp.conj(a) * b) for a, b in zip(pytree.tree_leaves(x),
                                                      pytree.tree_leaves(y))]
    return functools.reduce(operator.add, parts)


def _vdot_real(x, y):
    return jnp.real(_vdot(x, y))


def _norm(x):
    return jnp.sqrt(_vdot_real(x, x))


def _as_operator(A, name):
    if callable(A):
        return A
    if hasattr(A, "shape") and hasattr(A, "dtype"):
        if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"{name} must be a square matrix or a linear function, got shape "
                             f"{tuple(A.shape)}")
        return lambda x: jnp.matmul(A, x)
    raise TypeError(f"{name} must be an array or a function, got {type(A).__name__}")


def _identity(x):
    return x


def _inexact(v):
    v = jnp.asarray(v)
    return v if dtypes.is_inexact(v.dtype) else v.astype(dtypes.canonicalize_dtype(np.float64))


def _check_inputs(name, b, x0):
    if not pytree.tree_leaves(b):
        raise ValueError(f"{name}: b must hold at least one array, got {b!r}")
    b = pytree.tree_map(_inexact, b)
    if x0 is None:
        x0 = pytree.tree_map(jnp.zeros_like, b)
    else:
        x0 = pytree.tree_map(_inexact, x0)
        if pytree.tree_structure(x0) != pytree.tree_structure(b):
            raise ValueError(f"x0 and b must have matching tree structure: "
                             f"{pytree.tree_structure(x0)} vs {pytree.tree_structure(b)}")
        for u, v in zip(pytree.tree_leaves(x0), pytree.tree_leaves(b)):
            if u.shape != v.shape:
                raise ValueError(f"arrays in x0 and b must have matching shapes: {u.shape} vs "
                                 f"{v.shape}")
    return b, x0


def _size(b):
    return sum(int(np.prod(v.shape)) for v in pytree.tree_leaves(b))


def _threshold(b, tol, atol):
    bs = _vdot_real(b, b)
    return jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))


# ---- conjugate gradients ----

def _cg_solve(A, b, x0, *, tol, atol, maxiter, M):
    atol2 = _threshold(b, tol, atol)
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    p0 = z0
    gamma0 = _vdot_real(r0, z0).astype(pytree.tree_leaves(b)[0].dtype)

    def cond_fun(state):
        _, r, _, _, k = state
        return (_vdot_real(r, r) > atol2) & (k < maxiter)

    def body_fun(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / _vdot(p, ap).astype(gamma.dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, ap))
        z = M(r)
        gamma_new = _vdot_real(r, z).astype(gamma.dtype)
        beta = gamma_new / gamma
        p = _add(z, _mul(beta, p))
        return x, r, gamma_new, p, k + 1

    x, *_ = while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, np.int32(0)))
    return x


def _isolve(solve_fun, A, b, x0, tol, atol, maxiter, M, symmetric, name):
    b, x0 = _check_inputs(name, b, x0)
    A = _as_operator(A, "A")
    M = _identity if M is None else _as_operator(M, "M")
    if maxiter is None:
        maxiter = 10 * _size(b)
    solve = functools.partial(solve_fun, x0=x0, tol=tol, atol=atol, maxiter=int(maxiter), M=M)
    # the transposed system uses the same method (with the same preconditioner)
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` with the conjugate gradient method, for Hermitian positive definite
    ``A`` (a matrix or a linear function). Stops when ``|A x - b| <= max(tol |b|, atol)`` or
    after ``maxiter`` iterations (default ``10 * size(b)``). Returns ``(x, None)``; derivatives
    are those of the exact solution (``lax.custom_linear_solve``)."""
    return _isolve(_cg_solve, A, b, x0, tol, atol, maxiter, M, True, "cg")


# ---- BiCGSTAB ----

def _bicgstab_solve(A, b, x0, *, tol, atol, maxiter, M):
    atol2 = _threshold(b, tol, atol)
    dt = pytree.tree_leaves(b)[0].dtype
    r0 = _sub(b, A(x0))
    one = jnp.ones((), dt)

    def cond_fun(state):
        x, r, *_, k = state
        rs = _vdot_real(r, r)
        # k < 0 flags a breakdown (rho or omega exactly zero), as SciPy's info < 0
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _vdot(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _vdot(rhat, q)
        s = _sub(r, _mul(alpha, q))
        exit_early = _vdot_real(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot(t, s) / _vdot(t, t)
        x_new = _add(x, _add(_mul(alpha, phat), _mul(omega, shat)))
        x = pytree.tree_map(lambda u, v: jnp.where(exit_early, u, v),
                            _add(x, _mul(alpha, phat)), x_new)
        r = pytree.tree_map(lambda u, v: jnp.where(exit_early, u, v), s,
                            _sub(s, _mul(omega, t)))
        broke = (rho_new == 0) | ((omega == 0) & ~exit_early)
        k = jnp.where(broke, np.int32(-10), k + 1)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    zeros = pytree.tree_map(jnp.zeros_like, b)
    state = (x0, r0, r0, one, one, one, zeros, zeros, np.int32(0))
    return while_loop(cond_fun, body_fun, state)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` with the stabilized biconjugate gradient method (any nonsingular
    ``A``, a matrix or a linear function). Stops when ``|A x - b| <= max(tol |b|, atol)``, on a
    breakdown, or after ``maxiter`` iterations (default ``10 * size(b)``). Returns
    ``(x, None)``; derivatives are those of the exact solution."""
    return _isolve(_bicgstab_solve, A, b, x0, tol, atol, maxiter, M, False, "bicgstab")


# ---- restarted GMRES ----

def _least_squares(h, rhs):
    """``argmin |h y - rhs|`` for the ``(k+1) x k`` Hessenberg ``h`` by Householder QR. After a
    breakdown the trailing columns of ``h`` are zero (so are the basis vectors they multiply):
    their zero pivots are replaced by ones, which leaves the other entries of ``y`` exact."""
    from pyjax._src.lax import linalg as lax_linalg
    q, r = lax_linalg.qr(h, full_matrices=False)
    d = jnp.diagonal(r)
    tiny = jnp.abs(d) <= jnp.finfo(r.dtype).eps * jnp.max(jnp.abs(r))
    r = r + jnp.diag(jnp.where(tiny, 1 - d, 0).astype(r.dtype))
    qr_rhs = jnp.matmul(jnp.conj(q.T), rhs)
    return lax_linalg.triangular_solve(r, qr_rhs[:, None], left_side=True, lower=False)[:, 0]


def _gmres_solve(A, b, x0, *, tol, atol, maxiter, M, restart):
    b_flat, unravel = ravel_pytree(b)
    dt = b_flat.dtype
    n = b_flat.shape[0]
    k = min(restart, n)

    def op(v):  # the preconditioned operator on flat vectors: M(A(v))
        return ravel_pytree(M(A(unravel(v))))[0]

    def residual(x):
        return ravel_pytree(M(_sub(b, A(unravel(x)))))[0]

    bnorm = jnp.linalg.norm(ravel_pytree(M(b))[0])
    thresh = jnp.maximum(tol * bnorm, atol)
    eye = jnp.eye(k + 1, dtype=dt)

    def arnoldi(j, state):
        V, H = state
        w = op(V[:, j])
        # modified Gram-Schmidt twice over the basis so far (columns past j are zero)
        for _ in range(2):
            h = jnp.matmul(jnp.conj(V.T), w)
            w = w - jnp.matmul(V, h)
            H = H.at[:, j].add(h)
        wn = jnp.linalg.norm(w)
        H = H.at[j + 1, j].set(wn.astype(dt))
        safe = jnp.where(wn > 0, wn, 1).astype(dt)
        V = V.at[:, j + 1].set(jnp.where(wn > 0, w / safe, jnp.zeros_like(w)))
        return V, H

    def cycle(state):
        x, r, rnorm, it = state
        V = jnp.zeros((n, k + 1), dt).at[:, 0].set(r / rnorm.astype(dt))
        H = jnp.zeros((k + 1, k), dt)
        V, H = fori_loop(0, k, arnoldi, (V, H))
        rhs = rnorm.astype(dt) * eye[:, 0]
        y = _least_squares(H, rhs)
        x = x + jnp.matmul(V[:, :k], y)
        r = residual(x)
        return x, r, jnp.linalg.norm(r), it + 1

    def cond_fun(state):
        _, _, rnorm, it = state
        return (rnorm > thresh) & (it < maxiter)

    x0f = ravel_pytree(x0)[0]
    r0 = residual(x0f)
    x, *_ = while_loop(cond_fun, cycle, (x0f, r0, jnp.linalg.norm(r0), np.int32(0)))
    return unravel(x)


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve ``A x = b`` with restarted GMRES: Krylov spaces of size ``restart`` (Arnoldi with
    re-orthogonalized Gram-Schmidt, least squares by Householder QR), rebuilt from the last solution
    up to ``maxiter`` times (default ``10 * size(b)``: pyjax bounds it, JAX does not) until the
    preconditioned residual ``|M (b - A x)| <= max(tol |M b|, atol)``. Returns ``(x, None)``;
    derivatives are those of the exact solution. ``solve_method`` ``'batched'`` and
    ``'incremental'`` give the same solution here."""
    if solve_method not in ("batched", "incremental"):
        raise ValueError(f"invalid solve_method {solve_method!r}, must be either 'incremental' "
                         "or 'batched'")
    if int(restart) < 1:
        raise ValueError(f"gmres: restart must be a positive integer, got {restart!r}")
    solve = functools.partial(_gmres_solve, restart=int(restart))
    return _isolve(solve, A, b, x0, tol, atol, maxiter, M, False, "gmres")

