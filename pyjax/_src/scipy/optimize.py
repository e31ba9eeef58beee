"""``jax.scipy.optimize.minimize`` with BFGS: a ``lax.while_loop`` over BFGS steps with a
backtracking (Armijo) line search, so it runs under ``jit`` and ``vmap``."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.control_flow.while_loop import while_loop
from pyjax._src.transformations.grad import value_and_grad


class OptimizeResults(NamedTuple):
    """The result of ``minimize``: as JAX's (status 0 converged, 1 out of iterations, 3 the
    line search found no decrease)."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize ``fun(x, *args)`` over the 1-D array ``x`` starting at ``x0``."""
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    options = dict(options or {})
    unknown = set(options) - set(_OPTIONS)
    if unknown:
        raise NotImplementedError(f"minimize options {sorted(unknown)} (supported: "
                                  f"{list(_OPTIONS)})")
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"x0 must be one-dimensional, got shape {x0.shape}")
    if not jnp.issubdtype(x0.dtype, jnp.inexact):
        x0 = x0.astype(jnp.result_type(float))
    gtol = options.get("gtol", 1e-5 if tol is None else tol)
    maxiter = options.get("maxiter", None)
    maxiter = x0.shape[0] * 200 if maxiter is None else maxiter
    order = options.get("norm", np.inf)
    ls_maxiter = options.get("line_search_maxiter", 10)
    return _bfgs(lambda x: fun(x, *args), x0, gtol, maxiter, order, ls_maxiter)


def _norm(g, order):
    if order == np.inf:
        return jnp.max(jnp.abs(g))
    if order == -np.inf:
        return jnp.min(jnp.abs(g))
    return jnp.sum(jnp.abs(g) ** order) ** (1.0 / order)


def _bfgs(f, x0, gtol, maxiter, order, ls_maxiter):
    vg = value_and_grad(f)
    dtype = x0.dtype
    n = x0.shape[0]
    f0, g0 = vg(x0)
    eye = jnp.eye(n, dtype=dtype)

    def line_search(x, fx, gx, p):
        slope = jnp.dot(gx, p)

        def cond(s):
            i, alpha, x_new, f_new, g_new, ok = s
            return (~ok) & (i < 2 * ls_maxiter + 10)

        def body(s):
            i, alpha, _, _, _, _ = s
            alpha = jnp.where(i == 0, alpha, alpha * 0.5)
            x_new = x + alpha * p
            f_new, g_new = vg(x_new)
            ok = jnp.isfinite(f_new) & (f_new <= fx + 1e-4 * alpha * slope)
            return i + 1, alpha, x_new, f_new, g_new, ok

        init = (jnp.asarray(0), jnp.asarray(1.0, dtype), x, fx, gx, jnp.asarray(False))
        i, alpha, x_new, f_new, g_new, ok = while_loop(cond, body, init)
        return ok, x_new, f_new, g_new, i

    def cond(s):
        k, x, fx, gx, H, status, nfev = s
        return (status < 0) & (k < maxiter)

    def body(s):
        k, x, fx, gx, H, status, nfev = s
        p = -(H @ gx)
        ok, x_new, f_new, g_new, evals = line_search(x, fx, gx, p)
        sk = x_new - x
        yk = g_new - gx
        rho_inv = jnp.dot(yk, sk)
        curvature_ok = rho_inv > 0
        rho = 1.0 / jnp.where(curvature_ok, rho_inv, 1.0)
        A = eye - rho * sk[:, None] * yk[None, :]
        H_new = A @ H @ A.T + rho * sk[:, None] * sk[None, :]
        H_new = jnp.where(curvature_ok, H_new, H)
        converged = _norm(g_new, order) < gtol
        status_new = jnp.where(~ok, 3, jnp.where(converged, 0, -1))
        x_new = jnp.where(ok, x_new, x)
        f_new = jnp.where(ok, f_new, fx)
        g_new = jnp.where(ok, g_new, gx)
        return k + 1, x_new, f_new, g_new, H_new, status_new, nfev + evals

    status0 = jnp.where(_norm(g0, order) < gtol, 0, -1)
    init = (jnp.asarray(0), x0, f0, g0, eye, status0, jnp.asarray(1))
    k, x, fx, gx, H, status, nfev = while_loop(cond, body, init)
    status = jnp.where(status < 0, 1, status)
    return OptimizeResults(x=x, success=status == 0, status=status, fun=fx, jac=gx,
                           hess_inv=H, nfev=nfev, njev=nfev, nit=k)
