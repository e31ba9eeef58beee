"""``rankdata``, ``mode`` and ``sem`` of ``jax.scipy.stats``."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.core import axes as axes_mod
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.transformations.vmap import vmap

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _along(fn, a, axis, name):
    """Apply the 1-D ``fn`` along ``axis`` (flattened for None) via vmap over the others."""
    if axis is None:
        return fn(jnp.ravel(a)), None
    axis = axes_mod.canonicalize_axis(axis, a.ndim, "axis", name)
    moved = jnp.moveaxis(a, axis, -1)
    f = fn
    for _ in range(moved.ndim - 1):
        f = vmap(f)
    return f(moved), axis


def _rank_1d(a, method):
    s = jnp.sort(a)
    lo = jnp.searchsorted(s, a, side="left")
    if method == "min":
        out = lo + 1
    elif method == "max":
        out = jnp.searchsorted(s, a, side="right")
    elif method == "average":
        out = 0.5 * (lo + 1 + jnp.searchsorted(s, a, side="right"))
    elif method == "dense":
        new = jnp.concatenate([jnp.ones((1,), bool), s[1:] != s[:-1]])
        out = jnp.cumsum(new)[lo]
    else:  # ordinal: ties broken by position
        out = jnp.argsort(jnp.argsort(a, stable=True), stable=True) + 1
    if method == "average":
        return jnp.where(jnp.any(jnp.isnan(a)), jnp.nan, out)
    return out


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data, ties resolved by ``method`` (SciPy's methods)."""
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if nan_policy != "propagate":
        raise NotImplementedError(f"nan_policy={nan_policy!r} of rankdata "
                                  "(only 'propagate' is supported, as JAX)")
    return _rankdata(a, method, axis)


@compiled_when_eager("method", "axis")
def _rankdata(a, method, axis):
    a = jnp.asarray(a)
    out, ax = _along(lambda v: _rank_1d(v, method), a, axis, "rankdata")
    return out if ax is None else jnp.moveaxis(out, -1, ax)


class ModeResult(NamedTuple):
    mode: object
    count: object


def _mode_1d(a):
    s = jnp.sort(a)
    counts = jnp.searchsorted(s, s, side="right") - jnp.searchsorted(s, s, side="left")
    i = jnp.argmax(counts)  # the first maximum: the smallest most frequent value
    return s[i], counts[i]


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along ``axis`` (the smallest among ties) and its count."""
    if nan_policy != "propagate":
        raise NotImplementedError(f"nan_policy={nan_policy!r} of mode (only 'propagate')")
    if np.size(a) == 0:
        raise ValueError("mode of an empty array is not defined")
    return _mode(a, axis, keepdims)


@compiled_when_eager("axis", "keepdims")
def _mode(a, axis, keepdims):
    a = jnp.asarray(a)
    (m, c), ax = _along(_mode_1d, a, axis, "mode")
    if keepdims:
        if ax is None:
            m, c = jnp.reshape(m, (1,) * a.ndim), jnp.reshape(c, (1,) * a.ndim)
        else:
            m, c = jnp.expand_dims(m, ax), jnp.expand_dims(c, ax)
    return ModeResult(m, c)


@compiled_when_eager("axis", "ddof", "nan_policy", "keepdims")
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: std(a, ddof) / sqrt(n) along ``axis``."""
    a = jnp.asarray(a)
    if nan_policy == "propagate":
        n = a.size if axis is None else a.shape[axis]
        return jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / float(np.sqrt(n))
    if nan_policy == "omit":
        n = jnp.sum(~jnp.isnan(a), axis=axis, keepdims=keepdims)
        return jnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(n)
    raise ValueError(f"nan_policy must be 'propagate' or 'omit', got {nan_policy!r}")
