"""Large float32/float64 matrix products of CPU programs on the host's BLAS (``sgemm``/``dgemm``
through ``numpy.matmul``), called over the FFI (``base.host_call``) without copies.

Why: the default CPU plugin runs dots as Eigen contractions, which are slow when the right
operand is contracted on its minor dimension (``g @ W.T``, backprop's input gradient: 1.7-2.5x
JAX's YNNPACK); OpenBLAS takes either operand transposed at no cost. docs/performance.md has
the measurements and the threshold. ``pyjax.config.pyjax_host_dot`` (``PYJAX_HOST_DOT=0``)
turns it off.

Served: ``dot_general``s whose batch dimensions lead both operands in order and whose
contracting dimensions are the first or the last of each operand's other dimensions (then the
free dimensions merge into one matrix axis by a reshape, no copy), float32 or float64 in and
out (every ``Precision`` is float32 on the CPU, as XLA's dot; dot algorithms reach the
primitive as the default precision), single-device programs, at least ``HOST_DOT_MIN_FLOPS``
multiply-adds. Everything else
(complex, integer, bfloat16, mixed or widened result types, SPMD programs, small
products) stays XLA's dot.
"""
from __future__ import annotations

import math
import os

import numpy as np

from pyjax._src.core.config import config
from pyjax._src.lax import blas_threads

# Multiply-adds (m * k * n * batch) from which the host product pays its ~20 us call:
# measured in docs/performance.md.
HOST_DOT_MIN_FLOPS = int(os.environ.get("PYJAX_HOST_DOT_MIN_FLOPS", 1 << 21))
# experiment knobs (docs/performance.md): only the transposed-rhs form; OpenBLAS at 1 thread
NT_ONLY = os.environ.get("PYJAX_HOST_DOT_NT_ONLY") == "1"
ONE_THREAD = os.environ.get("PYJAX_HOST_DOT_ONE_THREAD") == "1"
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _side(ndim, nb, contracting):
    """How one operand with ``nb`` leading batch dimensions becomes a batch of matrices:
    ``(free size, contracting size, contracting last)`` positions, or None. The contracting
    dimensions must be the first or the last of the non-batch ones, in ascending order."""
    rest = list(range(nb, ndim))
    k = len(contracting)
    if list(contracting) == rest[len(rest) - k:]:
        return True
    if list(contracting) == rest[:k]:
        return False
    return None


def plan(lhs_aval, rhs_aval, dimension_numbers, out_aval, module):
    """``(batch, m, k, n, lhs contracted last, rhs contracted first)`` when the host serves
    this dot, else None."""
    if not config.pyjax_host_dot:
        return None
    dt = lhs_aval.dtype
    if dt not in _DTYPES or rhs_aval.dtype != dt or out_aval.dtype != dt:
        return None
    if (module.attrs.get("mhlo.num_partitions", "1 : i32") != "1 : i32"
            or module.attrs.get("mhlo.num_replicas", "1 : i32") != "1 : i32"):
        return None  # SPMD: XLA cannot partition a host call
    (lc, rc), (lb, rb) = dimension_numbers
    nb = len(lb)
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)) or not lc:
        return None
    lhs_last = _side(lhs_aval.ndim, nb, lc)
    rhs_last = _side(rhs_aval.ndim, nb, rc)
    if lhs_last is None or rhs_last is None or (NT_ONLY and not (lhs_last and rhs_last)):
        return None
    ls, rs = lhs_aval.shape, rhs_aval.shape
    batch = math.prod(ls[:nb])
    k = math.prod(ls[d] for d in lc)
    m = math.prod(ls[nb:]) // k if k else 0
    n = math.prod(rs[nb:]) // k if k else 0
    if batch * m * k * n < HOST_DOT_MIN_FLOPS or 0 in (m, n, k):
        return None
    return batch, m, k, n, lhs_last, not rhs_last


def kernel(batch, m, k, n, lhs_last, rhs_first):
    """The host function ``(lhs, rhs, out) -> None`` of a ``plan``: one BLAS product per
    batch element, transposes passed to BLAS as flags (NumPy hands a transposed C-contiguous
    matrix to ``gemm`` as ``trans``)."""
    lshape = (batch, m, k) if lhs_last else (batch, k, m)
    rshape = (batch, k, n) if rhs_first else (batch, n, k)

    def run(lhs, rhs, out):
        a = lhs.reshape(lshape)
        b = rhs.reshape(rshape)
        np.matmul(a if lhs_last else a.swapaxes(1, 2), b if rhs_first else b.swapaxes(1, 2),
                  out=out.reshape(batch, m, n))

    if ONE_THREAD:
        def run_one_thread(lhs, rhs, out, run=run):
            with blas_threads.single_threaded():
                run(lhs, rhs, out)
        return run_one_thread
    return run
