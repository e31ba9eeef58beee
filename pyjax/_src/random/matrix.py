"""Matrix-valued samplers: ``multivariate_normal`` and ``orthogonal``.

pyjax has no ``linalg`` module yet, so the factorizations they need are written here with
unrolled ``jnp`` ops over batched matrices: Cholesky (column by column), Householder QR and a
cyclic Jacobi eigensolver. They unroll ``n`` (Cholesky, QR) or ``sweeps * n(n-1)/2`` (Jacobi)
steps, which suits the small matrices these samplers meet; a ``jnp.linalg`` can replace them.
"""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.transformations.jit import jit
from pyjax._src.lax.base import aval_of
from pyjax._src.numpy import creation as jcr
from pyjax._src.numpy import products as jpr
from pyjax._src.numpy import reductions as jred
from pyjax._src.numpy import shape as jshape
from pyjax._src.numpy import ufuncs as jnp
from pyjax._src.random.distributions import (
    broadcast_shapes, canonical_shape, check_arraylike, check_shape, float_dtype, normal_core)
from pyjax._src.random.prng import check_key

JACOBI_SWEEPS = 8  # cyclic Jacobi converges quadratically: 8 sweeps reach float precision


def _col(a, k):
    return a[..., :, k]


def cholesky(a):
    """Lower Cholesky factor of the (batched) symmetric positive definite ``a``."""
    n = aval_of(a).shape[-1]
    cols = []
    for j in range(n):
        v = _col(a, j)
        for k, c in enumerate(cols):
            v = jnp.subtract(v, jnp.multiply(c, c[..., j:j + 1]))
        d = jnp.sqrt(v[..., j:j + 1])
        mask = np.arange(n) >= j
        cols.append(jnp.where(mask, jnp.divide(v, d), 0))
    return jshape.stack(cols, axis=-1)


def qr(a):
    """Householder QR of the (batched) square matrix ``a``: ``q @ r == a`` with ``q``
    orthogonal (unitary) and ``r`` upper triangular."""
    n = aval_of(a).shape[-1]
    dtype = aval_of(a).dtype
    r = a
    q = jshape.broadcast_to(jcr.eye(n, dtype=dtype), tuple(aval_of(a).shape))
    for k in range(n - 1):
        mask = np.arange(n) >= k
        e_k = (np.arange(n) == k).astype(dtype)
        x = jnp.where(mask, _col(r, k), 0)
        xk = x[..., k:k + 1]
        absxk = jnp.abs(xk)
        phase = jnp.where(absxk == 0, np.ones((), dtype),
                          jnp.divide(xk, jnp.where(absxk == 0, 1, absxk).astype(dtype)))
        normx = jnp.sqrt(jred.sum(jnp.real(jnp.multiply(x, jnp.conj(x))), axis=-1,
                                  keepdims=True))
        v = jnp.add(x, jnp.multiply(jnp.multiply(phase, normx.astype(dtype)), e_k))
        vnorm2 = jred.sum(jnp.real(jnp.multiply(v, jnp.conj(v))), axis=-1, keepdims=True)
        tau = jnp.where(vnorm2 == 0, 0, jnp.divide(2, jnp.where(vnorm2 == 0, 1, vnorm2)))
        tau = tau.astype(dtype)
        vh = jnp.conj(v)
        # r <- (I - tau v v^H) r ; q <- q (I - tau v v^H)
        vh_r = jpr.matmul(vh[..., None, :], r)                 # (..., 1, n)
        r = jnp.subtract(r, jnp.multiply(jnp.multiply(tau[..., None], v[..., :, None]), vh_r))
        q_v = jpr.matmul(q, v[..., :, None])                   # (..., n, 1)
        q = jnp.subtract(q, jnp.multiply(jnp.multiply(tau[..., None], q_v), vh[..., None, :]))
    return q, r


def eigh(a, sweeps=JACOBI_SWEEPS):
    """Eigenvalues ``w`` and eigenvectors ``v`` (columns) of the (batched) real symmetric
    ``a`` by cyclic Jacobi rotations: ``a @ v == v * w``."""
    n = aval_of(a).shape[-1]
    dtype = aval_of(a).dtype
    v = jshape.broadcast_to(jcr.eye(n, dtype=dtype), tuple(aval_of(a).shape))
    eye = np.eye(n, dtype=dtype)
    for _ in range(sweeps):
        for p in range(n - 1):
            for q_ in range(p + 1, n):
                app, aqq, apq = a[..., p, p], a[..., q_, q_], a[..., p, q_]
                zero = apq == 0
                safe = jnp.where(zero, 1, apq)
                theta = jnp.divide(jnp.subtract(aqq, app), jnp.multiply(2, safe))
                t = jnp.divide(jnp.where(theta >= 0, 1, -1).astype(dtype),
                               jnp.add(jnp.abs(theta), jnp.sqrt(jnp.add(
                                   jnp.multiply(theta, theta), 1))))
                t = jnp.where(zero, 0, t).astype(dtype)
                c = jnp.divide(1, jnp.sqrt(jnp.add(jnp.multiply(t, t), 1))).astype(dtype)
                s = jnp.multiply(t, c)
                # the rotation J: identity except J[p,p]=J[q,q]=c, J[p,q]=s, J[q,p]=-s
                pp = eye[:, [p]] * eye[[p], :] + eye[:, [q_]] * eye[[q_], :]
                pq = eye[:, [p]] * eye[[q_], :]
                qp = eye[:, [q_]] * eye[[p], :]
                c_, s_ = c[..., None, None], s[..., None, None]
                rot = jnp.add(jnp.add(eye - pp, jnp.multiply(c_, pp)),
                              jnp.multiply(s_, pq - qp))
                a = jpr.matmul(jpr.matmul(jshape.swapaxes(rot, -1, -2), a), rot)
                v = jpr.matmul(v, rot)
    w = jpr.diagonal(a, 0, -2, -1)
    return w, v


# ---------------------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------------------

@functools.partial(jit, static_argnums=(1, 2, 3))
def _multivariate_normal_jit(kd, shape, dtype, method, mean, cov):
    n = aval_of(mean).shape[-1]
    if method == "cholesky":
        factor = cholesky(cov)
    else:  # "eigh" or "svd": cov = v diag(w) v^T, both give v * sqrt(w)
        w, v = eigh(cov)
        factor = jnp.multiply(v, jnp.sqrt(jnp.maximum(w, 0))[..., None, :])
    z = normal_core(kd, tuple(shape) + (n,), dtype)
    return jnp.add(mean, jpr.matmul(factor, z[..., :, None])[..., 0])


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Sample multivariate normal vectors with mean ``mean`` (``(..., n)``) and covariance
    ``cov`` (``(..., n, n)``): ``mean + factor @ z`` with ``factor`` from ``method``
    (``"cholesky"``; ``"eigh"``/``"svd"`` also handle singular covariances)."""
    kd, _ = check_key("multivariate_normal", key)
    check_arraylike("multivariate_normal", mean, cov)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean = jcr.asarray(mean)
    cov = jcr.asarray(cov)
    common = dtypes.result_type(mean, cov)
    if not dtypes.issubdtype(common, np.inexact):
        common = dtypes.canonicalize_dtype(float)
    mean, cov = mean.astype(common), cov.astype(common)
    dtype = float_dtype("multivariate_normal", common if dtype is None else dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = canonical_shape("multivariate_normal", shape)
        check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2],
                    names=("mean[..., 0]", "cov[..., 0, 0]"))
    return _multivariate_normal_jit(kd, shape, dtype, method, mean, cov)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _orthogonal_jit(kd, n, shape, dtype):
    z = normal_core(kd, tuple(shape) + (n, n), dtype)
    q, r = qr(z)
    d = jpr.diagonal(r, 0, -2, -1)
    absd = jnp.abs(d).astype(dtype)
    return jnp.multiply(q, jnp.divide(d, absd)[..., None, :])


def orthogonal(key, n, shape=(), dtype=float):
    """Sample ``n x n`` matrices uniformly (Haar) from the orthogonal group O(n), or from the
    unitary group U(n) for a complex ``dtype`` (Mezzadri 2007: QR of a Gaussian matrix with
    the signs of ``diag(r)`` folded into ``q``)."""
    shape = canonical_shape("orthogonal", shape)
    kd, _ = check_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype, allow_complex=True)
    n = canonical_shape("orthogonal", (n,), "n")[0]
    return _orthogonal_jit(kd, n, shape, dtype)


__all__ = ["multivariate_normal", "orthogonal"]
