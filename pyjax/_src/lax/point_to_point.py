"""The collectives of JAX's ``lax`` that move data between chosen members of a mapped axis:
``pbroadcast`` (one member's value to all), and ``psend``/``precv``/``ragged_all_to_all``,
which pyjax does not have (they raise NotImplementedError saying so)."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.core import pytree
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import parallel
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of

__all__ = ["pbroadcast", "psend", "precv", "ragged_all_to_all"]


def pbroadcast(x, axis_name, source):
    """Every member of the mapped axis ``axis_name`` gets the value of member ``source``: the
    sum over the axis of ``x`` where ``axis_index == source`` and zeros elsewhere (JAX's
    definition; XLA's CollectiveBroadcast is not used). ``x`` may be a pytree."""
    source = operator.index(source)
    n = parallel.axis_size(axis_name)
    if not 0 <= source < n:
        raise ValueError(f"pbroadcast: source {source} is out of range for axis "
                         f"{axis_name!r} of size {n}")
    is_source = ew.eq(parallel.axis_index(axis_name), np.int32(source))

    def one(v):
        av = aval_of(v)
        zeros = shape_ops.broadcast_in_dim(np.zeros((), av.dtype), av.shape, ())
        mask = shape_ops.broadcast_in_dim(is_source, av.shape, ())
        return ew.select_n(mask, zeros, v)
    return parallel.psum(pytree.tree_map(one, x), axis_name)


def psend(x, axis_name, perm):
    raise NotImplementedError("lax.psend: pyjax's collectives have no Send/Recv (XLA's "
                              "point-to-point ops with tokens); lax.ppermute moves data along "
                              "a permutation")


def precv(token, out_shape, axis_name, perm):
    raise NotImplementedError("lax.precv: pyjax's collectives have no Send/Recv (XLA's "
                              "point-to-point ops with tokens); lax.ppermute moves data along "
                              "a permutation")


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    raise NotImplementedError("lax.ragged_all_to_all: pyjax has no ragged all-to-all "
                              "collective (XLA's RaggedAllToAll)")
