"""``multivariate_normal`` and ``dirichlet`` of ``jax.scipy.stats``."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.lax import linalg as lax_linalg
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.scipy import special as sp


def _cholesky(a):
    """Lower Cholesky factor of the trailing (d, d) matrices of the symmetrized ``a``: as JAX,
    so a covariance's gradient is symmetric."""
    return jnp.linalg.cholesky(a)


def _solve_lower(L, b):
    """L^-1 b for lower-triangular L (..., d, d) and vectors b (..., d), batches broadcast."""
    d = L.shape[-1]
    if L.ndim == 2:  # one factor: every vector of b as a column of one solve
        cols = jnp.reshape(b, (-1, d)).T
        return jnp.reshape(lax_linalg.triangular_solve(L, cols, left_side=True, lower=True).T,
                           b.shape)
    shape = jnp.broadcast_shapes(L.shape[:-2], b.shape[:-1])
    L = jnp.broadcast_to(L, shape + (d, d))
    b = jnp.broadcast_to(b, shape + (d,))
    return lax_linalg.triangular_solve(L, b[..., None], left_side=True, lower=True)[..., 0]


class multivariate_normal:
    @staticmethod
    def logpdf(x, mean, cov, allow_singular=None):
        if allow_singular is not None:
            raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
        x, mean, cov = (jnp.asarray(v) for v in promote_dtypes_inexact(x, mean, cov))
        if mean.ndim == 0:  # scalar mean and variance: the one-dimensional normal
            if cov.ndim:
                raise ValueError("multivariate_normal.logpdf got incompatible shapes: a scalar "
                                 f"mean with cov of shape {cov.shape}")
            y = (x - mean)
            return -0.5 * y * y / cov - 0.5 * (float(np.log(2 * np.pi)) + jnp.log(cov))
        d = mean.shape[-1]
        if cov.ndim < 2:  # scalar or diagonal (JAX's reading of a vector cov: its diagonal)
            var = jnp.broadcast_to(cov, (d,)) if cov.ndim == 0 else cov
            y = x - mean
            return (-0.5 * jnp.sum(y * y / var, axis=-1)
                    - 0.5 * (d * float(np.log(2 * np.pi)) + jnp.sum(jnp.log(var), axis=-1)))
        if cov.shape[-2:] != (d, d):
            raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean "
                             f"{mean.shape}, cov {cov.shape}")
        L = _cholesky(cov)
        y = x - mean
        z = _solve_lower(L, y)
        log_det = jnp.sum(jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1)
        return -0.5 * jnp.sum(z * z, axis=-1) - log_det - 0.5 * d * float(np.log(2 * np.pi))

    @staticmethod
    def pdf(x, mean, cov):
        return jnp.exp(multivariate_normal.logpdf(x, mean, cov))


class dirichlet:
    @staticmethod
    def logpdf(x, alpha):
        x, alpha = (jnp.asarray(v) for v in promote_dtypes_inexact(x, alpha))
        if alpha.ndim != 1:
            raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
        if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
            raise ValueError("`x` must have either the same number of entries as `alpha` or "
                             f"one entry fewer; got x.shape={x.shape}, "
                             f"alpha.shape={alpha.shape}")
        if x.shape[0] != alpha.shape[0]:
            x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
        a = alpha.reshape((-1,) + (1,) * (x.ndim - 1))
        norm = jnp.sum(sp.gammaln(alpha)) - sp.gammaln(jnp.sum(alpha))
        out = jnp.sum(sp.xlogy(a - 1, x), axis=0) - norm
        inside = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
        return jnp.where(inside, out, -jnp.inf)

    @staticmethod
    def pdf(x, alpha):
        return jnp.exp(dirichlet.logpdf(x, alpha))
