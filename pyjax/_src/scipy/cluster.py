"""``jax.scipy.cluster.vq.vq``: assign observations to their nearest code."""
from __future__ import annotations

import pyjax.numpy as jnp
from pyjax._src.core import trace as core_trace
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import promote_dtypes_inexact


def vq(obs, code_book, check_finite=True):
    """(codes, distances): the index of the nearest row of ``code_book`` for each row of
    ``obs`` (1-D: scalars) and the Euclidean distance to it. ``check_finite`` checks concrete
    inputs, as SciPy (traced ones cannot be checked on the host)."""
    obs, code_book = (jnp.asarray(v) for v in promote_dtypes_inexact(obs, code_book))
    if check_finite:
        for v in (obs, code_book):
            if not isinstance(v, core_trace.Tracer) and not bool(jnp.all(jnp.isfinite(v))):
                raise ValueError("array must not contain infs or NaNs")
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim not in (1, 2):
        raise ValueError(f"vq: obs must be 1-D or 2-D, got shape {obs.shape}")
    if obs.ndim == 2 and obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: obs has {obs.shape[1]} features, code_book "
                         f"{code_book.shape[1]}")
    return _vq(obs, code_book)


@compiled_when_eager()
def _vq(obs, code_book):
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    d2 = jnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1)
    codes = jnp.argmin(d2, axis=1)
    dist = jnp.sqrt(jnp.take_along_axis(d2, codes[:, None], axis=1)[:, 0])
    return codes, dist
