"""``lax.rng_bit_generator``: XLA's stateless bit generator (``stablehlo.rng_bit_generator``).

The key is ``uint32[4]`` (XLA's ``u64[2]`` state, bitcast in the lowering as JAX does, so it
works with 64-bit types off); the result is the next key and bits of ``shape``. 8- and 16-bit
outputs are drawn as 32-bit words and converted, as JAX lowers them."""
from __future__ import annotations

import enum

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of

__all__ = ["RandomAlgorithm", "rng_bit_generator"]

_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)
_OUT_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), _U32, _U64)


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of ``rng_bit_generator`` (XLA's ``RandomAlgorithm``)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_ALGORITHM_ATTR = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
                   RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
                   RandomAlgorithm.RNG_PHILOX: "PHILOX"}


def _abstract_eval(key, *, shape, dtype, algorithm):
    if key.dtype != _U32 or tuple(key.shape) != (4,):
        raise TypeError(f"rng_bit_generator: the key must be uint32[4], got {key.str_short()}")
    return [ShapedArray((4,), _U32), ShapedArray(shape, dtype)]


def _lower(ctx, key, *, shape, dtype, algorithm):
    state = ctx.op("stablehlo.reshape", [key], ShapedArray((2, 2), _U32))
    state = ctx.op("stablehlo.bitcast_convert", [state], ShapedArray((2,), _U64))
    draw = _U32 if dtype.itemsize < 4 else dtype
    attr = f"#stablehlo<rng_algorithm {_ALGORITHM_ATTR[RandomAlgorithm(algorithm)]}>"
    new_state, bits = ctx.op("stablehlo.rng_bit_generator", [state],
                             [ShapedArray((2,), _U64), ShapedArray(shape, draw)],
                             attrs={"rng_algorithm": attr})
    new_key = ctx.op("stablehlo.bitcast_convert", [new_state], ShapedArray((2, 2), _U32))
    new_key = ctx.op("stablehlo.reshape", [new_key], ShapedArray((4,), _U32))
    if draw != dtype:
        bits = ctx.op("stablehlo.convert", [bits], ShapedArray(shape, dtype))
    return [new_key, bits]


def _batch(args, dims, *, shape, dtype, algorithm):
    # each key draws its own bits (a loop over the batch, stacked)
    key, d = args[0], dims[0]
    key = bu.move_axis(key, d, 0)
    n = aval_of(key).shape[0]
    keys, bits = [], []
    for i in range(n):
        k = shape_ops.squeeze(shape_ops.slice_in_dim(key, i, i + 1, axis=0), (0,))
        nk, b = rng_bit_generator_p.bind(k, shape=shape, dtype=dtype, algorithm=algorithm)
        keys.append(shape_ops.expand_dims(nk, (0,)))
        bits.append(shape_ops.expand_dims(b, (0,)))
    return [shape_ops.concatenate(keys, 0), shape_ops.concatenate(bits, 0)], [0, 0]


rng_bit_generator_p = Primitive("rng_bit_generator", abstract_eval=_abstract_eval,
                                lower=_lower, multiple_results=True, jvp=NOT_DIFFERENTIABLE,
                                batch=_batch)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """``(new_key, bits)``: unsigned random ``bits`` of ``shape`` from the ``uint32[4]``
    ``key`` by XLA's ``algorithm`` (the same bits as JAX on the same backend)."""
    from pyjax._src.core.sharding_rules import as_named_sharding
    out_sharding = as_named_sharding(out_sharding, "rng_bit_generator")
    if out_sharding is not None:  # as JAX: the bits drawn whole, then constrained (same bits)
        from pyjax._src.lax.sharding_constraint import with_sharding_constraint
        new_key, bits = rng_bit_generator(key, shape, dtype, algorithm)
        return new_key, with_sharding_constraint(bits, out_sharding)
    shape = axes_mod.canonicalize_shape(shape, "shape", "rng_bit_generator")
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))  # uint64 needs jax_enable_x64
    if dtype not in _OUT_DTYPES:
        raise TypeError(f"rng_bit_generator: dtype must be one of uint8, uint16, uint32, "
                        f"uint64, got {dtype.name}")
    algorithm = RandomAlgorithm(algorithm)
    return tuple(rng_bit_generator_p.bind(key, shape=tuple(shape), dtype=dtype,
                                          algorithm=int(algorithm)))
