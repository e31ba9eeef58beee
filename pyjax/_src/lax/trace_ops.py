"""``lax`` functions about the program being traced rather than about values: ``dce_sink``
(keep a value's computation in the Jaxpr although nothing uses it) and ``shape_as_value``."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.axes import canonicalize_shape
from pyjax._src.core.sharding_rules import replicated_results

__all__ = ["dce_sink", "dce_sink_p", "shape_as_value"]


def _dce_sink_jvp(primals, tangents, *, prevent_mlir_dce):
    dce_sink_p.bind(*primals, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


def _dce_sink_batch(args, dims, *, prevent_mlir_dce):
    dce_sink_p.bind(*args, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


# No results, and effectful: dead-code elimination of Jaxprs keeps it and so the computation
# of its operand. pyjax runs no MLIR passes before XLA, so its lowering emits nothing whatever
# prevent_mlir_dce says (XLA, as in JAX, may still drop the unused value).
dce_sink_p = Primitive("dce_sink", abstract_eval=lambda x, **_: [], multiple_results=True,
                       lower=lambda ctx, x, **_: [], effectful=True, jvp=_dce_sink_jvp,
                       batch=_dce_sink_batch,
                       sharding_rule=replicated_results)


def dce_sink(val, *, prevent_mlir_dce=False):
    """Marks every array of the pytree ``val`` as used, so that Jaxpr dead-code elimination
    keeps its computation. Returns None."""
    for leaf in pytree.tree_leaves(val):
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))


def shape_as_value(shape):
    """``shape`` as an integer NumPy array (pyjax shapes are always concrete ints)."""
    shape = canonicalize_shape(shape, "shape", "lax.shape_as_value")
    return np.asarray(shape, dtypes.canonicalize_dtype(np.int64))
