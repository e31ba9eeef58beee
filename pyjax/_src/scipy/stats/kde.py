"""``gaussian_kde`` of ``jax.scipy.stats``: a Gaussian kernel density estimate (Scott's or
Silverman's bandwidth, optional weights), evaluated and resampled with jnp."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.core import pytree
from pyjax._src.scipy import special as sp
from pyjax._src.scipy.stats.multivariate import _cholesky, _solve_lower
from pyjax._src.transformations.jit import jit


class gaussian_kde:
    """``gaussian_kde(dataset, bw_method=None, weights=None)``: dataset of shape (d, n) (or
    (n,) for d = 1); ``bw_method`` None/'scott', 'silverman', a scalar or a callable."""

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if not dtypes_is_inexact(dataset.dtype):
            dataset = dataset.astype(jnp.result_type(float))
        d, n = dataset.shape
        if n <= 1:
            raise ValueError("`dataset` input should have multiple elements.")
        if weights is not None:
            weights = jnp.atleast_1d(jnp.asarray(weights, dataset.dtype))
            if weights.ndim != 1 or weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
            weights = weights / jnp.sum(weights)
        else:
            weights = jnp.full((n,), 1.0 / n, dataset.dtype)
        self.dataset, self.weights = dataset, weights
        self.d, self.n = d, n
        self.neff = 1.0 / jnp.sum(weights ** 2)
        if bw_method is None or bw_method == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif np.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar or a "
                             f"callable, got {bw_method!r}")
        self.factor = factor
        mean = jnp.sum(dataset * weights, axis=1)
        dev = dataset - mean[:, None]
        data_cov = (dev * weights) @ dev.T / (1 - jnp.sum(weights ** 2))
        self.covariance = data_cov * factor ** 2
        self._chol = _cholesky(self.covariance)
        eye = jnp.eye(d, dtype=dataset.dtype)
        linv = _solve_lower(self._chol, eye.T).T  # rows: L^-1 e_i -> columns of L^-1
        self.inv_cov = linv.T @ linv

    def _log_kernels(self, points):
        points = jnp.atleast_2d(jnp.asarray(points, self.dataset.dtype))
        if points.shape[0] != self.d:
            if points.shape == (1, self.d):
                points = points.T
            else:
                raise ValueError(f"points have dimension {points.shape[0]}, dataset has "
                                 f"dimension {self.d}")
        diff = self.dataset[:, :, None] - points[:, None, :]  # (d, n, m)
        L = self._chol
        z = _solve_lower(L, jnp.moveaxis(diff, 0, -1))  # (n, m, d)
        log_det = jnp.sum(jnp.log(jnp.diagonal(L)))
        return (-0.5 * jnp.sum(z * z, axis=-1) - log_det
                - 0.5 * self.d * float(np.log(2 * np.pi)))  # (n, m)

    def evaluate(self, points):
        """The density at ``points`` (shape (d, m))."""
        return _evaluate(self, points)

    __call__ = pdf = evaluate

    def logpdf(self, points):
        """log of the density at ``points``."""
        return _logpdf(self, points)

    def integrate_box_1d(self, low, high):
        """The mass between ``low`` and ``high`` (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        sd = jnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sd
        hi = (high - self.dataset[0]) / sd
        return jnp.sum(self.weights * (sp.ndtr(hi) - sp.ndtr(lo)))

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian N(mean, cov)."""
        return _integrate_gaussian(self, mean, cov)

    def _integrate_gaussian(self, mean, cov):
        mean = jnp.atleast_1d(jnp.asarray(mean, self.dataset.dtype))
        cov = jnp.atleast_2d(jnp.asarray(cov, self.dataset.dtype))
        if mean.shape != (self.d,) or cov.shape != (self.d, self.d):
            raise ValueError(f"mean and cov must have shapes ({self.d},) and "
                             f"({self.d}, {self.d})")
        L = _cholesky(self.covariance + cov)
        diff = self.dataset - mean[:, None]
        z = _solve_lower(L, diff.T)
        log_det = jnp.sum(jnp.log(jnp.diagonal(L)))
        dens = jnp.exp(-0.5 * jnp.sum(z * z, axis=-1) - log_det
                       - 0.5 * self.d * float(np.log(2 * np.pi)))
        return jnp.sum(dens * self.weights)

    def resample(self, key, shape=()):
        """Draws of shape ``shape + (d,)`` transposed to (d,) + shape, as JAX."""
        import pyjax.random as random
        shape = tuple(shape)
        k1, k2 = random.split(key)
        idx = random.choice(k1, self.n, shape=shape, p=self.weights)
        eps = random.normal(k2, shape + (self.d,), self.dataset.dtype) @ self._chol.T
        return self.dataset[:, idx] + jnp.moveaxis(eps, -1, 0)

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not supported "
                                  "(as JAX)")

    def integrate_kde(self, other):
        raise NotImplementedError("gaussian_kde.integrate_kde")

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("gaussian_kde.integrate_box (as JAX)")


# compiled once per (d, n, points shape): the methods are many small ops
@jit
def _evaluate(kde, points):
    return jnp.sum(jnp.exp(kde._log_kernels(points)) * kde.weights[:, None], axis=0)


@jit
def _logpdf(kde, points):
    return sp.logsumexp(kde._log_kernels(points), axis=0, b=kde.weights[:, None])


@jit
def _integrate_gaussian(kde, mean, cov):
    return kde._integrate_gaussian(mean, cov)


def dtypes_is_inexact(dt):
    return np.issubdtype(np.dtype(dt), np.inexact)


_FIELDS = ("dataset", "weights", "covariance", "inv_cov", "_chol", "neff", "factor")


def _unflatten(aux, children):
    kde = object.__new__(gaussian_kde)
    kde.d, kde.n = aux
    for name, value in zip(_FIELDS, children):
        setattr(kde, name, value)
    return kde


# a pytree (as JAX's): it can be passed through jit and vmap
pytree.register_pytree_node(
    gaussian_kde, lambda k: (tuple(getattr(k, f) for f in _FIELDS), (k.d, k.n)), _unflatten)
