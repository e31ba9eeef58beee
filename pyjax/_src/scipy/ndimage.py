"""``jax.scipy.ndimage.map_coordinates``: interpolation of an array at given coordinates
(orders 0 and 1, as JAX), with SciPy's boundary modes."""
from __future__ import annotations

import itertools
import operator

import pyjax.numpy as jnp


def _mirror(index, size):  # ... 2 1 | 0 1 2 ... n-1 | n-2 ...
    if size == 1:
        return jnp.zeros_like(index)
    period = 2 * (size - 1)
    i = jnp.mod(index, period)
    return jnp.where(i >= size, period - i, i)


def _reflect(index, size):  # ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...
    period = 2 * size
    i = jnp.mod(index, period)
    return jnp.where(i >= size, period - 1 - i, i)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: jnp.mod(index, size),
    "mirror": _mirror,
    "reflect": _reflect,
}


def _nearest(coordinate, size):
    index = jnp.floor(coordinate + 0.5).astype(jnp.int32)
    return [(index, 1.0)]


def _linear(coordinate, size):
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(jnp.int32)
    return [(index, 1.0 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002
    """The values of ``input`` at ``coordinates`` (a sequence of ``input.ndim`` arrays of one
    shape), by nearest-neighbour (``order=0``) or linear (``order=1``) interpolation."""
    input = jnp.asarray(input)  # noqa: A001
    coordinates = [jnp.asarray(c) for c in coordinates]
    if len(coordinates) != input.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input.ndim}")
    order = operator.index(order)
    if order not in (0, 1):
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires "
                                  f"order<=1, got order={order}")
    if mode not in _INDEX_FIXERS:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not support mode "
                                  f"{mode!r}; supported: {sorted(_INDEX_FIXERS)}")
    fix = _INDEX_FIXERS[mode]
    interp = _nearest if order == 0 else _linear
    dtype = jnp.result_type(input)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(float)
    coordinates = [jnp.asarray(c, dtype) for c in coordinates]
    cval = jnp.asarray(cval, dtype)
    per_axis = []
    for coordinate, size in zip(coordinates, input.shape):
        nodes = []
        for index, weight in interp(coordinate, size):
            fixed = fix(index, size)
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            nodes.append((jnp.clip(fixed, 0, size - 1), valid, weight))
        per_axis.append(nodes)
    out = 0.0
    for corner in itertools.product(*per_axis):
        indices = tuple(n[0] for n in corner)
        value = input[indices].astype(dtype)
        valids = [n[1] for n in corner if n[1] is not None]
        if valids:
            all_valid = valids[0]
            for v in valids[1:]:
                all_valid = all_valid & v
            value = jnp.where(all_valid, value, cval)
        weight = 1.0
        for n in corner:
            weight = weight * n[2]
        out = out + value * weight
    out = jnp.asarray(out, dtype)
    if jnp.issubdtype(input.dtype, jnp.integer):
        out = jnp.round(out).astype(input.dtype)
    return out
