"""The ``rbg`` and ``unsafe_rbg`` PRNG implementations: keys are ``uint32[4]``, random bits come
from XLA's ``rng_bit_generator`` (``lax.rng_bit_generator``, the backend's default algorithm).

As JAX documents them:

* seed: the Threefry key data of the seed, twice (``key(7)`` has data ``[0, 7, 0, 7]``);
* random bits: ``rng_bit_generator(key, shape, uint<bit_width>)``'s bits (both implementations);
* ``rbg`` splits and folds in with Threefry, on each half of the key separately;
* ``unsafe_rbg`` splits by drawing ``10 * n`` rows of 4 words with the key and keeping every
  10th row, and folds ``d`` in as ``key ^ (the last of 10 rows drawn with the seed key of d)``:
  cheaper, without Threefry's guarantees.

JAX warns that these streams may differ between backends and versions. Key data here carries
batch dimensions (``uint32[*batch, 4]``); the bit generator takes one key, so batches are
mapped with ``vmap`` (whose rule for ``rng_bit_generator`` draws per key).
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import rng as lax_rng
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of
from pyjax._src.random import prng
from pyjax._src.transformations.vmap import vmap

_U32 = np.dtype(np.uint32)


def _per_key(fn, kd, *more):
    """``fn(key, *more)`` for each ``uint32[4]`` key of ``kd`` (and the matching elements of
    ``more``, which have the key batch shape)."""
    for _ in range(len(aval_of(kd).shape) - 1):
        fn = vmap(fn)
    return fn(kd, *more)


def _halves(kd):
    nb = len(aval_of(kd).shape) - 1
    return (shape_ops.slice_in_dim(kd, 0, 2, axis=nb), shape_ops.slice_in_dim(kd, 2, 4, axis=nb))


def seed_data(threefry_data):
    """rbg key data from Threefry key data ``uint32[..., 2]``: the two words twice."""
    nb = len(np.shape(threefry_data)) - 1
    if isinstance(threefry_data, np.ndarray):
        return np.concatenate([threefry_data, threefry_data], axis=nb)
    return shape_ops.concatenate([threefry_data, threefry_data], nb)


def random_bits_data(kd, bit_width, shape):
    dtype = prng.UINT_DTYPES[bit_width]
    full = tuple(aval_of(kd).shape[:-1]) + tuple(shape)
    if math.prod(full) == 0:
        return shape_ops.full(full, dtype.type(0), dtype)
    return _per_key(lambda k: lax_rng.rng_bit_generator(k, tuple(shape), dtype)[1], kd)


def split_data(kd, shape, unsafe):
    batch = tuple(aval_of(kd).shape[:-1])
    if math.prod(shape) == 0:
        return shape_ops.full(batch + tuple(shape) + (4,), np.uint32(0), _U32)
    if not unsafe:
        lo, hi = _halves(kd)
        return shape_ops.concatenate([prng.split_data(lo, shape), prng.split_data(hi, shape)],
                                     len(batch) + len(shape))
    n = math.prod(shape)

    def one(k):
        rows = lax_rng.rng_bit_generator(k, (10 * n, 4), _U32)[1]
        return shape_ops.reshape(shape_ops.slice_in_dim(rows, 0, 10 * n, 10, axis=0),
                                 tuple(shape) + (4,))
    return _per_key(one, kd)


def fold_in_data(kd, data, unsafe):
    batch = tuple(aval_of(kd).shape[:-1])
    if tuple(aval_of(data).shape) != batch:
        data = shape_ops.broadcast_in_dim(data, batch, ())
    if not unsafe:
        lo, hi = _halves(kd)
        return shape_ops.concatenate([prng.fold_in_data(lo, data), prng.fold_in_data(hi, data)],
                                     len(batch))

    def one(k, d):
        seed = seed_data(shape_ops.concatenate(
            [shape_ops.full((1,), np.uint32(0), _U32), shape_ops.reshape(d, (1,))], 0))
        last = shape_ops.index_in_dim(lax_rng.rng_bit_generator(seed, (10, 4), _U32)[1], 9, 0,
                                      False)
        return lax.bitwise_xor(k, last)
    return _per_key(one, kd, data)
