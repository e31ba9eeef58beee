"""``lax.linalg``: matrix factorizations as primitives over ``(..., m, n)`` operands.

Every primitive takes leading batch dimensions, so its batching rule only moves the mapped axis
to the front. How each is computed (measured in docs/linalg.md):

* On CPU, ``cholesky``, ``lu``, ``triangular_solve``, ``qr`` (from ``HOST_MIN`` rows and
  columns), ``eigh`` (from ``HOST_MIN_SPECTRAL``), ``svd`` and ``eig`` (``linalg_eig.py``):
  LAPACK as host kernels over the FFI (``linalg_host.py``, ``base.host_call``). Below those
  sizes, and on other platforms, the XLA paths that follow.
* ``cholesky``: StableHLO's own op (the plugin expands it).
* ``triangular_solve``: StableHLO's own op, which the CPU plugin expands.
* ``geqrf`` / ``householder_product``: the plugin's ``Qr`` and
  ``ProductOfElementaryHouseholderReflectors`` custom calls; ``qr`` is built from them.
* ``eigh``: the plugin's ``Eigh`` custom call (Jacobi), with JAX's JVP.
* ``lu``: partial pivoting, one ``stablehlo.while`` iteration per column (rank-1 updates).
* ``svd``: the eigendecomposition of the Jordan-Wielandt matrix ``[[0, a], [a^H, 0]]``, whose
  eigenvalues are ``±s`` with eigenvectors ``[u; ±v] / sqrt(2)``: singular values as accurate
  as the symmetric eigensolver, unlike ``eigh(a^H a)`` which squares the condition number.
"""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, Zero, is_undefined_primal, lower_fun
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import dot as dot_mod
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import shape_ops
from pyjax._src.lax.ad_util import instantiate, zero_tangent
from pyjax._src.lax import base
from pyjax._src.lax import blas_threads
from pyjax._src.lax import linalg_host
from pyjax._src.lax.base import aval_of

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr",
           "householder_product", "ormqr", "eigh", "svd", "geqrf", "cholesky_p",
           "triangular_solve_p",
           "lu_p", "lu_pivots_to_permutation_p", "qr_p", "geqrf_p", "householder_product_p",
           "eigh_p", "svd_p", "eig", "eig_p", "SvdAlgorithm"]

_I32 = np.dtype(np.int32)


# ---- small matrix helpers (operands have equal leading batch dims) ----

def _shape(x):
    return aval_of(x).shape


def _dtype(x):
    return aval_of(x).dtype


def _T(x):
    nd = len(_shape(x))
    return shape_ops.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _conj(x):
    return ew.conj(x) if dtypes.is_complex(_dtype(x)) else x


def _H(x):
    return _conj(_T(x))


def _mm(a, b):
    return dot_mod.batch_matmul(a, b)


def _full_like(x, value, dtype=None):
    dtype = _dtype(x) if dtype is None else dtype
    return shape_ops.full(_shape(x), np.array(value, dtype), dtype)


def _index_grid(shape, k=0):
    """Boolean masks ``row + k >= col`` over the last two dims of ``shape``."""
    rows = shape_ops.broadcasted_iota(_I32, shape, len(shape) - 2)
    cols = shape_ops.broadcasted_iota(_I32, shape, len(shape) - 1)
    if k:
        rows = ew.add(rows, shape_ops.full(shape, np.int32(k), _I32))
    return rows, cols


def tril(x, k=0):
    rows, cols = _index_grid(_shape(x), k)
    return ew.select(ew.ge(rows, cols), x, _full_like(x, 0))


def triu(x, k=0):
    rows, cols = _index_grid(_shape(x), k)
    return ew.select(ew.le(rows, cols), x, _full_like(x, 0))


def _eye_like(x):
    rows, cols = _index_grid(_shape(x))
    return ew.select(ew.eq(rows, cols), _full_like(x, 1), _full_like(x, 0))


def _diag(x):
    """The diagonal of the square ``(..., n, n)`` ``x`` as ``(..., n)``."""
    rows, cols = _index_grid(_shape(x))
    masked = ew.select(ew.eq(rows, cols), x, _full_like(x, 0))
    return red.reduce_sum(masked, (len(_shape(x)) - 1,))


def _diag_matrix(d, n):
    """``(..., n)`` -> ``(..., n, n)`` with ``d`` on the diagonal."""
    shape = _shape(d) + (n,)
    b = shape_ops.broadcast_in_dim(d, shape, tuple(range(len(shape) - 1)))
    rows, cols = _index_grid(shape)
    return ew.select(ew.eq(rows, cols), b, _full_like(b, 0))


def _mul_rows(d, x):
    """``d[..., :, None] * x``."""
    return ew.mul(shape_ops.broadcast_in_dim(d, _shape(x), tuple(range(len(_shape(x)) - 1))), x)


def _mul_cols(x, d):
    """``x * d[..., None, :]``."""
    nd = len(_shape(x))
    return ew.mul(x, shape_ops.broadcast_in_dim(d, _shape(x),
                                                tuple(range(nd - 2)) + (nd - 1,)))


def _real(x):
    return ew.real(x) if dtypes.is_complex(_dtype(x)) else x


def _check_matrix(name, a, square=False):
    if a.ndim < 2:
        raise ValueError(f"{name}: the operand must have at least 2 dimensions, got shape "
                         f"{a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: the operand must be a square matrix (..., n, n), got shape "
                         f"{a.shape}")
    if not dtypes.is_inexact(a.dtype):
        raise TypeError(f"{name}: the operand must be floating or complex, got {a.dtype.name}")


def _leading_batch(prim, nresults=None):
    """The batching rule of a primitive whose operands all take leading batch dims."""
    def rule(args, dims, **params):
        size = bu.batch_size(args, dims)
        xs = [bu.bdim_to(x, d, 0, size) for x, d in zip(args, dims)]
        out = prim.bind(*xs, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def _set_batch(prim):
    prim.def_rule("batch", _leading_batch(prim))


# From this many rows/columns on (min(m, n)), a CPU program computes lu, triangular_solve and
# qr with LAPACK on the host (linalg_host.py): measured in docs/linalg.md. Below it,
# and for batches of small matrices, the XLA paths are as fast and avoid a host round trip.
HOST_MIN = 32
# eigh and svd: the XLA paths (Jacobi; eigh of twice the size for svd) lose from 8 x 8 on.
HOST_MIN_SPECTRAL = 8


def _on_host(ctx, size, minimum=None):
    return ctx.platform == "cpu" and size >= (HOST_MIN if minimum is None else minimum)


# Below this many rows and columns OpenBLAS runs every kernel on one thread by itself
# (measured: CPU time equals wall time for each kernel up to 31², not at 32²), so the kernel
# is not pinned: pinning costs ~5 us a call, as much as an 8x8 LAPACK routine.
PIN_MIN = 32


def _host_kernel(ctx, kernel, operands, out_avals=None, **params):
    """Lower to the host kernel ``linalg_host.<kernel>(*operands, **params)`` (a list of
    arrays, one per result of the primitive, or of ``out_avals``)."""
    fn = functools.partial(getattr(linalg_host, kernel), **params)
    out_avals = ctx.avals_out if out_avals is None else out_avals
    # one OpenBLAS thread inside the program (blas_threads.py); SciPy's OpenBLAS is loaded
    # now, so that the first run pins it too
    linalg_host._scipy_on()
    if max((d for v in [o.aval for o in operands] + list(out_avals) for d in v.shape[-2:]),
           default=0) >= PIN_MIN:
        fn = blas_threads.pinned(fn)
    # the kernels keep no reference to their operands: they read XLA's buffers in place
    return base.host_call(ctx, fn, list(operands), list(out_avals), side_effect=False,
                          key=("lax.linalg", kernel, tuple(sorted(params.items()))),
                          borrow_args=True)


# Values noted as another value with its last two axes swapped (lax/base.py): a host kernel
# reads the original in place, so solve and inv pay no transpose between getrf and trsm, and
# XLA drops the unused transpose.
_note_transpose_of = base.note_transpose_of
_column_major_source = base.transpose_source


def _custom_call(ctx, target, operands, out_avals, backend_config=""):
    return ctx.op("stablehlo.custom_call", list(operands), out_avals,
                  attrs={"call_target_name": f'"{target}"',
                         "backend_config": f'"{backend_config}"',
                         "api_version": "1 : i32"})


def _fori_lower(ctx, n, body, state):
    """``stablehlo.while`` running ``state = body(i, *state)`` for ``i`` in ``range(n)``;
    ``body`` is a function of lax operations, lowered into the loop's body region."""
    i32 = ShapedArray((), _I32)
    state = [ctx.constant(np.int32(0), i32)] + list(state)
    avals = [v.aval for v in state]
    cond = ctx.region(avals)
    pred = cond.op("stablehlo.compare", [cond.args[0], cond.constant(np.int32(n), i32)],
                   ShapedArray((), np.bool_),
                   attrs={"comparison_direction": "#stablehlo<comparison_direction LT>",
                          "compare_type": "#stablehlo<comparison_type SIGNED>"})
    cond.ret([pred])
    body_r = ctx.region(avals)
    i = body_r.args[0]
    new = ctx.lower_fun(lambda *xs: list(body(*xs)), body_r.args, multiple_results=True,
                        block=body_r)
    nxt = body_r.op("stablehlo.add", [i, body_r.constant(np.int32(1), i32)], i32)
    body_r.ret([nxt] + list(new))
    return ctx.op("stablehlo.while", state, avals, regions=[cond, body_r])[1:]


# ---- cholesky ----

def _cholesky_abstract_eval(a):
    _check_matrix("cholesky", a, square=True)
    return ShapedArray(a.shape, a.dtype)


# From this size on, a CPU program factors with LAPACK (``linalg_host.cholesky``, a host
# kernel over the FFI) instead of XLA's Cholesky expansion: measured 128²: 5.5 ms -> 0.2 ms,
# 512²: 27 -> 7 ms; below it (and for large batches of small matrices) the expansion is as
# fast or faster.
HOST_CHOLESKY_MIN = HOST_MIN


def _cholesky_lower(ctx, a):
    if ctx.platform == "cpu" and a.aval.shape[-1] >= HOST_CHOLESKY_MIN:
        return _host_kernel(ctx, "cholesky", [a])[0]
    l = ctx.op("stablehlo.cholesky", [a], ctx.avals_out[0], attrs={"lower": "true"})

    def clean(l):
        # The expansion leaves the upper triangle unspecified and gives NaNs somewhere on a
        # matrix that is not positive definite: as JAX (LAPACK's info != 0), the whole lower
        # triangle NaN then, the upper one still 0.
        nd = len(_shape(l))
        ok = red.reduce_and(ew.is_finite(_real(l)), (nd - 2, nd - 1))
        if dtypes.is_complex(_dtype(l)):
            ok = ew.bitwise_and(ok, red.reduce_and(ew.is_finite(ew.imag(l)), (nd - 2, nd - 1)))
        ok = shape_ops.broadcast_in_dim(ok, _shape(l), tuple(range(nd - 2)))
        return tril(ew.select(ok, l, _full_like(l, np.nan)))
    return ctx.lower_fun(clean, [l])


def _cholesky_jvp(primals, tangents):
    a, = primals
    da, = tangents
    l = cholesky_p.bind(a)
    if type(da) is Zero:
        return l, zero_tangent(aval_of(l))
    # dL = L phi(L^-1 dA L^-H), phi: the lower triangle with half the diagonal
    tmp = triangular_solve(l, da, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    mid = triangular_solve(l, tmp, left_side=True, lower=True)
    phi = ew.mul(tril(mid), ew.sub(_full_like(mid, 1), ew.mul(_eye_like(mid),
                                                              _full_like(mid, 0.5))))
    return l, _mm(l, phi)


cholesky_p = Primitive("cholesky", abstract_eval=_cholesky_abstract_eval,
                       lower=_cholesky_lower, jvp=_cholesky_jvp)
_set_batch(cholesky_p)


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor ``l`` of the Hermitian positive definite ``x``
    (``x == l @ l^H``); NaNs where ``x`` is not positive definite."""
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind(x)


def symmetrize(x):
    """``(x + x^H) / 2``."""
    return ew.div(ew.add(x, _H(x)), _full_like(x, 2))


# ---- triangular_solve ----

def _ts_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    _check_matrix("triangular_solve", a, square=True)
    if b.ndim < 2:
        raise ValueError(f"triangular_solve: b must have at least 2 dimensions, got {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: a and b must have equal dtypes, got "
                        f"{a.dtype.name} and {b.dtype.name}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"triangular_solve: a and b must have equal batch dimensions, got "
                         f"{a.shape} and {b.shape}")
    k = b.shape[-2] if left_side else b.shape[-1]
    if k != a.shape[-1]:
        side = "b.shape[-2]" if left_side else "b.shape[-1]"
        raise ValueError(f"triangular_solve: {side} must equal a.shape[-1] = {a.shape[-1]} "
                         f"(left_side={left_side}), got a {a.shape} and b {b.shape}")
    return ShapedArray(b.shape, b.dtype)


def _ts_lower(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if _on_host(ctx, a.aval.shape[-1]):
        a_t = _column_major_source(ctx, a)
        if a_t is not None:
            return _host_kernel(ctx, "triangular_solve_column_major", [a_t, b],
                                left_side=left_side, lower=lower, transpose_a=transpose_a,
                                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)[0]
        return _host_kernel(ctx, "triangular_solve", [a, b], left_side=left_side, lower=lower,
                            transpose_a=transpose_a, conjugate_a=conjugate_a,
                            unit_diagonal=unit_diagonal)[0]
    if conjugate_a and not transpose_a and dtypes.is_complex(a.aval.dtype):
        a = ctx.lower_fun(ew.conj, [a])
    kind = ("ADJOINT" if conjugate_a and dtypes.is_complex(a.aval.dtype) else "TRANSPOSE") \
        if transpose_a else "NO_TRANSPOSE"
    b_ = lambda v: "true" if v else "false"  # noqa: E731
    return ctx.op("stablehlo.triangular_solve", [a, b], ctx.avals_out[0],
                  attrs={"left_side": b_(left_side), "lower": b_(lower),
                         "unit_diagonal": b_(unit_diagonal),
                         "transpose_a": f"#stablehlo<transpose {kind}>"})


def _op_a(a, *, transpose_a, conjugate_a, unit_diagonal, lower):
    """The matrix op(a) that the solve inverts, as a full matrix."""
    a = tril(a) if lower else triu(a)
    if unit_diagonal:
        eye = _eye_like(a)
        a = ew.add(ew.mul(a, ew.sub(_full_like(a, 1), eye)), eye)
    if conjugate_a:
        a = _conj(a)
    return _T(a) if transpose_a else a


def _ts_jvp(primals, tangents, **params):
    a, b = primals
    da, db = tangents
    x = triangular_solve_p.bind(a, b, **params)
    dx = None
    if type(db) is not Zero:
        dx = triangular_solve_p.bind(a, db, **params)
    if type(da) is not Zero:
        # x = op(A)^-1 b (left) or b op(A)^-1 (right): dx = -op(A)^-1 op(dA) x, or -x op(dA) op(A)^-1
        dop = _op_a(da, **{k: params[k] for k in ("transpose_a", "conjugate_a", "lower")},
                    unit_diagonal=False)
        if params["unit_diagonal"]:
            dop = ew.mul(dop, ew.sub(_full_like(dop, 1), _eye_like(dop)))
        if params["left_side"]:
            term = triangular_solve_p.bind(a, _mm(dop, x), **params)
        else:
            term = triangular_solve_p.bind(a, _mm(x, dop), **params)
        term = ew.neg(term)
        dx = term if dx is None else ew.add(dx, term)
    return x, (zero_tangent(aval_of(x)) if dx is None else dx)


def _ts_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    assert not is_undefined_primal(a) and is_undefined_primal(b)
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    ct_b = triangular_solve_p.bind(a, instantiate(ct), left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)
    return [None, ct_b]


triangular_solve_p = Primitive("triangular_solve", abstract_eval=_ts_abstract_eval,
                               lower=_ts_lower, linear=True, jvp=_ts_jvp,
                               transpose=_ts_transpose)  # linear in b
_set_batch(triangular_solve_p)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve ``op(a) @ x == b`` (``left_side``) or ``x @ op(a) == b`` for ``x``, with ``a``
    triangular (only its ``lower`` or upper triangle is read), ``op`` transposing and/or
    conjugating ``a``."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


from pyjax._src.lax import linalg_factor as _factor  # noqa: E402  (lu, qr, eigh, svd)
from pyjax._src.lax.linalg_factor import (  # noqa: E402,F401
    lu, lu_p, lu_pivots_to_permutation, lu_pivots_to_permutation_p, qr, qr_p, geqrf, geqrf_p,
    householder_product, householder_product_p, eigh, eigh_p, svd, svd_p, ormqr, SvdAlgorithm)
from pyjax._src.lax.linalg_eig import eig, eig_p  # noqa: E402,F401
